package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// pgPair starts two servers on one project and one PostgreSQL schema, and
// returns them with the schema's connection string.
func pgPair(t *testing.T, opts ...envOption) (a, b *testEnv, dsn string) {
	t.Helper()
	dsn = pgtest.SchemaDSN(t)
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	open := func() eventlog.Store {
		store, err := postgres.Open(context.Background(), dsn, nil)
		must(t, err)
		return store
	}
	return newEnvAt(t, project, open(), opts...), newEnvAt(t, project, open(), opts...), dsn
}

// sqlExec runs a statement on the database of dsn.
func sqlExec(t *testing.T, dsn, stmt string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	must(t, err)
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// TestPeersRevokeNotRecorded: a revocation that PostgreSQL refuses to
// store answers 500 and changes nothing: the grant still holds on the
// server asked and on the other one, and once the log takes events again
// the same revocation succeeds and ends the grant on both.
func TestPeersRevokeNotRecorded(t *testing.T) {
	a, b, dsn := pgPair(t)
	notes := filepath.Join(realDir(t), "notes.txt")
	must(t, os.WriteFile(notes, []byte("todo\n"), 0o644))
	var ls gate.Grant
	if r := a.call("POST", "/v1/sessions/s1/leases", a.tokens.Approver, map[string]any{"path": notes, "capability": "read", "ttl": "10m"}); r.code != 201 {
		t.Fatalf("lease: %d %s", r.code, r.body)
	} else {
		r.decode(t, &ls)
	}
	id := a.ask("s1", cmdAsk)
	if r := a.call("POST", "/v1/approvals/"+id, a.tokens.Approver, map[string]any{"answer": "allow_session"}); r.code != 200 {
		t.Fatalf("allow_session: %d %s", r.code, r.body)
	}
	waitFor(t, "both grants on B", func() bool { return len(b.grants("s1")) == 2 })
	var sa string
	for _, g := range a.grants("s1") {
		if g.Kind == gate.KindSessionApproval {
			sa = g.ID
		}
	}

	sqlExec(t, dsn, `CREATE FUNCTION refuse_revocations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.type = 'lease.revoked' THEN RAISE EXCEPTION 'the log refuses revocations'; END IF;
	RETURN NEW;
END $$`)
	sqlExec(t, dsn, `CREATE TRIGGER refuse_revocations BEFORE INSERT ON eventlog_events FOR EACH ROW EXECUTE FUNCTION refuse_revocations()`)
	for _, g := range []string{ls.ID, sa} {
		if r := a.call("DELETE", "/v1/sessions/s1/grants/"+g, a.tokens.Approver, nil); r.code != 500 {
			t.Fatalf("revoke %s while the log refuses it: %d %s", g, r.code, r.body)
		}
	}
	if n := len(a.grants("s1")); n != 2 {
		t.Fatalf("after the failed revocations A holds %d grants, want 2 (nothing changed)", n)
	}
	if d, why := a.reason("s1", cmdAsk); d != "allow" || why != "prior_approval" {
		t.Fatalf("the approved call on A after the failed revocation: %s %s", d, why)
	}
	if n := len(b.grants("s1")); n != 2 {
		t.Fatalf("B holds %d grants, want 2", n)
	}
	if evs := a.events("s1", eventlog.TypeLeaseRevoked); len(evs) != 0 {
		t.Fatalf("lease.revoked events: %d", len(evs))
	}

	sqlExec(t, dsn, `DROP TRIGGER refuse_revocations ON eventlog_events`)
	for _, g := range []string{ls.ID, sa} {
		if r := a.call("DELETE", "/v1/sessions/s1/grants/"+g, a.tokens.Approver, nil); r.code != 200 {
			t.Fatalf("retry of the revocation of %s: %d %s", g, r.code, r.body)
		}
	}
	waitFor(t, "the revocations on B", func() bool { return len(b.grants("s1")) == 0 })
	if n := len(a.grants("s1")); n != 0 {
		t.Fatalf("A holds %d grants after the revocations", n)
	}
	if d, _ := b.reason("s1", cmdAsk); d != "ask" {
		t.Fatalf("the call on B after the revocation: %s, want ask", d)
	}
}

// TestPeersLosingAnswer: of two answers given to a question on servers
// that do not hold it, the holder takes the first in the log; the server
// that wrote the second answers 409, not 200 with the other answer's
// outcome. The first answer is written as a third server writes it:
// signed, straight into the shared PostgreSQL log.
func TestPeersLosingAnswer(t *testing.T) {
	a, b := newPair(t, "postgres")
	for round := range 5 {
		id := a.ask("s1", cmdAsk)
		b.waitPending(t, "s1", id)
		ra, ok := b.srv.remote(context.Background(), id)
		if !ok {
			t.Fatalf("round %d: B does not know %s", round, id)
		}
		first := answerPayload{ToolCallID: id, Question: ra.digest, Answer: approval.Deny, Message: "from C", Actor: "user"}
		first.Sig = b.srv.signAnswer("s1", first)
		raw, err := json.Marshal(first)
		must(t, err)
		_, err = b.store.Append(context.Background(), "s1", eventlog.Draft{Type: eventlog.TypePermissionAnswered, Payload: raw})
		must(t, err)

		r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once"})
		if r.code != 409 {
			t.Fatalf("round %d: the losing answer on B got %d, want 409: %s", round, r.code, r.body)
		}
		res := a.resolvedPayload("s1")
		if res["toolCallId"] != id || res["decision"] != "deny" || res["answer"] != "deny" {
			t.Fatalf("round %d: permission.resolved %v", round, res)
		}
	}
	// The answer that is taken still gets 200 with its outcome.
	id := a.ask("s1", cmdAsk)
	b.waitPending(t, "s1", id)
	r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once"})
	var got Approval
	r.decode(t, &got)
	if r.code != 200 || got.Decision == nil || got.Decision.Decision != "allow" {
		t.Fatalf("the winning answer on B: %d %s", r.code, r.body)
	}
}

// The environment of TestInstanceHelper.
const (
	helperDSN     = "TOOLGATE_SERVER_HELPER_DSN"
	helperProject = "TOOLGATE_SERVER_HELPER_PROJECT"
	helperState   = "TOOLGATE_SERVER_HELPER_STATE"
)

// TestInstanceHelper is not a test: TestPeersHolderKilled runs the test
// binary again with helperDSN set, and then this serves as one instance
// on that log, with the identity its state directory keeps, printing
// "url URL" once it listens, until it is killed or its standard input
// closes.
func TestInstanceHelper(t *testing.T) {
	dsn := os.Getenv(helperDSN)
	if dsn == "" {
		t.Skip("run by TestPeersHolderKilled")
	}
	heartbeatInterval = 200 * time.Millisecond
	id, _, err := ClaimInstance(os.Getenv(helperState), dsn)
	must(t, err)
	store, err := postgres.Open(context.Background(), dsn, nil)
	must(t, err)
	e := newEnvAt(t, os.Getenv(helperProject), store, withTimeout(time.Minute), func(o *Options, _ *policy.File) { o.Instance = id })
	fmt.Printf("url %s\n", e.ts.URL)
	// Until killed, or until the test that started it is gone.
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startInstance runs TestInstanceHelper in a process of its own and
// returns its URL and process.
func startInstance(t *testing.T, dsn, project, state string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInstanceHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperDSN+"="+dsn, helperProject+"="+project, helperState+"="+state)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	_, err = cmd.StdinPipe() // closed when this process ends: the helper then exits
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "url ") {
		t.Fatalf("the instance did not start: %q %v", line, err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "url ")), cmd
}

// TestPeersHolderKilled: the instance holding a question is killed
// (SIGKILL, in a process of its own). The other instance stops offering
// the question once the holder has gone silent, and answers an answer to
// it with 410, not 202; when the killed instance starts again on its
// state directory, it records the question as denied, approval_cancelled,
// and the other instance shows it so.
func TestPeersHolderKilled(t *testing.T) {
	if os.Getenv(helperDSN) != "" {
		t.Skip("inside the helper")
	}
	dsn := pgtest.SchemaDSN(t)
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	state := t.TempDir()
	// Restored once the servers are shut down (cleanups run last first).
	grace := holderGrace
	t.Cleanup(func() { holderGrace = grace })
	holderGrace = 1500 * time.Millisecond

	url, proc := startInstance(t, dsn, project, state)
	store, err := postgres.Open(context.Background(), dsn, nil)
	must(t, err)
	b := newEnvAt(t, project, store)

	// The agent waits on A for the person's answer.
	body, err := json.Marshal(b.check("s1", cmdAsk, true))
	must(t, err)
	waited := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", url+"/v1/check", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+b.tokens.Agent)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		waited <- err
	}()
	var id string
	waitFor(t, "the question on B", func() bool {
		if p := b.pending("s1"); len(p) == 1 {
			id = p[0].ID
		}
		return id != ""
	})
	// While A lives, its question stays offered past the grace.
	time.Sleep(2 * holderGrace)
	if p := b.pending("s1"); len(p) != 1 {
		t.Fatalf("while its holder lives, B lists %d questions", len(p))
	}

	must(t, proc.Process.Kill())
	_ = proc.Wait()
	t.Logf("the waiting agent got: %v", <-waited)
	waitFor(t, "B to stop offering the question of the killed holder", func() bool { return len(b.pending("s1")) == 0 })
	r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once"})
	if r.code != 410 || !strings.Contains(string(r.body), "gone") {
		t.Fatalf("answering the question of the killed holder on B: %d %s", r.code, r.body)
	}
	if evs := b.events("s1", eventlog.TypePermissionAnswered, eventlog.TypePermissionResolved); len(evs) != 0 {
		t.Fatalf("events after the kill: %d, want none", len(evs))
	}

	// A starts again on its state directory: it settles the question.
	startInstance(t, dsn, project, state)
	res := b.resolvedPayload("s1")
	if res["toolCallId"] != id || res["decision"] != "deny" || res["reason"] != "approval_cancelled" || res["actor"] != "system" {
		t.Fatalf("permission.resolved after the restart: %v", res)
	}
	var got Approval
	b.call("GET", "/v1/approvals/"+id, b.tokens.Approver, nil).decode(t, &got)
	if got.State != StateResolved || got.Decision == nil || got.Decision.Reason != "approval_cancelled" {
		t.Fatalf("B shows %+v %+v", got, got.Decision)
	}
}

// TestClaimInstance: the identity kept in the state directory is the same
// at the next claim once given up, and two servers running at once on
// one directory and log get two identities.
func TestClaimInstance(t *testing.T) {
	dir := t.TempDir()
	first, release, err := ClaimInstance(dir, "events.db")
	must(t, err)
	second, release2, err := ClaimInstance(dir, "events.db")
	must(t, err)
	if first == second || !validID(first) || !validID(second) {
		t.Fatalf("two servers at once: %q and %q", first, second)
	}
	release()
	again, release3, err := ClaimInstance(dir, "events.db")
	must(t, err)
	defer release3()
	release2()
	if again != first {
		t.Fatalf("after a restart the identity is %q, was %q", again, first)
	}
	// Each server keeps an outage record of its own, and takes it up again
	// when it starts again.
	if OutageFile("events.db", first) == OutageFile("events.db", second) || OutageFile("events.db", again) != OutageFile("events.db", first) {
		t.Fatalf("outage records: %s and %s; after a restart %s", OutageFile("events.db", first), OutageFile("events.db", second), OutageFile("events.db", again))
	}
	other, release4, err := ClaimInstance(dir, "postgres://elsewhere")
	must(t, err)
	defer release4()
	if other == first {
		t.Fatal("another event log got the same identity")
	}
}
