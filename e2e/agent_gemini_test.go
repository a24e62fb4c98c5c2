package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// geminiLimit bounds one Gemini CLI run.
const geminiLimit = 90 * time.Second

// geminiSettings is the settings.json Gemini CLI starts from in a private
// home: API-key auth against the mock, nothing sent anywhere else, and
// mcp as its MCP servers. toolgate's installer adds the hooks to it.
func geminiSettings(mcp map[string]any) map[string]any {
	s := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"telemetry": map[string]any{"enabled": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	if mcp != nil {
		s["mcpServers"] = mcp
	}
	return s
}

// geminiHome makes a private home with settings, and installs toolgate's
// hooks into it with the real installer (`toolgate hook install gemini
// --user`). It returns the home.
func geminiHome(t *testing.T, s *server, settings map[string]any) string {
	t.Helper()
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	home := agentHome(t)
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "hook", "install", "gemini", "--user")
	cmd.Dir = s.project
	cmd.Env = s.agentEnv(home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("toolgate hook install gemini --user: %v\n%s", err, out)
	}
	return home
}

// geminiInstalled reads the hook commands the installer wrote for event.
func geminiInstalled(t *testing.T, home, event string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Hooks map[string][]struct {
			Matcher string           `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, data)
	}
	var out []map[string]any
	for _, m := range st.Hooks[event] {
		out = append(out, m.Hooks...)
	}
	return out
}

// geminiRun runs `gemini -p prompt --approval-mode yolo` in the project
// against mock, with home as HOME.
func geminiRun(t *testing.T, s *server, home string, mock *geminiMock, prompt string) (string, string) {
	t.Helper()
	bin := requireAgent(t, "gemini")
	// Gemini CLI strips variables named like *TOKEN* from a hook's
	// environment when it thinks it runs in GitHub Actions (GITHUB_SHA set);
	// the tests run it as on a developer's machine.
	var env []string
	for _, kv := range s.agentEnv(home,
		"GOOGLE_GEMINI_BASE_URL="+mock.URL(),
		"GEMINI_API_KEY=test-key",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_CLI_NO_RELAUNCH=true",
		"NO_COLOR=1",
	) {
		if !strings.HasPrefix(kv, "GITHUB_SHA=") && !strings.HasPrefix(kv, "SURFACE=") {
			env = append(env, kv)
		}
	}
	start := time.Now()
	stdout, stderr, err := runAgent(t, geminiLimit, s.project, env, bin, "-p", prompt, "--approval-mode", "yolo", "--output-format", "json")
	t.Logf("gemini ran %s (err %v)", time.Since(start).Round(time.Millisecond), err)
	return stdout, stderr
}

// geminiPolicy is the user policy of the Gemini tests: touch of one file
// is allowed, touch of the asked-* files asks a person, the filesystem MCP
// server's read and write are allowed, writes under blocked/ are denied,
// and fetches from 93.184.215.14 are allowed and from evil.example denied. The project adds a deny rule for rm.
const geminiPolicy = `
network = true

[permissions]
allow = ["Bash(git status)", "Bash(touch made-by-agent.txt)", "Bash(touch failure-*)", "mcp__fs__read_text_file", "mcp__fs__write_file", "WebFetch(domain:93.184.215.14)"]
ask   = ["Bash(npm test)", "Bash(touch asked-*)"]
deny  = ["Write(blocked/**)", "WebFetch(domain:evil.example)"]
`

const geminiProjectPolicy = `
[permissions]
deny = ["Bash(rm *)"]
`

// geminiPolicies writes the user policy of the Gemini tests over the
// server's and the project's policy file.
func geminiPolicies(t *testing.T, s *server) {
	t.Helper()
	files := map[string]string{
		filepath.Join(s.home, ".config", "toolgate", "policy.toml"): geminiPolicy,
		filepath.Join(s.project, ".toolgate", "policy.toml"):        geminiProjectPolicy,
	}
	for path, text := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// geminiAnswerer answers the server's pending approvals as the approver, in
// the order they come, with answers, while Gemini CLI waits on them. It
// returns a function that waits until all were answered and reports the
// summaries of the approvals it answered.
func geminiAnswerer(t *testing.T, s *server, answers ...string) func() []string {
	done := make(chan []string, 1)
	stop := make(chan struct{})
	go func() {
		var got []string
		answered := map[string]bool{}
		for len(got) < len(answers) {
			select {
			case <-stop:
				done <- got
				return
			case <-time.After(50 * time.Millisecond):
			}
			var res struct {
				Approvals []approval `json:"approvals"`
			}
			if _, err := s.call(context.Background(), s.approver, http.MethodGet, "/v1/approvals?state=pending", nil, &res); err != nil {
				continue
			}
			for _, a := range res.Approvals {
				if answered[a.ID] || len(got) == len(answers) {
					continue
				}
				answered[a.ID] = true
				if _, err := s.call(context.Background(), s.approver, http.MethodPost, "/v1/approvals/"+a.ID, map[string]any{"answer": answers[len(got)]}, nil); err != nil {
					got = append(got, "error: "+err.Error())
					continue
				}
				got = append(got, a.Request.Summary)
			}
		}
		done <- got
	}()
	return func() []string {
		close(stop)
		return <-done
	}
}

func geminiEvents(t *testing.T, s *server, typ string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range s.events(t, "type="+typ+"&limit=1000") {
		var p map[string]any
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		p["_session"] = ev.Session
		out = append(out, p)
	}
	return out
}

func TestAgentGeminiGate(t *testing.T) {
	requireAgent(t, "gemini")
	fsServer := requireAgent(t, "mcp-server-filesystem")
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t)
	geminiPolicies(t, s)
	p := s.project
	outside := filepath.Join(t.TempDir(), "victim.txt")
	for path, text := range map[string]string{outside: "keep me\n", filepath.Join(p, ".env"): "API_KEY=sk-live-hunter2\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mock := newGeminiMock(t, "all done",
		geminiCall{"run_shell_command", map[string]any{"command": "rm -rf " + outside}},
		geminiCall{"run_shell_command", map[string]any{"command": "touch made-by-agent.txt"}},
		geminiCall{"run_shell_command", map[string]any{"command": "touch asked-yes.txt"}},
		geminiCall{"run_shell_command", map[string]any{"command": "touch asked-no.txt"}},
		geminiCall{"mcp_fs_read_text_file", map[string]any{"path": filepath.Join(p, "dist", "app.js")}},
		geminiCall{"mcp_fs_write_file", map[string]any{"path": filepath.Join(p, "mcp-written.txt"), "content": "via mcp\n"}},
		geminiCall{"mcp_fs_read_text_file", map[string]any{"path": filepath.Join(p, ".env")}},
		geminiCall{"mcp_fs_write_file", map[string]any{"path": filepath.Join(p, "blocked", "x.txt"), "content": "no\n"}},
		// Gemini CLI's web_fetch takes a prompt with URLs in it: one naming
		// a denied host among allowed ones is refused; one naming allowed
		// hosts only is fetched. Gemini CLI has the model API (the mock)
		// fetch it, so nothing leaves loopback; the host is an address
		// because Gemini CLI skips a name it cannot resolve.
		geminiCall{"web_fetch", map[string]any{"prompt": "Compare https://93.184.215.14/a with https://evil.example/x"}},
		geminiCall{"web_fetch", map[string]any{"prompt": "Summarize https://93.184.215.14/b"}},
		// grep_search: a search of .env files is a credential read; one of
		// JavaScript files runs.
		geminiCall{"grep_search", map[string]any{"pattern": "API_KEY", "dir_path": p, "include_pattern": ".env"}},
		geminiCall{"grep_search", map[string]any{"pattern": "built", "dir_path": filepath.Join(p, "dist"), "include_pattern": "*.js"}},
	)
	home := geminiHome(t, s, geminiSettings(map[string]any{
		"fs": map[string]any{"command": bin, "args": []string{"mcp", "--name", "fs", "--state-dir", s.state, "--", fsServer, p}},
	}))
	hooks := geminiInstalled(t, home, "BeforeTool")
	// The installer's command runs the built binary, under the guard that
	// TestAgentGeminiHookFailures puts to the test.
	if cmd, _ := hooks[0]["command"].(string); len(hooks) != 1 || !strings.Contains(cmd, `"$0" hook gemini`) || !strings.HasSuffix(cmd, "' "+bin+` '"'`) || !geminiWatchdog.MatchString(cmd) {
		t.Fatalf("installed BeforeTool hooks %v, want one running %s hook gemini under a watchdog", hooks, bin)
	}

	answered := geminiAnswerer(t, s, "allow_once", "deny")
	out, errOut := geminiRun(t, s, home, mock, "do the scripted work")
	summaries := answered()
	t.Logf("answered %q", summaries)
	resp := mock.responses()
	if t.Failed() || len(resp) != 12 {
		t.Fatalf("got %d function responses, want 12: %+v\ntools offered: %v\nstdout:\n%s\nstderr:\n%s\nrequests:\n%s", len(resp), resp, mock.toolNames(), out, errOut, mock.dump())
	}
	for i, r := range resp {
		t.Logf("response %d %s: %s", i, r.Name, r.Text())
	}

	// What the model got back for each call, and what is on disk.
	cases := []struct {
		name    string
		isError bool
		want    string // in the function response
		notWant string // never in it
		file    string // a file the call makes
		exists  bool
	}{
		{"rm -rf outside: project deny rule", true, "rule_deny", "", outside, true},
		{"touch: allowed by a rule", false, "", "", filepath.Join(p, "made-by-agent.txt"), true},
		{"touch: asked, the person allows", false, "", "", filepath.Join(p, "asked-yes.txt"), true},
		{"touch: asked, the person denies", true, "user_denied", "", filepath.Join(p, "asked-no.txt"), false},
		{"mcp read: allowed", false, "built", "", "", false},
		{"mcp write: allowed", false, "Successfully wrote", "", filepath.Join(p, "mcp-written.txt"), true},
		{"mcp read .env: credential", true, "credential_access", "hunter2", "", false},
		{"mcp write blocked/: deny rule", true, "rule_deny", "", filepath.Join(p, "blocked", "x.txt"), false},
		{"web_fetch with a denied URL", true, "WebFetch(domain:evil.example)", "", "", false},
		{"web_fetch of an allowed URL", false, geminiFetched, "", "", false},
		{"grep_search of .env: credential", true, "credential_access", "hunter2", "", false},
		// It runs (Gemini CLI leaves dist/ out of its searches, so it
		// finds nothing).
		{"grep_search of *.js: allowed", false, `filter: \"*.js\"`, "", "", false},
	}
	for i, c := range cases {
		r := resp[i]
		_, isErr := r.Response["error"]
		if isErr != c.isError || !strings.Contains(r.Text(), c.want) || (c.notWant != "" && strings.Contains(r.Text(), c.notWant)) {
			t.Errorf("%s: the model got %s, want error=%v holding %q", c.name, r.Text(), c.isError, c.want)
		}
		if c.file == "" {
			continue
		}
		if _, err := os.Stat(c.file); (err == nil) != c.exists {
			t.Errorf("%s: %s exists=%v, want %v", c.name, c.file, err == nil, c.exists)
		}
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep me\n" {
		t.Errorf("the file outside the project was touched: %q, %v", b, err)
	}
	fetches := mock.fetches()
	if len(fetches) != 1 || fetches[0] != "https://93.184.215.14/b" {
		t.Errorf("the model API was asked to fetch %q, want only https://93.184.215.14/b", fetches)
	}
	if len(summaries) != 2 || !strings.Contains(summaries[0], "asked-yes") || !strings.Contains(summaries[1], "asked-no") {
		t.Errorf("the approver answered %q, want the asked-yes then the asked-no call", summaries)
	}

	// The log holds the decisions the server made: the rule's allow, the
	// person's allow and deny (actor user) for Gemini's session, and the
	// MCP calls, judged by the hook and again by the proxy.
	var got []string
	for _, e := range geminiEvents(t, s, "permission.resolved") {
		line := fmt.Sprint(e["tool"], " ", e["decision"], " ", e["actor"], " ", e["answer"])
		if args, ok := e["args"].(map[string]any); ok {
			line += fmt.Sprint(" ", args["command"])
		}
		got = append(got, line)
	}
	log := strings.Join(got, "\n")
	for _, want := range []string{
		"run_shell_command allow policy",
		"run_shell_command allow user allow_once",
		"run_shell_command deny user deny",
		"mcp__fs__read_text_file allow policy",
		"mcp__fs__write_file allow policy",
		"WebFetch allow policy",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the event log lacks %q; permission.resolved events:\n%s", want, log)
		}
	}
}

// geminiHookCommand points every toolgate hook entry in home's settings at
// program (instead of the toolgate binary the installer wrote; "" keeps
// it) and, when timeoutMs > 0, sets the entries' timeout and, as the
// installer would for that timeout, the guard's watchdog to half of it.
func geminiHookCommand(t *testing.T, home, bin, program string, timeoutMs int) {
	t.Helper()
	path := filepath.Join(home, ".gemini", "settings.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, entries := range st["hooks"].(map[string]any) {
		for _, e := range entries.([]any) {
			for _, h := range e.(map[string]any)["hooks"].([]any) {
				hm := h.(map[string]any)
				cmd, _ := hm["command"].(string)
				if !strings.Contains(cmd, bin) {
					continue
				}
				if program != "" {
					cmd = strings.ReplaceAll(cmd, bin, program)
				}
				if timeoutMs > 0 {
					hm["timeout"] = timeoutMs
					cmd = geminiWatchdog.ReplaceAllString(cmd, fmt.Sprintf("sleep %d &", max(1, timeoutMs/2000)))
				}
				hm["command"] = cmd
				n++
			}
		}
	}
	if n == 0 {
		t.Fatalf("no toolgate hook in %s:\n%s", path, data)
	}
	if data, err = json.MarshalIndent(st, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// geminiWatchdog is the watchdog in the guard toolgate's installer puts
// around Gemini CLI's hook command.
var geminiWatchdog = regexp.MustCompile(`sleep [0-9]+ &`)

// TestAgentGeminiHookFailures shows that a shell call never runs when the
// hook cannot answer. Gemini CLI itself runs the tool when its hook is
// killed, times out or prints text that is not JSON with exit 0 (it has no
// setting to fail closed), so the command toolgate's installer writes
// runs the hook under a guard that turns each of those into a deny.
func TestAgentGeminiHookFailures(t *testing.T) {
	requireAgent(t, "gemini")
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	// A person has an hour to answer, far past the hook's timeout.
	s := startServer(t, "--timeout", "1h")
	geminiPolicies(t, s)
	scripts := t.TempDir()
	wrapper := func(name, body string) string {
		path := filepath.Join(scripts, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name      string
		program   string // what the hook command runs instead of toolgate; "" keeps toolgate
		timeoutMs int
		policy    string // the project's policy file, when set
		marker    string // the file the call would make; failure-NAME.txt (allowed by a rule) when ""
	}{
		// The real hook with a policy file that does not parse. It runs
		// first and alone: the others run in parallel once it is done and
		// the policy file is back.
		{name: "bad policy", policy: "[permissions\nallow = ["},
		// Gemini CLI reads a hook killed by a signal as exit 0 with no
		// output: the tool runs.
		{name: "killed", program: wrapper("killed", "kill -9 $$")},
		// A missing program: the shell's "not found" (exit 127).
		{name: "missing", program: filepath.Join(scripts, "no-such-toolgate")},
		// A hook past its timeout is killed and its output ignored: the
		// tool runs.
		{name: "timeout", program: wrapper("timeout", "exec sleep 30"), timeoutMs: 4000},
		// The real hook waiting for a person who does not answer before
		// the hook's timeout.
		{name: "unanswered", timeoutMs: 6000, marker: "asked-unanswered.txt"},
		// Text that is not JSON with exit 0 is read as an allow.
		{name: "garbage", program: wrapper("garbage", "cat >/dev/null; echo 'this is not json'")},
		// An ask, which toolgate never gives Gemini CLI: a headless run
		// waits for ever.
		{name: "ask", program: wrapper("ask", `cat >/dev/null; echo '{"decision":"ask","reason":"asking"}'`)},
		// Gemini CLI goes by the JSON whatever the exit status: an allow
		// with exit 2 runs the tool.
		{name: "allow with exit 2", program: wrapper("allow2", `cat >/dev/null; echo '{"decision":"allow","reason":"x"}'; exit 2`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.policy == "" {
				t.Parallel()
			}
			marker := tt.marker
			if marker == "" {
				marker = "failure-" + strings.ReplaceAll(tt.name, " ", "-") + ".txt"
			}
			policyFile := filepath.Join(s.project, ".toolgate", "policy.toml")
			if tt.policy != "" {
				if err := os.WriteFile(policyFile, []byte(tt.policy), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.WriteFile(policyFile, []byte(geminiProjectPolicy), 0o644) })
			}
			mock := newGeminiMock(t, "done", geminiCall{"run_shell_command", map[string]any{"command": "touch " + marker}})
			home := geminiHome(t, s, geminiSettings(nil))
			if tt.program != "" || tt.timeoutMs > 0 {
				geminiHookCommand(t, home, bin, tt.program, tt.timeoutMs)
			}
			out, errOut := geminiRun(t, s, home, mock, "touch the marker")
			resp := mock.responses()
			if _, err := os.Stat(filepath.Join(s.project, marker)); err == nil {
				t.Errorf("%s ran although the hook failed; the model got %+v", marker, resp)
			}
			if len(resp) != 1 {
				t.Fatalf("got %d function responses, want 1: %+v\nstdout:\n%s\nstderr:\n%s", len(resp), resp, out, errOut)
			}
			if _, isErr := resp[0].Response["error"]; !isErr {
				t.Errorf("the model got %s, want an error", resp[0].Text())
			}
			t.Logf("the model got %s", resp[0].Text())
		})
	}
}
