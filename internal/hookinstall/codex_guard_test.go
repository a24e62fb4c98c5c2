package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/policy"
)

const (
	codexInput = `{"hook_event_name":"PreToolUse"}`
	codexDeny  = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no \"quoted\" \\ way"}}`
	codexAllow = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok"}}`
)

// Codex runs the tool when its PreToolUse hook crashes, is killed, is not
// found, exits 1, runs past its timeout or gives no allow or deny (an ask
// included) with exit 0. The installed entry runs
// toolgate under a guard that turns each of those into exit 2 with a
// reason on stderr (Codex's block), and passes toolgate's own answers on
// unchanged. The test runs the installed command the way Codex does
// ($SHELL -lc COMMAND), with programs standing in for toolgate.
func TestCodexGuardBlocksFailures(t *testing.T) {
	tests := []struct {
		name     string
		script   string // the program's body; "" means it does not exist
		code     int
		stdout   string
		stderrHa string
		timeout  int // the entry's timeout, when not the installed one
	}{
		{"deny answer", "printf '%s\\n' '" + codexDeny + "'", 0, codexDeny, "", 0},
		{"allow answer", `[ "$in" = '` + codexInput + `' ] || exit 1; printf '%s\n' '` + codexAllow + "'", 0, codexAllow, "", 0},
		{"toolgate's failure", "printf '%s\\n' '" + codexDeny + "'; echo 'toolgate: policy.toml:1: bad' >&2; exit 2", 2, codexDeny, "toolgate: policy.toml:1: bad", 0},
		{"killed", "kill -KILL $$", 2, "", "status 137", 0},
		{"exit 1", "echo oops >&2; exit 1", 2, "", "status 1 ", 0},
		{"garbage", "echo 'not { json'", 2, "", "no answer", 0},
		{"ask answer", "printf '%s\\n' '" + strings.Replace(codexAllow, `"allow"`, `"ask"`, 1) + "'", 2, "", "no answer", 0},
		{"other JSON", "echo '{\"decision\":\"block\"}'", 2, "", "no answer", 0},
		{"empty output", "exit 0", 2, "", "no answer", 0},
		{"missing", "", 2, "", "status 127", 0},
		{"past the deadline", "exec sleep 30", 2, "", "status 137", 12},
	}
	shells := []string{"/bin/sh"}
	if b, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, b)
	}
	for _, dirName := range []string{"bin", "it's a dir"} {
		for _, tt := range tests {
			if dirName != "bin" && tt.name != "deny answer" && tt.name != "killed" {
				continue // the quoted path is checked once each way
			}
			t.Run(dirName+"/"+tt.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), dirName)
				prog := filepath.Join(dir, "toolgate")
				if tt.script != "" {
					write(t, prog, "#!/bin/sh\nin=$(cat)\n"+tt.script+"\n", 0o755)
				}
				o, p := opts(t, Codex)
				o.Command = prog
				if _, err := Install(o); err != nil {
					t.Fatal(err)
				}
				cmd := codexCommand(t, read(t, p), "PreToolUse")
				if tt.timeout != 0 {
					cmd = codexGuardCommand(o, tt.timeout)
				}
				if !isToolgateCommand(cmd, o) {
					t.Errorf("isToolgateCommand(%q) = false", cmd)
				}
				for _, sh := range shells {
					c := exec.Command(sh, "-lc", cmd)
					c.Stdin = strings.NewReader(codexInput)
					var out, errb bytes.Buffer
					c.Stdout, c.Stderr = &out, &errb
					err := c.Run()
					code := 0
					var ee *exec.ExitError
					if errors.As(err, &ee) {
						code = ee.ExitCode()
					} else if err != nil {
						t.Fatal(err)
					}
					if code != tt.code || strings.TrimSpace(out.String()) != tt.stdout || !strings.Contains(errb.String(), tt.stderrHa) {
						t.Errorf("%s: exit %d stdout %q stderr %q, want exit %d stdout %q stderr holding %q", sh, code, out.String(), errb.String(), tt.code, tt.stdout, tt.stderrHa)
					}
					if code == 2 && strings.TrimSpace(errb.String()) == "" {
						t.Errorf("%s: exit 2 with nothing on stderr, which Codex does not take as a block", sh)
					}
				}
			})
		}
	}
}

// The guard is Codex's PreToolUse entry only; install and uninstall treat
// it as toolgate's.
func TestCodexGuardInstallUninstall(t *testing.T) {
	o, p := opts(t, Codex)
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	first := read(t, p)
	pre, post := codexCommand(t, first, "PreToolUse"), codexCommand(t, first, "PostToolUse")
	if pre != codexGuardCommand(o, 600) || !strings.Contains(pre, "sleep 590 ") {
		t.Errorf("PreToolUse runs %q, want the guard around %s", pre, bin)
	}
	if post != HookCommand(o) {
		t.Errorf("PostToolUse runs %q, want %q", post, HookCommand(o))
	}
	res, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if read(t, p) != first || len(res.Notes) != 2 {
		t.Errorf("a second install changed the file or noted more: %q", res.Notes)
	}
	other := o
	other.Command = "/elsewhere/toolgate"
	res, err = Install(other)
	if err != nil {
		t.Fatal(err)
	}
	if read(t, p) != first || !strings.Contains(strings.Join(res.Notes, "\n"), "already runs") {
		t.Errorf("install with another toolgate: notes %q", res.Notes)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("uninstall left %s: %v", p, err)
	}
}

func codexCommand(t *testing.T, src, event string) string {
	t.Helper()
	var f struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(src), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Hooks[event]) != 1 || len(f.Hooks[event][0].Hooks) != 1 {
		t.Fatalf("hooks.%s: %s", event, src)
	}
	return f.Hooks[event][0].Hooks[0].Command
}

// The guard passes on exactly what toolgate's hook answers Codex: its
// allow and its deny, as [hook.Answer] writes them.
func TestCodexGuardPassesToolgateAnswers(t *testing.T) {
	for _, d := range []policy.Decision{policy.Allow, policy.Deny, policy.Ask} {
		t.Run(d.String(), func(t *testing.T) {
			r := hook.Answer(Codex, hook.Verdict{Decision: d, Reason: `a "quoted" \ reason`, Input: map[string]any{"command": "ls"}})
			dir := t.TempDir()
			write(t, filepath.Join(dir, "answer.json"), string(r.Stdout), 0o644)
			prog := filepath.Join(dir, "toolgate")
			write(t, prog, "#!/bin/sh\ncat >/dev/null\ncat '"+filepath.Join(dir, "answer.json")+"'\n", 0o755)
			o, _ := opts(t, Codex)
			o.Command = prog
			c := exec.Command("/bin/sh", "-c", codexGuardCommand(o, 600))
			c.Stdin = strings.NewReader(codexInput)
			out, err := c.Output()
			if err != nil || strings.TrimSpace(string(out)) != strings.TrimSpace(string(r.Stdout)) {
				t.Errorf("guard gave %q (%v), want toolgate's answer %q passed on", out, err, r.Stdout)
			}
		})
	}
}
