package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHookAskInBypassMode: Claude Code in bypassPermissions mode may run
// a call its hook answers with ask without asking anyone, so without a
// server a call that needs a person is denied there, as for Gemini CLI
// and Codex; in the default mode it is still handed to Claude Code as ask.
func TestHookAskInBypassMode(t *testing.T) {
	env := newHookEnv(t)
	input := map[string]any{"file_path": filepath.Join(env.project, "a.txt"), "content": "x"}
	for _, tt := range []struct{ mode, want string }{
		{"default", "ask"},
		{"bypassPermissions", "deny"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			payload := payloadFor("claude-code", "Write", env.project, input, map[string]any{"permission_mode": tt.mode})
			code, out, stderr := runHookCLI(t, "claude-code", payload, env.flags...)
			d, reason := hookDecision(t, "claude-code", out)
			if code != 0 || d != tt.want {
				t.Fatalf("exit %d, decision %q (%s), want %s; stderr %s", code, d, reason, tt.want, stderr)
			}
			if tt.want == "deny" && !strings.Contains(reason, "bypassPermissions") {
				t.Fatalf("reason %q does not name the mode", reason)
			}
		})
	}
}
