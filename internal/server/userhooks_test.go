package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// TestUserHooksThroughServer: POST /v1/check runs the user policy's hooks:
// a hook's deny is the answer (reason hook, naming the hook), a changed
// input comes back as updated_input with the decision about it, and every
// run is a hook.ran event in the log.
func TestUserHooksThroughServer(t *testing.T) {
	e, userFile := newRulesEnv(t)
	scripts := realDir(t)
	deny := filepath.Join(scripts, "deny.sh")
	must(t, os.WriteFile(deny, []byte("#!/bin/sh\necho 'no deploys from agents' >&2\nexit 2\n"), 0o755))
	change := filepath.Join(scripts, "change.sh")
	must(t, os.WriteFile(change, []byte(`#!/bin/sh
echo '{"updatedInput": {"file_path": "'"$PWD/b.txt"'", "content": "x"}}'
`), 0o755))
	must(t, os.MkdirAll(filepath.Dir(userFile), 0o755))
	must(t, os.WriteFile(userFile, []byte(fmt.Sprintf(`[permissions]
allow = ["Write(b.txt)"]

[[hooks]]
event = "PreToolUse"
matcher = "Bash"
command = %q

[[hooks]]
event = "PreToolUse"
matcher = "Write"
command = %q
`, deny, change)), 0o644))

	r := e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", "make deploy", false)).json(t)
	if r["decision"] != "deny" || r["reason"] != "hook" || !strings.Contains(r["message"].(string), "no deploys from agents") || !strings.Contains(r["message"].(string), userFile+":4") {
		t.Fatalf("check answered %v", r)
	}
	body := map[string]any{"tool": "Write", "input": map[string]any{"file_path": filepath.Join(e.project, "a.txt"), "content": "x"}, "cwd": e.project, "session": "s2"}
	r = e.call("POST", "/v1/check", e.tokens.Agent, body).json(t)
	in, _ := r["updated_input"].(map[string]any)
	if r["decision"] != "allow" || r["reason"] != "rule_allow" || in["file_path"] != filepath.Join(e.project, "b.txt") {
		t.Fatalf("check answered %v", r)
	}
	for _, s := range []string{"s1", "s2"} {
		evs := e.events(s, eventlog.TypeHookRan)
		if len(evs) == 0 {
			t.Fatalf("session %s: no hook.ran event", s)
		}
		var p map[string]any
		must(t, json.Unmarshal(evs[0].Payload, &p))
		if p["layer"] != "user" || p["type"] != "command" || !strings.HasPrefix(p["hook"].(string), userFile+":") {
			t.Fatalf("hook.ran %v", p)
		}
	}
}
