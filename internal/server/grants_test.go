package server

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// grants lists session's grants on e with the approver token.
func (e *testEnv) grants(session string) []gate.Grant {
	e.t.Helper()
	var out struct {
		Grants []gate.Grant `json:"grants"`
	}
	r := e.call("GET", "/v1/sessions/"+session+"/grants", e.tokens.Approver, nil)
	if r.code != 200 {
		e.t.Fatalf("GET grants: %d %s", r.code, r.body)
	}
	r.decode(e.t, &out)
	return out.Grants
}

// reason checks command in session without waiting and returns the
// decision and reason.
func (e *testEnv) reason(session, command string) (string, string) {
	e.t.Helper()
	m := e.call("POST", "/v1/check", e.tokens.Agent, e.check(session, command, false)).json(e.t)
	d, _ := m["decision"].(string)
	r, _ := m["reason"].(string)
	return d, r
}

// TestPeersGrants: a session approval given on A and a lease granted on B
// hold on both servers, a revocation on either ends them on both, and a
// server started later takes them up from the log.
func TestPeersGrants(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		id := a.ask("s1", cmdAsk)
		if r := a.call("POST", "/v1/approvals/"+id, a.tokens.Approver, map[string]any{"answer": "allow_session"}); r.code != 200 {
			t.Fatalf("allow_session on A: %d %s", r.code, r.body)
		}
		var sa gate.Grant
		waitFor(t, "the session approval on B", func() bool {
			g := b.grants("s1")
			if len(g) == 1 {
				sa = g[0]
			}
			return len(g) == 1
		})
		if sa.Kind != gate.KindSessionApproval || sa.ToolCallID != id || sa.Summary != "Bash: "+cmdAsk {
			t.Fatalf("B lists %+v", sa)
		}
		if d, why := b.reason("s1", cmdAsk); d != "allow" || why != "prior_approval" {
			t.Fatalf("the approved call on B: %s %s, want allow by prior_approval", d, why)
		}
		if d, _ := b.reason("s2", cmdAsk); d != "ask" {
			t.Fatalf("the approved call in another session on B: %s, want ask", d)
		}

		// A lease granted on B covers a read outside the project on A.
		notes := filepath.Join(realDir(t), "notes.txt")
		must(t, os.WriteFile(notes, []byte("todo\n"), 0o644))
		if d, _ := a.reason("s1", "cat "+notes); d != "ask" {
			t.Fatalf("reading %s before the lease: %s, want ask", notes, d)
		}
		r := b.call("POST", "/v1/sessions/s1/leases", b.tokens.Approver, map[string]any{"path": notes, "capability": "read", "ttl": "10m"})
		var ls gate.Grant
		r.decode(t, &ls)
		if r.code != 201 || ls.Kind != gate.KindLease || ls.Path != notes || ls.Capability != gate.CapRead || ls.Expires == nil {
			t.Fatalf("lease on B: %d %s", r.code, r.body)
		}
		waitFor(t, "the lease on A", func() bool { return len(a.grants("s1")) == 2 })
		if d, why := a.reason("s1", "cat "+notes); d != "allow" || why != "lease" {
			t.Fatalf("reading %s on A under B's lease: %s %s", notes, d, why)
		}
		if d, _ := a.reason("s1", "cp "+notes+" copy.txt"); d == "allow" {
			t.Fatal("a read lease allowed copying the file into the project")
		}

		// A server started now takes both up from the log.
		// (On SQLite, where the log is a file the test can open again;
		// TestGrantsAcrossRestarts covers restarts in detail.)
		if db := filepath.Join(a.project, ".git", "events.db"); fileExists(db) {
			c := newEnvAt(t, a.project, sqliteLog(t, db))
			waitFor(t, "the grants on a server started later", func() bool { return len(c.grants("s1")) == 2 })
		}

		// Revoked on A, both end on B.
		for _, g := range []string{sa.ID, ls.ID} {
			if r := a.call("DELETE", "/v1/sessions/s1/grants/"+g, a.tokens.Approver, nil); r.code != 200 {
				t.Fatalf("revoke %s on A: %d %s", g, r.code, r.body)
			}
		}
		waitFor(t, "the revocations on B", func() bool { return len(b.grants("s1")) == 0 })
		if d, _ := b.reason("s1", cmdAsk); d != "ask" {
			t.Fatalf("the call on B after the revocation: %s, want ask", d)
		}
		if d, _ := b.reason("s1", "cat "+notes); d != "ask" {
			t.Fatalf("the read on B after the revocation: %s, want ask", d)
		}
		if r := b.call("DELETE", "/v1/sessions/s1/grants/"+sa.ID, b.tokens.Approver, nil); r.code != 404 {
			t.Fatalf("revoking it again on B: %d %s", r.code, r.body)
		}
	})
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestGrantsAPI: who may list, grant and revoke, and what bad requests
// get.
func TestGrantsAPI(t *testing.T) {
	e := newEnv(t)
	e.ask("s1", cmdAsk) // the agent token has now checked calls in s1
	if r := e.call("GET", "/v1/sessions/s1/grants", e.tokens.Agent, nil); r.code != 200 || string(r.body) != `{"grants":[]}`+"\n" {
		t.Fatalf("agent listing its session's grants: %d %q", r.code, r.body)
	}
	if r := e.call("GET", "/v1/sessions/other/grants", e.tokens.Agent, nil); r.code != 403 {
		t.Fatalf("agent listing another session's grants: %d %s", r.code, r.body)
	}
	if r := e.call("GET", "/v1/sessions/s1/grants", "", nil); r.code != 401 {
		t.Fatalf("listing without a token: %d", r.code)
	}
	lease := map[string]any{"path": filepath.Join(e.project, "x"), "capability": "write"}
	if r := e.call("POST", "/v1/sessions/s1/leases", e.tokens.Agent, lease); r.code != 403 {
		t.Fatalf("agent granting itself a lease: %d %s", r.code, r.body)
	}
	if evs := e.events("s1", eventlog.TypeLeaseGranted); len(evs) != 0 {
		t.Fatalf("a refused lease was recorded: %d events", len(evs))
	}
	if evs := e.events("s1", TypeApprovalForbidden); len(evs) != 1 || !strings.Contains(string(evs[0].Payload), `"action":"grant_lease"`) {
		t.Fatalf("the refused lease left %d approval.forbidden events", len(evs))
	}
	for _, tc := range []struct {
		name string
		body any
	}{
		{"no path", map[string]any{"capability": "read"}},
		{"ttl below a second", map[string]any{"path": "/tmp/x", "capability": "read", "ttl": "1ns"}},
		{"NUL in agent", map[string]any{"path": "/tmp/x", "capability": "read", "agent": "main\x00sub"}},
		{"newline in agent", map[string]any{"path": "/tmp/x", "capability": "read", "agent": "main\nsub"}},
		{"relative cwd", map[string]any{"path": "notes.txt", "cwd": "proj", "capability": "read"}},
		{"bad capability", map[string]any{"path": "/tmp/x", "capability": "execute"}},
		{"ttl too long", map[string]any{"path": "/tmp/x", "capability": "read", "ttl": "48h"}},
		{"ttl not a duration", map[string]any{"path": "/tmp/x", "capability": "read", "ttl": "soon"}},
		{"negative ttl", map[string]any{"path": "/tmp/x", "capability": "read", "ttl": "-1m"}},
		{"unknown field", map[string]any{"path": "/tmp/x", "capability": "read", "forever": true}},
		{"NUL in path", map[string]any{"path": "/tmp/x\x00y", "capability": "read"}},
		{"not JSON", "path=/tmp/x"},
	} {
		if r := e.call("POST", "/v1/sessions/s1/leases", e.tokens.Approver, tc.body); r.code != 400 {
			t.Errorf("%s: %d %s, want 400", tc.name, r.code, r.body)
		}
	}
	if r := e.call("POST", "/v1/sessions/fresh/leases", e.tokens.Approver, map[string]any{"path": "notes.txt", "capability": "read"}); r.code != 400 {
		t.Fatalf("a relative path in a session with no call: %d %s", r.code, r.body)
	}
	if r := e.call("POST", "/v1/sessions/bad%20id/leases", e.tokens.Approver, lease); r.code != 400 {
		t.Fatalf("bad session id: %d %s", r.code, r.body)
	}
	if evs := e.events("", eventlog.TypeLeaseGranted); len(evs) != 0 {
		t.Fatalf("bad requests recorded %d leases", len(evs))
	}
	// A relative path is taken from where the session's calls run.
	r := e.call("POST", "/v1/sessions/s1/leases", e.tokens.Approver, map[string]any{"path": "x", "capability": "write", "agent": "main"})
	var ls gate.Grant
	r.decode(t, &ls)
	if r.code != 201 || ls.Path != filepath.Join(e.project, "x") || ls.Agent != "main" || ls.Expires == nil ||
		ls.Expires.Sub(ls.Granted) != gate.DefaultLeaseTTL {
		t.Fatalf("lease: %d %s", r.code, r.body)
	}
	if r := e.call("DELETE", "/v1/sessions/s1/grants/"+ls.ID, e.tokens.Agent, nil); r.code != 403 {
		t.Fatalf("agent revoking: %d %s", r.code, r.body)
	}
	if r := e.call("DELETE", "/v1/sessions/s2/grants/"+ls.ID, e.tokens.Approver, nil); r.code != 404 {
		t.Fatalf("revoking through another session: %d %s", r.code, r.body)
	}
	if r := e.call("DELETE", "/v1/sessions/s1/grants/"+ls.ID, e.tokens.Approver, nil); r.code != 200 {
		t.Fatalf("revoking: %d %s", r.code, r.body)
	}
	if got := e.grants("s1"); len(got) != 0 {
		t.Fatalf("after revoking: %+v", got)
	}
	revoked := e.events("s1", eventlog.TypeLeaseRevoked)
	if len(revoked) != 1 {
		t.Fatalf("lease.revoked events: %d, want 1", len(revoked))
	}

	// A lease written into the log by whoever can write to it, without
	// the approver token, is not taken up.
	for _, sig := range []string{"", strings.Repeat("0", 64)} {
		forged := fmt.Sprintf(`{"id":"ls_forged%d","kind":"lease","agent":"","path":"/","capability":"write","version":"x","expires":%q,"granted":%q,"actor":"user","sig":%q}`,
			len(sig), time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano), sig)
		evs, err := e.store.Append(context.Background(), "s1", eventlog.Draft{Time: time.Now(), Type: eventlog.TypeLeaseGranted, Payload: []byte(forged)})
		must(t, err)
		if !e.srv.waitFollowed(context.Background(), grantStream, evs[0].ID) {
			t.Fatal("the follower did not read the forged lease")
		}
		if got := e.grants("s1"); len(got) != 0 {
			t.Fatalf("a forged lease (sig %q) is held: %+v", sig, got)
		}
	}
}

// restart starts another server on e's engine and log, with clock.
func (e *testEnv) restart(t *testing.T, clock func() time.Time, endedGrants string) *Server {
	t.Helper()
	srv, err := New(Options{Engine: e.srv.opts.Engine, Store: e.store, Tokens: e.tokens, Clock: clock, EndedGrants: endedGrants})
	must(t, err)
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

// TestGrantsAcrossRestarts: a restarted server takes up the grants of the
// log that still hold (a 24-hour lease 13 hours on), and none that ended,
// even when the revocation was deleted from the log: the ended grants are
// kept in Options.EndedGrants.
func TestGrantsAcrossRestarts(t *testing.T) {
	ended := filepath.Join(t.TempDir(), EndedGrantsFile("events.db"))
	db := filepath.Join(t.TempDir(), "events.db")
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	e := newEnvAt(t, project, sqliteLog(t, db), func(o *Options, _ *policy.File) { o.EndedGrants = ended })

	notes := filepath.Join(realDir(t), "notes.txt")
	must(t, os.WriteFile(notes, []byte("todo\n"), 0o644))
	var long gate.Grant
	e.call("POST", "/v1/sessions/s1/leases", e.tokens.Approver, map[string]any{"path": notes, "capability": "read", "ttl": "24h"}).decode(t, &long)
	id := e.ask("s1", cmdAsk)
	if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "allow_session"}); r.code != 200 {
		t.Fatalf("allow_session: %d %s", r.code, r.body)
	}
	var sa gate.Grant
	for _, g := range e.grants("s1") {
		if g.Kind == gate.KindSessionApproval {
			sa = g
		}
	}
	if r := e.call("DELETE", "/v1/sessions/s1/grants/"+sa.ID, e.tokens.Approver, nil); r.code != 200 {
		t.Fatalf("revoke: %d %s", r.code, r.body)
	}
	waitFor(t, "the ended grant written down", func() bool {
		raw, err := os.ReadFile(ended)
		return err == nil && strings.Contains(string(raw), sa.ID)
	})
	// Whoever can write to the log deletes the revocation.
	rev := e.events("s1", eventlog.TypeLeaseRevoked)
	if len(rev) != 1 {
		t.Fatalf("lease.revoked events: %d", len(rev))
	}
	conn, err := sql.Open("sqlite", db)
	must(t, err)
	_, err = conn.Exec("DELETE FROM events WHERE id = ?", rev[0].ID)
	must(t, err)
	must(t, conn.Close())

	for _, tc := range []struct {
		name   string
		ended  string
		later  time.Duration
		wantSA bool
	}{
		{"without the ended grants the deleted revocation revives the approval", "", 0, true},
		{"with them it does not", ended, 0, false},
		{"13 hours on, the 24-hour lease still holds", ended, 13 * time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := e.restart(t, func() time.Time { return time.Now().Add(tc.later) }, tc.ended)
			last := e.events("", eventlog.TypeLeaseGranted)
			if !srv.waitFollowed(context.Background(), grantStream, last[len(last)-1].ID) {
				t.Fatal("the restarted server did not read the grants")
			}
			var ids []string
			for _, g := range srv.gate.Grants("s1") {
				ids = append(ids, g.ID)
			}
			want := []string{long.ID}
			if tc.wantSA {
				want = []string{long.ID, sa.ID}
			}
			slices.Sort(ids)
			slices.Sort(want)
			if !slices.Equal(ids, want) {
				t.Fatalf("held after the restart: %v, want %v", ids, want)
			}
		})
	}
}
