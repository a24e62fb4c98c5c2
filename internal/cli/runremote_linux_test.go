package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/server"
)

// TestRunServer runs calls with `toolgate run --server` against a real
// `toolgate serve` with Bash(python3:*) allowed: the server runs them and
// logs them, run prints their output and exits with their status; a call
// the server denies does not run and exits 126 with the reason. Without
// --server, $TOOLGATE_SERVER is used.
func TestRunServer(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	rs := startServe(t, "--allow", "Bash(python3:*)")
	tokenFile := filepath.Join(rs.stateDir, server.AgentTokenFile)
	for _, tc := range []struct {
		name, command, env string
		args               []string
		code               int
		stdout, stderr     string
		made               string
	}{
		{name: "status and output", command: `python3 -c "import sys; open('made', 'w').write('x'); print('hi'); sys.exit(4)"`,
			args: []string{"--server", rs.url, "--state-dir", rs.stateDir}, code: 4, stdout: "hi\n", made: "made"},
		{name: "from the environment", command: `python3 -c "print('env')"`, env: rs.url,
			args: []string{"--token-file", tokenFile}, stdout: "env\n"},
		{name: "denied", command: "touch denied; rm -rf /", args: []string{"--server", rs.url, "--state-dir", rs.stateDir},
			code: deniedExit, stderr: "denied (sandbox_rejected)"},
		{name: "no agent token", command: `python3 -c "print('x')"`, args: []string{"--server", rs.url, "--token-file", filepath.Join(rs.project, "none")},
			code: 2, stderr: "no agent token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TOOLGATE_SERVER", tc.env)
			session := "cli-" + strings.ReplaceAll(tc.name, " ", "-")
			req, _ := json.Marshal(map[string]any{"tool": "Bash", "input": map[string]any{"command": tc.command}, "cwd": rs.project, "session": session})
			var out, errb bytes.Buffer
			code := RunContext(context.Background(), append([]string{"run", "--tty", "/nonexistent-tty"}, tc.args...), bytes.NewReader(req), &out, &errb)
			if code != tc.code || out.String() != tc.stdout || !strings.Contains(errb.String(), tc.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d %q %q", code, out.String(), errb.String(), tc.code, tc.stdout, tc.stderr)
			}
			evs := runEvents(t, rs.stateDir, session)
			ran := evs[eventlog.TypeToolCompleted] != nil
			if ran != (tc.code != deniedExit && tc.code != 2) {
				t.Fatalf("server log: tool.completed %v: %v", ran, evs)
			}
			if ran && evs[eventlog.TypeToolCompleted]["sandbox"] == nil {
				t.Fatalf("tool.completed without the sandbox report: %v", evs)
			}
			if tc.made != "" {
				if _, err := os.Stat(filepath.Join(rs.project, tc.made)); err != nil {
					t.Fatalf("the call's file: %v", err)
				}
			}
			if _, err := os.Stat(filepath.Join(rs.project, "denied")); !os.IsNotExist(err) {
				t.Fatalf("a denied call ran: %v", err)
			}
		})
	}
}

// TestRunServerHidesNotifyEnv: the webhooks in $TOOLGATE_NOTIFY are
// secrets; a command the server runs does not inherit them.
func TestRunServerHidesNotifyEnv(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	t.Setenv(NotifyEnv, "http://127.0.0.1:9/hook-SECRET-5d1e")
	rs := startServe(t, "--allow", "Bash(python3:*)")
	req, _ := json.Marshal(map[string]any{"tool": "Bash", "cwd": rs.project, "session": "notify-env",
		"input": map[string]any{"command": `python3 -c "import os; print(os.environ.get('TOOLGATE_NOTIFY', 'unset'))"`}})
	var out, errb bytes.Buffer
	code := RunContext(context.Background(), []string{"run", "--tty", "/nonexistent-tty", "--server", rs.url, "--state-dir", rs.stateDir}, bytes.NewReader(req), &out, &errb)
	if code != 0 || out.String() != "unset\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the variable unset", code, out.String(), errb.String())
	}
}
