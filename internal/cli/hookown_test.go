package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHookOwnTools: the clients' own tools get the decision their table
// entry says, under the local policy and flags: agent-state tools are
// allowed, tools that act ask (Claude Code) or
// are denied (the clients that cannot ask), ExitPlanMode is denied in
// plan mode even when a rule would allow it, a write a tool is judged as
// is judged as a write, refused tools fail closed, and rules name the
// tools by the client's or the canonical name.
func TestHookOwnTools(t *testing.T) {
	env := newHookEnv(t)
	tests := []struct {
		name, client, tool string
		input              map[string]any
		extra              map[string]any
		flags              []string
		decision           string
		code               int
		reason             string
	}{
		{"todo", "claude-code", "TodoWrite", map[string]any{"todos": []any{}}, nil, nil, "allow", 0, "own state"},
		{"question", "claude-code", "AskUserQuestion", map[string]any{"questions": []any{}}, nil, nil, "allow", 0, "own state"},
		{"agent", "claude-code", "Agent", map[string]any{"prompt": "look"}, nil, nil, "deny", 2, "parent's session"},
		{"cron create asks", "claude-code", "CronCreate", map[string]any{"cron": "* * * * *", "prompt": "x"}, nil, nil, "ask", 0, "run again later"},
		{"skill asks even when allowed", "claude-code", "Skill", map[string]any{"skill": "deploy"}, nil, []string{"--allow", "Skill"}, "ask", 0, "no hook sees"},
		{"skill denied by rule", "claude-code", "Skill", map[string]any{"skill": "deploy"}, nil, []string{"--deny", "Skill"}, "deny", 0, "rule_deny"},
		{"exit plan mode asks", "claude-code", "ExitPlanMode", map[string]any{"plan": "p"}, nil, nil, "ask", 0, "leaves plan mode"},
		{"exit plan mode in the client's plan mode", "claude-code", "ExitPlanMode", map[string]any{"plan": "p"}, map[string]any{"permission_mode": "plan"}, []string{"--allow", "ExitPlanMode"}, "deny", 0, "plan_mode"},
		{"exit plan mode in toolgate's plan mode", "claude-code", "ExitPlanMode", map[string]any{"plan": "p"}, nil, []string{"--mode", "plan"}, "deny", 0, "plan_mode"},
		{"exit plan mode in bypass", "claude-code", "ExitPlanMode", map[string]any{"plan": "p"}, nil, []string{"--mode", "bypassPermissions"}, "ask", 0, "leaves plan mode"},
		{"enter worktree is a write", "claude-code", "EnterWorktree", map[string]any{"name": "feat"}, nil, nil, "ask", 0, "worktrees"},
		{"enter worktree outside", "claude-code", "EnterWorktree", map[string]any{"name": "../../../../../../tmp/x"}, nil, nil, "deny", 0, "sandbox"},
		{"workflow", "claude-code", "Workflow", map[string]any{"script": "x"}, nil, nil, "deny", 2, "Workflow runs a script"},
		{"exit worktree remove", "claude-code", "ExitWorktree", map[string]any{"action": "remove"}, nil, nil, "deny", 2, "removes the worktree"},
		{"gemini todos", "gemini", "write_todos", map[string]any{"todos": []any{}}, nil, nil, "allow", 0, "own state"},
		{"gemini memory", "gemini", "save_memory", map[string]any{"fact": "x"}, nil, nil, "deny", 0, "GEMINI.md"},
		{"codex plan", "codex", "update_plan", map[string]any{"plan": []any{}}, nil, nil, "allow", 0, "own state"},
		{"codex image", "codex", "view_image", map[string]any{"path": filepath.Join(env.project, "a.png")}, nil, nil, "allow", 0, "read"},
		{"codex skill", "codex", "Skill", map[string]any{"skill": "x"}, nil, nil, "deny", 2, "not a tool codex has"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runHookCLI(t, tt.client, payloadFor(tt.client, tt.tool, env.project, tt.input, tt.extra), append(append([]string{}, env.flags...), tt.flags...)...)
			d, reason := hookDecision(t, tt.client, out)
			if code != tt.code || d != tt.decision || !strings.Contains(reason, tt.reason) {
				t.Fatalf("exit %d, %s %q; want exit %d, %s with %q (stderr %s)", code, d, reason, tt.code, tt.decision, tt.reason, errOut)
			}
			if tt.tool == "EnterWorktree" && hookInput(t, tt.client, out) != nil {
				t.Fatalf("an input was handed back for a call judged as another tool: %s", out)
			}
		})
	}
}
