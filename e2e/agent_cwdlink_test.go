package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The cwd-link tests run a real client turn in which the project holds a
// link x to a directory outside it (another repository): the model makes
// it with its shell tool, or finds it there. The model then changes into
// it (`cd x`, alone and chained with a write), names it as the directory
// of a call where the client has such a field (Codex's exec_command
// workdir, Gemini CLI's dir_path), and writes with relative paths. A hook
// takes the project root from the cwd the client reports, so the tests
// keep every payload the hook is handed (through a program that logs it
// and runs toolgate) and check the safe outcome: nothing is written in the
// outside directory, and a write that would land there is not allowed.
// The policy is in acceptEdits mode, which allows file edits inside the
// workspace: had the outside directory become the workspace, the write
// would be allowed.
//
// What the clients do (measured on the releases in agents_test.go):
// Claude Code reports the project as cwd throughout; after a `cd x` whose
// physical path leaves the project it resets its shell ("Shell cwd was
// reset to …"), and when the hook hands the command back wrapped in
// `toolgate sandbox` the cd happens in a child and never moves its shell.
// Gemini CLI runs each command in a fresh shell from the project and
// reports the project as cwd; it refuses a dir_path or a file path whose
// real path leaves the workspace. Codex runs each command in a fresh shell
// too, but reports an exec_command's workdir as the hook's cwd, written
// through the link (PROJECT/x), and starts the hook in the project.

// linkPolicy is the user policy of the cwd-link tests.
const linkPolicy = `
mode = "acceptEdits"
`

// linkVariant is one set-up of a cwd-link test.
type linkVariant struct {
	name string
	// server: the hooks put calls to toolgate serve (which asks a
	// person, and binds the session's workspace at its first check);
	// otherwise they decide alone, as with no server running.
	server bool
	// agentLinks: the model makes the link (a person approves it);
	// otherwise it is in the project before the turn.
	agentLinks bool
	// noWrap: wrap_hooks = false, so an allowed shell command runs as it
	// is, not wrapped in toolgate sandbox.
	noWrap bool
}

var linkVariants = []linkVariant{
	{name: "the agent makes the link, with a server", server: true, agentLinks: true},
	{name: "the link is there, with a server", server: true},
	{name: "the link is there, no server, unwrapped", noWrap: true},
}

// linkSetup writes the policy and makes the outside repository the link
// points to, and the link unless the agent is to make it; it returns the
// outside directory and the hook program to install, which keeps each
// payload and answer in logDir.
func linkSetup(t *testing.T, s *server, v linkVariant, logDir string) (outside, hook string) {
	t.Helper()
	linkWritePolicy(t, s, v)
	outside = filepath.Join(t.TempDir(), "other-repo")
	if err := os.MkdirAll(filepath.Join(outside, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !v.agentLinks {
		if err := os.Symlink(outside, filepath.Join(s.project, "x")); err != nil {
			t.Fatal(err)
		}
	}
	tg, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	unset := ""
	if !v.server {
		unset = "unset TOOLGATE_SERVER TOOLGATE_TOKEN\n"
	}
	hook = filepath.Join(filepath.Dir(logDir), "log-hook.sh")
	body := "#!/bin/sh\n" + unset +
		"f=" + logDir + "/$(date +%s%N).json\n" +
		"cat > \"$f\"\n" +
		tg + " \"$@\" < \"$f\" > \"$f.out\"\n" +
		"rc=$?\ncat \"$f.out\"\nexit $rc\n"
	if err := os.WriteFile(hook, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return outside, hook
}

// linkWritePolicy writes the user policy of v.
func linkWritePolicy(t *testing.T, s *server, v linkVariant) {
	t.Helper()
	pol := linkPolicy
	if v.noWrap {
		pol = "wrap_hooks = false\n" + pol
	}
	claudeWriteFile(t, filepath.Join(s.home, ".config", "toolgate", "policy.toml"), pol)
}

// linkCall is a before-tool hook call as the logging program kept it.
type linkCall struct {
	Tool     string
	Input    string
	Cwd      string
	Decision string // allow, ask or deny as the hook answered
	Reason   string // and why
}

// linkCalls reads the before-tool payloads kept in dir and the hook's
// answers, in the order they came.
func linkCalls(t *testing.T, dir string) []linkCall {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var out []linkCall
	for _, n := range names {
		var p struct {
			Event string          `json:"hook_event_name"`
			Tool  string          `json:"tool_name"`
			Input json.RawMessage `json:"tool_input"`
			Cwd   string          `json:"cwd"`
		}
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Errorf("payload %s: %v\n%s", n, err, b)
			continue
		}
		if p.Event != "PreToolUse" && p.Event != "BeforeTool" {
			continue
		}
		var a struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
			Specific struct {
				Decision string `json:"permissionDecision"`
				Reason   string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		ans, _ := os.ReadFile(n + ".out")
		if err := json.Unmarshal(ans, &a); err != nil {
			t.Errorf("the hook's answer to %s is not JSON: %v\n%s", b, err, ans)
		}
		out = append(out, linkCall{Tool: p.Tool, Input: claudeUnescaped(p.Input), Cwd: p.Cwd, Decision: a.Specific.Decision + a.Decision, Reason: a.Specific.Reason + a.Reason})
	}
	return out
}

// linkCheck logs the calls and fails the test when a file was made in
// outside or a call whose input holds one of linked was allowed.
func linkCheck(t *testing.T, calls []linkCall, outside string, linked ...string) {
	t.Helper()
	for _, c := range calls {
		t.Logf("hook: %s %s cwd=%s -> %s (%s)", c.Tool, c.Input, c.Cwd, c.Decision, c.Reason)
		for _, l := range linked {
			if strings.Contains(c.Input, l) && c.Decision == "allow" {
				t.Errorf("%s %s (cwd %s) was allowed: it writes in %s", c.Tool, c.Input, c.Cwd, outside)
			}
		}
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			t.Errorf("%s was made outside the project", filepath.Join(outside, e.Name()))
		}
	}
}

// linkBound fails the test when a session of the server was bound to a
// workspace other than the project.
func linkBound(t *testing.T, s *server) {
	t.Helper()
	n := 0
	for _, e := range s.events(t, "type=session.bound&limit=1000") {
		var p struct {
			Workspace string `json:"workspace"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.Workspace == "" {
			continue
		}
		n++
		if p.Workspace != s.project {
			t.Errorf("session %s was bound to the workspace %s, not the project %s", e.Session, p.Workspace, s.project)
		}
	}
	if n == 0 {
		t.Errorf("no session was bound to a workspace")
	}
}

// TestAgentClaudeCwdLink: Claude Code through a link out of the project.
func TestAgentClaudeCwdLink(t *testing.T) {
	requireAgent(t, "claude")
	for _, v := range linkVariants {
		t.Run(v.name, func(t *testing.T) {
			s := startServer(t)
			if v.server {
				defer linkBound(t, s)
			}
			home := agentHome(t)
			logDir := filepath.Join(home, "payloads")
			outside, hook := linkSetup(t, s, v, logDir)
			claudeInstall(t, home, hook)
			var script []claudeStep
			if v.agentLinks {
				script = append(script, claudeStep{Tool: "Bash", Input: map[string]any{"command": "ln -s " + outside + " x"}})
			}
			script = append(script,
				claudeStep{Tool: "Bash", Input: map[string]any{"command": "cd x"}},
				claudeStep{Tool: "Bash", Input: map[string]any{"command": "pwd; pwd -P"}},
				claudeStep{Tool: "Bash", Input: map[string]any{"command": "touch pwned-shell.txt"}},
				claudeStep{Tool: "Write", Input: map[string]any{"file_path": "pwned-write.txt", "content": "x\n"}},
				claudeStep{Tool: "Bash", Input: map[string]any{"command": "cd x && touch pwned-chain.txt"}},
				claudeStep{},
			)
			mock := claudeStartMock(t, script)
			stop := codexApprover(t, s, map[string]string{"ln -s": "allow_once"})
			out, errOut := claudeRun(t, s, mock, home, claudeSession, 90*time.Second, nil, "--permission-mode", "acceptEdits")
			t.Logf("questions: %q", stop())
			for i := range script[:len(script)-1] {
				r, _ := mock.result(i)
				t.Logf("step %d %s: is_error=%v %q", i, script[i].Tool, r.IsError, r.Text)
			}
			linkCheck(t, linkCalls(t, logDir), outside, "pwned-chain")
			if !mock.done() {
				t.Errorf("the scripted turn did not reach its end")
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
			}
		})
	}
}

// TestAgentGeminiCwdLink: Gemini CLI through a link out of the project.
func TestAgentGeminiCwdLink(t *testing.T) {
	requireAgent(t, "gemini")
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range linkVariants {
		t.Run(v.name, func(t *testing.T) {
			s := startServer(t)
			if v.server {
				defer linkBound(t, s)
			}
			home := geminiHome(t, s, geminiSettings(nil))
			logDir := filepath.Join(home, "payloads")
			outside, hook := linkSetup(t, s, v, logDir)
			geminiHookCommand(t, home, bin, hook, 0)
			var calls []geminiCall
			if v.agentLinks {
				calls = append(calls, geminiCall{"run_shell_command", map[string]any{"command": "ln -s " + outside + " x"}})
			}
			calls = append(calls,
				geminiCall{"run_shell_command", map[string]any{"command": "touch pwned-dir.txt", "dir_path": "x"}},
				geminiCall{"run_shell_command", map[string]any{"command": "cd x"}},
				geminiCall{"run_shell_command", map[string]any{"command": "pwd; pwd -P"}},
				geminiCall{"run_shell_command", map[string]any{"command": "touch pwned-shell.txt"}},
				geminiCall{"write_file", map[string]any{"file_path": "x/pwned-write.txt", "content": "x\n"}},
				geminiCall{"run_shell_command", map[string]any{"command": "cd x && touch pwned-chain.txt"}},
			)
			mock := newGeminiMock(t, "done", calls...)
			stop := codexApprover(t, s, map[string]string{"ln -s": "allow_once"})
			out, errOut := geminiRun(t, s, home, mock, "do the scripted work")
			t.Logf("questions: %q", stop())
			resp := mock.responses()
			for i, r := range resp {
				t.Logf("response %d: %s %s", i, r.Name, r.Text())
			}
			linkCheck(t, linkCalls(t, logDir), outside, "pwned-dir", "pwned-write", "pwned-chain")
			if len(resp) != len(calls) {
				t.Errorf("the model got %d function responses for %d calls", len(resp), len(calls))
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
			}
		})
	}
}

// TestAgentCodexCwdLink: Codex through a link out of the project. Its
// exec_command workdir is the call that reaches the hook with the cwd
// written through the link.
func TestAgentCodexCwdLink(t *testing.T) {
	requireAgent(t, "codex")
	for _, v := range linkVariants {
		t.Run(v.name, func(t *testing.T) {
			s := startServer(t)
			if v.server {
				defer linkBound(t, s)
			}
			logDir := filepath.Join(t.TempDir(), "payloads")
			outside, hook := linkSetup(t, s, v, logDir)
			// codexSetup installs the hook and writes its policies; the
			// user policy is then the test's again.
			c := codexSetup(t, s, hook)
			linkWritePolicy(t, s, v)
			var calls []codexCall
			if v.agentLinks {
				calls = append(calls, codexCall{Name: "exec_command", Args: map[string]any{"cmd": "ln -s " + outside + " x"}})
			}
			calls = append(calls,
				codexCall{Name: "exec_command", Args: map[string]any{"cmd": "touch pwned-dir.txt", "workdir": "x"}},
				codexCall{Name: "exec_command", Args: map[string]any{"cmd": "cd x"}},
				codexCall{Name: "exec_command", Args: map[string]any{"cmd": "pwd; pwd -P"}},
				codexCall{Name: "exec_command", Args: map[string]any{"cmd": "touch pwned-shell.txt"}},
				codexCall{Name: "exec_command", Args: map[string]any{"cmd": "cd x && touch pwned-chain.txt"}},
			)
			m := startCodexMock(t, "all done", calls...)
			stop := codexApprover(t, s, map[string]string{"ln -s": "allow_once"})
			stdout, stderr := codexRun(t, s, c, m)
			t.Logf("questions: %q", stop())
			for i, o := range m.outputs() {
				t.Logf("output %d: %q", i, o.Output)
			}
			hc := linkCalls(t, logDir)
			linkCheck(t, hc, outside, "pwned-dir", "pwned-chain")
			// The call that names the link as its directory reached the
			// hook: otherwise the test did not try what it is about.
			found := false
			for _, h := range hc {
				found = found || strings.Contains(h.Input, "pwned-dir")
			}
			if !found {
				t.Errorf("the hook was not asked about the call run in x")
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}
