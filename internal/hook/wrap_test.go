package hook_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/policy"
)

// selfEnv makes this test binary act as the toolgate binary, so that the
// wrapped lines it builds run `toolgate sandbox` for real.
const selfEnv = "TOOLGATE_HOOK_TEST_AS_TOOLGATE"

func TestMain(m *testing.M) {
	if os.Getenv(selfEnv) == "1" {
		os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestWrapLine(t *testing.T) {
	tests := []struct {
		name    string
		c       hook.Confine
		command string
		want    string
	}{
		{"workspace-write", hook.Confine{Self: "/bin/toolgate", Mode: "workspace-write", Workspace: "/w"}, "ls",
			`'/bin/toolgate' sandbox --require landlock --require mountns --sandbox 'workspace-write' --workspace '/w' -- bash -c 'ls'`},
		{"everything", hook.Confine{Self: "/opt/tg dir/toolgate", Mode: "workspace-write", Network: true, Workspace: "/w's",
			WritableRoots: []string{"/r1", "/r 2"}, CredentialPaths: []string{"/state"}}, "echo 'hi'",
			`'/opt/tg dir/toolgate' sandbox --require landlock --require mountns --sandbox 'workspace-write' --network --workspace '/w'\''s' --writable-root '/r1' --writable-root '/r 2' --credential-path '/state' -- bash -c 'echo '\''hi'\'''`},
		{"read-only", hook.Confine{Self: "/t", Mode: "read-only", Workspace: "/w"}, "a\nb",
			"'/t' sandbox --require landlock --require mountns --sandbox 'read-only' --workspace '/w' -- bash -c 'a\nb'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hook.Wrap(tt.c, tt.command)
			if err != nil || got != tt.want {
				t.Fatalf("Wrap = %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
	for _, bad := range []struct {
		c       hook.Confine
		command string
	}{
		{hook.Confine{Self: "/t", Mode: "read-only", Workspace: "/w"}, "echo a\x00b"},
		{hook.Confine{Self: "toolgate", Mode: "read-only", Workspace: "/w"}, "ls"},
		{hook.Confine{Self: "/t", Mode: "read-only"}, "ls"},
	} {
		if got, err := hook.Wrap(bad.c, bad.command); err == nil {
			t.Errorf("Wrap(%+v, %q) = %q, want an error", bad.c, bad.command, got)
		}
	}
}

func TestWrapConfineFor(t *testing.T) {
	tests := []struct {
		name string
		c    engine.Confinement
		want hook.Confine
	}{
		{"workspace-write", engine.Confinement{Sandbox: policy.SandboxWorkspaceWrite, Network: true, Workspace: "/w", WritableRoots: []string{"/r"}, Dir: "/w/sub"},
			hook.Confine{Self: "/t", Mode: "workspace-write", Network: true, Workspace: "/w", WritableRoots: []string{"/r"}, CredentialPaths: []string{"/s"}}},
		{"read-only keeps the network off", engine.Confinement{Sandbox: policy.SandboxReadOnly, Network: true, Workspace: "/w", WritableRoots: []string{"/r"}},
			hook.Confine{Self: "/t", Mode: "read-only", Workspace: "/w", CredentialPaths: []string{"/s"}}},
		{"no workspace runs read-only in its directory", engine.Confinement{Sandbox: policy.SandboxWorkspaceWrite, Dir: "/home/u", WritableRoots: []string{"/r"}},
			hook.Confine{Self: "/t", Mode: "read-only", Workspace: "/home/u", CredentialPaths: []string{"/s"}}},
		{"full access writes everywhere, credentials masked", engine.Confinement{Sandbox: policy.SandboxFullAccess, Network: true, Workspace: "/w"},
			hook.Confine{Self: "/t", Mode: "workspace-write", Network: true, Workspace: "/w", WritableRoots: []string{"/"}, CredentialPaths: []string{"/s"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hook.ConfineFor("/t", tt.c, []string{"/s"}); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ConfineFor = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestWrapInput(t *testing.T) {
	c := hook.Confine{Self: "/t", Mode: "workspace-write", Workspace: "/w"}
	tests := []struct {
		name   string
		client hook.Client
		tool   string
		input  map[string]any
		wrap   bool
	}{
		{"claude bash", hook.ClaudeCode, "Bash", map[string]any{"command": "ls", "timeout": 5000, "description": "list"}, true},
		{"gemini shell", hook.Gemini, "run_shell_command", map[string]any{"command": "ls", "directory": "sub"}, true},
		{"codex bash (exec_command)", hook.Codex, "Bash", map[string]any{"command": "ls"}, true},
		{"codex apply_patch takes no input back", hook.Codex, "apply_patch", map[string]any{"command": "*** Begin Patch"}, false},
		{"read is not a shell", hook.ClaudeCode, "Read", map[string]any{"file_path": "/w/a"}, false},
		{"write is not a shell", hook.Gemini, "write_file", map[string]any{"file_path": "/w/a", "command": "x"}, false},
		{"no command string", hook.ClaudeCode, "Bash", map[string]any{"command": []any{"ls"}}, false},
		{"empty command", hook.ClaudeCode, "Bash", map[string]any{"command": ""}, false},
		{"powershell is judged as PowerShell, not run by bash", hook.ClaudeCode, "PowerShell", map[string]any{"command": "Write-Output \"`rm -rf ~`\""}, false},
		{"pwsh", hook.Gemini, "pwsh", map[string]any{"command": "Get-ChildItem"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]any{}
			for k, v := range tt.input {
				before[k] = v
			}
			got, ok, err := hook.WrapInput(tt.client, tt.tool, tt.input, c)
			if err != nil || ok != tt.wrap || ok != hook.Wrappable(tt.client, tt.tool, tt.input) {
				t.Fatalf("WrapInput = %v, %v, %v; want ok %v", got, ok, err, tt.wrap)
			}
			if !reflect.DeepEqual(tt.input, before) {
				t.Fatalf("the input was changed: %v", tt.input)
			}
			if !ok {
				return
			}
			want, _ := hook.Wrap(c, tt.input["command"].(string))
			if got["command"] != want {
				t.Fatalf("command = %q, want %q", got["command"], want)
			}
			for k, v := range tt.input {
				if k != "command" && !reflect.DeepEqual(got[k], v) {
					t.Errorf("field %s = %v, want %v", k, got[k], v)
				}
			}
			if len(got) != len(tt.input) {
				t.Errorf("fields %v, want those of %v", got, tt.input)
			}
		})
	}
}

// needSandbox skips a test on a machine without Landlock or mount
// namespaces, where the hook does not wrap.
func needSandbox(t *testing.T, ws string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox runs on Linux")
	}
	rep, err := shellrun.Probe(context.Background(), sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: ws})
	if err != nil || rep.FS != "landlock" || rep.Mask != "mountns" {
		t.Skipf("no sandbox here: %v %+v", err, rep)
	}
}

// runLine runs line with bash -c in dir, with this binary as toolgate.
func runLine(t *testing.T, dir, line string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), selfEnv+"=1", "LC_ALL=C.UTF-8")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Fatalf("running %q: %v", line, err)
	return "", 0
}

// tree returns the files under dir and their contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestWrapExecutes runs tricky commands plainly with bash -c and through
// their wrapped line, each in a fresh workspace: output, exit status and
// the files left on disk are the same.
func TestWrapExecutes(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	needSandbox(t, t.TempDir())
	commands := []string{
		`echo 'single' "double" > out.txt`,
		`x=1; echo "$x $((x+1))" > out.txt`,
		`printf '%s\n' "it's" > out.txt`,
		`echo 'a'\''b' > out.txt`,
		"echo one > out.txt\necho two >> out.txt",
		"cat > out.txt <<'EOF'\n$HOME 'q' \"d\" `x`\nEOF",
		"v=val\ncat > out.txt <<EOF\n$v $(echo sub) 'kept'\nEOF",
		`echo 'héllo ✓ 日本 🙂' > 'ünï cödé.txt'`,
		`printf '%s' 'a\\b\nc' > out.txt`,
		`echo "\$notexpanded" '$x' "$(echo "nested 'q'")" > out.txt`,
		`echo '''''' "" ''"'"'' end > out.txt`,
		`touch b1 b2; ls b* > out.txt`,
		`echo -- --sandbox read-only > out.txt; echo "$0" >> out.txt`,
		`echo x > out.txt; exit 3`,
		`f() { echo "in $1"; }; f 'a b' > out.txt; [[ -f out.txt ]] && echo ok`,
		"echo '\t tab' > out.txt; echo ';&|<>(){}' >> out.txt",
		`echo "'" "'\''" > out.txt`,
	}
	for _, command := range commands {
		t.Run(command, func(t *testing.T) {
			plainDir, wrappedDir := t.TempDir(), t.TempDir()
			line, err := hook.Wrap(hook.Confine{Self: self, Mode: "workspace-write", Workspace: wrappedDir}, command)
			if err != nil {
				t.Fatal(err)
			}
			plainOut, plainCode := runLine(t, plainDir, "bash -c "+hook.Quote(command))
			out, code := runLine(t, wrappedDir, line)
			if out != plainOut || code != plainCode {
				t.Fatalf("wrapped: %q, status %d\nplain:   %q, status %d", out, code, plainOut, plainCode)
			}
			got, want := tree(t, wrappedDir), tree(t, plainDir)
			if !reflect.DeepEqual(got, want) || len(want) == 0 {
				t.Fatalf("files wrapped %q\nplain %q", got, want)
			}
		})
	}
}

// TestWrapConfines: the wrapped line of a command that writes outside the
// workspace fails and leaves no file there, while the same command run
// plainly writes it.
func TestWrapConfines(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := t.TempDir(), t.TempDir()
	needSandbox(t, ws)
	escape := filepath.Join(outside, "escape.txt")
	for _, command := range []string{
		"echo x > " + hook.Quote(escape),
		"cd / && cd " + hook.Quote(outside) + " && touch escape.txt",
		"bash -c 'echo x > \"$1\"' _ " + hook.Quote(escape),
	} {
		t.Run(command, func(t *testing.T) {
			line, err := hook.Wrap(hook.Confine{Self: self, Mode: "workspace-write", Workspace: ws}, command)
			if err != nil {
				t.Fatal(err)
			}
			out, code := runLine(t, ws, line)
			if code == 0 {
				t.Errorf("escape exited 0: %s", out)
			}
			if _, err := os.Stat(escape); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was written through the wrapped line (%v): %s", escape, err, out)
			}
			if _, code := runLine(t, ws, command); code != 0 {
				t.Fatalf("the plain command failed: the test proves nothing")
			}
			if err := os.Remove(escape); err != nil {
				t.Fatalf("the plain command wrote no file: %v", err)
			}
		})
	}
}

// TestWrapFullAccessRuns: the line of a danger-full-access call ("/"
// writable) runs under the sandbox and may write outside the workspace.
func TestWrapFullAccessRuns(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := t.TempDir(), t.TempDir()
	needSandbox(t, ws)
	c := hook.ConfineFor(self, engine.Confinement{Sandbox: policy.SandboxFullAccess, Workspace: ws, Dir: ws}, nil)
	line, err := hook.Wrap(c, "echo full > "+hook.Quote(filepath.Join(outside, "f.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if out, code := runLine(t, ws, line); code != 0 {
		t.Fatalf("status %d: %s", code, out)
	}
	if data, err := os.ReadFile(filepath.Join(outside, "f.txt")); err != nil || string(data) != "full\n" {
		t.Fatalf("f.txt = %q, %v", data, err)
	}
}
