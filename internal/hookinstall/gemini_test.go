package hookinstall

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestGeminiGuardDeniesWhenTheHookFails runs the command Install writes for
// Gemini CLI with bash -c, as Gemini CLI does, around stand-in hook
// programs. Gemini CLI runs the tool when a hook is killed, hangs past its
// timeout or prints text that is not JSON with exit 0; the guard must turn
// each of those into a deny JSON with exit 2, and pass a real answer on.
func TestGeminiGuardDeniesWhenTheHookFails(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Gemini CLI runs hooks with PowerShell on Windows")
	}
	// A directory whose name the shell must have quoted.
	dir := filepath.Join(t.TempDir(), "a b'c")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		script   string // the stand-in hook program; "" for a missing one
		code     int
		decision string
		reason   string // in the answer's reason
	}{
		{"allow passes", `read -r line; printf '{"decision":"allow","reason":"%s"}\n' "$(echo "$line" | tr -d '"')"`, 0, "allow", "{tool_name:run_shell_command}"},
		{"deny passes", `cat >/dev/null; echo '{"decision":"deny","reason":"toolgate: deny (rule_deny)"}'; echo why >&2; exit 2`, 2, "deny", "rule_deny"},
		{"killed", `kill -9 $$`, 2, "deny", "exit status 137"},
		{"crash with a message", `echo 'panic: boom' >&2; exit 2`, 2, "deny", "exit status 2"},
		{"exit 1", `cat >/dev/null; echo '{"decision":"allow"}'; exit 1`, 2, "deny", "exit status 1"},
		{"garbage", `cat >/dev/null; echo 'not json'`, 2, "deny", "exit status 0"},
		{"nothing", `cat >/dev/null`, 2, "deny", "exit status 0"},
		{"hangs past the timeout", `exec sleep 30`, 2, "deny", "exit status 137"},
		{"missing program", "", 2, "deny", "exit status 127"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if tt.script != "" {
				if err := os.WriteFile(prog, []byte("#!/bin/sh\n"+tt.script+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			o, p := opts(t, Gemini)
			o.Command = prog
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Hooks map[string][]struct {
					Hooks []hookCmd `json:"hooks"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal([]byte(read(t, p)), &doc); err != nil {
				t.Fatal(err)
			}
			h := doc.Hooks["BeforeTool"][0].Hooks[0]
			// The test's own timeout: a 2 s hook timeout gives a 1 s
			// watchdog.
			command := geminiCommand(HookCommand(o), 2000)
			if h.Command != geminiCommand(HookCommand(o), h.Timeout) {
				t.Fatalf("installed command %q", h.Command)
			}
			cmd := exec.Command("bash", "-c", command)
			cmd.Stdin = strings.NewReader(`{"tool_name":"run_shell_command"}` + "\n")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			var ans struct{ Decision, Reason string }
			if err := json.Unmarshal([]byte(stdout.String()), &ans); err != nil {
				t.Fatalf("stdout %q is not one JSON object: %v (stderr %q)", stdout.String(), err, stderr.String())
			}
			if code != tt.code || ans.Decision != tt.decision || !strings.Contains(ans.Reason, tt.reason) {
				t.Errorf("exit %d, answer %+v; want exit %d, %s with %q", code, ans, tt.code, tt.decision, tt.reason)
			}
			if took > 10*time.Second {
				t.Errorf("the guard took %s: the watchdog did not stop the hook", took)
			}
		})
	}
}

func TestGeminiGuardRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		plain   string
		timeout int
		seconds int
	}{
		{"/opt/tg/bin/toolgate hook gemini", 600000, 595},
		{"'/home/a b/toolgate' hook gemini", 60000, 55},
		{"toolgate hook gemini", 6000, 3},
		{"toolgate hook gemini", 500, 1},
	} {
		cmd := geminiCommand(tt.plain, tt.timeout)
		plain, seconds, ok := geminiPlain(cmd)
		if runtime.GOOS == "windows" {
			ok, plain, seconds = true, cmd, tt.seconds
		}
		if !ok || plain != tt.plain || seconds != tt.seconds {
			t.Errorf("geminiPlain(geminiCommand(%q, %d)) = %q, %d, %v", tt.plain, tt.timeout, plain, seconds, ok)
		}
	}
	if _, _, ok := geminiPlain("/opt/tg/bin/toolgate hook gemini"); ok {
		t.Error("a plain command read as guarded")
	}
}

// TestGeminiUninstallRemovesGuardedAndPlain checks that install reports the
// plain command an older install wrote, and uninstall removes it and the
// guarded one.
func TestGeminiUninstallRemovesGuardedAndPlain(t *testing.T) {
	o, p := opts(t, Gemini)
	write(t, p, `{"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command", "command": "/usr/bin/toolgate hook gemini", "timeout": 600000}]}]}}`+"\n", 0o644)
	res, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	// The older, unguarded entry is reported, with the command to run
	// instead.
	if n := strings.Join(res.Notes, "\n"); !strings.Contains(n, `already runs "/usr/bin/toolgate hook gemini"`) || !strings.Contains(n, "sleep 595") {
		t.Errorf("notes %q do not report the unguarded hook", res.Notes)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "toolgate") {
		t.Errorf("uninstall left a toolgate hook:\n%s", b)
	}
}
