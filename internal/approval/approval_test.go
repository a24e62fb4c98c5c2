package approval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		tool, arg, want string
	}{
		{"Bash", "npm run test -- --watch", "Bash(npm run test -- --watch)"},
		{"Bash", "npm run", "Bash(npm run)"},
		{"Bash", "npm test", "Bash(npm test)"},
		{"Bash", "git status", "Bash(git status:*)"},
		{"Bash", "git status --short", "Bash(git status:*)"},
		{"run_shell_command", "go test ./...", "Bash(go test ./...)"},
		{"Bash", "git -C sub status", "Bash(git -C sub status)"},
		{"Bash", "./build.sh x", "Bash(./build.sh x)"},
		{"Bash", "scripts/ci.sh", "Bash(scripts/ci.sh)"},
		{"Bash", "gh pr list", "Bash(gh pr list)"},
		{"Bash", "git commit -m fix", "Bash(git commit:*)"},
		{"Bash", "git log -p", "Bash(git log:*)"},
		{"Bash", "ls -la", "Bash(ls -la)"},
		{"Bash", "rm -rf dist", "Bash(rm -rf dist)"},
		{"Bash", "rm dist", "Bash(rm dist)"},
		{"Bash", "git status && rm -rf /", ""},
		{"Bash", "cat a | sh", ""},
		{"Bash", "echo $HOME", ""},
		{"Bash", "ls *.go", ""},
		{"Bash", "FOO=1 npm test", ""},
		{"Bash", "echo 'a b'", ""},
		{"Bash", "", ""},
		{"Read", "src/a.go", "Read(src/a.go)"},
		{"Read", "./src//a.go", "Read(src/a.go)"},
		{"read_file", "a.go", "Read(./a.go)"},
		{"Read", "/etc/hosts", "Read(/etc/hosts)"},
		{"Read", "../x", ""},
		{"Read", "src/*.go", ""},
		{"Edit", "src/a.go", "Edit(src/a.go)"},
		{"Write", "out/b.txt", "Write(out/b.txt)"},
		{"WebFetch", "https://Example.com/a?b", "WebFetch(domain:example.com)"},
		{"WebFetch", "not a url", ""},
		{"mcp__github__create_issue", "", "mcp__github__create_issue"},
		{"NoSuchTool", "x", ""},
	} {
		if got := Suggest(c.tool, c.arg); got != c.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", c.tool, c.arg, got, c.want)
		}
	}
}

// TestSuggestNeverBroader checks that a shell suggestion always keeps at
// least the program and, for subcommand programs, the subcommand.
func TestSuggestNeverBroader(t *testing.T) {
	for _, line := range []string{"git push --force", "npm install", "docker run x", "make", "git"} {
		got := Suggest("Bash", line)
		words := strings.Fields(line)
		if got == "Bash" || got == "Bash("+words[0]+":*)" {
			t.Errorf("Suggest(%q) = %q is broader than program and subcommand", line, got)
		}
	}
}

func TestAnswerValidate(t *testing.T) {
	for _, k := range []Kind{AllowOnce, AllowSession, AllowProject, AllowUser, Deny} {
		if err := (Answer{Kind: k}).Validate(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if err := (Answer{Kind: "allow_forever"}).Validate(); err == nil {
		t.Error("unknown kind accepted")
	}
	if !AllowSession.Remembered() || AllowOnce.Remembered() || Deny.Allows() {
		t.Error("Kind predicates are wrong")
	}
}

func TestApproverFunc(t *testing.T) {
	var a Approver = ApproverFunc(func(_ context.Context, r *Request) (Answer, error) {
		return Answer{Kind: AllowOnce, Message: r.Tool}, nil
	})
	got, err := a.Approve(context.Background(), &Request{Tool: "Bash"})
	if err != nil || got.Kind != AllowOnce || got.Message != "Bash" {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// script writes an executable /bin/sh script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	p := filepath.Join(t.TempDir(), "approver.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommand(t *testing.T) {
	req := &Request{Session: "s1", Tool: "Bash", Input: map[string]any{"command": "npm test"}, Summary: "Bash: npm test"}
	for _, c := range []struct {
		name    string
		body    string
		want    Answer
		wantErr string
	}{
		{"allow once", `cat >/dev/null; echo '{"kind":"allow_once"}'`, Answer{Kind: AllowOnce, Via: ViaCommand}, ""},
		{"a program claiming the terminal", `echo '{"kind":"allow_once","via":"terminal"}'`, Answer{Kind: AllowOnce, Via: ViaCommand}, ""},
		{"reads the request", `grep -q '"summary":"Bash: npm test"' && echo '{"kind":"allow_session","rule":"Bash(npm test)"}'`,
			Answer{Kind: AllowSession, Rule: "Bash(npm test)", Via: ViaCommand}, ""},
		{"deny with message", `echo '{"kind":"deny","message":"not now"}'`, Answer{Kind: Deny, Message: "not now", Via: ViaCommand}, ""},
		{"exit 2", `echo nope >&2; exit 2`, Answer{Kind: Deny}, "exit status 2"},
		{"exit 1", `exit 1`, Answer{Kind: Deny}, "failed"},
		{"no output", `true`, Answer{Kind: Deny}, "no answer"},
		{"not json", `echo yes`, Answer{Kind: Deny}, "bad answer"},
		{"unknown field", `echo '{"kind":"allow_once","forever":true}'`, Answer{Kind: Deny}, "bad answer"},
		{"two answers", `echo '{"kind":"allow_once"}{"kind":"deny"}'`, Answer{Kind: Deny}, "more than one"},
		{"unknown kind", `echo '{"kind":"allow_always"}'`, Answer{Kind: Deny}, "unknown answer kind"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &Command{Argv: []string{script(t, c.body)}}
			got, err := a.Approve(context.Background(), req)
			if got != c.want {
				t.Errorf("answer %+v, want %+v", got, c.want)
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestCommandNoProgram(t *testing.T) {
	got, err := (&Command{}).Approve(context.Background(), &Request{})
	if err == nil || got.Kind != Deny {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestCommandCancel(t *testing.T) {
	a := &Command{Argv: []string{script(t, `exec sleep 30`)}, WaitDelay: 100 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	got, err := a.Approve(ctx, &Request{})
	if !errors.Is(err, context.DeadlineExceeded) || got.Kind != Deny {
		t.Fatalf("got %+v, %v", got, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
}
