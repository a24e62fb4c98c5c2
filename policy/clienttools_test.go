package policy

import "testing"

// TestClientToolNames: the agent clients' own tools are known under the
// names the clients give them and their canonical names, so that rules
// can name them; names too generic to say what a tool does are not.
func TestClientToolNames(t *testing.T) {
	tests := []struct {
		name   string
		want   Tool
		known  bool
		client bool
	}{
		{"TodoWrite", ToolAgentState, true, true},
		{"write_todos", ToolAgentState, true, true},
		{"update_plan", ToolAgentState, true, true},
		{"AskUserQuestion", ToolAgentState, true, true},
		{"ToolSearch", ToolAgentState, true, true},
		{"agentstate", ToolAgentState, true, true},
		{"CronCreate", ToolSchedule, true, true},
		{"ScheduleWakeup", ToolSchedule, true, true},
		{"Skill", ToolSkill, true, true},
		{"ExitPlanMode", ToolPlanExit, true, true},
		{"view_image", ToolRead, true, false},
		{"Agent", "", false, false},
		{"Task", "", false, false},
		{"Workflow", "", false, false},
		{"SendMessage", "", false, false},
		{"write_stdin", "", false, false},
	}
	for _, tt := range tests {
		got, ok := Canonical(tt.name)
		if got != tt.want || ok != tt.known || got.ClientTool() != tt.client {
			t.Errorf("Canonical(%q) = %q, %v (client tool %v); want %q, %v (%v)", tt.name, got, ok, got.ClientTool(), tt.want, tt.known, tt.client)
		}
	}
	r, err := ParseRule("TodoWrite", Deny, Position{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.AppliesToTool(ToolAgentState, "") || r.AppliesToTool(ToolSchedule, "") {
		t.Errorf("a bare TodoWrite rule must cover agentstate and nothing else")
	}
	if _, err := ParseRule("Agent", Deny, Position{}); err == nil {
		t.Errorf("a rule naming Agent parsed; toolgate does not know that tool")
	}
}
