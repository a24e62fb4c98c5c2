package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHookGeminiWebFetchJudgesEachURL: Gemini CLI's web_fetch names its
// URLs inside a prompt. The hook judges each as a WebFetch: the call is
// allowed only when every URL is, any denied URL denies it, an asked one
// needs a person (a deny without a server), and a prompt without a URL is
// refused. An allow hands back the prompt as it was.
func TestHookGeminiWebFetchJudgesEachURL(t *testing.T) {
	env := newHookEnv(t)
	pol := filepath.Join(env.project, "user.toml")
	if err := os.WriteFile(pol, []byte(`network = true
[permissions]
allow = ["WebFetch(domain:example.com)", "WebFetch(domain:docs.example.org)", "WebFetch(domain:github.com)"]
ask   = ["WebFetch(domain:ask.example.net)"]
deny  = ["WebFetch(domain:evil.example)"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(env.project, "none.toml")
	flags := []string{"--user-policy", pol, "--managed-policy", none, "--state-dir", env.state}
	tests := []struct {
		name, prompt string
		code         int
		decision     string
		reason       string
	}{
		{"one allowed", "summarize https://example.com/a", 0, "allow", "rule_allow"},
		{"all allowed", "compare https://example.com/a with https://docs.example.org/b", 0, "allow", "rule_allow"},
		{"one denied", "compare https://example.com/a with https://evil.example/x", 0, "deny", "WebFetch(domain:evil.example)"},
		{"denied first", "https://evil.example/x then https://example.com/a", 0, "deny", "WebFetch(domain:evil.example)"},
		{"one asked", "compare https://example.com/a with https://ask.example.net/x", 0, "deny", "WebFetch(domain:ask.example.net)"},
		{"one unknown", "compare https://example.com/a with https://other.example/x", 0, "deny", "network_request"},
		{"loopback spelled as a number", "read http://2130706433/", 0, "deny", "127.0.0.1"},
		// github.com is allowed, but Gemini CLI fetches a blob from
		// raw.githubusercontent.com.
		{"github blob fetched from raw", "read https://github.com/o/r/blob/main/a.go", 0, "deny", "raw.githubusercontent.com"},
		{"github page", "read https://github.com/o/r", 0, "allow", "WebFetch(domain:github.com)"},
		{"no url", "what is new in Go", 2, "deny", "names no URL"},
		{"not http", "read https://example.com/a and ftp://example.com/b", 2, "deny", "not an http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runHookCLI(t, "gemini", payloadFor("gemini", "web_fetch", env.project, map[string]any{"prompt": tt.prompt}, nil), flags...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s %s", code, tt.code, out, stderr)
			}
			d, reason := hookDecision(t, "gemini", out)
			if d != tt.decision || !strings.Contains(reason, tt.reason) {
				t.Fatalf("decision %q (%s), want %q with %q", d, reason, tt.decision, tt.reason)
			}
			if d != "allow" {
				return
			}
			var ans struct {
				HookSpecificOutput struct {
					ToolInput map[string]any `json:"tool_input"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(out), &ans); err != nil {
				t.Fatal(err)
			}
			if got := ans.HookSpecificOutput.ToolInput; len(got) != 1 || got["prompt"] != tt.prompt {
				t.Errorf("the allow hands back %v, want the prompt unchanged", got)
			}
		})
	}
}

// TestHookGeminiWebFetchThroughServer: with a server, each URL of a Gemini
// CLI web_fetch is put to it in turn, and the call runs only when the
// person allowed every asked one.
func TestHookGeminiWebFetchThroughServer(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "user.toml")
	if err := os.WriteFile(pol, []byte(`network = true
[permissions]
allow = ["WebFetch(domain:example.com)"]
ask   = ["WebFetch(domain:ask.example.net)"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := startServe(t, "--user-policy", pol)
	t.Setenv("TOOLGATE_SERVER", "")
	t.Setenv("TOOLGATE_TOKEN", "")
	none := filepath.Join(rs.project, "none.toml")
	flags := []string{"--user-policy", pol, "--managed-policy", none, "--state-dir", rs.stateDir, "--server", rs.url}
	tests := []struct {
		name     string
		prompt   string
		answers  []string // to the questions, in order
		decision string
		reason   string
	}{
		{"both asked, both allowed", "https://ask.example.net/a https://ask.example.net/b", []string{"allow_once", "allow_once"}, "allow", "user_approved"},
		{"both asked, second denied", "https://ask.example.net/c https://ask.example.net/d", []string{"allow_once", "deny"}, "deny", "user_denied"},
		{"allowed and asked, allowed", "https://example.com/ https://ask.example.net/e", []string{"allow_once"}, "allow", "rule_allow"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := payloadFor("gemini", "web_fetch", rs.project, map[string]any{"prompt": tt.prompt}, map[string]any{"session_id": "wf" + string(rune('a'+i))})
			type result struct {
				code     int
				out, err string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errOut := runHookCLI(t, "gemini", payload, flags...)
				done <- result{code, out, errOut}
			}()
			answered := map[string]bool{}
			for _, answer := range tt.answers {
				id := ""
				deadline := time.Now().Add(20 * time.Second)
				for id == "" {
					_, list := rs.do(t, "GET", "/v1/approvals?state=pending", rs.approver, nil)
					l, _ := list["approvals"].([]any)
					for _, a := range l {
						if a, _ := a.(map[string]any)["id"].(string); !answered[a] {
							id = a
						}
					}
					if time.Now().After(deadline) {
						t.Fatalf("no question reached the server: %v", list)
					}
					time.Sleep(50 * time.Millisecond)
				}
				answered[id] = true
				if code, m := rs.post(t, "/v1/approvals/"+id, rs.approver, map[string]any{"answer": answer}); code != 200 {
					t.Fatalf("answer: %d %v", code, m)
				}
			}
			select {
			case r := <-done:
				d, reason := hookDecision(t, "gemini", r.out)
				if r.code != 0 || d != tt.decision || !strings.Contains(reason, tt.reason) {
					t.Fatalf("exit %d, decision %q (%s), want %q with %q", r.code, d, reason, tt.decision, tt.reason)
				}
				if d == "allow" && !strings.Contains(r.out, `"prompt":"`+tt.prompt+`"`) {
					t.Errorf("the allow does not hand back the prompt: %s", r.out)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the hook did not return after the answers")
			}
		})
	}
}

// TestHookGeminiGrepSearch: Gemini CLI's search tool is grep_search, whose
// include_pattern says which files it reads: a search of .env files is a
// credential read, one of Go files is allowed and goes back as it came.
func TestHookGeminiGrepSearch(t *testing.T) {
	env := newHookEnv(t)
	tests := []struct {
		input    map[string]any
		decision string
		reason   string
	}{
		{map[string]any{"pattern": "KEY", "include_pattern": ".env"}, "deny", "credential_access"},
		{map[string]any{"pattern": "KEY", "include_pattern": "**/id_rsa"}, "deny", "credential_access"},
		{map[string]any{"pattern": "func", "include_pattern": "*.go"}, "allow", "read_only"},
		{map[string]any{"pattern": "func", "dir_path": env.project}, "allow", "read_only"},
	}
	for _, tt := range tests {
		code, out, stderr := runHookCLI(t, "gemini", payloadFor("gemini", "grep_search", env.project, tt.input, nil), env.flags...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s %s", tt.input, code, out, stderr)
		}
		d, reason := hookDecision(t, "gemini", out)
		if d != tt.decision || !strings.Contains(reason, tt.reason) {
			t.Errorf("%v: decision %q (%s), want %q with %q", tt.input, d, reason, tt.decision, tt.reason)
			continue
		}
		if d == "allow" {
			var ans struct {
				HookSpecificOutput struct {
					ToolInput map[string]any `json:"tool_input"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(out), &ans); err != nil {
				t.Fatal(err)
			}
			if got := ans.HookSpecificOutput.ToolInput; len(got) != len(tt.input) || got["include"] != nil {
				t.Errorf("%v: the allow hands back %v", tt.input, got)
			}
		}
	}
}
