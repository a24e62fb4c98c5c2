package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// testEnv is a server over a real engine, a real policy and a real SQLite
// event log, reached over loopback HTTP.
type testEnv struct {
	t        testing.TB
	srv      *Server
	ts       *httptest.Server
	store    eventlog.Store
	sessions *engine.Sessions
	project  string
	tokens   Tokens
}

// The calls the tests make, and what the test policy decides for them.
const (
	cmdAllow       = "npm test"    // allow, rule_allow
	cmdAsk         = "make build"  // ask, execute_effect
	cmdDestructive = "rm -rf dist" // ask, destructive_effect
	cmdDeny        = "rm -rf /"    // deny, sandbox_rejected
)

type envOption func(*Options, *policy.File)

func withTimeout(d time.Duration) envOption {
	return func(o *Options, _ *policy.File) { o.Timeout = d }
}

func newEnv(t testing.TB, opts ...envOption) *testEnv {
	t.Helper()
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	return newEnvAt(t, project, sqliteLog(t, filepath.Join(t.TempDir(), "events.db")), opts...)
}

// sqliteLog opens the SQLite event log at path.
func sqliteLog(t testing.TB, path string) eventlog.Store {
	t.Helper()
	store, err := sqlite.Open(path, &sqlite.Options{Sync: sqlite.SyncNormal})
	must(t, err)
	return store
}

// newEnvAt is newEnv for a given project and event log, which the env
// closes; two envs on one database are two servers sharing a log.
func newEnvAt(t testing.TB, project string, store eventlog.Store, opts ...envOption) *testEnv {
	t.Helper()
	return newEnvWith(t, project, store, nil, opts...)
}

// newEnvWith is newEnvAt with a gate in auto mode when classifier is not
// nil.
func newEnvWith(t testing.TB, project string, store eventlog.Store, classifier approval.Classifier, opts ...envOption) *testEnv {
	t.Helper()
	home := realDir(t)
	layer, err := policy.ParseRules(policy.LayerCLI, []string{"Bash(npm test)"}, nil, nil)
	must(t, err)
	o := Options{Timeout: 10 * time.Second, KeepAlive: time.Hour, Tokens: Tokens{Agent: "agent-token", Approver: "approver-token"}}
	for _, f := range opts {
		f(&o, layer)
	}
	set, err := policy.Merge(layer)
	must(t, err)
	sessions := engine.NewSessions()
	eng, err := engine.New(engine.Options{Policy: engine.Fixed(set), Project: project, Home: home, Sessions: sessions})
	must(t, err)
	o.Engine, o.Store, o.Sessions = eng, store, sessions
	if classifier != nil {
		o.Broker = NewBroker(BrokerOptions{Timeout: o.Timeout})
		o.Gate, err = gate.New(eng, store, o.Broker, gate.Options{
			Timeout: o.Timeout, NewID: o.Broker.NewID, LogKey: o.Tokens.LogKey(), Classifier: classifier,
		})
		must(t, err)
	}
	o.PolicyFor = func(cwd string) (*policy.Set, string, error) { return set, project, nil }
	srv, err := New(o)
	must(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.Close()
		store.Close()
	})
	return &testEnv{t: t, srv: srv, ts: ts, store: store, sessions: sessions, project: project, tokens: o.Tokens}
}

func realDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	return d
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// response is a decoded answer of the server.
type response struct {
	code   int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %v: %s", r.code, err, r.body)
	}
	return m
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d: %v: %s", r.code, err, r.body)
	}
}

// call sends a request with the given token ("" for none) and body (a
// string is sent as is, anything else as JSON).
func (e *testEnv) call(method, path, token string, body any, hdr ...string) response {
	e.t.Helper()
	return e.callCtx(context.Background(), method, path, token, body, hdr...)
}

func (e *testEnv) callCtx(ctx context.Context, method, path, token string, body any, hdr ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		must(e.t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.ts.URL+path, rd)
	must(e.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return response{}
		}
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, data}
}

// check is the body of a POST /v1/check for a Bash command.
func (e *testEnv) check(session, command string, wait bool) map[string]any {
	return map[string]any{"tool": "Bash", "input": map[string]any{"command": command}, "cwd": e.project, "session": session, "turn": "t1", "wait": wait}
}

// events returns the stored events of session (all sessions for "") of
// the types given; without types, all but the session.bound events.
func (e *testEnv) events(session string, types ...eventlog.Type) []eventlog.Event {
	e.t.Helper()
	var out []eventlog.Event
	for ev, err := range e.store.Query(context.Background(), eventlog.Filter{Session: session, Types: types}) {
		must(e.t, err)
		if len(types) == 0 && ev.Type == TypeSessionBound {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// resolvedPayload returns the payload of the last permission.resolved
// event of session.
func (e *testEnv) resolvedPayload(session string) map[string]any {
	e.t.Helper()
	evs := e.events(session, eventlog.TypePermissionResolved)
	if len(evs) == 0 {
		e.t.Fatalf("session %s has no permission.resolved event", session)
	}
	var m map[string]any
	must(e.t, json.Unmarshal(evs[len(evs)-1].Payload, &m))
	return m
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pending returns the pending approvals of session.
func (e *testEnv) pending(session string) []Approval {
	e.t.Helper()
	r := e.call("GET", "/v1/approvals?state=pending&session="+session, e.tokens.Approver, nil)
	if r.code != 200 {
		e.t.Fatalf("list approvals: %d %s", r.code, r.body)
	}
	var out struct {
		Approvals []Approval `json:"approvals"`
	}
	r.decode(e.t, &out)
	return out.Approvals
}

// ask starts a call that asks, without waiting, and returns its approval id.
func (e *testEnv) ask(session, command string) string {
	e.t.Helper()
	r := e.call("POST", "/v1/check", e.tokens.Agent, e.check(session, command, false))
	m := r.json(e.t)
	if r.code != 200 || m["decision"] != "ask" || m["state"] != "pending" || m["approval_id"] == nil {
		e.t.Fatalf("check %q: %d %s", command, r.code, r.body)
	}
	return m["approval_id"].(string)
}
