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

// TestHookCwdThroughLinkServer: with a server, the hook sends its working
// directory along, so a session whose first call is made through the link
// is bound to the project, whether the hook put the call to the server
// (an echo, allowed here) or reported its own deny (a write there).
func TestHookCwdThroughLinkServer(t *testing.T) {
	rs := startServe(t)
	t.Setenv("TOOLGATE_SERVER", "")
	t.Setenv("TOOLGATE_TOKEN", "")
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(other, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(rs.project, "x")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(rs.project)
	none := filepath.Join(rs.project, "none.toml")
	flags := []string{"--mode", "acceptEdits", "--no-sandbox-wrap", "--user-policy", none, "--managed-policy", none, "--state-dir", rs.stateDir, "--server", rs.url}
	for _, tc := range []struct{ session, command, want string }{
		{"lnk-asked", "echo hi", "allow"},
		{"lnk-denied", "touch pwned.txt", "deny"},
	} {
		t.Run(tc.session, func(t *testing.T) {
			payload := payloadFor("codex", "Bash", filepath.Join(rs.project, "x"), map[string]any{"command": tc.command}, map[string]any{"session_id": tc.session})
			code, out, stderr := runHookCLI(t, "codex", payload, flags...)
			if d, reason := hookDecision(t, "codex", out); d != tc.want {
				t.Fatalf("decision %q (%s), exit %d %s; want %q", d, reason, code, stderr, tc.want)
			}
			_, m := rs.do(t, "GET", "/v1/events?type=session.bound&session="+tc.session, rs.approver, nil)
			evs, _ := m["events"].([]any)
			if len(evs) == 0 {
				t.Fatalf("no session.bound event: %v", m)
			}
			p, _ := evs[0].(map[string]any)["payload"].(map[string]any)
			if p["workspace"] != rs.project {
				t.Fatalf("the session was bound to %v, want the project %s", p["workspace"], rs.project)
			}
		})
	}
}
