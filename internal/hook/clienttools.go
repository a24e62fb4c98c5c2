package hook

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// own is how the hook judges one of a client's own tools: those that are
// not a shell, a file tool, a web tool or an MCP tool. The hooks toolgate
// installs match every tool, so each one a client offers is decided here
// deliberately; a name that is in no table stays unknown and is denied.
type own struct {
	// judge, when set, returns the request judged instead of the call
	// as it is: what the tool does, in terms the gate judges. A call
	// judged so gets no input handed back.
	judge func(cwd string, in map[string]any) (tool string, judged map[string]any, err error)
	// refuse, when set, says why the tool stays unknown: it is denied.
	refuse string
}

// ownTools lists, per client, the tools of its own that toolgate decides.
// Tools whose effects stay in the agent's own state are judged as
// agentstate, which the default allows; tools that act are judged as
// what they do: schedule, skill and planexit ask in every mode, plan
// mode denies them, and a write is judged as a write. Most client names
// are aliases in [policy.Canonical], so that a rule and `toolgate
// explain` can name them.
var ownTools = map[Client]map[string]own{
	ClaudeCode: {
		// Writes the session's todo list, which only the agent and its
		// person read.
		"TodoWrite": {},
		// Puts a question to the person; the answer goes to the model.
		"AskUserQuestion": {},
		// Read the output of a background shell or task, whose command
		// was judged when it started.
		"BashOutput": {}, "TaskOutput": {},
		// Stop a background shell or task this session started: stopping
		// takes no new action.
		"KillShell": {}, "TaskStop": {},
		// Lists the agents the session may message; sending is SendMessage.
		"ListAgents": {},
		// Lists the session's scheduled prompts.
		"CronList": {},
		// Takes a scheduled prompt away (from the session, or from
		// .claude/scheduled_tasks.json for a durable one): one run less,
		// none added.
		"CronDelete": {},
		// Enters plan mode, which makes the agent stricter.
		"EnterPlanMode": {},
		// Hands code-review findings to the client's own screen.
		"ReportFindings": {},
		// Fetches the schemas of the client's deferred tools; each of
		// those is judged when it is called.
		"ToolSearch": {},
		// Schedule the agent to run again later, unattended (CronCreate's
		// durable jobs even after a restart, from
		// .claude/scheduled_tasks.json): a person decides (ask). Ending
		// ScheduleWakeup's loop (stop) is the agent's own state.
		"CronCreate":     {},
		"ScheduleWakeup": {judge: scheduleWakeup},
		// Leaves plan mode: denied in plan mode (toolgate's, or the
		// client's, which the hook passes on as no looser), else asked.
		"ExitPlanMode": {},
		// A skill or slash command may run `!` shell lines of its own,
		// which no hook sees: a person decides (ask).
		"Skill": {},
		// Start a subagent ("Task" before Claude Code 2.x). Each of its
		// tool calls comes through this hook again, but under the
		// parent's session_id: the hook does not tell them apart, so a
		// subagent would use its parent's session approvals and leases,
		// which a subagent must never inherit. Unknown until the hook
		// passes the subagent on as the request's agent and parent.
		"Agent": {refuse: subagentRefused}, "Task": {refuse: subagentRefused},
		// With a name (or none), creates a git worktree under
		// .claude/worktrees in the repository and moves the session there:
		// a write in the repository. With a path, moves the session into
		// an existing worktree, which may lie outside the project: that
		// stays unknown.
		"EnterWorktree": {judge: enterWorktree},
		// Leaving a worktree and keeping it changes only where the session
		// works; removing it deletes the worktree and its branch, whatever
		// they hold, which the input does not name: that stays unknown.
		"ExitWorktree": {judge: exitWorktree},
		// Runs a workflow script that starts many agents in the
		// background; what the script does is not judged.
		"Workflow": {refuse: "Workflow runs a script of its own that starts agents in the background, which toolgate cannot judge"},
		// Sends a message to other agents and sessions, local or in the
		// cloud, whose own gates toolgate does not know.
		"SendMessage": {refuse: "SendMessage reaches other agents and sessions, whose gates toolgate does not know"},
		// Runs a long-lived shell command (or opens a WebSocket) in the
		// background and feeds each line it prints to the model. Judged as
		// a shell it would run outside the sandbox, for its input is not
		// what Bash's is; Bash with run_in_background is judged and wrapped.
		"Monitor": {refuse: "Monitor runs a background command or WebSocket outside the sandbox toolgate wraps Bash in: use Bash with run_in_background"},
	},
	Gemini: {
		// Writes the session's todo list.
		"write_todos": {},
		// Appends a fact to ~/.gemini/GEMINI.md, which goes into every
		// later session's prompt: a write of that file, outside the
		// workspace (asked, and so denied for Gemini CLI unless a rule
		// allows it).
		"save_memory": {judge: saveMemory},
		// Reads every file its glob patterns match, which toolgate does
		// not expand; read_file, glob and search_file_content are judged.
		"read_many_files": {refuse: "read_many_files reads the files its patterns match, which toolgate does not expand: use read_file"},
	},
	Codex: {
		// Updates the plan Codex shows its person.
		"update_plan": {},
		// Puts questions to the person (plan mode).
		"request_user_input": {},
		// Reads the thread's goal and budget.
		"get_goal": {},
		// view_image is judged as a read of its "path" (an alias of read).
		// Types into a running command's terminal: what that runs is not
		// judged.
		"write_stdin": {refuse: "write_stdin types into a running command, which toolgate cannot judge"},
	},
}

// ownTool returns the request a call of client's tool name is judged by:
// the name and input it is judged under, and whether they are not the
// call's own (then no input may be handed back). It fails for a tool the
// client's table refuses, and for an agent client's own tool (see
// [policy.Tool.ClientTool]) that this client does not have.
func ownTool(client Client, name, cwd string, in map[string]any) (tool string, judged map[string]any, rewritten bool, err error) {
	o, listed := ownTools[client][name]
	switch {
	case listed && o.refuse != "":
		return "", nil, false, fmt.Errorf("unknown tool %q: %s, so toolgate denies it", name, o.refuse)
	case listed && o.judge != nil:
		tool, judged, err := o.judge(cwd, in)
		if err != nil {
			return "", nil, false, fmt.Errorf("%s: %v", name, err)
		}
		return tool, judged, tool != name, nil
	case listed:
		return name, in, false, nil
	}
	if t, ok := policy.Canonical(name); ok && t.ClientTool() {
		return "", nil, false, fmt.Errorf("unknown tool %q: it is not a tool %s has, so it is denied", name, client)
	}
	return name, in, false, nil
}

func scheduleWakeup(_ string, in map[string]any) (string, map[string]any, error) {
	if stop, _ := in["stop"].(bool); stop {
		return string(policy.ToolAgentState), in, nil
	}
	return "ScheduleWakeup", in, nil
}

const subagentRefused = "a subagent's calls reach the hook under its parent's session, whose approvals and leases a subagent must not inherit"

// enterWorktree judges the worktree EnterWorktree creates as a write of
// <cwd>/.claude/worktrees/<name> (the directory itself when no name is
// given: the client picks one below it). The client puts it below the
// repository's root, which is the session's directory when the session
// starts there, as it does in a project.
func enterWorktree(cwd string, in map[string]any) (string, map[string]any, error) {
	if _, ok := in["path"]; ok {
		return "", nil, fmt.Errorf("input.path moves the session into an existing worktree, which may lie outside the project, so toolgate denies it: give a name instead")
	}
	dir := filepath.Join(cwd, ".claude", "worktrees")
	if v, ok := in["name"]; ok && v != nil {
		name, ok := v.(string)
		if !ok {
			return "", nil, fmt.Errorf(`input.name: expected a string`)
		}
		if strings.ContainsRune(name, 0) {
			return "", nil, fmt.Errorf(`input.name: must not contain a NUL byte`)
		}
		// Join cleans "..": the path judged is where the name leads.
		dir = filepath.Join(dir, name)
	}
	return "Write", map[string]any{"file_path": dir}, nil
}

func exitWorktree(_ string, in map[string]any) (string, map[string]any, error) {
	if in["action"] == "keep" {
		return string(policy.ToolAgentState), in, nil
	}
	return "", nil, fmt.Errorf(`action %q removes the worktree and its branch, which toolgate cannot judge, so it is denied: exit with "keep"`, fmt.Sprint(in["action"]))
}

// saveMemory judges save_memory as the write of Gemini CLI's global
// memory file.
func saveMemory(string, map[string]any) (string, map[string]any, error) {
	return "write_file", map[string]any{"file_path": "~/.gemini/GEMINI.md"}, nil
}
