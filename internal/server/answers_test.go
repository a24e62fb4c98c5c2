package server

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// newRulesEnv is a server whose gate writes remembered rules to the
// policy files its engine loads: the project's local file and userFile.
func newRulesEnv(t *testing.T) (e *testEnv, userFile string) {
	t.Helper()
	project, home := realDir(t), realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	userFile = filepath.Join(home, ".config", "toolgate", "policy.toml")
	store := sqliteLog(t, filepath.Join(t.TempDir(), "events.db"))
	tokens := Tokens{Agent: "agent-token", Approver: "approver-token"}
	sessions := engine.NewSessions()
	eng, err := engine.New(engine.Options{
		Policy: engine.FromFiles(filepath.Join(home, "no-managed.toml"), userFile), Project: project, Home: home, Sessions: sessions,
	})
	must(t, err)
	broker := NewBroker(BrokerOptions{Timeout: 10 * time.Second})
	g, err := gate.New(eng, store, broker, gate.Options{
		Timeout: 10 * time.Second, NewID: broker.NewID, LogKey: tokens.LogKey(), Rules: gate.PolicyFiles{User: userFile},
	})
	must(t, err)
	return newEnvFrom(t, project, store, Options{
		Timeout: 10 * time.Second, KeepAlive: time.Hour, Tokens: tokens, Engine: eng, Store: store,
		Sessions: sessions, Broker: broker, Gate: g,
		PolicyFor: func(string) (*policy.Set, string, error) { return nil, "", os.ErrNotExist },
	}), userFile
}

// newEnvFrom serves o over loopback HTTP; the env closes the server and
// store.
func newEnvFrom(t *testing.T, project string, store interface{ Close() error }, o Options) *testEnv {
	t.Helper()
	srv, err := New(o)
	must(t, err)
	e := &testEnv{t: t, srv: srv, store: o.Store, sessions: o.Sessions, project: project, tokens: o.Tokens}
	e.ts = httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		e.ts.Close()
		store.Close()
	})
	return e
}

// TestRememberedRuleIsTheCommandSeen: a person who answers "always allow
// in this project" (or "for me") to a program that runs what its arguments
// name allows that command, not every command of the program and
// subcommand. Before, allow_project on docker run hello-world saved
// Bash(docker run:*), and the agent's next call, a privileged container
// with the host's root mounted, was allowed by it.
func TestRememberedRuleIsTheCommandSeen(t *testing.T) {
	for _, tc := range []struct {
		answer, seen, rule string
		variants           []string
	}{
		{"allow_project", "docker run hello-world", "Bash(docker run hello-world)", []string{
			"docker run --privileged -v /:/host alpine chroot /host sh -c id",
			"docker run --privileged hello-world",
			"timeout 60 docker run hello-world",
		}},
		{"allow_project", "docker run alpine chroot --privileged /host", "Bash(docker run alpine chroot --privileged /host)", []string{
			"docker run --privileged alpine chroot /host",
		}},
		{"allow_user", "go run ./cmd/tool", "Bash(go run ./cmd/tool)", []string{"go run ./cmd/other", "go run -exec ./x ./cmd/tool"}},
		{"allow_project", "uv run pytest", "Bash(uv run pytest)", []string{"uv run python", "uv run --with evil pytest"}},
		{"allow_project", "./deploy.sh staging", "Bash(./deploy.sh staging)", []string{"./deploy.sh production", "./deploy.sh staging --force"}},
		{"allow_user", "make build", "Bash(make build)", []string{"make deploy", "make -f /tmp/evil.mk build"}},
		{"allow_project", "npx prettier", "Bash(npx prettier)", []string{"npx evil-package"}},
	} {
		t.Run(tc.seen, func(t *testing.T) {
			e, userFile := newRulesEnv(t)
			id := e.ask("s1", tc.seen)
			var a Approval
			e.call("GET", "/v1/approvals/"+id, e.tokens.Approver, nil).decode(t, &a)
			if a.Request.SuggestedRule != tc.rule {
				t.Errorf("suggested rule %q, want %q", a.Request.SuggestedRule, tc.rule)
			}
			if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": tc.answer}); r.code != 200 {
				t.Fatalf("answer: %d %s", r.code, r.body)
			}
			file := filepath.Join(e.project, policy.LocalFile)
			if tc.answer == "allow_user" {
				file = userFile
			}
			data, err := os.ReadFile(file)
			if err != nil || !strings.Contains(string(data), tc.rule) {
				t.Errorf("%s does not hold %s: %v\n%s", file, tc.rule, err, data)
			}
			// The agent, holding only its token, tries what it was not
			// shown to the person.
			if got, reason := e.decision(e.tokens.Agent, e.check("s1", tc.seen, false)); got != "allow" || reason != "rule_allow" {
				t.Fatalf("%q after %s: %s (%s), want allow by the rule", tc.seen, tc.answer, got, reason)
			}
			for _, v := range tc.variants {
				if got, reason := e.decision(e.tokens.Agent, e.check("s1", v, false)); got == "allow" {
					t.Errorf("%q was allowed (%s) by the rule remembered for %q", v, reason, tc.seen)
				}
			}
		})
	}
}

// respond posts a respond without tool_call_id, as the approver.
func (e *testEnv) respond(session, decision string) response {
	e.t.Helper()
	return e.call("POST", "/v1/sessions/"+session+"/respond", e.tokens.Approver, map[string]any{"kind": "permission", "decision": decision})
}

// TestRespondNeedsTheID: an answer that does not name its call is taken
// only for a question that was its session's only one all along; the
// response says which call it answered. Before, it answered whatever was
// oldest when it arrived: the agent, holding only its token, could drop
// the question the person was reading and have the approval land on
// another.
func TestRespondNeedsTheID(t *testing.T) {
	t.Run("two pending", func(t *testing.T) {
		e := newEnv(t)
		first, second := e.ask("s1", "make build"), e.ask("s1", "make deploy")
		r := e.respond("s1", "approved")
		msg, _ := r.json(t)["error"].(string)
		if r.code != 400 || !strings.Contains(msg, `"tool_call_id"`) || !strings.Contains(msg, first) || !strings.Contains(msg, second) {
			t.Fatalf("respond without an id: %d %s", r.code, r.body)
		}
		if got := e.pending("s1"); len(got) != 2 {
			t.Fatalf("pending after a refused answer: %v", got)
		}
		if n := len(e.events("s1", eventlog.TypePermissionResolved)); n != 0 {
			t.Fatalf("%d permission.resolved events", n)
		}
	})
	t.Run("the question read is dropped", func(t *testing.T) {
		e := newEnv(t)
		// The person is shown make build; the agent also keeps make
		// deploy pending, then drops make build before the person answers.
		ctx, drop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.callCtx(ctx, "POST", "/v1/check", e.tokens.Agent, e.check("s1", "make build", true))
		}()
		waitFor(t, "the question the person reads", func() bool { return len(e.pending("s1")) == 1 })
		read := e.pending("s1")[0]
		other := e.ask("s1", "make deploy")
		drop()
		<-done
		waitFor(t, "the dropped question to resolve", func() bool { return len(e.pending("s1")) == 1 })
		r := e.respond("s1", "approved")
		if r.code != 400 || !strings.Contains(string(r.body), "tool_call_id") {
			t.Fatalf("the approval of %s (%s) landed elsewhere: %d %s", read.ID, read.Request.Summary, r.code, r.body)
		}
		if got := e.pending("s1"); len(got) != 1 || got[0].ID != other {
			t.Fatalf("pending: %v", got)
		}
	})
	t.Run("the question read is dropped, then another asked", func(t *testing.T) {
		e := newEnv(t)
		// The person is shown make build; the agent drops it, and only
		// then asks make deploy: the two were never pending together.
		ctx, drop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.callCtx(ctx, "POST", "/v1/check", e.tokens.Agent, e.check("s1", "make build", true))
		}()
		waitFor(t, "the question the person reads", func() bool { return len(e.pending("s1")) == 1 })
		read := e.pending("s1")[0]
		drop()
		<-done
		waitFor(t, "the dropped question to resolve", func() bool { return len(e.pending("s1")) == 0 })
		other := e.ask("s1", "make deploy")
		r := e.respond("s1", "approved")
		if r.code != 400 || !strings.Contains(string(r.body), "tool_call_id") {
			t.Fatalf("the approval of %s (%s) landed elsewhere: %d %s", read.ID, read.Request.Summary, r.code, r.body)
		}
		if got := e.pending("s1"); len(got) != 1 || got[0].ID != other {
			t.Fatalf("pending: %v", got)
		}
		// Once the person answers the next question by its id, the one
		// after stands alone again.
		r = e.call("POST", "/v1/sessions/s1/respond", e.tokens.Approver, map[string]any{"kind": "permission", "decision": "rejected", "tool_call_id": other})
		if r.code != 200 {
			t.Fatalf("respond with an id: %d %s", r.code, r.body)
		}
		e.ask("s1", "make test")
		if r = e.respond("s1", "approved"); r.code != 200 {
			t.Fatalf("respond to a lone question after an answered one: %d %s", r.code, r.body)
		}
	})
	t.Run("one question", func(t *testing.T) {
		e := newEnv(t)
		id := e.ask("s1", cmdAsk)
		r := e.respond("s1", "approved")
		m := r.json(t)
		answered, _ := m["answered"].(map[string]any)
		if r.code != 200 || m["id"] != id || answered["tool_call_id"] != id || answered["summary"] != "Bash: "+cmdAsk || answered["chosen"] != "only pending" {
			t.Fatalf("respond: %d %s", r.code, r.body)
		}
		if p := e.resolvedPayload("s1"); p["toolCallId"] != id || p["decision"] != "allow" {
			t.Fatalf("resolved %v", p)
		}
		id = e.ask("s1", cmdAsk)
		r = e.call("POST", "/v1/sessions/s1/respond", e.tokens.Approver, map[string]any{"kind": "permission", "decision": "rejected", "tool_call_id": id})
		if answered, _ := r.json(t)["answered"].(map[string]any); r.code != 200 || answered["tool_call_id"] != id || answered["chosen"] != "named" {
			t.Fatalf("respond with an id: %d %s", r.code, r.body)
		}
	})
}

// TestConfirmNamesWhatIsLost: allowing rm -rf y src dist .git takes
// typing what it deletes — its most significant target and the count of
// the others — not the one-letter first target the agent put there.
// Before, typing "y" allowed it.
func TestConfirmNamesWhatIsLost(t *testing.T) {
	e := newEnv(t)
	for _, d := range []string{"y", "src", "dist"} {
		must(t, os.Mkdir(filepath.Join(e.project, d), 0o755))
	}
	const line = "rm -rf y src dist .git"
	id := e.ask("s1", line)
	var a Approval
	e.call("GET", "/v1/approvals/"+id, e.tokens.Approver, nil).decode(t, &a)
	const want = ".git and 3 more"
	if !a.Request.Destructive || a.ConfirmWord != want || a.Request.ConfirmTarget != want {
		t.Errorf("%q: destructive %v, confirm word %q (target %q), want %q", line, a.Request.Destructive, a.ConfirmWord, a.Request.ConfirmTarget, want)
	}
	for _, typed := range []string{"y", "Y", ".git", "src", "yes"} {
		r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "allow_once", "confirm": typed})
		if r.code != 400 || !strings.Contains(string(r.body), want) {
			t.Errorf("confirmed by typing %q: %d %s", typed, r.code, r.body)
		}
	}
	if got := e.pending("s1"); len(got) != 1 {
		t.Fatalf("the call was resolved by a wrong confirmation: %+v", got)
	}
	if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "allow_once", "confirm": want}); r.code != 200 {
		t.Fatalf("confirmed by typing %q: %d %s", want, r.code, r.body)
	}
	if p := e.resolvedPayload("s1"); p["decision"] != "allow" || p["answer"] != "allow_once" {
		t.Fatalf("resolved %v", p)
	}
}

// TestAnswerRecordsItsChannel: permission.resolved says through which
// channel a person answered: the page (a browser session) or the API
// (the approver token).
func TestAnswerRecordsItsChannel(t *testing.T) {
	e := newEnv(t)
	web := e.login(t)
	for _, tc := range []struct {
		name, token string
		hdr         []string
		want        string
	}{
		{"page", "", []string{SessionHeader, web, "Origin", e.ts.URL}, "page"},
		{"api", e.tokens.Approver, nil, "api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := "via-" + tc.name
			id := e.ask(session, cmdAsk)
			r := e.call("POST", "/v1/approvals/"+id, tc.token, map[string]any{"answer": "deny"}, tc.hdr...)
			if r.code != 200 {
				t.Fatalf("answer: %d %s", r.code, r.body)
			}
			if p := e.resolvedPayload(session); p["via"] != tc.want || p["actor"] != "user" {
				t.Errorf("permission.resolved: via %v, actor %v; want via %s, actor user", p["via"], p["actor"], tc.want)
			}
		})
	}
}
