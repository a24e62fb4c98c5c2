package server

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/policy"
)

// newPair starts two servers on one project and one event log, as two
// instances behind a load balancer share one database: a SQLite file, or
// with $TOOLGATE_TEST_POSTGRES set, also a PostgreSQL schema.
func newPair(t *testing.T, backend string, opts ...envOption) (a, b *testEnv) {
	t.Helper()
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	open := func() eventlog.Store { return sqliteLog(t, filepath.Join(project, ".git", "events.db")) }
	if backend == "postgres" {
		dsn := pgtest.SchemaDSN(t)
		open = func() eventlog.Store {
			store, err := postgres.Open(context.Background(), dsn, nil)
			must(t, err)
			return store
		}
	}
	return newEnvAt(t, project, open(), opts...), newEnvAt(t, project, open(), opts...)
}

// onBothLogs runs f with a pair on SQLite, then on PostgreSQL.
func onBothLogs(t *testing.T, f func(t *testing.T, a, b *testEnv)) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			a, b := newPair(t, backend)
			f(t, a, b)
		})
	}
}

// waitPending waits until e lists question id of session as pending.
func (e *testEnv) waitPending(t *testing.T, session, id string) Approval {
	t.Helper()
	var seen Approval
	waitFor(t, "question "+id+" to show", func() bool {
		for _, p := range e.pending(session) {
			if p.ID == id {
				seen = p
				return true
			}
		}
		return false
	})
	return seen
}

// TestPeersAnswer: a question asked through server A shows on server B,
// an answer given on B reaches A, which records the decision, and the
// call's caller on A gets it.
func TestPeersAnswer(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		id := a.ask("s1", cmdAsk)
		seen := b.waitPending(t, "s1", id)
		if seen.Request == nil || seen.Request.Summary != "Bash: "+cmdAsk || seen.Request.Cwd != a.project || len(seen.Request.Units) == 0 {
			t.Fatalf("B shows %+v", seen.Request)
		}
		if r := b.call("GET", "/v1/approvals/"+id, b.tokens.Approver, nil); r.code != 200 {
			t.Fatalf("GET the question on B: %d %s", r.code, r.body)
		}

		r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once", "message": "from B"})
		var got Approval
		r.decode(t, &got)
		if r.code != 200 || got.State != StateResolved || got.Decision == nil || got.Decision.Decision != "allow" || got.Decision.Actor != "user" {
			t.Fatalf("answer on B: %d %s", r.code, r.body)
		}
		// A holds the call: its record is the person's answer.
		res := a.resolvedPayload("s1")
		if res["toolCallId"] != id || res["decision"] != "allow" || res["answer"] != "allow_once" || res["actor"] != "user" {
			t.Fatalf("permission.resolved %v", res)
		}
		if evs := a.events("s1", eventlog.TypePermissionAnswered); len(evs) != 1 {
			t.Fatalf("permission.answered events: %d", len(evs))
		}
		var onA Approval
		a.call("GET", "/v1/approvals/"+id, a.tokens.Approver, nil).decode(t, &onA)
		if onA.State != StateResolved || onA.Decision.Decision != "allow" {
			t.Fatalf("A: %+v", onA.Decision)
		}
		// Both servers give the receipt of the allow.
		if rc := got.Decision.Receipt; rc == nil || rc.ToolCallID != id || onA.Decision.Receipt == nil || onA.Decision.Receipt.ID != rc.ID {
			t.Fatalf("receipts: on B %+v, on A %+v", got.Decision.Receipt, onA.Decision.Receipt)
		}
		// A second answer, on either server, is refused: the first wins.
		if r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 409 {
			t.Fatalf("second answer on B: %d %s", r.code, r.body)
		}
		if r := a.call("POST", "/v1/approvals/"+id, a.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 409 {
			t.Fatalf("second answer on A: %d %s", r.code, r.body)
		}
		// The agent token cannot answer on B either.
		id2 := a.ask("s1", cmdAsk)
		waitFor(t, "the second question on B", func() bool { return len(b.pending("s1")) == 1 })
		if r := b.call("POST", "/v1/approvals/"+id2, b.tokens.Agent, map[string]any{"answer": "allow_once"}); r.code != 403 {
			t.Fatalf("agent answering on B: %d %s", r.code, r.body)
		}
		// The spec 004 form on B answers A's question when it names it:
		// without the id, B cannot tell what was pending beside it.
		r = b.call("POST", "/v1/sessions/s1/respond", b.tokens.Approver, map[string]any{"kind": "permission", "decision": "rejected", "message": "no"})
		if r.code != 400 || !strings.Contains(string(r.body), "tool_call_id") {
			t.Fatalf("respond on B without an id: %d %s", r.code, r.body)
		}
		r = b.call("POST", "/v1/sessions/s1/respond", b.tokens.Approver, map[string]any{"kind": "permission", "decision": "rejected", "message": "no", "tool_call_id": id2})
		if r.code != 200 {
			t.Fatalf("respond on B: %d %s", r.code, r.body)
		}
		if res := a.resolvedPayload("s1"); res["toolCallId"] != id2 || res["decision"] != "deny" || res["message"] != "no" {
			t.Fatalf("after respond: %v", res)
		}
	})
}

// TestPeersAutoMode: in auto mode, a question the classifier leaves to a
// person shows on the other server too, and is answered there. While the
// classifier thinks, the call's id is in the log already: a question
// forged under it, asked of the user, is not listed (it is not signed), so
// it neither shows a person something else nor hides the real question.
func TestPeersAutoMode(t *testing.T) {
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	db := filepath.Join(project, ".git", "events.db")
	thinking, decide := make(chan struct{}), make(chan struct{})
	defers := approval.ClassifierFunc(func(context.Context, *approval.Request) (approval.Verdict, error) {
		close(thinking)
		<-decide
		return approval.Verdict{Decision: "ask", Reason: "cannot tell"}, nil
	})
	a := newEnvWith(t, project, sqliteLog(t, db), defers)
	b := newEnvAt(t, project, sqliteLog(t, db))
	var once sync.Once
	release := func() { once.Do(func() { close(decide) }) }
	t.Cleanup(release) // before the servers shut down, should the test fail

	// A check without wait answers once a person is asked: after the
	// classifier.
	answered := make(chan response, 1)
	go func() { answered <- a.call("POST", "/v1/check", a.tokens.Agent, a.check("s1", cmdAsk, false)) }()
	<-thinking
	asked := a.events("s1", eventlog.TypePermissionRequested)
	if len(asked) != 1 || !strings.Contains(string(asked[0].Payload), `"askedOf":"classifier"`) {
		t.Fatalf("before the classifier decides: %d questions", len(asked))
	}
	var decoy map[string]any
	must(t, json.Unmarshal(asked[0].Payload, &decoy))
	decoy["askedOf"], decoy["summary"], decoy["suggestedRule"] = "user", "Read: README.md", "Bash(*)"
	raw, err := json.Marshal(decoy)
	must(t, err)
	ctx := context.Background()
	stored, err := b.store.Append(ctx, "s1", eventlog.Draft{Type: eventlog.TypePermissionRequested, Payload: raw})
	must(t, err)
	if !b.srv.waitFollowedPermissions(ctx, stored[0].ID) {
		t.Fatal("B did not read the decoy")
	}
	if list := b.pending(""); len(list) != 0 {
		t.Fatalf("B lists the forged question: %s", mustJSON(t, list))
	}
	release()
	m := (<-answered).json(t)
	id, _ := m["approval_id"].(string)
	if m["state"] != "pending" || id == "" {
		t.Fatalf("check: %v", m)
	}

	seen := b.waitPending(t, "s1", id)
	if seen.Request == nil || seen.Request.Summary != "Bash: "+cmdAsk || seen.Request.SuggestedRule == "Bash(*)" {
		t.Fatalf("B shows %+v", seen.Request)
	}
	r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once"})
	if r.code != 200 {
		t.Fatalf("answer on B: %d %s", r.code, r.body)
	}
	res := a.resolvedPayload("s1")
	if res["toolCallId"] != id || res["decision"] != "allow" || res["actor"] != "user" {
		t.Fatalf("permission.resolved on A: %v", res)
	}
	asked = a.events("s1", eventlog.TypePermissionRequested)
	if len(asked) != 3 || !strings.Contains(string(asked[2].Payload), `"askedOf":"user"`) || !strings.Contains(string(asked[2].Payload), `"sig":`) {
		t.Fatalf("permission.requested events: %d, want the classifier's, the decoy and the signed one to the person", len(asked))
	}
}

// TestPeersUnsignedQuestions: questions written into the log without the
// approver token's key are not listed on other servers, however many, so
// they cannot crowd out the real ones.
func TestPeersUnsignedQuestions(t *testing.T) {
	a, b := newPair(t, "sqlite")
	ctx := context.Background()
	var last int64
	for i := range perSessionPending + 5 {
		forged := fmt.Sprintf(`{"toolCallId":"tc_forged%d","tool":"Bash","args":{"command":"ls"},"summary":"Bash: ls","riskAtDecision":"read","sourcedFrom":"default","reason":"execute_effect","suggestedDecision":"ask","askedOf":"user","deadline":%q}`,
			i, time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano))
		stored, err := b.store.Append(ctx, "s1", eventlog.Draft{Type: eventlog.TypePermissionRequested, Payload: []byte(forged)})
		must(t, err)
		last = stored[0].ID
	}
	if !b.srv.waitFollowedPermissions(ctx, last) {
		t.Fatal("B did not read the forged questions")
	}
	if list := b.pending("s1"); len(list) != 0 {
		t.Fatalf("B lists %d forged questions", len(list))
	}
	id := a.ask("s1", cmdAsk)
	b.waitPending(t, "s1", id)
}

// TestPeersDestructive: B checks the typed confirmation of a destructive
// call that A holds, as A would.
func TestPeersDestructive(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		id := a.ask("s1", cmdDestructive)
		var q Approval
		waitFor(t, "the question on B", func() bool {
			list := b.pending("s1")
			if len(list) == 1 {
				q = list[0]
			}
			return len(list) == 1
		})
		if !q.Request.Destructive || q.ConfirmWord == "" {
			t.Fatalf("B shows %+v (confirm word %q)", q.Request, q.ConfirmWord)
		}
		for _, body := range []map[string]any{
			{"answer": "allow_session", "confirm": q.ConfirmWord},
			{"answer": "allow_once"},
			{"answer": "allow_once", "confirm": q.ConfirmWord + "x"},
		} {
			if r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, body); r.code != 400 {
				t.Fatalf("%v on B: %d %s", body, r.code, r.body)
			}
		}
		if evs := a.events("s1", eventlog.TypePermissionAnswered); len(evs) != 0 {
			t.Fatalf("refused answers were written: %d", len(evs))
		}
		r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once", "confirm": q.ConfirmWord})
		if r.code != 200 {
			t.Fatalf("confirmed answer on B: %d %s", r.code, r.body)
		}
		if res := a.resolvedPayload("s1"); res["decision"] != "allow" || res["reason"] != "user_approved" {
			t.Fatalf("permission.resolved %v", res)
		}
	})
}

// TestPeersForgedAnswer: an answer event that is not signed under the
// approver token — written straight into the log by whoever can reach it
// — is not acted on.
func TestPeersForgedAnswer(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		id := a.ask("s1", cmdAsk)
		for _, p := range []answerPayload{
			{ToolCallID: id, Answer: approval.AllowOnce, Actor: "user"},
			{ToolCallID: id, Answer: approval.AllowOnce, Actor: "user", Sig: "00"},
			// Signed, but for another session than the one it is written to.
			{ToolCallID: id, Answer: approval.AllowOnce, Actor: "user", Sig: a.srv.signAnswer("s2", answerPayload{ToolCallID: id, Answer: approval.AllowOnce})},
		} {
			raw, err := json.Marshal(p)
			must(t, err)
			stored, err := b.store.Append(context.Background(), "s1", eventlog.Draft{Type: eventlog.TypePermissionAnswered, Payload: raw})
			must(t, err)
			waitFor(t, "A to read the forged answer", func() bool { return a.srv.waitFollowedPermissions(context.Background(), stored[0].ID) })
		}
		if list := a.pending("s1"); len(list) != 1 || list[0].ID != id {
			t.Fatalf("after forged answers, A has pending %v", list)
		}
		if evs := a.events("s1", eventlog.TypePermissionResolved); len(evs) != 0 {
			t.Fatalf("a forged answer resolved the call: %s", evs[0].Payload)
		}
	})
}

// TestPeersSessionPolicy: a session switched on B is switched on A, and
// of two changes from the same settings, the first in the log wins on
// both servers.
func TestPeersSessionPolicy(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		if r := b.call("PUT", "/v1/sessions/s1/policy", b.tokens.Approver, map[string]any{"mode": "dontAsk"}); r.code != 200 {
			t.Fatalf("PUT on B: %d %s", r.code, r.body)
		}
		waitFor(t, "A to apply the switch", func() bool {
			v, _ := a.sessions.Get("s1")
			return v.Mode != nil && *v.Mode == policy.ModeDontAsk
		})
		if d := a.call("POST", "/v1/check", a.tokens.Agent, a.check("s1", cmdAsk, false)).json(t)["decision"]; d != "deny" {
			t.Fatalf("a call on A after dontAsk on B: %s", d)
		}

		// A change written as if two servers switched s1 at once: B's went
		// first, this one was made from the same settings and count.
		stale := sessionChange{Scope: "session", Actor: "user", Changed: []string{"mode"}, After: a.sessionsOf("s1"), N: 1}
		plan := policy.ModePlan
		stale.After.Mode = &plan
		stale.Sig = a.srv.signChange("s1", stale)
		raw, err := json.Marshal(stale)
		must(t, err)
		stored, err := a.store.Append(context.Background(), "s1", eventlog.Draft{Type: eventlog.TypePolicyChanged, Payload: raw})
		must(t, err)
		for _, e := range []*testEnv{a, b} {
			if !e.srv.waitFollowedPolicy(context.Background(), stored[0].ID) {
				t.Fatal("the change was not read back")
			}
			if v := e.sessionsOf("s1"); v.Mode == nil || *v.Mode != policy.ModeDontAsk {
				t.Fatalf("the losing change applied: %s", mustJSON(t, v))
			}
		}
		// A PUT on A from the current settings is the next in count and wins.
		if r := a.call("PUT", "/v1/sessions/s1/policy", a.tokens.Approver, map[string]any{"mode": "plan"}); r.code != 200 {
			t.Fatalf("PUT on A: %d %s", r.code, r.body)
		}
		waitFor(t, "B to apply A's switch", func() bool {
			v := b.sessionsOf("s1")
			return v.Mode != nil && *v.Mode == policy.ModePlan
		})
	})
}

// TestPeersSessionPolicyRace: A and B switch one session at the same
// moment, round after round. Every PUT is applied (200) or refused as
// beaten (409), never both applied out of order: afterwards both servers
// hold the same settings, and when one PUT lost, they hold the winner's.
func TestPeersSessionPolicyRace(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		modes := []string{"plan", "dontAsk", "strict", "acceptEdits", "default"}
		conflicts := 0
		for round := range 12 {
			want := [2]string{modes[round%len(modes)], modes[(round+2)%len(modes)]}
			var codes [2]int
			var wg sync.WaitGroup
			for i, e := range []*testEnv{a, b} {
				wg.Go(func() {
					codes[i] = e.call("PUT", "/v1/sessions/race/policy", e.tokens.Approver, map[string]any{"mode": want[i]}).code
				})
			}
			wg.Wait()
			for i, c := range codes {
				if c != 200 && c != 409 {
					t.Fatalf("round %d: PUT %d got %d", round, i, c)
				}
			}
			if codes[0] == 409 && codes[1] == 409 {
				t.Fatalf("round %d: both PUTs refused", round)
			}
			evs := a.events("race", eventlog.TypePolicyChanged)
			last := evs[len(evs)-1].ID
			for _, e := range []*testEnv{a, b} {
				if !e.srv.waitFollowedPolicy(context.Background(), last) {
					t.Fatal("the switches were not read back")
				}
			}
			va, vb := a.sessionsOf("race"), b.sessionsOf("race")
			if !va.Equal(vb) || va.Mode == nil {
				t.Fatalf("round %d: A holds %s, B holds %s", round, mustJSON(t, va), mustJSON(t, vb))
			}
			for i, c := range codes {
				if c == 200 && codes[1-i] == 409 {
					conflicts++
					if string(*va.Mode) != want[i] {
						t.Fatalf("round %d: the winning PUT set %s, the servers hold %s", round, want[i], *va.Mode)
					}
				}
			}
		}
		t.Logf("%d of 12 rounds had a PUT refused as beaten", conflicts)
	})
}

func (e *testEnv) sessionsOf(session string) engine.SessionSettings {
	v, _ := e.sessions.Get(session)
	return v
}

// TestPeersWebSession: a browser signed in on one server is signed in on
// every server with the same approver token, and its renewed token too; a
// token altered, lapsed or signed under another token is no credential.
func TestPeersWebSession(t *testing.T) {
	a, b := newPair(t, "sqlite")
	tok := a.login(t)
	who := b.call("GET", "/v1/whoami", "", nil, SessionHeader, tok).json(t)
	if who["role"] != "approver" {
		t.Fatalf("B: whoami %v", who)
	}
	r := b.call("POST", "/v1/web-session", "", nil, SessionHeader, tok, "Origin", b.ts.URL)
	if r.code != 200 {
		t.Fatalf("B: renew: %d %s", r.code, r.body)
	}
	renewed := r.json(t)["token"].(string)
	id := a.ask("s1", cmdAsk)
	r = a.call("POST", "/v1/approvals/"+id, "", map[string]any{"answer": "deny"},
		SessionHeader, renewed, "Origin", a.ts.URL)
	if r.code != 200 {
		t.Fatalf("answer on A with the token renewed on B: %d %s", r.code, r.body)
	}

	now := time.Now()
	lapsed := a.srv.auth.token(&webSession{id: "x", issued: now.Add(-2 * time.Hour), expires: now.Add(-time.Second)})
	other := &auth{tokens: Tokens{Agent: "x", Approver: "another-approver-token"}, clock: time.Now}
	foreign := other.token(other.newSession(now))
	parts := strings.Split(tok, ".")
	exp, _ := strconv.ParseInt(parts[1], 10, 64)
	parts[1] = strconv.FormatInt(exp+86400, 10)
	for name, c := range map[string]string{
		"lapsed":              lapsed,
		"another token":       foreign,
		"expiry moved":        strings.Join(parts, "."),
		"signature cut short": tok[:len(tok)-2],
		"no signature":        tok[:strings.LastIndex(tok, ".")],
		"empty":               "",
	} {
		if r := b.call("GET", "/v1/whoami", "", nil, SessionHeader, c); r.code != 401 {
			t.Errorf("%s token: %d %s", name, r.code, r.body)
		}
	}
}

// TestPeersDecoyQuestion: a question written into the log under the id of
// a real call — in its session, the same call but for a harmless summary
// and a broad suggested rule — neither hides the real question on the
// other server nor, once answered there, answers the real call: the
// answer names the exact question it was given to.
func TestPeersDecoyQuestion(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		ctx := context.Background()
		id := a.ask("s1", cmdAsk)
		waitFor(t, "the question on B", func() bool { return len(b.pending("s1")) == 1 })
		real := a.events("s1", eventlog.TypePermissionRequested)
		if len(real) != 1 {
			t.Fatalf("%d questions in the log", len(real))
		}
		var decoy map[string]any
		must(t, json.Unmarshal(real[0].Payload, &decoy))
		decoy["summary"], decoy["suggestedRule"] = "Read: README.md", "Bash(*)"
		raw, err := json.Marshal(decoy)
		must(t, err)
		stored, err := b.store.Append(ctx, "s1", eventlog.Draft{Type: eventlog.TypePermissionRequested, Payload: raw})
		must(t, err)
		if !b.srv.waitFollowedPermissions(ctx, stored[0].ID) {
			t.Fatal("B did not read the decoy")
		}
		list := b.pending("")
		if len(list) != 1 || list[0].Request.Summary != "Bash: "+cmdAsk {
			t.Fatalf("B lists %s", mustJSON(t, list))
		}
		// Had B shown the decoy, the answer given to it would name it.
		shown := list[0]
		shown.Request.Summary, shown.Request.SuggestedRule = "Read: README.md", "Bash(*)"
		shown.digest = payloadDigest("s1", raw)
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if _, err := b.srv.answerRemote(wctx, shown, Reply{Answer: approval.AllowProject}); err != nil {
			t.Fatal(err)
		}
		if list := a.pending("s1"); len(list) != 1 {
			t.Fatalf("the answer to the decoy answered the real call: A has %d pending", len(list))
		}
		if evs := a.events("s1", eventlog.TypePermissionResolved); len(evs) != 0 {
			t.Fatalf("the call was resolved: %s", evs[0].Payload)
		}
		// The answer given to the real question still works.
		if r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 200 {
			t.Fatalf("real answer: %d %s", r.code, r.body)
		}
	})
}

// countingStore counts the queries by type and time, which walk every
// event of those types.
type countingStore struct {
	eventlog.Store
	typedSince atomic.Int32
}

func (c *countingStore) Query(ctx context.Context, f eventlog.Filter) iter.Seq2[eventlog.Event, error] {
	if !f.Since.IsZero() && len(f.Types) > 0 {
		c.typedSince.Add(1)
	}
	return c.Store.Query(ctx, f)
}

// TestFollowerOnAnIdleLog: on a log with nothing newer than the followers'
// start times, the followers read by time only (the time index), never by
// type and time.
func TestFollowerOnAnIdleLog(t *testing.T) {
	st := &countingStore{Store: sqliteLog(t, filepath.Join(t.TempDir(), "events.db"))}
	_, err := st.Append(context.Background(), "s1", eventlog.Draft{Time: time.Now().Add(-48 * time.Hour), Type: eventlog.TypePermissionRequested, Payload: []byte(`{"toolCallId":"tc_old"}`)})
	must(t, err)
	newEnvAt(t, realDir(t), st)
	time.Sleep(300 * time.Millisecond)
	if n := st.typedSince.Load(); n != 0 {
		t.Errorf("%d queries by type and time in 300 ms on an idle log", n)
	}
}

// TestPeersHoldBoundedBytes: the questions of another server are held
// here up to a size, pending and resolved, however many an agent asks
// there with a megabyte each.
func TestPeersHoldBoundedBytes(t *testing.T) {
	pending, kept := peerMaxPendingBytes, peerKeepBytes
	peerMaxPendingBytes, peerKeepBytes = 3<<20, 2<<20
	t.Cleanup(func() { peerMaxPendingBytes, peerKeepBytes = pending, kept })
	// The questions must outlive a slow run (the race detector, a loaded
	// machine): one that times out is resolved, and the deny below is 409.
	a, b := newPair(t, "sqlite", withTimeout(5*time.Minute))
	big := strings.Repeat("x", 900<<10)
	var ids []string
	for i := range 8 {
		body := a.check(fmt.Sprintf("big%d", i), cmdAsk, false)
		body["input"].(map[string]any)["description"] = big
		r := a.call("POST", "/v1/check", a.tokens.Agent, body)
		if m := r.json(t); m["state"] != "pending" {
			t.Fatalf("question %d on A: %d %.200s", i, r.code, r.body)
		}
		ids = append(ids, r.json(t)["approval_id"].(string))
	}
	asked := a.events("", eventlog.TypePermissionRequested)
	last := asked[len(asked)-1].ID
	waitFor(t, "B to read the questions", func() bool {
		b.srv.peers.mu.Lock()
		defer b.srv.peers.mu.Unlock()
		return b.srv.peers.followed[permissionStream] >= last
	})
	b.srv.peers.mu.Lock()
	held, n := b.srv.peers.bytes, len(b.srv.peers.pending)
	b.srv.peers.mu.Unlock()
	if held > peerMaxPendingBytes || n == 0 || n == len(ids) {
		t.Fatalf("B holds %d of %d questions of about 1 MiB, %d bytes (bound %d)", n, len(ids), held, peerMaxPendingBytes)
	}
	for _, id := range ids {
		if r := a.call("POST", "/v1/approvals/"+id, a.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 200 {
			t.Fatalf("deny %s on A: %d", id, r.code)
		}
	}
	waitFor(t, "B to see them resolved", func() bool {
		b.pending("")
		b.srv.peers.mu.Lock()
		defer b.srv.peers.mu.Unlock()
		return len(b.srv.peers.pending) == 0
	})
	b.srv.peers.mu.Lock()
	defer b.srv.peers.mu.Unlock()
	if b.srv.peers.kept > peerKeepBytes+(1<<20) || b.srv.peers.bytes != 0 {
		t.Fatalf("B keeps %d bytes of resolved questions (bound %d), %d pending", b.srv.peers.kept, peerKeepBytes, b.srv.peers.bytes)
	}
}
