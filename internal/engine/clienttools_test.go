package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestClientTools: the agent clients' own tools. Agent-state tools are
// allowed as reads are; scheduling, skills and leaving plan
// mode ask in every mode, whatever allow rule or bypass says, are denied
// where nobody can be asked, and plan mode does not offer them; deny
// rules name them by the client's or the canonical name.
func TestClientTools(t *testing.T) {
	w := newWorld(t)
	allowAll := layers{project: `[permissions]
allow = ["Skill", "CronCreate", "ExitPlanMode"]`}
	none := map[string]any{}
	w.run(t, []tcase{
		{name: "todo list", tool: "TodoWrite", input: map[string]any{"todos": []any{}}, want: policy.Allow, reason: ReasonReadOnly},
		{name: "question", tool: "AskUserQuestion", input: none, want: policy.Allow, reason: ReasonReadOnly},
		{name: "todo list in plan mode", tool: "write_todos", input: none, mode: "plan", want: policy.Allow, reason: ReasonReadOnly},
		{name: "schedule asks", tool: "CronCreate", input: none, want: policy.Ask, reason: ReasonExecute},
		{name: "schedule asks despite an allow rule", l: allowAll, tool: "CronCreate", input: none, want: policy.Ask, reason: ReasonExecute},
		{name: "skill asks in bypass", tool: "Skill", input: none, mode: "bypassPermissions", want: policy.Ask, reason: ReasonExecute},
		{name: "skill denied by dontAsk", tool: "Skill", input: none, mode: "dontAsk", want: policy.Deny, reason: ReasonExecute},
		{name: "leaving plan mode asks", l: allowAll, tool: "ExitPlanMode", input: none, want: policy.Ask, reason: ReasonExecute},
		{name: "leaving plan mode in plan mode", l: allowAll, tool: "ExitPlanMode", input: none, mode: "plan", want: policy.Deny, reason: ReasonModePlan},
		{name: "scheduling in plan mode", tool: "ScheduleWakeup", input: none, mode: "plan", want: policy.Deny, reason: ReasonModePlan},
		{name: "deny rule by client name", l: layers{project: `[permissions]
deny = ["TodoWrite"]`}, tool: "update_plan", input: none, want: policy.Deny, reason: ReasonRuleDeny},
		{name: "deny rule by canonical name", l: layers{project: `[permissions]
deny = ["skill"]`}, tool: "Skill", input: none, want: policy.Deny, reason: ReasonRuleDeny},
	})
}
