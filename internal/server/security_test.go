package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// write is the body of a POST /v1/check that writes file from cwd.
func write(session, cwd, file string) map[string]any {
	return map[string]any{"tool": "Write", "input": map[string]any{"file_path": file, "content": "x"}, "cwd": cwd, "session": session}
}

// decision posts body as the agent and returns the decision and reason.
func (e *testEnv) decision(token string, body map[string]any) (string, string) {
	e.t.Helper()
	r := e.call("POST", "/v1/check", token, body)
	m := r.json(e.t)
	if r.code != 200 {
		e.t.Fatalf("check %v: %d %s", body, r.code, r.body)
	}
	d, _ := m["decision"].(string)
	reason, _ := m["reason"].(string)
	return d, reason
}

// boundWorkspace returns the workspace of session's first session.bound
// event that has one.
func (e *testEnv) boundWorkspace(session string) string {
	e.t.Helper()
	for _, ev := range e.events(session, TypeSessionBound) {
		var b boundPayload
		must(e.t, json.Unmarshal(ev.Payload, &b))
		if b.Workspace != "" {
			return b.Workspace
		}
	}
	return ""
}

// TestWorkspaceBinding: a session's workspace is bound when it starts —
// by the server's --workspace, a person's setting, or its first check —
// and a later call's cwd does not move it.
func TestWorkspaceBinding(t *testing.T) {
	e := newEnv(t)
	other := realDir(t) // a directory outside the project
	inside, outside := "ask", "deny"
	cases := []struct {
		name    string
		setting string // a workspace a person sets first
		first   string // the first check's cwd
		project string // the first check's project directory (the client's)
		cwd     string // a later check's cwd
		file    string // the path it writes, absolute or relative to cwd
		want    string
		bound   string // the workspace recorded; "" for the setting's
	}{
		{name: "a later cwd outside the first one's project writes outside", first: e.project, cwd: other, file: "x.txt", want: outside, bound: e.project},
		{name: "the first cwd binds, so the project is outside later", first: other, cwd: e.project, file: "x.txt", want: outside, bound: other},
		{name: "a later cwd inside the project writes inside", first: e.project, cwd: filepath.Join(e.project, "sub"), file: "x.txt", want: inside, bound: e.project},
		{name: "a first cwd of / binds no workspace", first: "/", cwd: e.project, file: "x.txt", want: outside, bound: NoWorkspace},
		{name: "a first cwd in /usr binds no workspace", first: "/usr/bin", cwd: e.project, file: "x.txt", want: outside, bound: NoWorkspace},
		{name: "a first cwd of the home directory binds no workspace", first: e.srv.opts.Engine.Home(), cwd: e.project, file: "x.txt", want: outside, bound: NoWorkspace},
		// A first cwd named through a link in the client's project
		// directory that leads out of it binds the project's root.
		{name: "a first cwd through a link out of the client's project binds the project", first: filepath.Join(e.project, "lnk"), project: e.project, cwd: filepath.Join(e.project, "lnk"), file: "x.txt", want: outside, bound: e.project},
		{name: "a first cwd through a link binds where it leads without a project directory", first: filepath.Join(e.project, "lnk"), cwd: filepath.Join(e.project, "lnk"), file: "x.txt", want: inside, bound: other},
		{name: "a first cwd elsewhere, named directly, binds the client's project", first: other, project: e.project, cwd: other, file: "x.txt", want: outside, bound: e.project},
		{name: "a first cwd elsewhere binds there without a project directory", first: other, cwd: other, file: "x.txt", want: inside, bound: other},
		{name: "a person's setting wins over the first cwd", setting: other, first: e.project, cwd: e.project, file: "x.txt", want: outside},
		{name: "inside a person's setting is inside", setting: other, first: e.project, cwd: e.project, file: filepath.Join(other, "x.txt"), want: inside},
	}
	must(t, os.Mkdir(filepath.Join(e.project, "sub"), 0o755))
	must(t, os.Symlink(other, filepath.Join(e.project, "lnk")))
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			session := fmt.Sprintf("ws%d", i)
			if tc.setting != "" {
				r := e.call("PUT", "/v1/sessions/"+session+"/policy", e.tokens.Approver, map[string]any{"workspace": tc.setting})
				if r.code != 200 {
					t.Fatalf("set the workspace: %d %s", r.code, r.body)
				}
			}
			first := withCwd(e.check(session, "ls", true), tc.first)
			if tc.project != "" {
				first["project"] = tc.project
			}
			e.decision(e.tokens.Agent, first)
			if d, reason := e.decision(e.tokens.Agent, write(session, tc.cwd, tc.file)); d != tc.want {
				t.Fatalf("the write: %s (%s), want %s", d, reason, tc.want)
			}
			want := tc.bound
			if want == "" {
				want = tc.setting
			}
			if tc.bound != "" {
				if got := e.boundWorkspace(session); got != tc.bound {
					t.Fatalf("session.bound records workspace %q, want %q", got, tc.bound)
				}
			}
			for _, ev := range e.events(session, eventlog.TypeToolCallRequested) {
				var p struct{ Workspace string }
				must(t, json.Unmarshal(ev.Payload, &p))
				if p.Workspace != want {
					t.Fatalf("a call records workspace %q, want %q", p.Workspace, want)
				}
			}
			var view map[string]any
			e.call("GET", "/v1/sessions/"+session+"/policy", e.tokens.Agent, nil).decode(t, &view)
			if view["bound_workspace"] != want {
				t.Fatalf("the session's view shows %v, want %s", view["bound_workspace"], want)
			}
		})
	}
	// A person cannot bind a session to a system directory.
	for _, dir := range []string{"/", "/etc", "/usr/local", e.srv.opts.Engine.Home(), "relative"} {
		if r := e.call("PUT", "/v1/sessions/wsx/policy", e.tokens.Approver, map[string]any{"workspace": dir}); r.code != 400 {
			t.Errorf("workspace %s: %d %s", dir, r.code, r.body)
		}
	}
}

// withCwd returns the check body m with its cwd set to dir.
func withCwd(m map[string]any, dir string) map[string]any {
	m["cwd"] = dir
	return m
}

// TestServerWorkspace: with --workspace every session is bound to it,
// whatever its first cwd, and no session setting changes that.
func TestServerWorkspace(t *testing.T) {
	e := newEnv(t)
	other := realDir(t)
	if _, err := New(Options{Engine: e.srv.opts.Engine, Store: e.store, Tokens: e.tokens, Workspace: "/etc"}); err == nil {
		t.Fatal("a server bound every session to /etc")
	}
	e2 := newEnvAt(t, e.project, sqliteLog(t, filepath.Join(t.TempDir(), "e.db")), func(o *Options, _ *policy.File) { o.Workspace = e.project })
	if d, reason := e2.decision(e2.tokens.Agent, write("s1", other, "x.txt")); d != "deny" {
		t.Fatalf("a write from a first cwd outside --workspace: %s (%s)", d, reason)
	}
	if d, reason := e2.decision(e2.tokens.Agent, write("s1", e.project, "x.txt")); d != "ask" {
		t.Fatalf("a write in --workspace: %s (%s)", d, reason)
	}
	if r := e2.call("PUT", "/v1/sessions/s1/policy", e2.tokens.Approver, map[string]any{"workspace": other}); r.code != 409 {
		t.Fatalf("a session setting over --workspace: %d %s", r.code, r.body)
	}
}

// TestSessionsBelongToTheirToken: a session is its starting token's; a
// second agent token can neither act in it nor read it, on this server or
// on one restarted over the same log.
func TestSessionsBelongToTheirToken(t *testing.T) {
	second := func(o *Options, _ *policy.File) { o.Tokens.Agents = []string{"agent-two"} }
	e := newEnv(t, second)
	one, two := e.tokens.Agent, "agent-two"
	id := e.ask("s1", cmdAsk)
	if r := e.call("POST", "/v1/sessions/s2/events", two, map[string]any{"type": "session.started"}); r.code != 200 {
		t.Fatalf("the second token starts s2: %d %s", r.code, r.body)
	}
	refused := []struct{ method, path string }{
		{"POST", "/v1/sessions/s1/events"},
		{"POST", "/v1/check"},
		{"GET", "/v1/events?session=s1"},
		{"GET", "/v1/sessions/s1/events"},
		{"GET", "/v1/sessions/s1/grants"},
		{"GET", "/v1/sessions/s1/policy"},
		{"GET", "/v1/approvals?session=s1"},
		{"GET", "/v1/approvals/" + id},
	}
	try := func(e *testEnv, token string, stream bool) {
		t.Helper()
		for _, c := range refused {
			var body any
			switch c.path {
			case "/v1/check":
				body = e.check("s1", cmdAllow, true)
			case "/v1/sessions/s1/events":
				if c.method == "POST" {
					body = map[string]any{"type": "user.message", "payload": map[string]any{"text": "hi"}}
				}
			}
			var hdr []string
			if stream {
				hdr = []string{"Accept", "text/event-stream"}
			}
			r := e.call(c.method, c.path, token, body, hdr...)
			if r.code == 404 && c.path == "/v1/approvals/"+id {
				// Answered by then (the restarted server reads the
				// answer from the log): gone for every token alike.
				continue
			}
			if r.code != 403 {
				t.Errorf("%s %s with the second token: %d %s", c.method, c.path, r.code, r.body)
			}
		}
		// Its own list leaves out the other token's approvals.
		var list struct{ Approvals []Approval }
		e.call("GET", "/v1/approvals", token, nil).decode(t, &list)
		for _, a := range list.Approvals {
			if a.Session == "s1" {
				t.Errorf("the second token lists %s of s1", a.ID)
			}
		}
		if r := e.call("GET", "/v1/sessions/s2/events", token, nil); r.code != 200 {
			t.Errorf("the second token reads its own session: %d %s", r.code, r.body)
		}
	}
	try(e, two, false)
	try(e, two, true)
	// Nothing the second token tried reached s1.
	for _, ev := range e.events("s1") {
		if ev.Type == eventlog.TypeUserMessage || strings.Contains(string(ev.Payload), cmdAllow) {
			t.Fatalf("s1 holds %s %s", ev.Type, ev.Payload)
		}
	}
	if r := e.call("GET", "/v1/sessions/s1/events", one, nil); r.code != 200 {
		t.Fatalf("the first token reads s1: %d", r.code)
	}
	if r := e.call("GET", "/v1/sessions/s2/events", one, nil); r.code != 403 {
		t.Fatalf("the first token reads s2: %d", r.code)
	}
	e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "deny"})

	// The binding is in the log: a server restarted on it keeps it, and
	// a session.bound event that does not verify binds nothing.
	forged, _ := json.Marshal(boundPayload{Owner: agentID(one), Sig: "00"})
	_, err := e.store.Append(context.Background(), "s3", eventlog.Draft{Time: time.Now(), Type: TypeSessionBound, Payload: forged})
	must(t, err)
	e2 := newEnvAt(t, e.project, e.store, second)
	try(e2, two, false)
	if r := e2.call("GET", "/v1/sessions/s1/events", one, nil); r.code != 200 {
		t.Fatalf("the first token reads s1 after a restart: %d", r.code)
	}
	if r := e2.call("POST", "/v1/sessions/s3/events", two, map[string]any{"type": "session.started"}); r.code != 200 {
		t.Fatalf("a forged binding kept s3 from the second token: %d %s", r.code, r.body)
	}
	if r := e2.call("GET", "/v1/sessions/s3/events", one, nil); r.code != 403 {
		t.Fatalf("a forged binding gave s3 to the first token: %d", r.code)
	}
}

// TestPendingPerToken: the sessions one token started hold at most their
// share of questions together; another token's are still asked.
func TestPendingPerToken(t *testing.T) {
	b := NewBroker(BrokerOptions{MaxPendingPerSession: 10, MaxPendingPerToken: 3})
	owners := map[string]string{"a1": "agent:a", "a2": "agent:a", "a3": "agent:a", "b1": "agent:b"}
	b.ownerOf = func(session string) string { return owners[session] }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ask := func(session, id string) chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := b.Approve(ctx, &approval.Request{Session: session, ToolCallID: id})
			ch <- err
		}()
		return ch
	}
	for i, s := range []string{"a1", "a1", "a2"} {
		ask(s, fmt.Sprintf("tc_%d", i))
	}
	waitFor(t, "three pending", func() bool { return b.Pending() == 3 })
	select {
	case err := <-ask("a3", "tc_over"):
		if !errors.Is(err, ErrTooManyPending) {
			t.Fatalf("a fourth question of the token: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a fourth question of the token was asked")
	}
	ask("b1", "tc_b")
	waitFor(t, "the other token's question", func() bool { return b.Pending() == 4 })
	// An answer frees a place.
	_, err := b.Answer("tc_0", Reply{Answer: approval.Deny})
	must(t, err)
	ask("a3", "tc_again")
	waitFor(t, "a question in the freed place", func() bool { return b.Pending() == 4 && len(b.List(StatePending, "a3")) == 1 })
}

// rawRequest sends raw on a new connection to e and returns the
// connection.
func (e *testEnv) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", e.ts.Listener.Addr().String())
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestStalledUploadsCutOff: a request that does not send its body in
// time is cut off, many at once, while a check that waits for a person
// and an event stream outlive that timeout.
func TestStalledUploadsCutOff(t *testing.T) {
	const timeout = 300 * time.Millisecond
	e := newEnv(t, func(o *Options, _ *policy.File) { o.BodyTimeout = timeout; o.KeepAlive = time.Hour })
	host := e.ts.Listener.Addr().String()
	heads := []string{
		"POST /v1/check HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + e.tokens.Agent + "\r\nContent-Length: 1000\r\n\r\n{\"tool\":",
		"POST /v1/check HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 1000\r\n\r\n{",
		"POST /v1/sessions/s1/events HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + e.tokens.Agent + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"typ",
	}
	const n = 60
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		c := e.dial(t)
		_, err := io.WriteString(c, heads[i%len(heads)])
		must(t, err)
		wg.Go(func() {
			must(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			// The server answers or not, then closes: read to the end.
			if _, err := io.ReadAll(c); err != nil {
				errs <- fmt.Errorf("connection %d still open: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if took := time.Since(start); took < timeout || took > 5*time.Second {
		t.Fatalf("the stalled uploads ended after %s, want about %s", took, timeout)
	}

	// A check that waits longer than the timeout for its answer gets it.
	done := make(chan map[string]any, 1)
	go func() {
		done <- e.call("POST", "/v1/check", e.tokens.Agent, e.check("s2", cmdAsk, true)).json(t)
	}()
	waitFor(t, "the question", func() bool { return len(e.pending("s2")) == 1 })
	msgs, _, cancel := e.openStream(t, "/v1/sessions/s2/events", e.tokens.Agent, "")
	defer cancel()
	time.Sleep(3 * timeout)
	a := e.pending("s2")[0]
	if r := e.call("POST", "/v1/approvals/"+a.ID, e.tokens.Approver, map[string]any{"answer": "allow_once"}); r.code != 200 {
		t.Fatalf("answer: %d %s", r.code, r.body)
	}
	if m := <-done; m["decision"] != "allow" {
		t.Fatalf("the waiting check: %v", m)
	}
	for {
		m, ok := <-msgs
		if !ok {
			t.Fatal("the stream ended")
		}
		if m.event == string(eventlog.TypePermissionResolved) {
			break
		}
	}
}

// TestHostChecked: a request whose Host is not the server's own address
// is refused before anything else, against DNS rebinding.
func TestHostChecked(t *testing.T) {
	e := newEnv(t, func(o *Options, _ *policy.File) { o.Hosts = []string{"gate.example.net", "other.example.net:9000"} })
	port := e.ts.Listener.Addr().(*net.TCPAddr).Port
	cases := []struct {
		host string
		want int
	}{
		{fmt.Sprintf("127.0.0.1:%d", port), 200},
		{fmt.Sprintf("localhost:%d", port), 200},
		{fmt.Sprintf("LOCALHOST:%d", port), 200},
		{fmt.Sprintf("[::1]:%d", port), 200},
		{"gate.example.net", 200},
		{"other.example.net:9000", 200},
		{"evil.example", 421},
		{fmt.Sprintf("evil.example:%d", port), 421},
		{"127.0.0.1", 421},
		{fmt.Sprintf("localhost:%d", port+1), 421},
		{"other.example.net", 421},
		{fmt.Sprintf("127.0.0.2:%d", port), 421},
	}
	for _, tc := range cases {
		for _, path := range []string{"/healthz", "/v1/whoami", "/"} {
			req, err := http.NewRequest("GET", e.ts.URL+path, nil)
			must(t, err)
			req.Host = tc.host
			req.Header.Set("Authorization", "Bearer "+e.tokens.Approver)
			resp, err := e.ts.Client().Do(req)
			must(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("Host %s %s: %d %s, want %d", tc.host, path, resp.StatusCode, body, tc.want)
			}
		}
	}
	// A raw request with a rebound name never reaches the check.
	c := e.dial(t)
	body := `{"tool":"Bash","input":{"command":"npm test"},"cwd":"` + e.project + `","session":"rebound"}`
	fmt.Fprintf(c, "POST /v1/check HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", e.tokens.Agent, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 421 || len(e.events("rebound")) != 0 {
		t.Fatalf("a rebound request: %d, %d events", resp.StatusCode, len(e.events("rebound")))
	}
	if hostAllowed("example.com", nil, false, nil) {
		t.Fatal("a request from no connection was taken")
	}
}

// TestNoSecretAtRestServer plants secrets in every field of checks and
// events, and finds none of them in the SQLite database or its WAL, in the
// API's answers or in what a person is shown.
func TestNoSecretAtRestServer(t *testing.T) {
	const (
		awsKey    = "AKIAQYLPMN5HHHFPZAM2"
		githubTok = "ghp_R7gTq2Vx9LmN4pZs8KjW3hYb6FdC1eA0uXoI"
		urlPass   = "S3cr3tPassw0rd9x"
		bearerTok = "abcdefghijkl0123456789XYZtokenvalue"
		keyBody   = "MIIEowIBAAKCAQEAyZ2b3n0pQ8T7xV9k4L2mW6sR1tY3uI5oP7aS9dF0gH2jK4lZ"
	)
	privateKey := "-----BEGIN RSA PRIVATE KEY-----\n" + keyBody + "\n-----END RSA PRIVATE KEY-----"
	all := "key " + awsKey + " token " + githubTok + " url https://deploy:" + urlPass + "@git.example.com/r.git" +
		" header Authorization: Bearer " + bearerTok + "\n" + privateKey + "\n"
	raw := []string{awsKey, githubTok, urlPass, bearerTok, keyBody}

	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	secretDir := filepath.Join(project, githubTok)
	must(t, os.Mkdir(secretDir, 0o755))
	db := filepath.Join(t.TempDir(), "events.db")
	e := newEnvAt(t, project, sqliteLog(t, db))
	ag := e.tokens.Agent
	bodies := []map[string]any{
		{"tool": "Bash", "input": map[string]any{"command": "make build " + strings.ReplaceAll(all, "\n", " ")}, "agent": "agent " + awsKey, "parent_agent": "p " + githubTok},
		{"tool": "Write", "input": map[string]any{"file_path": filepath.Join(secretDir, awsKey+".txt"), "content": all}},
		{"tool": "Edit", "input": map[string]any{"file_path": "notes-" + githubTok + ".md", "old_string": "x", "new_string": all}},
		{"tool": "WebFetch", "input": map[string]any{"url": "https://deploy:" + urlPass + "@example.com/?k=" + awsKey, "prompt": all}},
		{"tool": "mcp__github__create_issue", "input": map[string]any{"title": all, "labels": []any{githubTok, map[string]any{awsKey: "Authorization: Bearer " + bearerTok}}}},
		{"tool": "Bash", "input": map[string]any{"command": "echo hi"}, "cwd": secretDir},
	}
	var ids []string
	for i, b := range bodies {
		b["session"] = "sec"
		b["turn"] = fmt.Sprintf("t%d", i)
		if b["cwd"] == nil {
			b["cwd"] = project
		}
		r := e.call("POST", "/v1/check", ag, b)
		m := r.json(t)
		if r.code != 200 {
			t.Fatalf("check %d: %d %s", i, r.code, r.body)
		}
		if id, ok := m["approval_id"].(string); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) < 3 {
		t.Fatalf("only %d calls asked", len(ids))
	}
	// What a person is shown holds no secret either, and they answer.
	shown := string(e.call("GET", "/v1/approvals?session=sec", e.tokens.Approver, nil).body)
	for i, id := range ids {
		answer := map[string]any{"answer": "deny", "message": "no: " + all}
		if i == 0 {
			answer = map[string]any{"answer": "allow_session"}
		}
		if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, answer); r.code != 200 {
			t.Fatalf("answer %s: %d %s", id, r.code, r.body)
		}
	}
	shown += string(e.call("GET", "/v1/approvals?session=sec", e.tokens.Approver, nil).body)
	// Events the agent posts, and ids that are secrets.
	if r := e.call("POST", "/v1/sessions/sec/events", ag, map[string]any{"events": []any{
		map[string]any{"type": "user.message", "payload": map[string]any{"text": all, all: []any{all}}},
		map[string]any{"type": "turn.completed", "payload": map[string]any{"summary": all}},
	}}); r.code != 200 {
		t.Fatalf("post events: %d %s", r.code, r.body)
	}
	for _, b := range []map[string]any{
		{"tool": "Bash", "input": map[string]any{"command": "ls"}, "cwd": project, "session": awsKey},
		{"tool": "Bash", "input": map[string]any{"command": "ls"}, "cwd": project, "session": "ok", "turn": githubTok},
	} {
		if r := e.call("POST", "/v1/check", ag, b); r.code != 400 {
			t.Fatalf("a secret as an id: %d %s", r.code, r.body)
		}
	}
	if r := e.call("POST", "/v1/sessions/"+awsKey+"/events", ag, map[string]any{"type": "session.started"}); r.code != 400 {
		t.Fatalf("a secret as a session id: %d %s", r.code, r.body)
	}
	waitFor(t, "every call resolved", func() bool {
		return len(e.events("sec", eventlog.TypePermissionResolved)) == len(bodies)
	})
	shown += string(e.call("GET", "/v1/events", e.tokens.Approver, nil).body)
	shown += string(e.call("GET", "/v1/sessions/sec/grants", e.tokens.Approver, nil).body)
	if len(e.events("sec", eventlog.TypeLeaseGranted)) != 1 {
		t.Fatal("the session approval was not recorded")
	}
	for _, s := range raw {
		if i := strings.Index(shown, s); i >= 0 {
			t.Errorf("the API shows %q: …%s…", s, shown[max(0, i-200):min(len(shown), i+100)])
		}
	}
	if !strings.Contains(shown, "[REDACTED:aws-access-key-id:") || !strings.Contains(shown, "[REDACTED:private-key:") {
		t.Fatalf("no markers in what the API shows")
	}
	// The files themselves, while the server runs and after it closed.
	grep := func(when string) {
		for _, f := range []string{db, db + "-wal"} {
			data, err := os.ReadFile(f)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			must(t, err)
			for _, s := range raw {
				if bytes.Contains(data, []byte(s)) {
					t.Errorf("%s: %s holds %q", when, filepath.Base(f), s)
				}
			}
		}
	}
	grep("running")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, e.srv.Shutdown(ctx))
	must(t, e.store.Close())
	grep("closed")
	// The markers are there: the redaction did not drop the calls.
	data, err := os.ReadFile(db)
	must(t, err)
	if !bytes.Contains(data, []byte("[REDACTED:github-token:")) {
		t.Fatal("the database holds no marker")
	}
}

// FuzzHostAllowed: no Host header makes the check panic, and one it
// accepts names the server's port on loopback or is one of the names
// given.
func FuzzHostAllowed(f *testing.F) {
	for _, h := range []string{"127.0.0.1:8765", "localhost:8765", "[::1]:8765", "evil.example", "gate.example.net",
		"127.0.0.1", "[::1]", "[", ":8765", "LOCALHOST:8765", "127.0.0.1:08765", "[::ffff:127.0.0.1]:8765", "localhost:8765:1"} {
		f.Add(h)
	}
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}
	extra := []string{"gate.example.net"}
	f.Fuzz(func(t *testing.T, host string) {
		if !hostAllowed(host, local, false, extra) {
			return
		}
		h := strings.ToLower(host)
		switch h {
		case "127.0.0.1:8765", "localhost:8765", "[::1]:8765", "gate.example.net":
		default:
			name := strings.TrimSuffix(strings.TrimPrefix(hostOnly(h), "["), "]")
			ip := net.ParseIP(name)
			if hostOnly(h) != "gate.example.net" && !(ip != nil && ip.Equal(local.IP) && strings.HasSuffix(h, ":8765")) {
				t.Fatalf("Host %q was taken", host)
			}
		}
	})
}

// TestPendingPerTokenServer: through the server, one agent token's
// questions over its cap are denied while another token's are asked.
func TestPendingPerTokenServer(t *testing.T) {
	e := newEnv(t, func(o *Options, _ *policy.File) {
		o.Tokens.Agents = []string{"agent-two"}
		o.Broker = NewBroker(BrokerOptions{Timeout: o.Timeout, MaxPendingPerToken: 2})
	})
	e.ask("p1", cmdAsk)
	e.ask("p2", cmdAsk)
	if d, reason := e.decision(e.tokens.Agent, e.check("p3", cmdAsk, false)); d != "deny" {
		t.Fatalf("a third question of the token: %s (%s)", d, reason)
	}
	r := e.call("POST", "/v1/check", "agent-two", e.check("q1", cmdAsk, false))
	if m := r.json(t); m["state"] != "pending" {
		t.Fatalf("the other token's question: %d %s", r.code, r.body)
	}
}

// TestPendingBytesBounded: an agent whose calls carry a megabyte each
// cannot make the server hold them by the thousand: past its byte budget
// its questions are denied while another token's are still asked, and
// the resolved approvals kept are bounded in bytes, the latest always
// readable.
func TestPendingBytesBounded(t *testing.T) {
	const perToken, keep = 8 << 20, 3 << 20
	e := newEnv(t, func(o *Options, _ *policy.File) {
		o.Tokens.Agents = []string{"agent-two"}
		// A question that timed out during a slow run would free its
		// bytes and let more in than the budget holds.
		o.Timeout = 5 * time.Minute
		o.Broker = NewBroker(BrokerOptions{Timeout: o.Timeout, MaxPendingBytesPerToken: perToken, KeepBytes: keep})
	})
	big := strings.Repeat("x", 900<<10)
	var asked []string
	denied := false
	for i := 0; i < 12 && !denied; i++ {
		body := e.check(fmt.Sprintf("big%d", i), cmdAsk, false)
		body["input"].(map[string]any)["description"] = big
		r := e.call("POST", "/v1/check", e.tokens.Agent, body)
		m := r.json(t)
		switch {
		case m["state"] == "pending":
			asked = append(asked, m["approval_id"].(string))
		case m["decision"] == "deny":
			denied = true
		default:
			t.Fatalf("call %d: %d %s", i, r.code, r.body)
		}
	}
	if !denied || len(asked) == 0 || len(asked)*(900<<10) > perToken {
		t.Fatalf("%d questions of about 1 MiB were asked (budget %d bytes), denied: %v", len(asked), perToken, denied)
	}
	e.srv.broker.mu.Lock()
	got := e.srv.broker.ownBytes[agentID(e.tokens.Agent)]
	e.srv.broker.mu.Unlock()
	if got > perToken {
		t.Fatalf("the token's pending questions hold %d bytes, over %d", got, perToken)
	}
	r := e.call("POST", "/v1/check", "agent-two", e.check("other", cmdAsk, false))
	if m := r.json(t); m["state"] != "pending" {
		t.Fatalf("the other token's question: %d %s", r.code, r.body)
	}
	for _, id := range asked {
		if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 200 {
			t.Fatalf("deny %s: %d %s", id, r.code, r.body)
		}
	}
	last := asked[len(asked)-1]
	waitFor(t, "the last denial recorded", func() bool {
		a, err := e.srv.broker.Get(context.Background(), last)
		return err == nil && a.State == StateResolved
	})
	held := 0
	for _, a := range e.srv.broker.List(StateResolved, "") {
		if len(a.Request.Recorded) != 0 {
			t.Fatalf("resolved approval %s still holds its recorded question", a.ID)
		}
		held += RequestSize(a.Request)
	}
	if held > keep+(1<<20) {
		t.Fatalf("the resolved approvals kept hold %d bytes, over %d", held, keep)
	}
	if r := e.call("GET", "/v1/approvals/"+last, e.tokens.Agent, nil); r.code != 200 {
		t.Fatalf("the latest resolved approval: %d", r.code)
	}
}

// TestEventPagesBounded: a session whose calls carry a megabyte each is
// read a few megabytes a page, each page saying there is more, and
// paging on with after= reads every event.
func TestEventPagesBounded(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("x", 900<<10)
	const calls = 10
	for i := range calls {
		body := e.check("pages", cmdAllow, false)
		body["input"].(map[string]any)["description"] = fmt.Sprintf("%d %s", i, big)
		if r := e.call("POST", "/v1/check", e.tokens.Agent, body); r.code != 200 || r.json(t)["decision"] != "allow" {
			t.Fatalf("call %d: %d %.200s", i, r.code, r.body)
		}
	}
	all := 0
	for _, err := range e.store.Query(context.Background(), eventlog.Filter{Session: "pages"}) {
		must(t, err)
		all++
	}
	seen, after, pages := 0, int64(0), 0
	for {
		r := e.call("GET", fmt.Sprintf("/v1/sessions/pages/events?limit=10000&after=%d", after), e.tokens.Agent, nil)
		var page struct {
			Events []eventlog.Event `json:"events"`
			More   bool             `json:"more"`
		}
		r.decode(t, &page)
		if r.code != 200 {
			t.Fatalf("page %d: %d %s", pages, r.code, r.body)
		}
		if len(page.Events) == 0 {
			break
		}
		pages++
		size := 0
		for _, ev := range page.Events {
			size += len(ev.Payload)
		}
		if len(page.Events) > 1 && size > MaxEventPageBytes {
			t.Fatalf("page %d holds %d bytes of payloads in %d events", pages, size, len(page.Events))
		}
		if !page.More && seen+len(page.Events) < all {
			t.Fatalf("page %d ends early without saying there is more", pages)
		}
		seen += len(page.Events)
		after = page.Events[len(page.Events)-1].ID
	}
	if seen != all || pages < 2 {
		t.Fatalf("read %d of %d events in %d pages", seen, all, pages)
	}
}

// TestAgentModeNoLooser: the mode an agent token reports may make its
// gate stricter than the person's policy, never looser: under a policy of
// strict mode, "default" does not let an unmatched read through, and
// under the default mode "plan" still holds.
func TestAgentModeNoLooser(t *testing.T) {
	strict := policy.ModeStrict
	e := newEnv(t, func(_ *Options, f *policy.File) { f.Layer, f.Mode = policy.LayerUser, &strict })
	read := func(session, mode string) string {
		body := e.check(session, "cat README.md", false)
		if mode != "" {
			body["mode"] = mode
		}
		d, reason := e.decision(e.tokens.Agent, body)
		return d + " " + reason
	}
	must(t, os.WriteFile(filepath.Join(e.project, "README.md"), []byte("x"), 0o644))
	for _, mode := range []string{"", "default", "plan", "dontAsk"} {
		if got := read("m-"+mode, mode); got != "deny strict_unmatched" {
			t.Errorf("mode %q under a strict policy: %s", mode, got)
		}
	}
	e2 := newEnv(t)
	body := e2.check("p", "echo x > out.txt", false)
	body["mode"] = "plan"
	if d, reason := e2.decision(e2.tokens.Agent, body); d != "deny" {
		t.Errorf("plan asked for by the agent under the default mode: %s %s", d, reason)
	}
}
