package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// TestCheckAgentDenied: a call the agent's side reports as denied is
// recorded as a request and a permission.resolved deny with reason
// agent_denied, actor system and the agent's reason, and answered deny,
// whatever the server's policy says of it: an allow rule, an ask that
// would wait for a person, a deny. Nothing in the field turns it into an
// allow, and /v1/run runs nothing so reported.
func TestCheckAgentDenied(t *testing.T) {
	e := newEnv(t, withRun(t, "Bash(touch:*)", "Bash(npm test)"))
	marker := filepath.Join(e.project, "ran")
	// Without the field, the server's policy allows these.
	for _, c := range []map[string]any{e.check("den-control", cmdAllow, false), runBody("den-control", "touch "+filepath.Join(e.project, "control"), e.project)} {
		path := "/v1/check"
		if _, ok := c["wait"]; !ok {
			path = "/v1/run"
		}
		if m := e.call("POST", path, "agent-token", c).json(t); m["decision"] != "allow" {
			t.Fatalf("control %s: %v", path, m)
		}
	}
	tests := []struct {
		name, command string
		denied        any
		path          string
		wantMsg       string
	}{
		{"allow rule", cmdAllow, map[string]any{"reason": "toolgate: deny (rule_deny): Bash(npm *)", "by": "the claude-code hook's policy"}, "/v1/check", "denied by the claude-code hook's policy before it reached the server: toolgate: deny (rule_deny): Bash(npm *)"},
		{"allow rule with wait", cmdAllow, map[string]any{"reason": "local rule"}, "/v1/check?wait", "denied by the agent's side before it reached the server: local rule"},
		{"ask", cmdAsk, map[string]any{"reason": "no", "by": "the MCP proxy's policy"}, "/v1/check", "denied by the MCP proxy's policy before it reached the server: no"},
		{"deny", cmdDeny, map[string]any{}, "/v1/check", "denied by the agent's side before it reached the server"},
		{"run of an allowed command", "touch " + marker, map[string]any{"reason": "local deny", "by": "a person on the page"}, "/v1/run", "denied by the agent's side before it reached the server: local deny"},
		{"decision in the field", cmdAllow, map[string]any{"reason": "x", "by": "y", "decision": "allow"}, "/v1/check", ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			session := fmt.Sprintf("den%d", i)
			body := e.check(session, tc.command, tc.path == "/v1/check?wait")
			body["denied"] = tc.denied
			path := strings.TrimSuffix(tc.path, "?wait")
			resp := e.call("POST", path, "agent-token", body)
			if tc.wantMsg == "" {
				// An unknown field is refused, and nothing is allowed.
				if resp.code != http.StatusBadRequest {
					t.Fatalf("status %d: %s", resp.code, resp.body)
				}
				if evs := e.events(session, eventlog.TypePermissionResolved); len(evs) != 0 {
					t.Fatalf("recorded %d decisions", len(evs))
				}
				return
			}
			if resp.code != http.StatusOK {
				t.Fatalf("status %d: %s", resp.code, resp.body)
			}
			m := resp.json(t)
			if m["decision"] != "deny" || m["reason"] != "agent_denied" || m["message"] != tc.wantMsg {
				t.Fatalf("answer %v", m)
			}
			if m["receipt"] != nil {
				t.Errorf("a deny with a receipt: %v", m)
			}
			requested := e.events(session, eventlog.TypeToolCallRequested)
			resolved := e.events(session, eventlog.TypePermissionResolved)
			// One event: the decision, which carries the call.
			if len(requested) != 0 || len(resolved) != 1 {
				t.Fatalf("%d requests, %d decisions in the log", len(requested), len(resolved))
			}
			if asked := e.events(session, eventlog.TypePermissionRequested); len(asked) != 0 {
				t.Fatalf("a person was asked: %d questions", len(asked))
			}
			var req, res map[string]any
			must(t, json.Unmarshal(resolved[0].Payload, &res))
			req = res
			if in, _ := req["input"].(map[string]any); req["tool"] != "Bash" || in == nil {
				t.Errorf("request %v, decision %v", req, res)
			}
			if res["decision"] != "deny" || res["reason"] != "agent_denied" || res["actor"] != "system" || res["message"] != tc.wantMsg {
				t.Errorf("decision %v", res)
			}
			if path == "/v1/check" && m["tool_call_id"] != res["toolCallId"] {
				t.Errorf("answer's id %v, log's %v", m["tool_call_id"], res["toolCallId"])
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the denied command ran")
			}
		})
	}
}
