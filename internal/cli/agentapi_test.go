package cli

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/policy"
)

// TestAgentServer: the one lookup hook, mcp and run use finds the server
// and the agent token in the documented order, and a server that was named
// without a token or with a bad URL is an error, never "no server".
func TestAgentServer(t *testing.T) {
	withToken := t.TempDir()
	if err := os.WriteFile(filepath.Join(withToken, server.AgentTokenFile), []byte("from-state-dir\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(tokenFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	listening := "http://" + ln.Addr().String()
	cases := []struct {
		name                         string
		addr, envServer, envToken    string
		stateDir, tokenFile          string
		discover                     bool
		wantBase, wantToken, wantErr string
	}{
		{name: "nothing named, no discovery", stateDir: withToken},
		{name: "nothing named, no token: decide locally", stateDir: empty, discover: true},
		{name: "named by flag, token from the state directory", addr: listening + "/", stateDir: withToken, wantBase: listening, wantToken: "from-state-dir"},
		{name: "named by environment", envServer: listening, stateDir: withToken, wantBase: listening, wantToken: "from-state-dir"},
		{name: "environment token before the state directory", addr: listening, envToken: "from-env", stateDir: withToken, wantBase: listening, wantToken: "from-env"},
		{name: "token file before the environment", addr: listening, envToken: "from-env", tokenFile: tokenFile, stateDir: withToken, wantBase: listening, wantToken: "from-file"},
		{name: "named without a token", addr: listening, stateDir: empty, wantErr: "no agent token"},
		{name: "named with a missing token file", addr: listening, tokenFile: filepath.Join(empty, "none"), envToken: "from-env", wantErr: "no agent token"},
		{name: "named without a state directory", addr: listening, wantErr: "no agent token"},
		{name: "not a URL", addr: "ftp://x", stateDir: withToken, wantErr: "not an http:// or https:// URL"},
		{name: "bad URL from the environment", envServer: "localhost:8765", stateDir: withToken, wantErr: "not an http:// or https:// URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TOOLGATE_SERVER", tc.envServer)
			t.Setenv("TOOLGATE_TOKEN", tc.envToken)
			a, err := agentServer(tc.addr, tc.stateDir, tc.tokenFile, tc.discover)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want an error with %q", a, err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantBase == "":
				if a != nil {
					t.Fatalf("got a client of %s; want none", a.base)
				}
			case a == nil:
				t.Fatalf("got no client; want %s", tc.wantBase)
			case a.base != tc.wantBase || a.token != tc.wantToken:
				t.Fatalf("got %s with token %q; want %s with %q", a.base, a.token, tc.wantBase, tc.wantToken)
			}
		})
	}
}

// TestAPIDeciderChangedInput: the MCP proxy runs a call as its client sent
// it, so a server's allow of an input a user hook changed is a deny.
func TestAPIDeciderChangedInput(t *testing.T) {
	for _, changed := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d := map[string]any{"decision": "allow", "reason": "rule_allow", "risk": "read", "source": "rule", "tool_call_id": "tc_1"}
			if changed {
				d["updated_input"] = map[string]any{"path": "/elsewhere"}
			}
			json.NewEncoder(w).Encode(d)
		}))
		dec := apiDecider{api: &apiClient{base: srv.URL, token: "t", http: srv.Client()}}
		d, err := dec.Decide(context.Background(), &engine.Request{Tool: "mcp__fs__read", Input: map[string]any{"path": "/here"}, Cwd: "/", Session: "s"})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]policy.Decision{false: policy.Allow, true: policy.Deny}[changed]; d.Decision != want {
			t.Fatalf("changed=%v: %s %s %q", changed, d.Decision, d.Reason, d.Message)
		}
	}
}
