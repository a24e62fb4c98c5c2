package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Codex tests run `codex exec` (from npm, see agents_test.go) against
// codexMock, with toolgate's hooks installed by `toolgate hook install
// codex --user` into a private CODEX_HOME, and a real `toolgate serve`
// deciding the calls.
//
// What Codex does on its own (measured on @openai/codex 0.171.0): a
// PreToolUse hook blocks the call only by exiting 0 with a deny JSON, or
// by exiting 2 with a reason on stderr. Every other outcome lets the tool
// run: exit 0 with empty output or output that is not JSON, any other
// exit code (1, 127 for a program not found, 137 for a kill), a hook
// killed by a signal, a hook that outlives its timeout, an "ask" answer,
// and exit 2 with nothing on stderr. The entry toolgate installs runs
// toolgate under a guard (see internal/hookinstall) that turns each of
// these into exit 2 with a reason, but the last, which toolgate never
// gives.

// codexPolicy is the project's policy in the Codex tests.
const codexPolicy = `
[permissions]
allow = ["Bash(touch made-by-agent.txt)", "Bash(touch marker.txt)", "apply_patch(allowed-patch.txt)", "mcp__fs__read_text_file", "mcp__fs__write_file"]
deny  = ["Bash(rm *)", "apply_patch(denied-patch.txt)"]
`

// codexEnv is a Codex run's setup: its home, CODEX_HOME and environment.
type codexEnv struct {
	home, codexHome string
	env             []string
}

// codexHomeDir makes a private CODEX_HOME in the test's temporary
// directory. Codex warns there that it does not create its helper
// commands under /tmp; the tools the model calls (exec_command and the
// freeform apply_patch) do not need them.
func codexHomeDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "codex-home")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// codexSetup writes the project policy and installs toolgate's hooks with
// the real installer, running command (the built toolgate binary when
// empty) as the hook.
func codexSetup(t *testing.T, s *server, command string) codexEnv {
	t.Helper()
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.project, ".toolgate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.project, ".toolgate", "policy.toml"), []byte(codexPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	// The user trusts the project (so its allow rules count) and the
	// filesystem MCP server (so its read-only annotations count).
	userFile := filepath.Join(s.home, ".config", "toolgate", "policy.toml")
	trust := "trusted_projects = [" + strconvQuote(s.project) + "]\ntrusted_mcp_servers = [\"fs\"]\n"
	if err := os.WriteFile(userFile, []byte(trust+userPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	c := codexEnv{home: agentHome(t), codexHome: codexHomeDir(t)}
	c.env = s.agentEnv(c.home, "CODEX_HOME="+c.codexHome)
	args := []string{"hook", "install", "codex", "--user"}
	if command != "" {
		args = append(args, "--command", command)
	} else {
		command = bin
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = c.env
	cmd.Dir = s.project
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("toolgate hook install codex --user: %v\n%s", err, out)
	}
	hooks, err := os.ReadFile(filepath.Join(c.codexHome, "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"PreToolUse", "PostToolUse"} {
		cmds := codexHookCommands(t, hooks, ev)
		if len(cmds) != 1 || !strings.Contains(cmds[0], command) {
			t.Fatalf("hooks.json %s runs %q, want one command running %s:\n%s", ev, cmds, command, hooks)
		}
	}
	if cfg, err := os.ReadFile(filepath.Join(c.codexHome, "config.toml")); err != nil || !strings.Contains(string(cfg), "hooks = true") {
		t.Fatalf("config.toml does not turn hooks on (%v):\n%s", err, cfg)
	}
	return c
}

// codexHookCommands returns the commands hooks.json runs for event.
func codexHookCommands(t *testing.T, hooks []byte, event string) []string {
	t.Helper()
	var f struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(hooks, &f); err != nil {
		t.Fatalf("hooks.json: %v\n%s", err, hooks)
	}
	var out []string
	for _, e := range f.Hooks[event] {
		for _, h := range e.Hooks {
			out = append(out, h.Command)
		}
	}
	return out
}

// codexRun runs one `codex exec` turn against m in the project.
func codexRun(t *testing.T, s *server, c codexEnv, m *codexMock, extra ...string) (stdout, stderr string) {
	t.Helper()
	bin := requireAgent(t, "codex")
	args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
		"-c", `model_provider="mock"`, "-c", `model="gpt-5.5"`, "-c", "features.hooks=true",
		"-c", `model_providers.mock={name="mock",base_url="` + m.url + `",wire_api="responses"}`,
		"-s", "danger-full-access", "--json"}
	args = append(append(args, extra...), "do the scripted work")
	stdout, stderr, err := runAgent(t, 90*time.Second, s.project, c.env, bin, args...)
	if err != nil {
		t.Errorf("codex exec: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if len(m.outputs()) < len(m.script) {
		t.Errorf("the model got %d tool results for %d calls\nstdout:\n%s\nstderr:\n%s", len(m.outputs()), len(m.script), stdout, stderr)
	}
	return stdout, stderr
}

// codexApprover answers the server's questions while Codex waits: a
// question whose summary holds a key of answers gets that answer, any
// other a deny (and the test fails). It returns the summaries answered.
func codexApprover(t *testing.T, s *server, answers map[string]string) (stop func() []string) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		answered := map[string]bool{}
		for ctx.Err() == nil {
			var res struct {
				Approvals []approval `json:"approvals"`
			}
			if _, err := s.call(ctx, s.approver, http.MethodGet, "/v1/approvals?state=pending", nil, &res); err != nil {
				if ctx.Err() == nil {
					t.Errorf("list approvals: %v", err)
				}
				return
			}
			for _, a := range res.Approvals {
				if answered[a.ID] {
					continue
				}
				answered[a.ID] = true
				answer := "deny"
				for k, v := range answers {
					if strings.Contains(a.Request.Summary, k) {
						answer = v
					}
				}
				mu.Lock()
				seen = append(seen, a.Request.Summary)
				mu.Unlock()
				if _, err := s.call(ctx, s.approver, http.MethodPost, "/v1/approvals/"+a.ID, map[string]any{"answer": answer}, nil); err != nil && ctx.Err() == nil {
					t.Errorf("answer %s: %v", a.Request.Summary, err)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() []string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// codexDecision is a permission.resolved event with the tool and input of
// the request it answers.
type codexDecision struct {
	Tool     string
	Input    string
	Decision string
	Reason   string
	Actor    string
}

// codexDecisions returns session's decisions in the event log, in order.
func codexDecisions(t *testing.T, s *server, session string) []codexDecision {
	t.Helper()
	requested := map[string]string{}
	var out []codexDecision
	for _, e := range s.events(t, "limit=1000&session="+session) {
		var p struct {
			ToolCallID string          `json:"toolCallId"`
			Tool       string          `json:"tool"`
			Input      json.RawMessage `json:"input"`
			Decision   string          `json:"decision"`
			Reason     string          `json:"reason"`
			Actor      string          `json:"actor"`
		}
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		switch e.Type {
		case "model.tool_call_requested":
			requested[p.ToolCallID] = string(p.Input)
		case "permission.resolved":
			in, ok := requested[p.ToolCallID]
			if !ok {
				// Decided at once: this one event carries the call.
				in = string(p.Input)
			}
			out = append(out, codexDecision{Tool: p.Tool, Input: in, Decision: p.Decision, Reason: p.Reason, Actor: p.Actor})
		}
	}
	return out
}

// codexFind returns the decision on the call whose tool is tool and whose
// input holds part.
func codexFind(ds []codexDecision, tool, part string) (codexDecision, bool) {
	for _, d := range ds {
		if d.Tool == tool && strings.Contains(d.Input, part) {
			return d, true
		}
	}
	return codexDecision{}, false
}

func codexExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

const (
	codexDeniedPatch  = "*** Begin Patch\n*** Add File: denied-patch.txt\n+should not exist\n*** End Patch\n"
	codexAllowedPatch = "*** Begin Patch\n*** Add File: allowed-patch.txt\n+patched by the agent\n*** End Patch\n"
)

// TestAgentCodexTurn runs one Codex turn with shell calls (denied by
// policy, allowed by policy, asked and allowed, asked and denied),
// apply_patch calls (denied and allowed) and MCP calls through `toolgate
// mcp` (allowed read and write, denied credential read), and checks each
// call's effect on disk, its decision in the event log and what the model
// was told.
func TestAgentCodexTurn(t *testing.T) {
	requireAgent(t, "codex")
	fsServer := requireAgent(t, "mcp-server-filesystem")
	s := startServer(t)
	c := codexSetup(t, s, "")
	bin, _ := buildToolgate()

	victim := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := s.project
	if err := os.WriteFile(filepath.Join(p, "notes.txt"), []byte("notes for the agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, ".env"), []byte("API_KEY=sk-live-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Only the proxy denies reading this one (the hook allows it), so its
	// refusal reaches the model as the MCP tool's error.
	if err := os.WriteFile(filepath.Join(p, "proxy-only.txt"), []byte("kept from the model\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	m := startCodexMock(t, "all done",
		codexCall{Name: "exec_command", Args: map[string]any{"cmd": "rm -rf " + victim}},
		codexCall{Name: "exec_command", Args: map[string]any{"cmd": "touch made-by-agent.txt"}},
		codexCall{Name: "exec_command", Args: map[string]any{"cmd": "touch asked-yes.txt"}},
		codexCall{Name: "exec_command", Args: map[string]any{"cmd": "touch asked-no.txt"}},
		codexCall{Name: "apply_patch", Custom: true, Input: codexDeniedPatch},
		codexCall{Name: "apply_patch", Custom: true, Input: codexAllowedPatch},
		codexCall{Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": filepath.Join(p, "notes.txt")}},
		codexCall{Namespace: "mcp__fs", Name: "write_file", Args: map[string]any{"path": filepath.Join(p, "mcp-written.txt"), "content": "written through mcp\n"}},
		codexCall{Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": filepath.Join(p, ".env")}},
		codexCall{Namespace: "mcp__fs", Name: "read_text_file", Args: map[string]any{"path": filepath.Join(p, "proxy-only.txt")}},
	)
	stop := codexApprover(t, s, map[string]string{"asked-yes.txt": "allow_once", "asked-no.txt": "deny"})
	// The proxy decides by its own policy (with one deny rule the hook
	// does not have) and records in the server's event log. It is not
	// given --server: with one, the server decides every call and the
	// proxy's own rules are not consulted.
	mcpArgs, _ := json.Marshal([]string{"mcp", "--name", "fs", "--trusted", "--state-dir", s.state,
		"--user-policy", filepath.Join(s.home, ".config", "toolgate", "policy.toml"),
		"--managed-policy", filepath.Join(filepath.Dir(s.home), "no-managed-policy.toml"),
		"--cwd", p, "--session", "codex-mcp", "--deny", "mcp__fs__read_text_file(path:**/proxy-only.txt)", "--", fsServer, p})
	stdout, stderr := codexRun(t, s, c, m,
		"-c", `mcp_servers.fs.command="`+bin+`"`, "-c", "mcp_servers.fs.args="+string(mcpArgs))
	asked := stop()
	defer func() {
		if t.Failed() {
			t.Logf("codex stdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	}()

	// Effects on disk.
	for _, f := range []struct {
		path string
		want bool
		what string
	}{
		{victim, true, "the denied rm -rf"},
		{filepath.Join(p, "made-by-agent.txt"), true, "the allowed touch"},
		{filepath.Join(p, "asked-yes.txt"), true, "the touch the approver allowed"},
		{filepath.Join(p, "asked-no.txt"), false, "the touch the approver denied"},
		{filepath.Join(p, "denied-patch.txt"), false, "the denied patch"},
		{filepath.Join(p, "allowed-patch.txt"), true, "the allowed patch"},
		{filepath.Join(p, "mcp-written.txt"), true, "the allowed MCP write"},
	} {
		if got := codexExists(f.path); got != f.want {
			t.Errorf("after %s, %s exists = %v, want %v", f.what, f.path, got, f.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(p, "allowed-patch.txt")); string(b) != "patched by the agent\n" {
		t.Errorf("allowed-patch.txt holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(p, "mcp-written.txt")); string(b) != "written through mcp\n" {
		t.Errorf("mcp-written.txt holds %q", b)
	}

	// The questions were asked of the approver while Codex waited.
	if strings.Join(asked, "\n") != "Bash: touch asked-yes.txt\nBash: touch asked-no.txt" {
		t.Errorf("the approver was asked %q, want the two touches", asked)
	}

	// What the model was told about each call.
	outs := m.outputs()
	wantOut := []struct{ has, hasNot string }{
		{"denied by rule Bash(rm *)", ""},                                          // rm -rf: blocked by the hook
		{"exited with code 0", "toolgate"},                                         // allowed touch ran
		{"exited with code 0", "toolgate"},                                         // asked, allowed
		{"user_denied", ""},                                                        // asked, denied
		{"denied by rule apply_patch(denied-patch.txt)", ""},                       // denied patch
		{"allowed-patch.txt", "toolgate"},                                          // allowed patch applied
		{"notes for the agent", "toolgate"},                                        // MCP read
		{"Successfully wrote", "toolgate"},                                         // MCP write
		{"credential_access", "sk-live-secret"},                                    // MCP read of .env, blocked by the hook
		{"mcp__fs__read_text_file(path:**/proxy-only.txt)", "kept from the model"}, // refused by the proxy
	}
	for i, w := range wantOut {
		if i >= len(outs) {
			break
		}
		if !strings.Contains(outs[i].Output, w.has) || (w.hasNot != "" && strings.Contains(outs[i].Output, w.hasNot)) {
			t.Errorf("call %d (%s): the model got %q, want it to hold %q and not %q", i, m.script[i].Name, outs[i].Output, w.has, w.hasNot)
		}
	}

	// The event log holds a decision for each call the server decided.
	// The hook denies a call its local policy denies (rm -rf, the denied
	// patch, the .env read) without asking the server, and those denies
	// are not in the server's log.
	thread := codexThread(stdout)
	ds := codexDecisions(t, s, thread)
	proxy := codexDecisions(t, s, "codex-mcp")
	for _, w := range []struct {
		ds                                  []codexDecision
		tool, part, decision, reason, actor string
	}{
		{ds, "Bash", "touch made-by-agent.txt", "allow", "rule_allow", "policy"},
		{ds, "Bash", "touch asked-yes.txt", "allow", "user_approved", "user"},
		{ds, "Bash", "touch asked-no.txt", "deny", "user_denied", "user"},
		{ds, "apply_patch", "allowed-patch.txt", "allow", "rule_allow", "policy"},
		{ds, "mcp__fs__read_text_file", "notes.txt", "allow", "rule_allow", "policy"},
		{ds, "mcp__fs__write_file", "mcp-written.txt", "allow", "rule_allow", "policy"},
		// The proxy decides the calls the hook let through again.
		{proxy, "mcp__fs__read_text_file", "notes.txt", "allow", "", ""},
		{proxy, "mcp__fs__write_file", "mcp-written.txt", "allow", "", ""},
		{proxy, "mcp__fs__read_text_file", "proxy-only.txt", "deny", "rule_deny", ""},
	} {
		d, ok := codexFind(w.ds, w.tool, w.part)
		if !ok {
			t.Errorf("no permission.resolved for %s %s in the log", w.tool, w.part)
			continue
		}
		if d.Decision != w.decision || (w.reason != "" && d.Reason != w.reason) || (w.actor != "" && d.Actor != w.actor) {
			t.Errorf("%s %s: decision %+v, want %s %s %s", w.tool, w.part, d, w.decision, w.reason, w.actor)
		}
	}
	if t.Failed() {
		for _, d := range append(ds, proxy...) {
			t.Logf("decision %+v", d)
		}
		for i, o := range outs {
			t.Logf("output %d: %q", i, o.Output)
		}
	}
}

// codexThread returns the thread id `codex exec --json` printed: the
// session_id its hooks send.
func codexThread(stdout string) string {
	for _, line := range strings.Split(stdout, "\n") {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "thread.started" {
			return ev.ThreadID
		}
	}
	return "no-thread-started-event"
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestAgentCodexFailClosed breaks the hook in each way a hook can break
// and checks that Codex never runs the tool: the call is one the policy
// allows (touch marker.txt), so only the broken hook stands in its way.
// Each case installs its hook with `toolgate hook install codex --command
// PROGRAM`, as a person pointing the hook at another toolgate would.
func TestAgentCodexFailClosed(t *testing.T) {
	requireAgent(t, "codex")
	s := startServer(t)
	// fake writes a program named toolgate that runs script.
	fake := func(t *testing.T, script string) string {
		dir := t.TempDir()
		path := filepath.Join(dir, "toolgate")
		if err := os.WriteFile(path, []byte("#!/bin/sh\ncat >/dev/null\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	marker := filepath.Join(s.project, "marker.txt")
	policyFile := filepath.Join(s.project, ".toolgate", "policy.toml")
	tests := []struct {
		name string
		// Above each case, what Codex does on its own with such a hook.
		command string // the hook program; "" is the real toolgate
		setup   func(t *testing.T, c codexEnv)
		works   bool // the hook works: the call runs
	}{
		// The control: with toolgate's hook working, the call runs, so a
		// marker missing below is the broken hook's doing.
		{name: "working hook", works: true},
		// Killed by a signal: Codex sees no exit code and runs the tool.
		{name: "killed", command: fake(t, "kill -KILL $$")},
		// The program is gone: the shell exits 127; Codex runs the tool.
		{name: "missing binary", command: filepath.Join(t.TempDir(), "gone", "toolgate")},
		// Exit 1 (e.g. a panic caught by nothing): Codex runs the tool.
		{name: "exit 1", command: fake(t, "echo 'toolgate: something broke' >&2; exit 1")},
		// Not JSON on stdout with exit 0: Codex ignores it and runs the tool.
		{name: "garbage", command: fake(t, "echo 'this is not { json'")},
		// An ask (which toolgate never gives Codex): Codex runs the tool.
		{name: "ask answer", command: fake(t, `printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"asking"}}'`)},
		// Nothing on stdout with exit 0: Codex takes it as no objection.
		{name: "empty output", command: fake(t, "exit 0")},
		// A policy file that does not parse: toolgate itself answers with
		// its deny JSON and exit 2, which Codex honours.
		{name: "policy does not parse", setup: func(t *testing.T, c codexEnv) {
			if err := os.WriteFile(policyFile, []byte("[permissions\nallow = [\"Bash(touch marker.txt)\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		// A hook that hangs: Codex kills it at the entry's timeout and
		// runs the tool. The installed guard kills toolgate 10s before
		// that (590s of 600s) and blocks the call. Both are cut here (12s
		// and 2s), as an install with a 12s timeout would write them, to
		// keep the test fast.
		{name: "hangs past the timeout", command: fake(t, "exec sleep 60"), setup: func(t *testing.T, c codexEnv) {
			path := filepath.Join(c.codexHome, "hooks.json")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out := strings.Replace(string(b), `"timeout": 600`, `"timeout": 12`, 1)
			if out == string(b) {
				t.Fatalf("hooks.json has no 600s PreToolUse timeout:\n%s", b)
			}
			out = strings.Replace(out, "sleep 590 ", "sleep 2 ", 1)
			if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(marker)
			c := codexSetup(t, s, tt.command)
			if tt.setup != nil {
				tt.setup(t, c)
			}
			m := startCodexMock(t, "done", codexCall{Name: "exec_command", Args: map[string]any{"cmd": "touch marker.txt"}})
			stdout, stderr := codexRun(t, s, c, m)
			ran := codexExists(marker)
			os.Remove(marker)
			if tt.works {
				if !ran {
					t.Errorf("with a working hook, the allowed call did not run\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
				}
				return
			}
			if ran {
				t.Errorf("the hook failed (%s) and Codex ran the tool: %s exists\nhooks.json:\n%s\nstdout:\n%s\nstderr:\n%s", tt.name, marker, readFileString(filepath.Join(c.codexHome, "hooks.json")), stdout, stderr)
			}
			if outs := m.outputs(); len(outs) == 0 || !strings.Contains(outs[0].Output, "blocked") {
				t.Errorf("the model was not told the call was blocked: %+v", outs)
			}
		})
	}
}

func readFileString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
