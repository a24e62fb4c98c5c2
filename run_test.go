package toolgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/policy"
)

// A Gate decides, asks, runs and records in one call. Allowed by
// Bash(python3:*), a write outside the workspace still fails: the
// sandbox stops it. A write inside lands; a denied call does not run.
func ExampleGate_Run() {
	dir, _ := os.MkdirTemp("", "toolgate-example")
	defer os.RemoveAll(dir)
	project := filepath.Join(dir, "project")
	_ = os.MkdirAll(filepath.Join(project, ".git"), 0o755)

	rules, _ := policy.ParseRules(policy.LayerProject, []string{"Bash(python3:*)"}, nil, nil)
	set, _ := policy.Merge(rules)
	eng, _ := toolgate.NewEngine(toolgate.Options{Policy: toolgate.FixedPolicy(set), Home: dir})
	g, err := toolgate.NewGate(toolgate.GateOptions{Engine: eng, Log: filepath.Join(dir, "events.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()

	for _, cmd := range []string{
		`python3 -c "open('/etc/toolgate-example','w')"`,
		`python3 -c "open('made','w').write('ok')"`,
		`rm -rf /`,
	} {
		d, res, err := g.Run(context.Background(), &toolgate.Request{
			Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: project, Session: "example",
		})
		fmt.Printf("%-5s %-16s exit %d err %v\n", d.Decision, d.Reason, res.ExitCode, err)
	}
	_, err = os.Stat(filepath.Join(project, "made"))
	fmt.Println("made in the workspace:", err == nil)
	// Output:
	// allow rule_allow       exit 1 err <nil>
	// allow rule_allow       exit 0 err <nil>
	// deny  sandbox_rejected exit 0 err <nil>
	// made in the workspace: true
}

// TestGateRun runs through the library what the analysis lets through
// but the sandbox stops: each fails at the operating system with nothing
// written, and tool.completed records a non-zero exit and the sandbox.
func TestGateRun(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(project, ".git"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf("open(%q, 'w').write('x')\n", filepath.Join(outside, "f"))
	if err := os.WriteFile(filepath.Join(project, "out.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	etc := "/etc/toolgate-lib-test-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })
	rules, err := policy.ParseRules(policy.LayerProject, []string{"Bash(python3:*)"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := policy.Merge(rules)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := toolgate.NewEngine(toolgate.Options{Policy: toolgate.FixedPolicy(set), Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "events.db")
	g, err := toolgate.NewGate(toolgate.GateOptions{Engine: eng, Log: log,
		Approver: toolgate.ApproverFunc(func(context.Context, *toolgate.ApprovalRequest) (toolgate.Answer, error) {
			return toolgate.Answer{Kind: toolgate.AllowOnce}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	target := "/tmp/../root/x"
	if os.Geteuid() != 0 {
		target = "/tmp/../etc/x"
	}
	for i, tc := range []struct{ command, absent string }{
		{fmt.Sprintf(`python3 -c "open('%s','w')"`, etc), etc},
		{"python3 out.py", filepath.Join(outside, "f")},
		{fmt.Sprintf(`sh -c "$(printf 'touch %s')"`, target), filepath.Clean(target)},
	} {
		session := "s" + strconv.Itoa(i)
		d, res, err := g.Run(context.Background(), &toolgate.Request{Tool: "Bash", Input: map[string]any{"command": tc.command}, Cwd: project, Session: session})
		if err != nil || d.Decision != toolgate.Allow || res.ExitCode == 0 {
			t.Errorf("%s: %s %s, exit %d, err %v", tc.command, d.Decision, d.Reason, res.ExitCode, err)
		}
		if _, err := os.Lstat(tc.absent); err == nil {
			t.Errorf("%s: %s was written", tc.command, tc.absent)
		}
		done := completed(t, log, session)
		sb, _ := done["sandbox"].(map[string]any)
		if code, _ := done["exitCode"].(float64); code == 0 || sb["fs"] != "landlock" {
			t.Errorf("%s: tool.completed %v", tc.command, done)
		}
	}
	read := &toolgate.Request{Tool: "Read", Input: map[string]any{"file_path": "out.py"}, Cwd: project}
	if d, _, err := g.Run(context.Background(), read); err != toolgate.ErrNotRunnable || d.Decision != toolgate.Deny {
		t.Errorf("Read: %s, %v; want a deny and ErrNotRunnable", d.Decision, err)
	}
	withState, err := toolgate.NewGate(toolgate.GateOptions{Engine: eng, Log: log, StateDir: filepath.Join(dir, "state")})
	if err != nil {
		t.Fatal(err)
	}
	defer withState.Close()
	if d, res, err := withState.Run(context.Background(), read); err != nil || d.Decision != toolgate.Allow || !strings.Contains(string(res.Stdout), "write('x')") {
		t.Errorf("Read with a state directory: %s %s, %q, %v", d.Decision, d.Reason, res.Stdout, err)
	}
}

// completed returns the payload of the tool.completed event of session.
func completed(t *testing.T, log, session string) map[string]any {
	t.Helper()
	store, err := sqlite.Open(log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for e, err := range store.Query(context.Background(), eventlog.Filter{Session: session}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == eventlog.TypeToolCompleted {
			var p map[string]any
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no tool.completed in session %s", session)
	return nil
}
