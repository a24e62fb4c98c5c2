package hook

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

func TestParseMapsTools(t *testing.T) {
	tests := []struct {
		name     string
		client   Client
		payload  string
		tool     string // the name toolgate judges
		phase    Phase
		canon    policy.Tool
		output   string
		errMatch string
	}{
		{"claude bash", ClaudeCode, `{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1","permission_mode":"default"}`, "Bash", Before, policy.ToolShell, "", ""},
		{"claude read", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/a"}}`, "Read", Before, policy.ToolRead, "", ""},
		{"claude multiedit", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"MultiEdit","tool_input":{"file_path":"/w/a","edits":[]}}`, "MultiEdit", Before, policy.ToolEdit, "", ""},
		{"claude notebookedit", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/w/a.ipynb"}}`, "NotebookEdit", Before, policy.ToolEdit, "", ""},
		{"claude glob", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Glob","tool_input":{"pattern":"*"}}`, "Glob", Before, policy.ToolList, "", ""},
		{"claude grep", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"x"}}`, "Grep", Before, policy.ToolSearch, "", ""},
		{"claude webfetch", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"WebFetch","tool_input":{"url":"https://x"}}`, "WebFetch", Before, policy.ToolFetch, "", ""},
		{"claude mcp", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp__fs__read_text_file","mcp_server":"fs","tool_input":{"path":"/w/a"}}`, "mcp__fs__read_text_file", Before, policy.ToolMCP, "", ""},
		{"claude mcp server object", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/w/a","content":"x"},"tool_use_id":"t1","mcp_server":{"name":"fs","source":"dynamic"}}`, "mcp__fs__write_file", Before, policy.ToolMCP, "", ""},
		{"claude mcp as 2.1 sends it", ClaudeCode, `{"cwd":"/w","prompt_id":"p1","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"mcp__fs__read_text_file","tool_input":{"path":"/w/a"},"tool_use_id":"toolu_5","mcp_server":{"name":"fs","source":"dynamic"}}`, "mcp__fs__read_text_file", Before, policy.ToolMCP, "", ""},
		{"claude post", ClaudeCode, `{"cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"out","stderr":"err"}}`, "Bash", After, policy.ToolShell, "out\nerr", ""},
		{"gemini shell", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`, "run_shell_command", Before, policy.ToolShell, "", ""},
		{"gemini replace", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":"/w/a"}}`, "replace", Before, policy.ToolEdit, "", ""},
		{"gemini search", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"search_file_content","tool_input":{"pattern":"x"}}`, "search_file_content", Before, policy.ToolSearch, "", ""},
		{"gemini grep_search", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"grep_search","tool_input":{"pattern":"x","include_pattern":"*.go"}}`, "search_file_content", Before, policy.ToolSearch, "", ""},
		{"gemini list", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"list_directory","tool_input":{"dir_path":"/w"}}`, "list_directory", Before, policy.ToolList, "", ""},
		{"gemini mcp", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"mcp_my_fs_read_file","mcp_context":{"server_name":"my_fs"},"tool_input":{}}`, "mcp__my_fs__read_file", Before, policy.ToolMCP, "", ""},
		{"gemini mcp tool named", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"mcp_a_b","mcp_context":{"server_name":"a","tool_name":"b"},"tool_input":{}}`, "mcp__a__b", Before, policy.ToolMCP, "", ""},
		{"gemini after", Gemini, `{"cwd":"/w","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"absolute_path":"/w/a"},"tool_response":{"llmContent":"text"}}`, "read_file", After, policy.ToolRead, "text", ""},
		{"codex bash", Codex, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "Bash", Before, policy.ToolShell, "", ""},
		{"codex exec_command", Codex, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"exec_command","tool_input":{"cmd":"ls"}}`, "exec_command", Before, policy.ToolShell, "", ""},
		{"codex patch", Codex, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch"}}`, "apply_patch", Before, policy.ToolPatch, "", ""},
		{"codex mcp", Codex, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{}}`, "mcp__fs__write_file", Before, policy.ToolMCP, "", ""},
		{"codex post string", Codex, `{"cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":"plain"}`, "Bash", After, policy.ToolShell, "plain", ""},

		{"empty", ClaudeCode, ``, "", 0, "", "", "empty hook input"},
		{"garbage", Gemini, `not json`, "", 0, "", "", `it is not JSON: "ot json" at byte 2`},
		{"tool name a number", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":3}`, "", 0, "", "", `field "tool_name" is a JSON number; it must be a string`},
		{"no cwd", ClaudeCode, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "", 0, "", "", `has no "cwd": it must be the absolute directory`},
		{"two values", Codex, `{} {}`, "", 0, "", "", "more than one"},
		{"unknown tool", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Frobnicate","tool_input":{}}`, "", 0, "", "", "unknown tool"},
		{"no tool", Codex, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_input":{}}`, "", 0, "", "", "tool_name"},
		{"relative cwd", ClaudeCode, `{"cwd":"w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "", 0, "", "", "absolute"},
		{"wrong event for client", Gemini, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`, "", 0, "", "", "BeforeTool"},
		{"other event", ClaudeCode, `{"cwd":"/w","hook_event_name":"Stop","tool_name":"Bash"}`, "", 0, "", "", "not a tool event"},
		{"gemini mcp no context", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"mcp_a_b_c","tool_input":{}}`, "", 0, "", "", "server_name"},
		{"gemini mcp context mismatch", Gemini, `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"mcp_a_b","mcp_context":{"server_name":"z"},"tool_input":{}}`, "", 0, "", "", "does not start"},
		{"tool input not object", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}`, "", 0, "", "", "tool_input"},
		{"claude single-underscore mcp", ClaudeCode, `{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp_fs_read","tool_input":{}}`, "", 0, "", "", "unknown tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := Parse(tt.client, []byte(tt.payload))
			if tt.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("err = %v, want one containing %q", err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if call.Request.Tool != tt.tool || call.Phase != tt.phase {
				t.Fatalf("tool %q phase %v, want %q %v", call.Request.Tool, call.Phase, tt.tool, tt.phase)
			}
			if c, _ := policy.Canonical(call.Request.Tool); c != tt.canon {
				t.Errorf("canonical %q, want %q", c, tt.canon)
			}
			if string(call.Output) != tt.output {
				t.Errorf("output %q, want %q", call.Output, tt.output)
			}
			if call.Request.Cwd != "/w" || call.Request.Input == nil {
				t.Errorf("request %+v", call.Request)
			}
		})
	}
}

// Codex hands its apply_patch hook the patch text as "command"; toolgate
// judges a patch by "patch" (or "input", "diff"), so without the rename
// every Codex patch is denied as invalid and none is judged by its paths.
func TestParseCodexPatchInput(t *testing.T) {
	const patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
	tests := []struct {
		name   string
		client Client
		tool   string
		input  string
		want   map[string]any
	}{
		{"codex command", Codex, "apply_patch", `{"command":` + quote(patch) + `}`, map[string]any{"patch": patch}},
		{"codex input kept", Codex, "apply_patch", `{"input":"x","command":"y"}`, map[string]any{"input": "x", "command": "y"}},
		{"codex command not a string", Codex, "apply_patch", `{"command":["x"]}`, map[string]any{"command": []any{"x"}}},
		{"codex shell untouched", Codex, "Bash", `{"command":"ls"}`, map[string]any{"command": "ls"}},
		{"claude patch untouched", ClaudeCode, "apply_patch", `{"command":"x"}`, map[string]any{"command": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := Parse(tt.client, []byte(`{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"`+tt.tool+`","tool_input":`+tt.input+`}`))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(call.Request.Input)
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("input %s, want %s", got, want)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestAnswerFormats(t *testing.T) {
	in := map[string]any{"command": "ls"}
	tests := []struct {
		name   string
		client Client
		v      Verdict
		want   string
	}{
		{"claude allow", ClaudeCode, Verdict{policy.Allow, "ok", in}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok","updatedInput":{"command":"ls"}}}`},
		{"claude ask", ClaudeCode, Verdict{policy.Ask, "why", in}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"why"}}`},
		{"claude deny", ClaudeCode, Verdict{policy.Deny, "no", nil}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{"codex allow", Codex, Verdict{policy.Allow, "ok", in}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok","updatedInput":{"command":"ls"}}}`},
		{"codex allow without input", Codex, Verdict{policy.Allow, "ok", nil}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok"}}`},
		{"codex ask is deny", Codex, Verdict{policy.Ask, "why", in}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"why"}}`},
		{"gemini allow", Gemini, Verdict{policy.Allow, "ok", in}, `{"decision":"allow","hookSpecificOutput":{"tool_input":{"command":"ls"}},"reason":"ok"}`},
		{"gemini ask is deny", Gemini, Verdict{policy.Ask, "why", in}, `{"decision":"deny","reason":"why"}`},
		{"gemini deny", Gemini, Verdict{policy.Deny, "no", nil}, `{"decision":"deny","reason":"no"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Answer(tt.client, tt.v)
			if r.Code != 0 || strings.TrimSpace(string(r.Stdout)) != tt.want {
				t.Fatalf("got %d %s\nwant %s", r.Code, r.Stdout, tt.want)
			}
		})
	}
	// An invalid decision is a failure, never an allow.
	if r := Answer(ClaudeCode, Verdict{Decision: policy.Decision(9)}); r.Code != 2 || !strings.Contains(string(r.Stdout), `"deny"`) {
		t.Fatalf("invalid decision: %+v", r)
	}
}

func TestFailDeniesInEveryClient(t *testing.T) {
	for _, c := range Clients {
		r := Fail(c, "boom")
		if r.Code != 2 || r.Stderr != "toolgate: boom\n" {
			t.Fatalf("%s: %+v", c, r)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Stdout, &m); err != nil {
			t.Fatal(err)
		}
		got := m["decision"]
		if hs, ok := m["hookSpecificOutput"].(map[string]any); ok {
			got = hs["permissionDecision"]
		}
		if got != "deny" {
			t.Fatalf("%s: %s", c, r.Stdout)
		}
	}
}

func TestAfterAnswerWarnsOfInjection(t *testing.T) {
	if r := AfterAnswer(ClaudeCode, nil); string(r.Stdout) != "{}\n" || r.Code != 0 {
		t.Fatalf("%+v", r)
	}
	r := AfterAnswer(Gemini, []string{"ignore previous instructions"})
	if !strings.Contains(string(r.Stdout), "additionalContext") || !strings.Contains(string(r.Stdout), "ignore previous instructions") {
		t.Fatalf("%s", r.Stdout)
	}
}

// TestGeminiFetchJudgedByItsPrompt: Gemini CLI's web_fetch has no "url";
// it fetches the URL written in its prompt, so that URL is what the call
// is judged by — not a "url" the agent adds, which Gemini never fetches —
// while an allow hands back the input as the client sent it.
func TestGeminiFetchJudgedByItsPrompt(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		urls     []string // the URLs judged
		errMatch string
	}{
		{"one URL", `{"prompt":"Summarize https://example.com/docs please"}`, []string{"https://example.com/docs"}, ""},
		// An added url is judged too, never instead of the prompt's.
		{"an added url does not hide the prompt's", `{"prompt":"Summarize http://169.254.169.254/latest/meta-data","url":"https://example.com"}`, []string{"https://example.com", "http://169.254.169.254/latest/meta-data"}, ""},
		{"no URL", `{"prompt":"Summarize the page"}`, nil, "no URL"},
		{"several URLs are each judged", `{"prompt":"compare https://example.com and http://10.0.0.1/"}`, []string{"https://example.com", "http://10.0.0.1/"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"web_fetch","tool_input":` + tt.input + `}`
			call, err := Parse(Gemini, []byte(payload))
			if tt.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("err = %v, want one containing %q", err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range call.Checks() {
				u, _ := r.Input["url"].(string)
				got = append(got, u)
			}
			if !slices.Equal(got, tt.urls) {
				t.Fatalf("judged %q, want %q", got, tt.urls)
			}
			var sent map[string]any
			_ = json.Unmarshal([]byte(tt.input), &sent)
			if len(call.Request.Input) != len(sent) || call.Request.Input["prompt"] != sent["prompt"] {
				t.Fatalf("client input %v, want %v", call.Request.Input, sent)
			}
		})
	}
	// After the fetch ran, its output is recorded whatever the prompt held.
	if _, err := Parse(Gemini, []byte(`{"cwd":"/w","hook_event_name":"AfterTool","tool_name":"web_fetch","tool_input":{"prompt":"https://a.example and https://b.example"},"tool_response":{"llmContent":"x"}}`)); err != nil {
		t.Fatalf("after a fetch of several URLs: %v", err)
	}
	// Claude Code's WebFetch names its URL: its prompt is not read.
	call, err := Parse(ClaudeCode, []byte(`{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"WebFetch","tool_input":{"url":"https://example.com","prompt":"see http://10.0.0.1/"}}`))
	if err != nil || call.Request.Input["url"] != "https://example.com" {
		t.Fatalf("claude WebFetch: %v %v", call, err)
	}
}

// TestCarriesInput: Claude Code and Gemini CLI take the input of every
// allowed call back; Codex only its shell's, since its apply_patch hook
// names the patch otherwise than the gate judges it.
func TestCarriesInput(t *testing.T) {
	tests := []struct {
		client Client
		tool   string
		want   bool
	}{
		{ClaudeCode, "Write", true},
		{ClaudeCode, "Bash", true},
		{Gemini, "write_file", true},
		{Codex, "Bash", true},
		{Codex, "exec_command", true},
		{Codex, "apply_patch", false},
		{Codex, "mcp__fs__write_file", false},
		{Codex, "no_such_tool", false},
		{Client("other"), "Bash", false},
	}
	for _, tt := range tests {
		if got := CarriesInput(tt.client, tt.tool); got != tt.want {
			t.Errorf("CarriesInput(%s, %s) = %v, want %v", tt.client, tt.tool, got, tt.want)
		}
	}
}

// TestOwnTools: each client's own tools are judged as the table says:
// agent-state tools under their name (an alias of agentstate), acting
// tools as what they do, refused ones denied with their reason, and
// another client's tool, or a name in no table, unknown.
func TestOwnTools(t *testing.T) {
	tests := []struct {
		name      string
		client    Client
		tool      string
		input     string
		wantTool  string
		canon     policy.Tool
		rewritten bool
		judged    map[string]any // nil: the input as sent
		err       string
	}{
		{"todo", ClaudeCode, "TodoWrite", `{"todos":[]}`, "TodoWrite", policy.ToolAgentState, false, nil, ""},
		{"question", ClaudeCode, "AskUserQuestion", `{"questions":[]}`, "AskUserQuestion", policy.ToolAgentState, false, nil, ""},
		{"background output", ClaudeCode, "BashOutput", `{"bash_id":"1"}`, "BashOutput", policy.ToolAgentState, false, nil, ""},
		{"stop task", ClaudeCode, "TaskStop", `{"task_id":"1"}`, "TaskStop", policy.ToolAgentState, false, nil, ""},
		{"cron delete", ClaudeCode, "CronDelete", `{"id":"1"}`, "CronDelete", policy.ToolAgentState, false, nil, ""},
		{"tool search", ClaudeCode, "ToolSearch", `{"query":"x"}`, "ToolSearch", policy.ToolAgentState, false, nil, ""},
		{"cron create", ClaudeCode, "CronCreate", `{"cron":"* * * * *","prompt":"x"}`, "CronCreate", policy.ToolSchedule, false, nil, ""},
		{"wakeup", ClaudeCode, "ScheduleWakeup", `{"delaySeconds":60,"prompt":"x"}`, "ScheduleWakeup", policy.ToolSchedule, false, nil, ""},
		{"wakeup stop", ClaudeCode, "ScheduleWakeup", `{"stop":true}`, "agentstate", policy.ToolAgentState, true, nil, ""},
		{"exit plan", ClaudeCode, "ExitPlanMode", `{"plan":"x"}`, "ExitPlanMode", policy.ToolPlanExit, false, nil, ""},
		{"skill", ClaudeCode, "Skill", `{"skill":"deploy"}`, "Skill", policy.ToolSkill, false, nil, ""},
		{"agent", ClaudeCode, "Agent", `{"prompt":"x"}`, "", "", false, nil, `unknown tool "Agent": a subagent's calls`},
		{"task", ClaudeCode, "Task", `{"prompt":"x"}`, "", "", false, nil, "parent's session"},
		{"enter worktree", ClaudeCode, "EnterWorktree", `{"name":"feat"}`, "Write", policy.ToolWrite, true, map[string]any{"file_path": "/w/.claude/worktrees/feat"}, ""},
		{"enter worktree unnamed", ClaudeCode, "EnterWorktree", `{}`, "Write", policy.ToolWrite, true, map[string]any{"file_path": "/w/.claude/worktrees"}, ""},
		{"enter worktree climbing", ClaudeCode, "EnterWorktree", `{"name":"../../../etc"}`, "Write", policy.ToolWrite, true, map[string]any{"file_path": "/etc"}, ""},
		{"enter worktree by path", ClaudeCode, "EnterWorktree", `{"path":"/elsewhere/wt"}`, "", "", false, nil, "input.path moves the session"},
		{"enter worktree bad name", ClaudeCode, "EnterWorktree", `{"name":7}`, "", "", false, nil, "input.name"},
		{"exit worktree keep", ClaudeCode, "ExitWorktree", `{"action":"keep"}`, "agentstate", policy.ToolAgentState, true, nil, ""},
		{"exit worktree remove", ClaudeCode, "ExitWorktree", `{"action":"remove","discard_changes":true}`, "", "", false, nil, "removes the worktree"},
		{"exit worktree no action", ClaudeCode, "ExitWorktree", `{}`, "", "", false, nil, "removes the worktree"},
		{"workflow", ClaudeCode, "Workflow", `{"script":"x"}`, "", "", false, nil, "Workflow runs a script"},
		{"send message", ClaudeCode, "SendMessage", `{"to":"x","message":"y"}`, "", "", false, nil, "unknown tool"},
		{"monitor", ClaudeCode, "Monitor", `{}`, "", "", false, nil, "unknown tool"},
		{"placeholder", ClaudeCode, "DeferredToolPlaceholder", `{}`, "", "", false, nil, "unknown tool"},
		{"gemini todos", Gemini, "write_todos", `{"todos":[]}`, "write_todos", policy.ToolAgentState, false, nil, ""},
		{"gemini memory", Gemini, "save_memory", `{"fact":"x"}`, "write_file", policy.ToolWrite, true, map[string]any{"file_path": "~/.gemini/GEMINI.md"}, ""},
		{"gemini many files", Gemini, "read_many_files", `{"include":["**"]}`, "", "", false, nil, "read_many_files reads"},
		{"gemini has no TodoWrite", Gemini, "TodoWrite", `{}`, "", "", false, nil, "not a tool gemini has"},
		{"codex plan", Codex, "update_plan", `{"plan":[]}`, "update_plan", policy.ToolAgentState, false, nil, ""},
		{"codex question", Codex, "request_user_input", `{"questions":[]}`, "request_user_input", policy.ToolAgentState, false, nil, ""},
		{"codex image", Codex, "view_image", `{"path":"/w/a.png"}`, "view_image", policy.ToolRead, false, nil, ""},
		{"codex stdin", Codex, "write_stdin", `{"session_id":1,"chars":"rm -rf /\n"}`, "", "", false, nil, "write_stdin types"},
		{"codex has no Skill", Codex, "Skill", `{"skill":"x"}`, "", "", false, nil, "not a tool codex has"},
		{"canonical name is no client's", ClaudeCode, "agentstate", `{}`, "", "", false, nil, "not a tool claude-code has"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := `{"cwd":"/w","hook_event_name":"` + map[Client]string{Gemini: "BeforeTool"}[tt.client] + `","tool_name":"` + tt.tool + `","tool_input":` + tt.input + `}`
			if tt.client != Gemini {
				data = strings.Replace(data, `"hook_event_name":""`, `"hook_event_name":"PreToolUse"`, 1)
			}
			call, err := Parse(tt.client, []byte(data))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if call.Request.Tool != tt.wantTool || call.Rewritten != tt.rewritten || call.ClientTool != tt.tool {
				t.Fatalf("judged as %q (rewritten %v, client tool %q), want %q (%v)", call.Request.Tool, call.Rewritten, call.ClientTool, tt.wantTool, tt.rewritten)
			}
			if c, _ := policy.Canonical(call.Request.Tool); c != tt.canon {
				t.Fatalf("canonical %q, want %q", c, tt.canon)
			}
			if tt.judged != nil && !reflect.DeepEqual(call.Request.Input, tt.judged) {
				t.Fatalf("judged input %v, want %v", call.Request.Input, tt.judged)
			}
		})
	}
}

// TestOwnToolsTable: every name a table lets through is judged under a
// name the policy knows, so that no table entry is denied by accident.
func TestOwnToolsTable(t *testing.T) {
	for client, tools := range ownTools {
		for name, o := range tools {
			if o.refuse != "" {
				continue
			}
			tool := name
			if o.judge != nil {
				var err error
				if tool, _, err = o.judge("/w", map[string]any{"action": "keep"}); err != nil {
					t.Errorf("%s %s: %v", client, name, err)
					continue
				}
			}
			if _, ok := policy.Canonical(tool); !ok {
				t.Errorf("%s %s is judged as %q, which policy.Canonical does not know", client, name, tool)
			}
		}
	}
}
