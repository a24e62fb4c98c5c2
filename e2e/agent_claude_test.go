package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// claudeInstall installs toolgate's hooks into home's Claude Code user
// settings with the real installer (`toolgate hook install claude-code
// --user`), running command as the hook program (the built toolgate when
// empty), and returns the settings file.
func claudeInstall(t *testing.T, home, command string) string {
	t.Helper()
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"hook", "install", "claude-code", "--user"}
	if command != "" {
		args = append(args, "--command", command)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), "HOME="+home)
	cmd.Dir = home
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("toolgate hook install: %v\n%s", err, out)
	}
	return filepath.Join(home, ".claude", "settings.json")
}

// claudeRun runs one headless Claude Code turn in s's project against
// mock, with home as HOME; args are added to the command line.
func claudeRun(t *testing.T, s *server, mock *claudeMock, home, session string, limit time.Duration, extraEnv []string, args ...string) (string, string) {
	t.Helper()
	bin := requireAgent(t, "claude")
	env := s.agentEnv(home, append([]string{
		"ANTHROPIC_BASE_URL=" + mock.srv.URL,
		"ANTHROPIC_API_KEY=sk-ant-e2e-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"ENABLE_TOOL_SEARCH=false",
	}, extraEnv...)...)
	full := append([]string{"-p", "do the scripted work", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "default", "--session-id", session}, args...)
	start := time.Now()
	out, errOut, err := runAgent(t, limit, s.project, env, bin, full...)
	t.Logf("claude ran %s (exit: %v)", time.Since(start).Round(time.Millisecond), err)
	return out, errOut
}

// claudeSession is the session id Claude Code is told to use; the hooks
// send it, so the server files the calls under it.
const claudeSession = "6b1f6a0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"

// claudePolicy is the user policy of the gate test: the userPolicy rules,
// an allow rule for one touch, the fs MCP server trusted and three of its
// tools allowed by name. The project adds a deny rule for rm.
const claudePolicy = `
trusted_mcp_servers = ["fs"]

[permissions]
allow = ["Bash(git status)", "Bash(touch made-by-agent.txt)", "mcp__fs__read_text_file", "mcp__fs__write_file"]
ask   = ["Bash(npm test)"]
`

func claudeWriteFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func claudeExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// claudeResolved returns the permission.resolved payloads of session whose
// tool is tool, in order, with the input of the call each resolves.
func claudeResolved(t *testing.T, s *server, session string) []claudeDecision {
	t.Helper()
	inputs := map[string]claudeDecision{}
	var out []claudeDecision
	for _, e := range s.events(t, "session="+session) {
		var p struct {
			ToolCallID string          `json:"toolCallId"`
			Tool       string          `json:"tool"`
			Input      json.RawMessage `json:"input"`
			Decision   string          `json:"decision"`
			Reason     string          `json:"reason"`
			Actor      string          `json:"actor"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "model.tool_call_requested":
			inputs[p.ToolCallID] = claudeDecision{Tool: p.Tool, Input: claudeUnescaped(p.Input)}
		case "permission.resolved":
			d, requested := inputs[p.ToolCallID]
			if !requested && len(p.Input) > 0 {
				// Decided at once: this one event carries the call.
				d.Input = claudeUnescaped(p.Input)
			}
			d.Decision, d.Reason, d.Actor = p.Decision, p.Reason, p.Actor
			if d.Tool == "" {
				d.Tool = p.Tool
			}
			out = append(out, d)
		}
	}
	return out
}

// claudeUnescaped is raw JSON without the escaping of <, > and &.
func claudeUnescaped(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}

// claudeDecision is one call's decision as the server's log holds it.
type claudeDecision struct {
	Tool, Input, Decision, Reason, Actor string
}

// claudeFind returns the decision of the call whose tool is tool and whose
// input holds part.
func claudeFind(ds []claudeDecision, tool, part string) (claudeDecision, bool) {
	for _, d := range ds {
		if d.Tool == tool && strings.Contains(d.Input, part) {
			return d, true
		}
	}
	return claudeDecision{}, false
}

// TestAgentClaudeGate runs one headless Claude Code turn whose model makes
// shell calls and MCP calls that toolgate denies, allows and asks a person
// about, and checks what each call did on disk, what the model was told,
// and what the event log holds.
func TestAgentClaudeGate(t *testing.T) {
	requireAgent(t, "claude")
	fsServer := requireAgent(t, "mcp-server-filesystem")
	tg, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t)
	claudeWriteFile(t, filepath.Join(s.home, ".config", "toolgate", "policy.toml"), claudePolicy)
	claudeWriteFile(t, filepath.Join(s.project, ".toolgate", "policy.toml"), "[permissions]\ndeny = [\"Bash(rm:*)\"]\n")
	claudeWriteFile(t, filepath.Join(s.project, ".env"), "API_KEY=sk-e2e-secret-value\n")
	if out, err := exec.Command("git", "init", "-q", s.project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	outside := filepath.Join(t.TempDir(), "victim.txt")
	claudeWriteFile(t, outside, "keep me\n")

	home := agentHome(t)
	settings := claudeInstall(t, home, "")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if want := tg + " hook claude-code"; !strings.Contains(string(b), `"command": "`+want+`"`) {
		t.Fatalf("installed settings do not run %q:\n%s", want, b)
	}

	const mcpSession = "claude-e2e-mcp"
	mcpConfig := filepath.Join(home, "mcp.json")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{
		"type":    "stdio",
		"command": tg,
		"args": []string{"mcp", "--name", "fs", "--session", mcpSession, "--cwd", s.project,
			"--", fsServer, s.project},
	}}})
	claudeWriteFile(t, mcpConfig, string(cfg))

	p := func(name string) string { return filepath.Join(s.project, name) }
	script := []claudeStep{
		/* 0 */ {Tool: "Bash", Input: map[string]any{"command": "rm -rf " + outside}},
		// Two commands on one line: Claude Code's own rules refuse that
		// in -p mode, toolgate allows it since each is allowed.
		/* 1 */ {Tool: "Bash", Input: map[string]any{"command": "touch made-by-agent.txt && git status"}},
		/* 2 */ {Tool: "Bash", Input: map[string]any{"command": "touch asked-allow.txt"}},
		/* 3 */ {Tool: "Bash", Input: map[string]any{"command": "touch asked-deny.txt"}},
		/* 4 */ {Tool: "mcp__fs__write_file", Input: map[string]any{"path": p("mcp-written.txt"), "content": "written through mcp\n"}},
		/* 5 */ {Tool: "mcp__fs__read_text_file", Input: map[string]any{"path": p("mcp-written.txt")}},
		/* 6 */ {Tool: "mcp__fs__read_text_file", Input: map[string]any{"path": p(".env")}},
		/* 7 */ {Tool: "mcp__fs__create_directory", Input: map[string]any{"path": p("mcp-dir")}},
		// Claude Code's own tools that toolgate does not know (Agent,
		// Skill, Cron*, Monitor, ...) are denied by the hook as unknown.
		// Claude Code's own file tools go through the hook too.
		/* 8 */ {Tool: "Read", Input: map[string]any{"file_path": p(".env")}},
		/* 9 */ {Tool: "Agent", Input: map[string]any{"description": "look around", "prompt": "list the files", "subagent_type": "general-purpose"}},
		/* 10 */ {},
	}
	mock := claudeStartMock(t, script)

	type ran struct{ out, errOut string }
	done := make(chan ran, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		out, errOut := claudeRun(t, s, mock, home, claudeSession, 90*time.Second, nil,
			"--mcp-config", mcpConfig, "--strict-mcp-config")
		done <- ran{out, errOut}
	}()
	// A test stopped early still waits for Claude Code (killed at its
	// limit), which reports to t.
	t.Cleanup(func() { <-ended })

	// The two asks are answered through the approver API while Claude
	// Code waits in its hook.
	// The MCP call that asks is put to the person twice: by the hook in
	// Claude Code's session, then by the proxy in its own; the first is
	// allowed, the second denied, so the proxy's refusal is what the
	// model sees.
	for _, q := range []struct{ session, file, answer string }{
		{claudeSession, "asked-allow.txt", "allow_once"},
		{claudeSession, "asked-deny.txt", "deny"},
		{claudeSession, "mcp-dir", "allow_once"},
		{mcpSession, "mcp-dir", "deny"},
	} {
		var a approval
		select {
		case r := <-done:
			t.Fatalf("claude ended before asking about %s\nstdout:\n%s\nstderr:\n%s", q.file, r.out, r.errOut)
		default:
			a = s.pending(t, q.session)
		}
		if !strings.Contains(a.Request.Summary, q.file) {
			t.Fatalf("pending approval %q is not about %s", a.Request.Summary, q.file)
		}
		if claudeExists(p(q.file)) {
			t.Fatalf("%s exists before the person answered", q.file)
		}
		s.answer(t, a.ID, map[string]any{"answer": q.answer})
	}
	r := <-done
	if !mock.done() {
		t.Fatalf("the scripted turn did not reach its end\nstdout:\n%s\nstderr:\n%s", r.out, r.errOut)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.out, r.errOut)
	}

	// Effects on disk.
	for _, f := range []struct {
		path string
		want bool
	}{
		{outside, true}, {p("made-by-agent.txt"), true}, {p("asked-allow.txt"), true},
		{p("asked-deny.txt"), false}, {p("mcp-written.txt"), true}, {p("mcp-dir"), false},
	} {
		if got := claudeExists(f.path); got != f.want {
			t.Errorf("%s exists = %v, want %v", f.path, got, f.want)
		}
	}
	if b, _ := os.ReadFile(p("mcp-written.txt")); string(b) != "written through mcp\n" {
		t.Errorf("mcp-written.txt holds %q", b)
	}

	// What the model was offered and told.
	for _, want := range []string{"Bash", "mcp__fs__read_text_file", "mcp__fs__write_file", "mcp__fs__create_directory"} {
		if !slices.Contains(mock.offered(), want) {
			t.Errorf("the model was not offered %s: %v", want, mock.offered())
		}
	}
	for _, body := range mock.requests() {
		if strings.Contains(string(body), "sk-e2e-secret-value") {
			t.Errorf("the .env secret reached the model in a request")
		}
	}
	for i, w := range []struct {
		isError bool
		has     string
	}{
		{true, "rule_deny"}, {false, "made-by-agent.txt"}, {false, ""}, {true, "user_denied"},
		{false, ""}, {false, "written through mcp"}, {true, "credential_access"}, {true, "toolgate denied mcp__fs__create_directory (user_denied)"},
		{true, "credential_access"},
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
		if strings.Contains(res.Text, "sk-e2e-secret-value") {
			t.Errorf("step %d: the secret reached the model: %q", i, res.Text)
		}
	}

	// The event log.
	hookLog := claudeResolved(t, s, claudeSession)
	mcpLog := claudeResolved(t, s, mcpSession)
	for _, w := range []struct {
		log                                 []claudeDecision
		tool, part, decision, reason, actor string
	}{
		{hookLog, "Bash", "made-by-agent.txt && git status", "allow", "rule_allow", "policy"},
		{hookLog, "Bash", "asked-allow.txt", "allow", "user_approved", "user"},
		{hookLog, "Bash", "asked-deny.txt", "deny", "user_denied", "user"},
		{hookLog, "mcp__fs__write_file", "mcp-written.txt", "allow", "rule_allow", "policy"},
		{mcpLog, "mcp__fs__write_file", "mcp-written.txt", "allow", "rule_allow", "policy"},
		{mcpLog, "mcp__fs__read_text_file", "mcp-written.txt", "allow", "rule_allow", "policy"},
		{hookLog, "mcp__fs__create_directory", "mcp-dir", "allow", "user_approved", "user"},
		{mcpLog, "mcp__fs__create_directory", "mcp-dir", "deny", "user_denied", "user"},
	} {
		d, ok := claudeFind(w.log, w.tool, w.part)
		if !ok {
			t.Errorf("no permission.resolved for %s %s in %+v", w.tool, w.part, w.log)
			continue
		}
		if d.Decision != w.decision || d.Reason != w.reason || d.Actor != w.actor {
			t.Errorf("%s %s: logged %s/%s by %s, want %s/%s by %s", w.tool, w.part, d.Decision, d.Reason, d.Actor, w.decision, w.reason, w.actor)
		}
	}
	// After each call that ran, the PostToolUse hook reports it to the
	// server in use, whose log records it as tool.completed with Claude
	// Code's tool_use id. The calls denied before they ran have none, nor
	// has the MCP call the proxy refused (Claude Code sends
	// PostToolUseFailure for it).
	var completed strings.Builder
	for _, e := range s.events(t, "type=tool.completed&session="+claudeSession) {
		completed.Write(e.Payload)
		completed.WriteByte('\n')
	}
	got := completed.String()
	for _, i := range []int{1, 2, 4, 5} {
		if !strings.Contains(string(got), `"toolUseId":"`+claudeToolUseID(i)+`"`) {
			t.Errorf("no tool.completed for step %d (%s) in the server's log:\n%s", i, script[i].Tool, got)
		}
	}
	for _, i := range []int{0, 3, 6, 7, 8, 9} {
		if strings.Contains(string(got), `"toolUseId":"`+claudeToolUseID(i)+`"`) {
			t.Errorf("tool.completed for step %d (%s), which did not run:\n%s", i, script[i].Tool, got)
		}
	}

	// A call the hook's own policy denies (the rm, the .env read) is
	// answered by the hook without asking the server, so the server's
	// log holds nothing for it: the model's tool result above is the
	// only trace. Nothing else may have been decided for them either.
	for _, part := range []string{"rm -rf", ".env"} {
		for _, l := range [][]claudeDecision{hookLog, mcpLog} {
			for _, d := range l {
				if strings.Contains(d.Input, part) && d.Decision != "deny" {
					t.Errorf("%s was logged as %+v", part, d)
				}
			}
		}
	}
}

// claudeHookScript stands in for the hook program in the failure test:
// what it does is read from the file mode beside it, which the mock model
// writes before each call, so one Claude Code run goes through every
// failure.
const claudeHookScript = `#!/bin/sh
case "$(cat "$(dirname "$0")/mode")" in
none)      exit 0 ;;
garbage0)  echo '{"hookSpecificOutput": {"permissionDecision": '; exit 0 ;;
crash)     kill -KILL $$ ;;
missing)   exec /nonexistent/toolgate "$@" ;;
exit1)     echo "hook broke" >&2; exit 1 ;;
timeout)   exec sleep 60 ;;
garbage1)  echo '{"hookSpecificOutput": {"permissionDecision": '; exit 1 ;;
*)         exec TOOLGATE "$@" ;;
esac
`

// TestAgentClaudeHookFailures checks that Claude Code does not run a tool
// when toolgate's hook fails: it is killed, missing, exits 1, times out,
// prints garbage and exits non-zero, or finds a policy that does not
// parse. The settings allow the touch commands on their own
// (permissions.allow), so only the hook stands between the call and its
// effect. The first two calls show that: a hook that exits 0 with no
// output, or with output that is not JSON, gives no decision, and Claude
// Code then runs the call by its own rules; onFailure: block does not
// cover them. toolgate's hook never exits 0 without its JSON answer (a Go
// panic or fatal error exits 2), so what is left is a hook program that
// is not toolgate.
func TestAgentClaudeHookFailures(t *testing.T) {
	requireAgent(t, "claude")
	tg, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t)
	home := agentHome(t)
	hookDir := filepath.Join(home, "hook")
	script := filepath.Join(hookDir, "hook.sh")
	claudeWriteFile(t, script, strings.ReplaceAll(claudeHookScript, "TOOLGATE", tg))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := claudeInstall(t, home, script)
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	// A short timeout keeps the timeout case fast; the installed entry
	// is otherwise as `toolgate hook install` wrote it (onFailure block).
	short := strings.Replace(string(b), `"timeout": 600`, `"timeout": 3`, 1)
	if short == string(b) || !strings.Contains(short, `"onFailure": "block"`) {
		t.Fatalf("unexpected installed settings:\n%s", b)
	}
	claudeWriteFile(t, settings, short)
	if err := os.MkdirAll(filepath.Join(s.project, ".toolgate"), 0o755); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(home, "allow-touch.json")
	claudeWriteFile(t, extra, `{"permissions": {"allow": ["Bash(touch:*)"]}}`)

	const blocked = `blocking because onFailure is "block"`
	cases := []struct {
		mode string
		// what Claude Code does on its own with such a hook, without
		// toolgate's onFailure: block
		note string
		runs bool
		says string // in the tool result the model gets
	}{
		{"none", "no output and exit 0 is no decision: the settings' allow rule runs the call", true, "(Bash completed with no output)"},
		{"garbage0", "stdout that is not JSON with exit 0 is plain output, no decision: the allow rule runs the call", true, "(Bash completed with no output)"},
		{"crash", "a hook killed by a signal is a non-blocking error: the call would run", false, blocked},
		{"missing", "exit 127 (program not found) is a non-blocking error: the call would run", false, blocked},
		{"exit1", "exit 1 is a non-blocking error: the call would run", false, blocked},
		{"timeout", "a hook past its timeout is cancelled and the call would run", false, "timed out; " + blocked},
		{"garbage1", "stdout that is not JSON with exit 1 is a non-blocking error: the call would run", false, blocked},
		{"badpolicy", "toolgate itself answers deny with exit 2 when its policy does not parse", false, "toolgate: policy cannot be loaded"},
	}
	marker := func(mode string) string { return filepath.Join(s.project, "marker-"+mode+".txt") }
	var steps []claudeStep
	for _, c := range cases {
		steps = append(steps, claudeStep{
			Tool:  "Bash",
			Input: map[string]any{"command": "touch marker-" + c.mode + ".txt"},
			// Before runs in the mock's handler: it reports with
			// Errorf, never FailNow.
			Before: func() {
				if err := os.WriteFile(filepath.Join(hookDir, "mode"), []byte(c.mode), 0o644); err != nil {
					t.Errorf("hook mode: %v", err)
				}
				if c.mode == "badpolicy" {
					if err := os.WriteFile(filepath.Join(s.project, ".toolgate", "policy.toml"), []byte("[permissions\nallow = [\"Bash(touch:*)\"]\n"), 0o644); err != nil {
						t.Errorf("broken policy: %v", err)
					}
				}
			},
		})
	}
	steps = append(steps, claudeStep{})
	mock := claudeStartMock(t, steps)
	out, errOut := claudeRun(t, s, mock, home, claudeSession, 90*time.Second, nil, "--settings", extra)
	if !mock.done() {
		t.Fatalf("the scripted turn did not reach its end\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	for i, c := range cases {
		res, ok := mock.result(i)
		if got := claudeExists(marker(c.mode)); got != c.runs {
			t.Errorf("%s: marker exists = %v, want %v (%s); the model got %+v", c.mode, got, c.runs, c.note, res)
		}
		if !ok {
			t.Errorf("%s: no tool result reached the model", c.mode)
		} else if res.IsError == c.runs || !strings.Contains(res.Text, c.says) {
			t.Errorf("%s: the model got is_error=%v %q, want is_error=%v holding %q", c.mode, res.IsError, res.Text, !c.runs, c.says)
		}
		t.Logf("%s: %+v", c.mode, res)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}

// TestAgentClaudeSettingsDeny checks that a call toolgate allows is still
// refused by Claude Code's own permissions.deny in the user's settings.
// Claude Code matches its rules against the input a hook hands back, so a
// shell command wrapped in `toolgate sandbox` would no longer match a rule
// such as Bash(touch:*): the hook denies such a command itself.
func TestAgentClaudeSettingsDeny(t *testing.T) {
	requireAgent(t, "claude")
	for _, tc := range []struct {
		name string
		wrap bool
	}{{"unwrapped", false}, {"wrapped", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t)
			pol := claudePolicy
			if !tc.wrap {
				pol = "wrap_hooks = false\n" + pol
			}
			claudeWriteFile(t, filepath.Join(s.home, ".config", "toolgate", "policy.toml"), pol)
			home := agentHome(t)
			claudeInstall(t, home, "")
			settingsFile := filepath.Join(home, ".claude", "settings.json")
			var settings map[string]any
			if data, err := os.ReadFile(settingsFile); err != nil || json.Unmarshal(data, &settings) != nil {
				t.Fatalf("the installed settings %s: %v", settingsFile, err)
			}
			settings["permissions"] = map[string]any{"deny": []string{"Bash(touch:*)"}}
			data, _ := json.Marshal(settings)
			claudeWriteFile(t, settingsFile, string(data))
			mock := claudeStartMock(t, []claudeStep{
				{Tool: "Bash", Input: map[string]any{"command": "touch made-by-agent.txt"}},
				{},
			})
			out, errOut := claudeRun(t, s, mock, home, claudeSession, 60*time.Second, nil)
			if !mock.done() {
				t.Fatalf("the scripted turn did not reach its end\nstdout:\n%s\nstderr:\n%s", out, errOut)
			}
			// toolgate allowed it.
			if d, ok := claudeFind(claudeResolved(t, s, claudeSession), "Bash", "made-by-agent.txt"); !ok || d.Decision != "allow" {
				t.Fatalf("toolgate's decision: %+v (found %v), want allow", d, ok)
			}
			res, _ := mock.result(0)
			ran := claudeExists(filepath.Join(s.project, "made-by-agent.txt"))
			// Unwrapped, Claude Code's rule refuses it; wrapped, the hook
			// does, since the wrapped command would match no rule of
			// Claude Code's.
			if ran || !res.IsError || !(strings.Contains(res.Text, "denied") || strings.Contains(res.Text, "Claude Code's own settings refuse it")) {
				t.Errorf("made-by-agent.txt exists = %v, the model got %+v; want Claude Code's deny rule to refuse the call", ran, res)
			}
		})
	}
}
