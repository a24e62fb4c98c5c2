// Package hook translates the tool hooks of agent clients (Claude Code's
// PreToolUse/PostToolUse, Gemini CLI's BeforeTool/AfterTool, Codex's
// Claude-style hooks) into toolgate requests, and toolgate decisions back
// into each client's answer. It holds no I/O: the caller reads stdin,
// decides and writes what [Answer] or [Fail] return.
//
// Every answer that is not an allow is explicit: a deny is printed as the
// client's deny JSON, and a failure ([Fail]) is a deny JSON together with
// exit code 2 and the reason on stderr, which each of the three clients
// treats as a block. A client never receives empty output, exit 1 or a
// crash from this package's answers, since those let the tool run.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/jsonerr"
	"github.com/toolgate/toolgate/policy"
)

// Client is an agent client whose hooks toolgate answers.
type Client string

// The clients.
const (
	ClaudeCode Client = "claude-code"
	Gemini     Client = "gemini"
	Codex      Client = "codex"
)

// Clients lists the clients in a fixed order.
var Clients = []Client{ClaudeCode, Gemini, Codex}

// Phase says whether a hook fires before or after the tool runs.
type Phase int

// The phases.
const (
	// Before: PreToolUse (Claude Code, Codex) or BeforeTool (Gemini CLI).
	Before Phase = iota
	// After: PostToolUse (Claude Code, Codex) or AfterTool (Gemini CLI).
	After
)

// MaxPayload bounds the hook JSON read from stdin.
const MaxPayload = 16 << 20

// Call is one hook invocation, parsed.
type Call struct {
	Client Client
	Phase  Phase
	// Request is the call as toolgate judges it: Tool is the name in a
	// form [policy.Canonical] knows (MCP tools as mcp__server__tool),
	// Input the client's tool input unchanged, except that the patch
	// text Codex sends its apply_patch hook as "command" is "patch".
	Request engine.Request
	// ClientTool is the tool name as the client sent it.
	ClientTool string
	// Rewritten reports that Request is not the call as the client sent
	// it but what the client's tool does (EnterWorktree as the write of
	// its worktree, say): no input may be handed back to the client.
	Rewritten bool
	// ToolUseID is the client's id of the call, when it sends one.
	ToolUseID string
	// PermissionMode is Claude Code's permission_mode, when sent.
	PermissionMode string
	// Output is the tool's output, for After: the text of the tool's
	// response (stdout and stderr for a shell, the response's JSON for
	// others).
	Output []byte

	// checks are the requests judged in place of Request, when they
	// differ from it; see [Call.Checks].
	checks []engine.Request
}

// payload is the union of the fields the three clients send.
type payload struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	// MCPServer is not read: the server is in the tool's name. Claude
	// Code sends an object ({"name": "fs", "source": "dynamic"}), older
	// releases a string.
	MCPServer  json.RawMessage `json:"mcp_server"`
	MCPContext json.RawMessage `json:"mcp_context"`
}

// hookExample is a hook input, for error messages.
const hookExample = `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/home/you/project"}`

// Parse reads one hook payload of client. It fails on anything it cannot
// judge exactly: bad JSON, a missing or relative cwd, a missing tool
// name, an event other than the client's before/after tool events, a
// tool name toolgate does not know, or a Gemini MCP tool whose server
// cannot be told apart from its tool.
func Parse(client Client, data []byte) (*Call, error) {
	if !slices.Contains(Clients, client) {
		return nil, fmt.Errorf("unknown client %q: use claude-code, gemini or codex", client)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty hook input: expected the client's hook JSON on stdin")
	}
	if len(data) > MaxPayload {
		return nil, fmt.Errorf("hook input is larger than %d bytes", MaxPayload)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var p payload
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("hook input: %s; expected the JSON object the client hands its tool hook, such as %s", jsonerr.Describe(data, err, nil), hookExample)
	}
	if dec.More() {
		return nil, errors.New("hook input holds more than one JSON value")
	}
	call := &Call{Client: client, ClientTool: p.ToolName, ToolUseID: p.ToolUseID, PermissionMode: p.PermissionMode}
	switch phase, ok := phaseOf(client, p.HookEventName); {
	case !ok:
		return nil, fmt.Errorf("hook event %q is not a tool event of %s: install the hook for %s", p.HookEventName, client, events(client))
	default:
		call.Phase = phase
	}
	if p.ToolName == "" {
		return nil, fmt.Errorf(`hook input has no "tool_name": expected the JSON object the client hands its tool hook, such as %s`, hookExample)
	}
	if p.Cwd == "" {
		return nil, fmt.Errorf(`hook input has no "cwd": it must be the absolute directory the tool runs in, such as "cwd":"/home/you/project"`)
	}
	if !filepath.IsAbs(p.Cwd) {
		return nil, fmt.Errorf(`hook input's "cwd" is %q: it must be an absolute directory, such as "/home/you/project"`, p.Cwd)
	}
	input := map[string]any{}
	if len(p.ToolInput) > 0 && string(p.ToolInput) != "null" {
		d := json.NewDecoder(bytes.NewReader(p.ToolInput))
		d.UseNumber()
		if err := d.Decode(&input); err != nil {
			return nil, fmt.Errorf(`hook input's "tool_input": %s; it must be an object of the tool's arguments, such as {"command":"ls"}`, jsonerr.Describe(p.ToolInput, err, nil))
		}
	}
	tool, err := toolName(client, p)
	if err != nil {
		return nil, err
	}
	tool, input, call.Rewritten, err = ownTool(client, tool, p.Cwd, input)
	if err != nil {
		return nil, err
	}
	canon, ok := policy.Canonical(tool)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q: toolgate judges only the tools it knows, so it denies this one", p.ToolName)
	}
	if client == Codex && canon == policy.ToolPatch {
		codexPatchInput(input)
	}
	call.Request = engine.Request{Tool: tool, Input: input, Cwd: p.Cwd, Session: p.SessionID}
	if client == Gemini && call.Phase == Before {
		if call.checks, err = geminiChecks(call.Request); err != nil {
			return nil, err
		}
	}
	if call.Phase == After {
		call.Output = responseText(p.ToolResponse)
	}
	return call, nil
}

// codexPatchInput renames the "command" field Codex hands its apply_patch
// hook (the patch text) to "patch", the name toolgate judges a patch by,
// when the input names the patch no other way.
func codexPatchInput(input map[string]any) {
	for _, k := range []string{"patch", "input", "diff"} {
		if _, ok := input[k]; ok {
			return
		}
	}
	if cmd, ok := input["command"].(string); ok {
		delete(input, "command")
		input["patch"] = cmd
	}
}

func events(c Client) string {
	if c == Gemini {
		return "BeforeTool and AfterTool"
	}
	return "PreToolUse and PostToolUse"
}

func phaseOf(c Client, event string) (Phase, bool) {
	switch {
	case c == Gemini && event == "BeforeTool", c != Gemini && event == "PreToolUse":
		return Before, true
	case c == Gemini && event == "AfterTool", c != Gemini && event == "PostToolUse":
		return After, true
	}
	return 0, false
}

// toolName returns the name toolgate judges the call under.
func toolName(c Client, p payload) (string, error) {
	name := p.ToolName
	if c != Gemini {
		// Claude Code and Codex name MCP tools mcp__server__tool, which
		// toolgate takes as it is; every other name is an alias.
		return name, nil
	}
	if name == "grep_search" {
		// Gemini CLI's search tool, which older releases called
		// search_file_content; see [geminiChecks] for its arguments.
		return "search_file_content", nil
	}
	if !strings.HasPrefix(name, "mcp_") {
		return name, nil // Parse refuses a name policy.Canonical does not know
	}
	// Gemini CLI names an MCP tool mcp_<server>_<tool>; server names may
	// hold "_", so the server comes from mcp_context.
	var mc struct {
		ServerName  string `json:"server_name"`
		ServerName2 string `json:"serverName"`
		ToolName    string `json:"tool_name"`
		ToolName2   string `json:"toolName"`
	}
	if len(p.MCPContext) > 0 {
		if err := json.Unmarshal(p.MCPContext, &mc); err != nil {
			return "", fmt.Errorf(`hook input's "mcp_context" is not an object: %v`, err)
		}
	}
	server := first(mc.ServerName, mc.ServerName2)
	tool := first(mc.ToolName, mc.ToolName2)
	if server == "" {
		return "", fmt.Errorf("MCP tool %q comes without mcp_context.server_name: its server cannot be told from its tool, so it is denied", name)
	}
	if tool == "" {
		rest, ok := strings.CutPrefix(name, "mcp_"+server+"_")
		if !ok || rest == "" {
			return "", fmt.Errorf("MCP tool %q does not start with mcp_%s_ as its mcp_context.server_name says", name, server)
		}
		tool = rest
	}
	if strings.Contains(server, "__") || strings.HasPrefix(server, "_") {
		return "", fmt.Errorf("MCP server name %q cannot be judged: it starts with '_' or holds \"__\"", server)
	}
	return "mcp__" + server + "__" + tool, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// responseText returns the text of a tool response: a string as it is;
// for an object, its stdout, stderr, output, content and llmContent
// strings joined by newlines when it has any, else its JSON.
func responseText(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []byte(s)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		var parts []string
		for _, k := range []string{"stdout", "stderr", "output", "content", "llmContent", "returnDisplay", "error"} {
			if v, ok := m[k].(string); ok && v != "" {
				parts = append(parts, v)
			}
		}
		if len(parts) > 0 {
			return []byte(strings.Join(parts, "\n"))
		}
	}
	return []byte(raw)
}
