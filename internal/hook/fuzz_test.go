package hook

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// FuzzParse: whatever a client sends, Parse returns a call it can judge or
// an error, never panics; a call it returns names a tool policy knows, and
// every answer to it, and every failure, is one JSON object.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"session_id":"s","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
		`{"session_id":"s","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"mcp_fs_read","tool_input":{},"mcp_context":{"server_name":"fs"}}`,
		`{"session_id":"s","cwd":"/tmp","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/tmp/x"},"tool_response":"x"}`,
		`{"tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch\n*** End Patch"},"cwd":"/"}`,
		`{"session_id":"s","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"web_fetch","tool_input":{"prompt":"see https://a.example/x and http://0x7f.1:80/"}}`,
		`{"session_id":"s","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"pattern":"x","include_pattern":"*.go"}}`,
		``, `null`, `{}`, `[]`, `{"tool_name":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, client := range Clients {
			call, err := Parse(client, []byte(data))
			if err != nil {
				checkReply(t, Fail(client, err.Error()))
				continue
			}
			if _, ok := policy.Canonical(call.Request.Tool); !ok && !policy.IsMCPName(call.Request.Tool) {
				t.Fatalf("%s: Parse(%q) gave tool %q, which policy does not know", client, data, call.Request.Tool)
			}
			for _, r := range call.Checks() {
				if _, ok := policy.Canonical(r.Tool); !ok || r.Cwd != call.Request.Cwd || r.Session != call.Request.Session {
					t.Fatalf("%s: Parse(%q) gave the check %+v", client, data, r)
				}
			}
			for _, d := range []policy.Decision{policy.Allow, policy.Ask, policy.Deny} {
				checkReply(t, Answer(client, Verdict{Decision: d, Reason: "r", Input: call.Request.Input}))
			}
		}
	})
}

func checkReply(t *testing.T, r Reply) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Stdout, &v); err != nil || v == nil {
		t.Fatalf("the reply is not one JSON object: %q (%v)", r.Stdout, err)
	}
}
