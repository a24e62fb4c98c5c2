package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/internal/shellrun"
)

// hookInput returns the tool input a client's answer hands back: Claude
// Code's updatedInput, Gemini CLI's hookSpecificOutput.tool_input; nil
// when there is none.
func hookInput(t *testing.T, client, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("answer is not JSON: %q", out)
	}
	hs, _ := m["hookSpecificOutput"].(map[string]any)
	key := "updatedInput"
	if client == "gemini" {
		key = "tool_input"
	}
	in, _ := hs[key].(map[string]any)
	return in
}

func wrapSandboxHere(t *testing.T, ws string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox runs on Linux")
	}
	rep, err := shellrun.Probe(context.Background(), sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws})
	if err != nil || rep.FS != "landlock" || rep.Mask != "mountns" {
		t.Skipf("no sandbox here: %v %+v", err, rep)
	}
}

// TestHookWrapsShell: an allowed shell command comes back to Claude Code
// and Gemini CLI wrapped in `toolgate sandbox` with the workspace and the
// state directory masked, its other fields kept, and to Codex as its
// updatedInput; denied, asked and non-shell calls, and --no-sandbox-wrap, hand
// back no wrapped command.
func TestHookWrapsShell(t *testing.T) {
	env := newHookEnv(t)
	wrapSandboxHere(t, env.project)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(env.project, "a.txt")
	tests := []struct {
		name, client, tool string
		input              map[string]any
		flags              []string
		decision           string
		wrapped            bool
	}{
		{"claude bash", "claude-code", "Bash", map[string]any{"command": "ls -la 'x y'", "timeout": 5000.0, "description": "list"}, nil, "allow", true},
		{"gemini shell", "gemini", "run_shell_command", map[string]any{"command": "ls -la 'x y'", "description": "list"}, nil, "allow", true},
		{"codex bash", "codex", "Bash", map[string]any{"command": "ls -la 'x y'"}, nil, "allow", true},
		{"codex off", "codex", "Bash", map[string]any{"command": "ls"}, []string{"--no-sandbox-wrap"}, "allow", false},
		{"claude deny", "claude-code", "Bash", map[string]any{"command": "rm -rf /"}, nil, "deny", false},
		{"gemini deny", "gemini", "run_shell_command", map[string]any{"command": "rm -rf /"}, nil, "deny", false},
		{"claude ask", "claude-code", "Write", map[string]any{"file_path": file, "content": "x"}, nil, "ask", false},
		{"claude read", "claude-code", "Read", map[string]any{"file_path": file}, nil, "allow", false},
		{"gemini read", "gemini", "read_file", map[string]any{"absolute_path": file}, nil, "allow", false},
		{"claude off", "claude-code", "Bash", map[string]any{"command": "ls", "timeout": 5000.0}, []string{"--no-sandbox-wrap"}, "allow", false},
		{"gemini off", "gemini", "run_shell_command", map[string]any{"command": "ls"}, []string{"--no-sandbox-wrap"}, "allow", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runHookCLI(t, tt.client, payloadFor(tt.client, tt.tool, env.project, tt.input, nil), append(env.flags, tt.flags...)...)
			d, reason := hookDecision(t, tt.client, out)
			if code != 0 || d != tt.decision {
				t.Fatalf("code %d, decision %q (%s), want %s; stderr %s", code, d, reason, tt.decision, errOut)
			}
			got := hookInput(t, tt.client, out)
			if !tt.wrapped {
				if got != nil && !reflect.DeepEqual(got, tt.input) {
					t.Fatalf("input handed back changed: %v, want %v", got, tt.input)
				}
				if strings.Contains(out, " sandbox --require landlock --require mountns --sandbox ") {
					t.Fatalf("answer holds a wrapped command: %s", out)
				}
				return
			}
			want, err := hook.Wrap(hook.Confine{Self: self, Mode: "workspace-write", Workspace: env.project,
				CredentialPaths: []string{env.state}}, tt.input["command"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if got["command"] != want {
				t.Fatalf("command = %q\nwant      %q", got["command"], want)
			}
			for k, v := range tt.input {
				if k != "command" && !reflect.DeepEqual(got[k], v) {
					t.Errorf("field %s = %v, want %v", k, got[k], v)
				}
			}
			if !strings.Contains(reason, "runs in toolgate sandbox") {
				t.Errorf("reason %q does not say the command runs in the sandbox", reason)
			}
		})
	}
}

// TestHookWrapNeedsSandbox: where Landlock or mount namespaces are
// missing, the command goes back unwrapped and the reason says why.
func TestHookWrapNeedsSandbox(t *testing.T) {
	env := newHookEnv(t)
	for _, off := range []string{"landlock", "userns"} {
		t.Run(off, func(t *testing.T) {
			t.Setenv(sandbox.DisableEnv, off)
			input := map[string]any{"command": "ls"}
			code, out, errOut := runHookCLI(t, "claude-code", payloadFor("claude-code", "Bash", env.project, input, nil), env.flags...)
			d, reason := hookDecision(t, "claude-code", out)
			if code != 0 || d != "allow" {
				t.Fatalf("code %d, decision %q, stderr %s", code, d, errOut)
			}
			if got := hookInput(t, "claude-code", out); !reflect.DeepEqual(got, input) {
				t.Fatalf("input handed back = %v, want %v", got, input)
			}
			if !strings.Contains(reason, "not run in the sandbox") {
				t.Fatalf("reason %q does not say the sandbox is missing", reason)
			}
		})
	}
}

// TestHookWrapFullAccess: in danger-full-access the command is still
// wrapped, with the whole file system writable and credentials masked.
func TestHookWrapFullAccess(t *testing.T) {
	env := newHookEnv(t)
	wrapSandboxHere(t, env.project)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(t.TempDir(), "user.toml")
	if err := os.WriteFile(user, []byte("sandbox = \"danger-full-access\"\nnetwork = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	input := map[string]any{"command": "ls"}
	code, out, errOut := runHookCLI(t, "claude-code", payloadFor("claude-code", "Bash", env.project, input, nil), append(env.flags, "--user-policy", user)...)
	if d, reason := hookDecision(t, "claude-code", out); code != 0 || d != "allow" {
		t.Fatalf("code %d, decision %q (%s), stderr %s", code, d, reason, errOut)
	}
	want, _ := hook.Wrap(hook.Confine{Self: self, Mode: "workspace-write", Network: true, Workspace: env.project,
		WritableRoots: []string{"/"}, CredentialPaths: []string{env.state}}, "ls")
	if got := hookInput(t, "claude-code", out)["command"]; got != want {
		t.Fatalf("command = %q\nwant      %q", got, want)
	}
}

// TestHookWrapPolicyOff: wrap_hooks = false in the user policy hands the
// command back as it is; policy lint accepts the setting and reports a
// value that is not a bool with its file and line.
func TestHookWrapPolicyOff(t *testing.T) {
	env := newHookEnv(t)
	wrapSandboxHere(t, env.project)
	dir := t.TempDir()
	user := filepath.Join(dir, "user.toml")
	if err := os.WriteFile(user, []byte("wrap_hooks = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"claude-code", "gemini"} {
		tool := map[string]string{"claude-code": "Bash", "gemini": "run_shell_command"}[client]
		input := map[string]any{"command": "ls", "description": "list"}
		code, out, errOut := runHookCLI(t, client, payloadFor(client, tool, env.project, input, nil), append(env.flags, "--user-policy", user)...)
		if d, reason := hookDecision(t, client, out); code != 0 || d != "allow" {
			t.Fatalf("%s: code %d, decision %q (%s), stderr %s", client, code, d, reason, errOut)
		}
		if got := hookInput(t, client, out); !reflect.DeepEqual(got, input) {
			t.Fatalf("%s: input handed back = %v, want %v", client, got, input)
		}
	}
	if out, stderr, code := run(t, dir, "", "policy", "lint", user); code != 0 || !strings.HasPrefix(out, "ok:") {
		t.Fatalf("lint wrap_hooks = false: exit %d: %s %s", code, out, stderr)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("\nwrap_hooks = \"no\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, dir, "", "policy", "lint", bad); code != 1 || !strings.Contains(stderr, "bad.toml:2") {
		t.Fatalf("lint wrap_hooks = \"no\": exit %d: %s", code, stderr)
	}
}

// TestHookKeepsClaudeRules: a shell command one of Claude Code's own
// deny rules matches (in any settings file the hook can see, a project's
// included, through chains and wrappers) is denied by the hook itself, and
// one an ask rule matches goes back as ask, unwrapped, for Claude Code's
// person; a settings file the hook cannot read or a rule it cannot match
// denies. None of them hands back an allowed command outside the sandbox,
// which a repository's .claude/settings.json could otherwise bring about.
func TestHookKeepsClaudeRules(t *testing.T) {
	env := newHookEnv(t)
	wrapSandboxHere(t, env.project)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	userSettings := filepath.Join(home, ".claude", "settings.json")
	localSettings := filepath.Join(env.project, ".claude", "settings.local.json")
	tests := []struct {
		name, user, local, command string
		decision                   string
		wrapped                    bool
	}{
		{"no settings", "", "", "touch a.txt", "allow", true},
		{"user deny", `{"permissions":{"deny":["Bash(touch:*)"]}}`, "", "touch a.txt", "deny", false},
		{"user deny in a chain", `{"permissions":{"deny":["Bash(touch:*)"]}}`, "", "ls && touch a.txt", "deny", false},
		{"user deny through a wrapper", `{"permissions":{"deny":["Bash(touch:*)"]}}`, "", "timeout 5 touch a.txt", "deny", false},
		{"project deny of a decoy through a wrapper", "", `{"permissions":{"deny":["Bash(zzdecoy:*)"]}}`, "timeout 5 zzdecoy; touch a.txt", "deny", false},
		{"user deny of another command", `{"permissions":{"deny":["Bash(rm:*)"]}}`, "", "touch a.txt", "allow", true},
		{"project ask", "", `{"permissions":{"ask":["Bash(touch a.txt)"]}}`, "touch a.txt", "ask", false},
		{"project ask and deny", "", `{"permissions":{"ask":["Bash(touch:*)"],"deny":["Bash(ls:*)"]}}`, "ls; touch a.txt", "deny", false},
		{"allow rules only", `{"permissions":{"allow":["Bash(touch:*)"]}}`, "", "touch a.txt", "allow", true},
		{"user settings not JSON", `{"permissions":`, "", "touch a.txt", "deny", false},
		{"project settings not JSON", "", `{"permissions":`, "touch a.txt", "deny", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(userSettings)
			os.Remove(localSettings)
			if tt.user != "" {
				write(userSettings, tt.user)
			}
			if tt.local != "" {
				write(localSettings, tt.local)
			}
			input := map[string]any{"command": tt.command}
			flags := append([]string{"--allow", "Bash(touch:*)", "--allow", "Bash(ls:*)", "--allow", "Bash(timeout:*)", "--allow", "Bash(zzdecoy:*)"}, env.flags...)
			code, out, errOut := runHookCLI(t, "claude-code", payloadFor("claude-code", "Bash", env.project, input, nil), flags...)
			d, reason := hookDecision(t, "claude-code", out)
			if code != 0 || d != tt.decision {
				t.Fatalf("code %d, decision %q (%s), want %s; stderr %s", code, d, reason, tt.decision, errOut)
			}
			got := hookInput(t, "claude-code", out)
			wrapped := got != nil && strings.Contains(got["command"].(string), " sandbox ")
			if wrapped != tt.wrapped {
				t.Fatalf("wrapped = %v, want %v; reason %q; input %v", wrapped, tt.wrapped, reason, got)
			}
			if d != "allow" && !strings.Contains(reason, "Claude Code's own settings") {
				t.Errorf("reason %q does not name Claude Code's settings", reason)
			}
		})
	}
}
