package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHookCwdThroughLink: a call whose cwd the client names through a
// link in its project directory (Codex's exec_command workdir), leading
// to another repository, is judged against the project the hook was
// started in (the hook's working directory): a write there is outside the
// workspace and acceptEdits does not allow it. Started elsewhere (here in
// /), the hook knows no project directory above the cwd and finds the root
// from the cwd's real path, as before; so does a cwd whose real path
// stays in the project.
func TestHookCwdThroughLink(t *testing.T) {
	env := newHookEnv(t)
	p := env.project
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(other, ".git"), filepath.Join(p, "src")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(other, filepath.Join(p, "x")); err != nil {
		t.Fatal(err)
	}
	flags := append([]string{"--mode", "acceptEdits", "--no-sandbox-wrap"}, env.flags...)
	calls := map[string]struct {
		tool  string
		input map[string]any
	}{
		"claude-code": {"Write", map[string]any{"file_path": "pwned.txt", "content": "x"}},
		"gemini":      {"run_shell_command", map[string]any{"command": "touch pwned.txt"}},
		"codex":       {"Bash", map[string]any{"command": "touch pwned.txt"}},
	}
	for _, tc := range []struct {
		name, wd, cwd, want string
	}{
		{"through a link out of the project", p, filepath.Join(p, "x"), "deny"},
		{"through a link, the hook started outside the project", "/", filepath.Join(p, "x"), "allow"},
		{"a subdirectory of the project", p, filepath.Join(p, "src"), "allow"},
	} {
		for client, c := range calls {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				t.Chdir(tc.wd)
				code, out, stderr := runHookCLI(t, client, payloadFor(client, c.tool, tc.cwd, c.input, nil), flags...)
				d, reason := hookDecision(t, client, out)
				if d != tc.want {
					t.Fatalf("decision %q (%s), exit %d %s; want %q", d, reason, code, stderr, tc.want)
				}
				if _, err := os.Stat(filepath.Join(other, "pwned.txt")); err == nil {
					t.Fatal("the hook made a file")
				}
			})
		}
	}
}
