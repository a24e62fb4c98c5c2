package server

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// withRun lets the server run calls, keeping its state in a fresh
// directory, with the given rules allowed instead of the usual one.
func withRun(t testing.TB, allow ...string) envOption {
	return func(o *Options, f *policy.File) {
		o.StateDir = t.TempDir()
		l, err := policy.ParseRules(policy.LayerCLI, allow, nil, nil)
		must(t, err)
		*f = *l
	}
}

// runBody is the body of a POST /v1/run of a Bash command in dir.
func runBody(session, command, dir string) map[string]any {
	return map[string]any{"tool": "Bash", "input": map[string]any{"command": command}, "cwd": dir, "session": session, "turn": "t1"}
}

// toolEvents returns the payloads of session's tool.* events by type.
func (e *testEnv) toolEvents(session string) map[eventlog.Type]map[string]any {
	e.t.Helper()
	out := map[eventlog.Type]map[string]any{}
	for _, ev := range e.events(session, eventlog.TypeToolStarted, eventlog.TypeToolCompleted, eventlog.TypeToolFailed) {
		var p map[string]any
		must(e.t, json.Unmarshal(ev.Payload, &p))
		out[ev.Type] = p
	}
	return out
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
}

// TestRunAllowed runs allowed shell calls on the server: their output and
// status come back, what they write lands in the workspace, and the log
// has tool.started and tool.completed with the sandbox's report. A
// program that writes outside the workspace is stopped by the operating
// system, not by the analysis, which cannot see the write.
func TestRunAllowed(t *testing.T) {
	needPython(t)
	e := newEnv(t, withRun(t, "Bash(python3:*)"))
	outside := realDir(t)
	must(t, os.WriteFile(filepath.Join(e.project, "out.py"), fmt.Appendf(nil, "open(%q, 'w').write('x')\n", filepath.Join(outside, "escaped")), 0o644))
	for _, tc := range []struct {
		name, command, stdout string
		code                  int
		made, notMade         string
	}{
		{name: "writes in the workspace", command: `python3 -c "open('made', 'w').write('x'); print('hi')"`, stdout: "hi\n", made: filepath.Join(e.project, "made")},
		{name: "exit status", command: `python3 -c "import sys; print('bye'); sys.exit(3)"`, stdout: "bye\n", code: 3},
		{name: "write outside the workspace fails at the OS", command: "python3 out.py", code: -1, notMade: filepath.Join(outside, "escaped")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := "run-" + strings.ReplaceAll(tc.name, " ", "-")
			r := e.call("POST", "/v1/run", e.tokens.Agent, runBody(session, tc.command, e.project))
			var resp RunResponse
			r.decode(t, &resp)
			if r.code != 200 || resp.Decision != "allow" {
				t.Fatalf("run: %d %s", r.code, r.body)
			}
			if tc.code >= 0 && (resp.ExitCode != tc.code || resp.Stdout != tc.stdout) {
				t.Fatalf("exit %d stdout %q, want %d %q (%s)", resp.ExitCode, resp.Stdout, tc.code, tc.stdout, r.body)
			}
			if tc.code < 0 && resp.ExitCode == 0 {
				t.Fatalf("the write outside the workspace succeeded: %s", r.body)
			}
			if resp.Sandbox == nil || resp.Sandbox.FS == "" {
				t.Fatalf("no sandbox report: %s", r.body)
			}
			if tc.made != "" {
				if _, err := os.Stat(tc.made); err != nil {
					t.Fatalf("the call's file: %v", err)
				}
			}
			if tc.notMade != "" {
				if _, err := os.Stat(tc.notMade); !os.IsNotExist(err) {
					t.Fatalf("%s was written: %v", tc.notMade, err)
				}
			}
			evs := e.toolEvents(session)
			done := evs[eventlog.TypeToolCompleted]
			if evs[eventlog.TypeToolStarted] == nil || done == nil || done["sandbox"] == nil {
				t.Fatalf("tool events %v", evs)
			}
			if code, _ := done["exitCode"].(float64); int(code) != resp.ExitCode {
				t.Fatalf("tool.completed %v, response exit %d", done, resp.ExitCode)
			}
		})
	}
}

// TestRunAsksAndDenies puts a call that asks to the approver while
// /v1/run waits: allowed, it runs; denied, it does not (no file). A call
// the policy denies does not run either.
func TestRunAsksAndDenies(t *testing.T) {
	for _, tc := range []struct {
		name, answer, command, decision, reason string
		ask, made                               bool
	}{
		{name: "approved", answer: "allow_once", command: "touch approved", decision: "allow", reason: "user_approved", ask: true, made: true},
		{name: "denied by the approver", answer: "deny", command: "touch refused", decision: "deny", reason: "user_denied", ask: true},
		{name: "denied by the policy", command: "touch never", decision: "deny", reason: "rule_deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withRun(t), func(o *Options, f *policy.File) {
				l, err := policy.ParseRules(policy.LayerCLI, nil, nil, []string{"Bash(touch never)"})
				must(t, err)
				*f = *l
			})
			file := filepath.Join(e.project, strings.Fields(tc.command)[1])
			done := make(chan response, 1)
			if tc.ask {
				go func() {
					var list []Approval
					waitFor(t, "a pending approval", func() bool { list = e.pending("s1"); return len(list) == 1 })
					if _, err := os.Stat(file); !os.IsNotExist(err) {
						t.Errorf("the call ran before it was answered: %v", err)
					}
					done <- e.call("POST", "/v1/approvals/"+list[0].ID, e.tokens.Approver, map[string]any{"answer": tc.answer})
				}()
			}
			r := e.call("POST", "/v1/run", e.tokens.Agent, runBody("s1", tc.command, e.project))
			var resp RunResponse
			r.decode(t, &resp)
			if r.code != 200 || resp.Decision != tc.decision || resp.Reason != tc.reason {
				t.Fatalf("run: %d %s", r.code, r.body)
			}
			if tc.ask {
				if a := <-done; a.code != 200 {
					t.Fatalf("answer: %d %s", a.code, a.body)
				}
				var a Approval
				r := e.call("GET", "/v1/approvals?session=s1", e.tokens.Approver, nil)
				var out struct {
					Approvals []Approval `json:"approvals"`
				}
				r.decode(t, &out)
				if len(out.Approvals) != 1 {
					t.Fatalf("approvals %s", r.body)
				}
				a = out.Approvals[0]
				if a.State != StateResolved || a.Decision == nil || a.Decision.Decision != tc.decision {
					t.Fatalf("approval %+v %+v", a, a.Decision)
				}
			}
			_, err := os.Stat(file)
			if tc.made != (err == nil) {
				t.Fatalf("file %s made %t, want %t", file, err == nil, tc.made)
			}
			evs := e.toolEvents("s1")
			if tc.made != (evs[eventlog.TypeToolCompleted] != nil) || !tc.made && len(evs) != 0 {
				t.Fatalf("tool events %v", evs)
			}
		})
	}
}

// TestRunRefused: /v1/run needs a token, a cwd in the session's
// workspace, and a server that runs calls.
func TestRunRefused(t *testing.T) {
	e := newEnv(t, withRun(t, "Bash(touch:*)"))
	outside := realDir(t)
	off := newEnv(t)
	for _, tc := range []struct {
		name  string
		env   *testEnv
		token string
		body  map[string]any
		code  int
	}{
		{"no token", e, "", runBody("s1", "touch a", e.project), 401},
		{"bad body", e, e.tokens.Agent, map[string]any{"tool": "Bash"}, 400},
		{"cwd outside the workspace", e, e.tokens.Agent, runBody("s1", "touch a", outside), 403},
		{"server without a state directory", off, off.tokens.Agent, runBody("s1", "touch a", off.project), 501},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "cwd outside the workspace" {
				// Bind the session to the project first.
				if r := e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", "ls", true)); r.code != 200 {
					t.Fatalf("check: %d %s", r.code, r.body)
				}
			}
			r := tc.env.call("POST", "/v1/run", tc.token, tc.body)
			if r.code != tc.code {
				t.Fatalf("got %d %s, want %d", r.code, r.body, tc.code)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Fatalf("something ran: %v", ents)
			}
			if _, err := os.Stat(filepath.Join(tc.env.project, "a")); err == nil {
				t.Fatal("something ran")
			}
		})
	}
}

// TestRunOutputBounded: more than MaxRunOutput bytes of output come back
// cut to at most MaxRunOutput, never inside a character, and marked
// truncated; the status is the program's.
func TestRunOutputBounded(t *testing.T) {
	needPython(t)
	e := newEnv(t, withRun(t, "Bash(python3:*)"))
	r := e.call("POST", "/v1/run", e.tokens.Agent, runBody("s1", `python3 -c "import sys; sys.stdout.write('a' + 'é' * 600000); sys.stderr.write('ok')"`, e.project))
	var resp RunResponse
	r.decode(t, &resp)
	if r.code != 200 || resp.Decision != "allow" || resp.ExitCode != 0 {
		t.Fatalf("run: %d %.300s", r.code, r.body)
	}
	// Cut after MaxRunOutput bytes, the last é would be split: it is left out.
	if !resp.StdoutTruncated || len(resp.Stdout) != MaxRunOutput-1 || strings.Trim(resp.Stdout[1:], "é") != "" {
		t.Fatalf("stdout: truncated %t, %d bytes", resp.StdoutTruncated, len(resp.Stdout))
	}
	if resp.StderrTruncated || resp.Stderr != "ok" {
		t.Fatalf("stderr: truncated %t, %q", resp.StderrTruncated, resp.Stderr)
	}
}

// TestRunAgentModeNoLooser: /v1/run reads its call as /v1/check does, so
// an agent's mode cannot loosen the person's strict policy there either:
// the read does not run.
func TestRunAgentModeNoLooser(t *testing.T) {
	strict := policy.ModeStrict
	e := newEnv(t, func(o *Options, f *policy.File) {
		o.StateDir = t.TempDir()
		f.Layer, f.Mode = policy.LayerUser, &strict
	})
	must(t, os.WriteFile(filepath.Join(e.project, "README.md"), []byte("secret-ish"), 0o644))
	for _, mode := range []string{"", "default", "dontAsk"} {
		body := runBody("m-"+mode, "cat README.md", e.project)
		if mode != "" {
			body["mode"] = mode
		}
		r := e.call("POST", "/v1/run", e.tokens.Agent, body)
		m := r.json(t)
		if m["decision"] != "deny" || strings.Contains(string(r.body), "secret-ish") {
			t.Errorf("mode %q under a strict policy: %d %s", mode, r.code, r.body)
		}
	}
}
