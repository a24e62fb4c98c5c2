package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/toolgate/toolgate/internal/server"
)

// TestCheckRequestErrors: a request that is not one names the field, the
// value and what would be accepted, exits 2, and leaks no Go error text.
func TestCheckRequestErrors(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	for _, c := range []struct {
		name, stdin string
		want        []string
	}{
		{"no cwd", `{"tool":"Read","input":{"file_path":"x"}}`, []string{`request has no "cwd"`, `"cwd":"/home/you/project"`}},
		{"relative cwd", `{"tool":"Read","input":{"file_path":"x"},"cwd":"src"}`, []string{`request "cwd" is "src"`, "absolute directory"}},
		{"no tool", `{"input":{},"cwd":"/tmp"}`, []string{`request has no "tool"`, `"tool":"Bash"`}},
		{"null", `null`, []string{`request has no "tool"`}},
		{"not JSON", `nonsense`, []string{"is not JSON", "at byte 2", `{"tool":"Bash"`}},
		{"empty", ``, []string{"it is empty"}},
		{"array", `[1]`, []string{"it is a JSON array"}},
		{"input a string", `{"tool":"Read","input":"x","cwd":"/tmp"}`, []string{`field "input" is a JSON string`, `such as {"command":"ls"}`}},
		{"tool a number", `{"tool":3,"cwd":"/tmp"}`, []string{`field "tool" is a JSON number; it must be a string`}},
		{"unknown field", `{"tool":"Read","cwd":"/tmp","extra":1}`, []string{`unknown field "extra"`, "tool, input, cwd"}},
		{"cut short", `{"tool":"Read",`, []string{"the JSON ends early"}},
		{"two values", `{"tool":"Read","cwd":"/tmp"} {}`, []string{"more than one JSON value"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := run(t, dir, c.stdin, "check")
			if code != 2 {
				t.Fatalf("exit %d, want 2\n%s%s", code, out, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, leak := range []string{"invalid character", "Go struct", "interface {}", "json: ", "unexpected EOF", "literal null"} {
				if strings.Contains(stderr, leak) {
					t.Errorf("stderr leaks %q:\n%s", leak, stderr)
				}
			}
			// What is printed, if anything, is a deny.
			if out != "" {
				var d struct{ Decision, Reason string }
				if err := json.Unmarshal([]byte(out), &d); err != nil || d.Decision != "deny" || d.Reason != "invalid_request" {
					t.Errorf("stdout %q, want a deny with reason invalid_request", out)
				}
			}
		})
	}
}

// TestInvalidRequestIsAUsageError: explain and run, like check, exit 2
// for a request without a cwd, and say what the cwd must be.
func TestInvalidRequestIsAUsageError(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	req := `{"tool":"Read","input":{"file_path":"x"}}`
	for _, args := range [][]string{
		{"check"}, {"explain"}, {"explain", "--json"},
		{"run", "--state-dir", filepath.Join(dir, "state"), "--tty", filepath.Join(dir, "no-tty")},
	} {
		_, stderr, code := run(t, dir, req, args...)
		if code != 2 || !strings.Contains(stderr, `request has no "cwd": give the absolute directory the call runs in`) {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// twice finds a path said twice in a row, as in "/a/b (/a/b)".
var twice = regexp.MustCompile(`(\S+) \((?:at )?(\S+)\)`)

// TestMessagesNameAPathOnce: a deny or an ask says a path once when it is
// spelled as it resolves, and says where it goes when it is not.
func TestMessagesNameAPathOnce(t *testing.T) {
	dir := workspace(t, &txtar.Archive{Files: []txtar.File{
		{Name: "home/.ssh/id_rsa", Data: []byte("key\n")},
		{Name: "project/.git/hooks/pre-commit", Data: []byte("#!/bin/sh\n")},
	}})
	project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, c := range []struct {
		name  string
		input map[string]any
		tool  string
		want  string
	}{
		{"credential", map[string]any{"file_path": filepath.Join(home, ".ssh/id_rsa")}, "Read", filepath.Join(home, ".ssh/id_rsa") + " holds credentials"},
		{"credential, relative", map[string]any{"file_path": "../home/.ssh/id_rsa"}, "Read", "../home/.ssh/id_rsa (at " + filepath.Join(home, ".ssh/id_rsa") + ") holds credentials"},
		{"protected", map[string]any{"file_path": filepath.Join(project, ".git/hooks/pre-commit"), "content": "x"}, "Write", filepath.Join(project, ".git/hooks/pre-commit") + " is a protected path"},
		{"outside the sandbox", map[string]any{"command": "rm -rf /etc/x"}, "Bash", "writable roots, not to /etc/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := json.Marshal(map[string]any{"tool": c.tool, "input": c.input, "cwd": project})
			out, stderr, code := run(t, dir, string(req), "check")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var d struct{ Message string }
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(d.Message, c.want) {
				t.Errorf("message %q lacks %q", d.Message, c.want)
			}
			for _, m := range twice.FindAllStringSubmatch(d.Message, -1) {
				if m[1] == m[2] {
					t.Errorf("message says %s twice: %q", m[1], d.Message)
				}
			}
		})
	}
}

// TestApproveNoServer: with no server listening, approve and login-link
// say so and what to do, not the dialer's error.
func TestApproveNoServer(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if _, err := server.LoadTokens(state); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"approve", "login-link"} {
		_, stderr, code := run(t, dir, "", verb, "--server", "http://127.0.0.1:1", "--state-dir", state)
		if code == 0 || !strings.Contains(stderr, "no toolgate server listens at http://127.0.0.1:1: start toolgate serve") || strings.Contains(stderr, "dial tcp") {
			t.Errorf("%s without a server: exit %d %s", verb, code, stderr)
		}
	}
}

// TestCommandLineErrors: a missing file or a wrong number of arguments
// says what was expected and is a usage error (exit 2), without Go's own
// wording.
func TestCommandLineErrors(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "lint", "/nonexistent/policy.toml"}, "no policy file at /nonexistent/policy.toml"},
		{[]string{"policy", "import", "claude-code", "/nonexistent/settings.json"}, "no Claude Code settings file at /nonexistent/settings.json"},
		{[]string{"replay"}, "(usage: toolgate replay SESSION [flags])"},
		{[]string{"audit", "extra"}, "(usage: toolgate audit [flags])"},
		{[]string{"audit", "--bogus"}, "unknown flag: --bogus\nRun 'toolgate audit --help' for usage."},
	} {
		_, stderr, code := run(t, dir, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "open /") {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, stderr)
		}
	}
}
