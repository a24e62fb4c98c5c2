package policy

import "strings"

// Tool is a canonical tool name. Every alias an agent uses (Claude Code's
// "Bash", Gemini CLI's "run_shell_command", Codex's "exec_command", ...) maps
// to one of these.
type Tool string

// The canonical tools.
const (
	ToolShell     Tool = "shell"
	ToolRead      Tool = "read"
	ToolWrite     Tool = "write"
	ToolEdit      Tool = "edit"
	ToolPatch     Tool = "patch"
	ToolList      Tool = "list"
	ToolSearch    Tool = "search"
	ToolFetch     Tool = "fetch"
	ToolWebSearch Tool = "websearch"
	// ToolMCP is the family of MCP tools, named mcp__server__tool.
	ToolMCP Tool = "mcp"

	// The agent clients' own tools (see internal/hook for which client
	// sends which, and why each is judged as it is).

	// ToolAgentState changes nothing but the agent's own state: its todo
	// list, a question to its person, a background shell's output.
	ToolAgentState Tool = "agentstate"
	// ToolSchedule makes the agent run again later, unattended.
	ToolSchedule Tool = "schedule"
	// ToolSkill loads a skill or command, which may run lines of its own.
	ToolSkill Tool = "skill"
	// ToolPlanExit leaves the client's plan mode.
	ToolPlanExit Tool = "planexit"
)

// aliases maps every accepted spelling, lower-cased, to its canonical tool.
var aliases = map[string]Tool{
	"shell": ToolShell, "bash": ToolShell, "shell.exec": ToolShell, "run_shell_command": ToolShell,
	"exec_command": ToolShell, "local_shell": ToolShell, "container.exec": ToolShell,
	"powershell": ToolShell, "pwsh": ToolShell,

	"read": ToolRead, "read_file": ToolRead, "fs.read": ToolRead,

	"write": ToolWrite, "write_file": ToolWrite, "fs.write": ToolWrite, "create_file": ToolWrite,

	"edit": ToolEdit, "multiedit": ToolEdit, "replace": ToolEdit, "edit_file": ToolEdit,
	"notebookedit": ToolEdit,

	"patch": ToolPatch, "apply_patch": ToolPatch, "patch.apply": ToolPatch,

	"list": ToolList, "ls": ToolList, "glob": ToolList, "list_directory": ToolList, "fs.list": ToolList,

	"search": ToolSearch, "grep": ToolSearch, "search_file_content": ToolSearch,
	"search.ripgrep": ToolSearch,

	"fetch": ToolFetch, "webfetch": ToolFetch, "web_fetch": ToolFetch, "http.fetch": ToolFetch,

	"websearch": ToolWebSearch, "web_search": ToolWebSearch, "google_web_search": ToolWebSearch,

	"view_image": ToolRead,

	"agentstate": ToolAgentState, "todowrite": ToolAgentState, "write_todos": ToolAgentState,
	"update_plan": ToolAgentState, "askuserquestion": ToolAgentState, "request_user_input": ToolAgentState,
	"bashoutput": ToolAgentState, "taskoutput": ToolAgentState, "killshell": ToolAgentState,
	"taskstop": ToolAgentState, "listagents": ToolAgentState, "cronlist": ToolAgentState,
	"crondelete": ToolAgentState, "enterplanmode": ToolAgentState, "get_goal": ToolAgentState,
	"reportfindings": ToolAgentState, "toolsearch": ToolAgentState,

	"schedule": ToolSchedule, "croncreate": ToolSchedule, "schedulewakeup": ToolSchedule,

	"skill": ToolSkill,

	"planexit": ToolPlanExit, "exitplanmode": ToolPlanExit,
}

// ClientTool reports whether t is one of the agent clients' own tools
// (agentstate, schedule, skill, planexit), which toolgate knows
// only under the names the clients give them.
func (t Tool) ClientTool() bool {
	switch t {
	case ToolAgentState, ToolSchedule, ToolSkill, ToolPlanExit:
		return true
	}
	return false
}

// Canonical returns the canonical tool for an agent's tool name, matching
// aliases case-insensitively. MCP tool names (mcp__server or
// mcp__server__tool) give ToolMCP. It reports false for an unknown name.
func Canonical(name string) (Tool, bool) {
	if IsMCPName(name) {
		return ToolMCP, true
	}
	t, ok := aliases[strings.ToLower(name)]
	return t, ok
}

// IsMCPName reports whether name has the MCP tool form mcp__server[__tool].
func IsMCPName(name string) bool {
	rest, ok := strings.CutPrefix(name, "mcp__")
	return ok && rest != "" && !strings.HasPrefix(rest, "_")
}

// SplitMCPName splits "mcp__server__tool" into server and tool. The tool is
// "" for "mcp__server". Server names cannot contain "__"; tool names may.
func SplitMCPName(name string) (server, tool string) {
	rest := strings.TrimPrefix(name, "mcp__")
	server, tool, _ = strings.Cut(rest, "__")
	return server, tool
}

// PathFamily says which file capability a tool's path rules govern: "read"
// for read, list and search; "write" for write, edit and patch; "" for others.
// A path rule of either tool in a family applies to every path the call
// reads (or writes), including the files shell commands read or write.
func (t Tool) PathFamily() string {
	switch t {
	case ToolRead, ToolList, ToolSearch:
		return "read"
	case ToolWrite, ToolEdit, ToolPatch:
		return "write"
	}
	return ""
}
