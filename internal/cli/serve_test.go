package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/server"
)

// runningServer is a `toolgate serve` started by a test.
type runningServer struct {
	url, stateDir, project string
	agent, approver        string
	stdout, stderr         *syncBuffer
	stop                   context.CancelFunc
	exit                   chan int
}

// startServe runs `toolgate serve` on a free loopback port until the test
// ends, and waits for it to listen.
func startServe(t *testing.T, args ...string) *runningServer {
	t.Helper()
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	for i, a := range args {
		if a == "--state-dir" && i+1 < len(args) {
			state = args[i+1] // the last --state-dir counts
		}
	}
	rs := &runningServer{stateDir: state, project: project, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exit: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	rs.stop = cancel
	argv := append([]string{"serve", "--addr", "127.0.0.1:0", "--state-dir", state,
		"--user-policy", filepath.Join(project, "none.toml"), "--managed-policy", filepath.Join(project, "none.toml")}, args...)
	go func() { rs.exit <- RunContext(ctx, argv, strings.NewReader(""), rs.stdout, rs.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-rs.exit:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	re := regexp.MustCompile(`listening on (http://\S+)`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := re.FindStringSubmatch(rs.stdout.String()); m != nil {
			rs.url = m[1]
			break
		}
		select {
		case code := <-rs.exit:
			t.Fatalf("serve exited with %d: %s%s", code, rs.stdout, rs.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s%s", rs.stdout, rs.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rs.agent = readToken(t, filepath.Join(state, server.AgentTokenFile))
	rs.approver = readToken(t, filepath.Join(state, server.ApproverTokenFile))
	return rs
}

func readToken(t *testing.T, path string) string {
	t.Helper()
	tok, err := server.ReadTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (rs *runningServer) post(t *testing.T, path, token string, body any) (int, map[string]any) {
	t.Helper()
	return rs.do(t, "POST", path, token, body)
}

func (rs *runningServer) do(t *testing.T, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		r = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, rs.url+path, r)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestServeRestoresSessions: a session switched to plan mode is still in
// plan mode after the server is stopped and started again on its state.
func TestServeRestoresSessions(t *testing.T) {
	rs := startServe(t)
	if code, out := rs.do(t, "PUT", "/v1/sessions/s1/policy", rs.approver, map[string]any{"mode": "plan"}); code != 200 {
		t.Fatalf("PUT policy: %d %v", code, out)
	}
	rs.stop()
	select {
	case code := <-rs.exit:
		rs.exit <- code // for the cleanup, which waits for it too
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	again := startServe(t, "--state-dir", rs.stateDir)
	code, out := again.do(t, "GET", "/v1/sessions/s1/policy", again.approver, nil)
	if code != 200 || out["mode"] != "plan" {
		t.Fatalf("after restart: %d %v", code, out)
	}
	if !strings.Contains(again.stderr.String(), "session settings restored") {
		t.Errorf("no log line about the restore: %s", again.stderr)
	}
}

// TestServeProtectsEventLog: an event log given with --db outside the
// state directory is a credential path too, with its WAL.
func TestServeProtectsEventLog(t *testing.T) {
	db := filepath.Join(t.TempDir(), "log", "events.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	rs := startServe(t, "--db", db)
	for _, tc := range []struct{ command, reason string }{
		{"cat " + db, "credential_access"},
		{"cd " + filepath.Dir(db) + " && cat events.db-shm", "credential_access"},
		{"head -c 100 " + db + "-wal", "credential_access"},
		// Outside the workspace, the sandbox refuses the write first.
		{"cp /dev/null " + db + "-wal", "sandbox_rejected"},
	} {
		code, m := rs.post(t, "/v1/check", rs.agent, map[string]any{
			"tool": "Bash", "input": map[string]any{"command": tc.command}, "cwd": rs.project, "session": "s1", "wait": true,
		})
		if code != 200 || m["decision"] != "deny" || m["reason"] != tc.reason {
			t.Errorf("%s: %d %v, want a deny for %s", tc.command, code, m, tc.reason)
		}
	}
	// Read the log through the engine's Read tool, as an agent would.
	code, m := rs.post(t, "/v1/check", rs.agent, map[string]any{
		"tool": "Read", "input": map[string]any{"file_path": db}, "cwd": rs.project, "session": "s1", "wait": true,
	})
	if code != 200 || m["decision"] != "deny" || m["reason"] != "credential_access" {
		t.Errorf("Read %s: %d %v", db, code, m)
	}
}

func TestServe(t *testing.T) {
	rs := startServe(t, "--allow", "Bash(npm test)", "--timeout", "1m")
	out := rs.stdout.String()
	for _, want := range []string{"/login?code=", server.AgentTokenFile, server.ApproverTokenFile, "events.db"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve did not print %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, rs.agent) || strings.Contains(out, rs.approver) {
		t.Error("serve printed a token")
	}
	check := func(command string, wait bool, session string) map[string]any {
		code, m := rs.post(t, "/v1/check", rs.agent, map[string]any{
			"tool": "Bash", "input": map[string]any{"command": command}, "cwd": rs.project, "session": session, "wait": wait})
		if code != 200 {
			t.Fatalf("check %q: %d %v", command, code, m)
		}
		return m
	}
	if m := check("npm test", true, "s1"); m["decision"] != "allow" || m["reason"] != "rule_allow" {
		t.Fatalf("npm test: %v", m)
	}
	if m := check("rm -rf /", true, "s1"); m["decision"] != "deny" {
		t.Fatalf("rm -rf /: %v", m)
	}
	// The state directory is a credential path, wherever it is.
	if m := check("cat "+filepath.Join(rs.stateDir, server.ApproverTokenFile), true, "s1"); m["decision"] != "deny" || m["reason"] != "credential_access" {
		t.Fatalf("reading the approver token: %v", m)
	}
	// A question pending at shutdown is denied with approval_cancelled.
	if m := check("make build", false, "s2"); m["state"] != "pending" {
		t.Fatalf("make build: %v", m)
	}
	// The login link works once.
	link := regexp.MustCompile(`http://\S+/login\?code=\S+`).FindString(out)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	code := link[strings.Index(link, "code=")+len("code="):]
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/#login="+code {
		t.Fatalf("login: %d %v", resp.StatusCode, resp.Header)
	}
	// The page redeems the code for a session token, once.
	for i, want := range []int{http.StatusOK, http.StatusForbidden} {
		req, err := http.NewRequest(http.MethodPost, rs.url+"/v1/login", strings.NewReader(`{"code":"`+code+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", rs.url)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusOK) != strings.Contains(string(body), `"token"`) {
			t.Fatalf("redeem %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	// The web page is served.
	resp, err = http.Get(rs.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(strings.ToLower(string(page)), "<html") {
		t.Fatalf("GET /: %d %.200s", resp.StatusCode, page)
	}

	rs.stop()
	if code := <-rs.exit; code != 0 {
		t.Fatalf("serve exited with %d: %s", code, rs.stderr)
	}
	rs.exit <- 0 // for the cleanup
	store, err := sqlite.Open(filepath.Join(rs.stateDir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var reasons []string
	for e, err := range store.Query(context.Background(), eventlog.Filter{Types: []eventlog.Type{eventlog.TypePermissionResolved}}) {
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Reason string }
		_ = json.Unmarshal(e.Payload, &p)
		reasons = append(reasons, e.Session+":"+p.Reason)
	}
	if got := strings.Join(reasons, " "); got != "s1:rule_allow s1:sandbox_rejected s1:credential_access s2:approval_cancelled" {
		t.Fatalf("recorded %s", got)
	}
}

func TestServeRefuses(t *testing.T) {
	state := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"all interfaces", []string{"--addr", ":0"}, "--allow-remote"},
		{"remote address", []string{"--addr", "192.0.2.1:8765"}, "--allow-remote"},
		{"bad address", []string{"--addr", "nowhere"}, "HOST:PORT"},
		{"bad timeout", []string{"--addr", "127.0.0.1:0", "--timeout", "0s"}, "--timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(append([]string{"serve", "--state-dir", state}, tc.args...), strings.NewReader(""), &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
		})
	}
	// A token file others can read stops the server.
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := server.LoadTokens(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, server.AgentTokenFile), 0o640); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run([]string{"serve", "--addr", "127.0.0.1:0", "--state-dir", dir}, strings.NewReader(""), &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "chmod 600") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// TestApprove answers a running server's question from the terminal
// command, and prints a login link.
func TestApprove(t *testing.T) {
	rs := startServe(t, "--timeout", "1m")
	// One question before approve starts, one after.
	askCmd := func(session, command string) string {
		code, m := rs.post(t, "/v1/check", rs.agent, map[string]any{
			"tool": "Bash", "input": map[string]any{"command": command}, "cwd": rs.project, "session": session})
		if code != 200 || m["state"] != "pending" {
			t.Fatalf("check: %d %v", code, m)
		}
		return m["approval_id"].(string)
	}
	ask := func(session string) string { return askCmd(session, "make build") }
	first := ask("s1")
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- RunContext(ctx, []string{"approve", "--server", rs.url, "--state-dir", rs.stateDir}, inR, out, out)
	}()
	exited := false
	defer func() {
		cancel()
		inW.Close()
		if !exited {
			<-done
		}
	}()
	waitOut := func(want string, n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for strings.Count(out.String(), want) < n {
			if time.Now().After(deadline) {
				t.Fatalf("approve never printed %q (%d times):\n%s", want, n, out)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitOut("["+first+"]", 1)
	waitOut("> ", 1)
	if _, err := io.WriteString(inW, "a\n"); err != nil {
		t.Fatal(err)
	}
	waitOut("→ allow (user_approved)", 1)
	second := ask("s2")
	waitOut("["+second+"]", 1)
	waitOut("> ", 2)
	if _, err := io.WriteString(inW, "d\n"); err != nil {
		t.Fatal(err)
	}
	waitOut("Message for the model", 1)
	if _, err := io.WriteString(inW, "not now\n"); err != nil {
		t.Fatal(err)
	}
	waitOut("→ deny (user_denied)", 1)
	// A destructive call is allowed only with the typed confirmation.
	third := askCmd("s3", "rm -rf dist")
	waitOut("["+third+"]", 1)
	waitOut("> ", 3)
	if _, err := io.WriteString(inW, "a\n"); err != nil {
		t.Fatal(err)
	}
	waitOut("to allow it: ", 1)
	if _, err := io.WriteString(inW, "dist\n"); err != nil {
		t.Fatal(err)
	}
	waitOut("→ allow (user_approved)", 2)
	// Allow for session is offered as on the page.
	fourth := askCmd("s4", "make test")
	waitOut("["+fourth+"]", 1)
	waitOut("[s] Allow for session", 3)
	if _, err := io.WriteString(inW, "s\n"); err != nil {
		t.Fatal(err)
	}
	waitOut("→ allow (user_approved)", 3)
	// The end of the input ends approve, cleanly.
	inW.Close()
	select {
	case code := <-done:
		exited = true
		if code != 0 || !strings.Contains(out.String(), "the input ended") {
			t.Fatalf("approve at the end of its input: exit %d\n%s", code, out)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("approve kept running after its input ended:\n%s", out)
	}
	// The log says the answers came from the terminal.
	for _, id := range []string{first, second, third, fourth} {
		e := resolvedEvent(t, rs, id)
		if e["via"] != "terminal" || e["actor"] != "user" {
			t.Fatalf("permission.resolved of %s: %v", id, e)
		}
	}

	var stdout, stderr bytes.Buffer
	if code := Run([]string{"login-link", "--server", rs.url, "--state-dir", rs.stateDir}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("login-link: %d %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), rs.url+"/login?code=") {
		t.Fatalf("login-link printed %q", stdout.String())
	}
	// Without a token file, approve says where it looked.
	stderr.Reset()
	if code := Run([]string{"approve", "--server", rs.url, "--state-dir", t.TempDir()}, strings.NewReader(""), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "approver.token") {
		t.Fatalf("approve without a token: %d %s", code, stderr.String())
	}
}

func TestReadSSE(t *testing.T) {
	in := ": hello\n\nid: 7\nevent: x\ndata: {\"a\":\ndata: 1}\n\n: keepalive\n\nid: 8\ndata: {}\n\n"
	var got []sseMessage
	err := readSSE(bufio.NewReader(strings.NewReader(in)), func(m sseMessage) { got = append(got, m) })
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("end of stream: %v", err)
	}
	if len(got) != 2 || got[0].id != "7" || got[0].event != "x" || string(got[0].data) != "{\"a\":\n1}" || got[1].id != "8" {
		t.Fatalf("messages %+v", got)
	}
}

func TestReadNotifyFile(t *testing.T) {
	dir := t.TempDir()
	if hooks, err := readNotifyFile(filepath.Join(dir, "missing")); err != nil || hooks != nil {
		t.Fatalf("missing file: %v %v", hooks, err)
	}
	path := filepath.Join(dir, NotifyFile)
	if err := os.WriteFile(path, []byte("# phone\nntfy=https://ntfy.sh/secret-topic\n\nhttps://hooks.example.com/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hooks, err := readNotifyFile(path)
	if err != nil || len(hooks) != 2 || hooks[0] != "ntfy=https://ntfy.sh/secret-topic" {
		t.Fatalf("hooks %v, %v", hooks, err)
	}
	if err := os.WriteFile(path, []byte("https://ok.example\nteams=https://x.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readNotifyFile(path); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("bad line: %v", err)
	}
}

// TestServeTwoInstances: two `toolgate serve` on one state directory (one
// SQLite log, one pair of tokens), as behind a load balancer: a question
// asked through the first is answered on the second.
func TestServeTwoInstances(t *testing.T) {
	one := startServe(t)
	two := startServe(t, "--state-dir", one.stateDir)
	code, m := one.post(t, "/v1/check", one.agent, map[string]any{
		"tool": "Bash", "input": map[string]any{"command": "make build"}, "cwd": one.project, "session": "s1",
	})
	if code != 200 || m["state"] != "pending" {
		t.Fatalf("check on the first: %d %v", code, m)
	}
	id := m["approval_id"].(string)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, list := two.do(t, "GET", "/v1/approvals?state=pending", two.approver, nil)
		if l, _ := list["approvals"].([]any); len(l) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the question never showed on the second: %v", list)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, m = two.post(t, "/v1/approvals/"+id, two.approver, map[string]any{"answer": "allow_once"})
	if code != 200 || m["state"] != "resolved" {
		t.Fatalf("answer on the second: %d %v", code, m)
	}
	code, m = one.do(t, "GET", "/v1/approvals/"+id, one.approver, nil)
	if d, _ := m["decision"].(map[string]any); code != 200 || d["decision"] != "allow" || d["actor"] != "user" {
		t.Fatalf("on the first: %d %v", code, m)
	}
}

// TestServeWebhooksOffTheCommandLine: a webhook URL is a secret, and the
// server's command line is readable by every local process (ps aux). The
// server takes webhooks from $TOOLGATE_NOTIFY (or the state directory's
// notify file) and notifies them; --notify on the command line is refused
// unless --notify-insecure-argv accepts the risk, and then it warns.
func TestServeWebhooksOffTheCommandLine(t *testing.T) {
	got := make(chan string, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.URL.Path + " " + string(b)
	}))
	defer hook.Close()
	secretURL := hook.URL + "/hooks/T0123/B0456/s3cr3tXYZ"

	t.Run("refused on the command line", func(t *testing.T) {
		var stdout, stderr syncBuffer
		// Bounded: a server that took the flag would run on.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		code := RunContext(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--state-dir", t.TempDir(), "--notify", secretURL},
			strings.NewReader(""), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "command line") || !strings.Contains(stderr.String(), NotifyEnv) ||
			!strings.Contains(stderr.String(), "--notify-insecure-argv") {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	})

	ask := func(t *testing.T, rs *runningServer, session string) {
		t.Helper()
		code, m := rs.post(t, "/v1/check", rs.agent, map[string]any{
			"tool": "Bash", "input": map[string]any{"command": "make build"}, "cwd": rs.project, "session": session, "wait": false})
		if code != 200 || m["state"] != "pending" {
			t.Fatalf("check: %d %v", code, m)
		}
		select {
		case body := <-got:
			if !strings.HasPrefix(body, "/hooks/T0123/B0456/s3cr3tXYZ ") || !strings.Contains(body, session) {
				t.Fatalf("notification %s", body)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no notification")
		}
	}
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv(NotifyEnv, "json="+secretURL)
		rs := startServe(t, "--timeout", "1m")
		ask(t, rs, "env1")
		if strings.Contains(rs.stderr.String(), "warning") {
			t.Fatalf("a warning without --notify: %s", rs.stderr)
		}
	})
	t.Run("accepted with the risk, and warned of", func(t *testing.T) {
		rs := startServe(t, "--timeout", "1m", "--notify", secretURL, "--notify-insecure-argv")
		ask(t, rs, "argv1")
		if !strings.Contains(rs.stderr.String(), "readable by every local process") {
			t.Fatalf("no warning: %s", rs.stderr)
		}
	})
	t.Run("a bad URL in the environment is named", func(t *testing.T) {
		t.Setenv(NotifyEnv, "teams=https://x.example")
		var stdout, stderr syncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		code := RunContext(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--state-dir", t.TempDir()}, strings.NewReader(""), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "$"+NotifyEnv) {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	})
}

// resolvedEvent returns the payload of the permission.resolved event of
// tool call id in the server's event log.
func resolvedEvent(t *testing.T, rs *runningServer, id string) map[string]any {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(rs.stateDir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for e, err := range store.Query(context.Background(), eventlog.Filter{Types: []eventlog.Type{eventlog.TypePermissionResolved}}) {
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if json.Unmarshal(e.Payload, &m) == nil && m["toolCallId"] == id {
			return m
		}
	}
	t.Fatalf("no permission.resolved for %s", id)
	return nil
}
