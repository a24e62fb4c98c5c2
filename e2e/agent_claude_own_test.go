package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentClaudeOwnTools runs a headless Claude Code turn whose model
// calls Claude Code's own tools, offered in -p mode: one that changes only
// the agent's state runs, one that schedules a later run is put to a
// person (who denies it here), and ones toolgate does not judge are denied
// with their reason.
func TestAgentClaudeOwnTools(t *testing.T) {
	requireAgent(t, "claude")
	s := startServer(t)
	claudeWriteFile(t, filepath.Join(s.home, ".config", "toolgate", "policy.toml"), claudePolicy)
	if out, err := exec.Command("git", "init", "-q", s.project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	home := agentHome(t)
	claudeInstall(t, home, "")

	script := []claudeStep{
		/* 0 */ {Tool: "ListAgents", Input: map[string]any{}},
		/* 1 */ {Tool: "ScheduleWakeup", Input: map[string]any{"delaySeconds": 600, "reason": "check again", "prompt": "look", "noop": false}},
		/* 2 */ {Tool: "Workflow", Input: map[string]any{"script": "export const meta = {name: 'x', description: 'x', phases: []}"}},
		/* 3 */ {Tool: "Agent", Input: map[string]any{"description": "look around", "prompt": "list the files", "subagent_type": "general-purpose"}},
		/* 4 */ {},
	}
	mock := claudeStartMock(t, script)
	type ran struct{ out, errOut string }
	done := make(chan ran, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		out, errOut := claudeRun(t, s, mock, home, claudeSession, 90*time.Second, nil)
		done <- ran{out, errOut}
	}()
	t.Cleanup(func() { <-ended })

	var a approval
	select {
	case r := <-done:
		t.Fatalf("claude ended before ScheduleWakeup was put to the person\nstdout:\n%s\nstderr:\n%s", r.out, r.errOut)
	default:
		a = s.pending(t, claudeSession)
	}
	if !strings.Contains(a.Request.Summary, "ScheduleWakeup") {
		t.Fatalf("pending approval %q is not about ScheduleWakeup", a.Request.Summary)
	}
	s.answer(t, a.ID, map[string]any{"answer": "deny"})
	r := <-done
	if t.Failed() || !mock.done() {
		t.Fatalf("the scripted turn did not reach its end\nstdout:\n%s\nstderr:\n%s", r.out, r.errOut)
	}
	for i, w := range []struct {
		isError bool
		has     string
	}{
		{false, ""},
		{true, "user_denied"},
		{true, `unknown tool "Workflow"`},
		{true, `unknown tool "Agent"`},
	} {
		res, ok := mock.result(i)
		if !ok {
			t.Errorf("step %d (%s): no tool result reached the model", i, script[i].Tool)
			continue
		}
		if res.IsError != w.isError || !strings.Contains(res.Text, w.has) {
			t.Errorf("step %d (%s): the model got is_error=%v %q, want is_error=%v holding %q", i, script[i].Tool, res.IsError, res.Text, w.isError, w.has)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.out, r.errOut)
	}
}
