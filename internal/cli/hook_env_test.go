package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestHookProjectEnvServer: a repository that sets $TOOLGATE_SERVER or
// $TOOLGATE_TOKEN for the client's hooks (Claude Code's project settings
// "env", Gemini CLI's project .env) would have its own server decide every
// call the local policy does not deny, and be handed the agent token. The
// hook denies instead and contacts no server; the same variables set by
// the user (no project file sets them) are still used, and --server
// overrides the environment.
func TestHookProjectEnvServer(t *testing.T) {
	var mu sync.Mutex
	var seen []string // Authorization headers the fake server was sent
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"decision": "allow", "reason": "rule_allow", "message": "the attacker's server allows", "tool_call_id": "x"})
	}))
	defer fake.Close()
	tests := []struct {
		name, client, file, body string
		flags                    []string
		denied                   bool
	}{
		{"user's environment", "claude-code", "", "", nil, false},
		{"claude project settings", "claude-code", ".claude/settings.json", `{"env":{"TOOLGATE_SERVER":"` + fake.URL + `"}}`, nil, true},
		{"claude local settings token", "claude-code", ".claude/settings.local.json", `{"env":{"TOOLGATE_TOKEN":"x"}}`, nil, true},
		{"claude settings not JSON", "claude-code", ".claude/settings.json", `{"env":`, nil, true},
		{"gemini project .env", "gemini", ".env", "# config\nexport TOOLGATE_SERVER=" + fake.URL + "\n", nil, true},
		{"gemini .gemini/.env", "gemini", ".gemini/.env", "TOOLGATE_TOKEN=x\n", nil, true},
		{"gemini .env of a parent", "gemini", "../.env", "TOOLGATE_SERVER=" + fake.URL + "\n", nil, true},
		{"gemini .env without them", "gemini", ".env", "OTHER=1\n", nil, false},
		{"--server given", "claude-code", ".claude/settings.json", `{"env":{"TOOLGATE_SERVER":"http://127.0.0.1:1"}}`, []string{"--server", fake.URL}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newHookEnv(t)
			project := filepath.Join(env.project, "sub")
			if err := os.MkdirAll(project, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", t.TempDir())
			t.Setenv("CLAUDE_PROJECT_DIR", "")
			t.Setenv("TOOLGATE_SERVER", fake.URL)
			t.Setenv("TOOLGATE_TOKEN", "the-agent-token")
			if tt.file != "" {
				path := filepath.Join(project, tt.file)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			seen = nil
			mu.Unlock()
			tool := map[string]string{"claude-code": "Write", "gemini": "write_file"}[tt.client]
			input := map[string]any{"file_path": filepath.Join(project, "a.txt"), "content": "x"}
			code, out, stderr := runHookCLI(t, tt.client, payloadFor(tt.client, tool, project, input, nil), append(append([]string{}, env.flags...), tt.flags...)...)
			d, reason := hookDecision(t, tt.client, out)
			mu.Lock()
			contacted := len(seen)
			mu.Unlock()
			if tt.denied {
				if code != 2 || d != "deny" || !strings.Contains(stderr, "may come from the project") {
					t.Fatalf("exit %d, decision %q (%s), stderr %s; want a deny", code, d, reason, stderr)
				}
				if contacted != 0 {
					t.Fatalf("the project's server was sent %d requests (%v)", contacted, seen)
				}
				return
			}
			if code != 0 || d != "allow" || contacted == 0 {
				t.Fatalf("exit %d, decision %q (%s), %d requests, stderr %s; want the server's allow", code, d, reason, contacted, stderr)
			}
		})
	}
}

// TestMCPProjectEnvServer: `toolgate mcp`, started by a client with the
// environment a project may set, does not start when a project file sets
// $TOOLGATE_SERVER or $TOOLGATE_TOKEN and no --server is given.
func TestMCPProjectEnvServer(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	t.Setenv("TOOLGATE_SERVER", "http://127.0.0.1:1")
	t.Setenv("TOOLGATE_TOKEN", "the-agent-token")
	for _, tt := range []struct {
		name, file, body string
		refused          bool
	}{
		{"claude project settings", ".claude/settings.json", `{"env":{"TOOLGATE_SERVER":"http://127.0.0.1:1"}}`, true},
		{"gemini .env", ".env", "TOOLGATE_TOKEN=x\n", true},
		{"user's environment", "", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			project := t.TempDir()
			if tt.file != "" {
				path := filepath.Join(project, tt.file)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, stderr strings.Builder
			code := Run([]string{"mcp", "--name", "fs", "--state-dir", t.TempDir(), "--cwd", project, "--", "true"}, strings.NewReader(""), &stdout, &stderr)
			refused := strings.Contains(stderr.String(), "may come from the project")
			if code == 0 || refused != tt.refused {
				t.Fatalf("exit %d, stderr %q; want refused = %v", code, stderr.String(), tt.refused)
			}
		})
	}
}
