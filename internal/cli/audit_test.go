package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

func TestAudit(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "events.db")
	store, err := sqlite.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(typ eventlog.Type, payload string) eventlog.Draft {
		at = at.Add(time.Minute)
		return eventlog.Draft{Turn: "t1", Time: at, Type: typ, Payload: json.RawMessage(payload)}
	}
	ctx := context.Background()
	if _, err := store.Append(ctx, "s1",
		ev(eventlog.TypeToolCallRequested, `{"tool":"Bash","input":{"command":"npm test"}}`),
		ev(eventlog.TypePermissionResolved, `{"tool":"Bash","decision":"allow","reason":"user_approved","actor":"user"}`),
		ev(eventlog.TypeToolCallRequested, `{"tool":"Read","input":{"file_path":".env"}}`),
		ev(eventlog.TypePermissionResolved, `{"tool":"Read","decision":"deny","reason":"credential_access","actor":"policy"}`),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, "s2", ev(eventlog.TypePermissionResolved, `{"tool":"Bash","decision":"deny","reason":"rule_deny","actor":"policy","rule":"Bash(rm -rf:*)"}`)); err != nil {
		t.Fatal(err)
	}
	store.Close()

	out, stderr, code := run(t, dir, "", "audit", "--db", db, "--decision", "deny", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "credential_access") || !strings.Contains(lines[1], `"session":"s2"`) {
		t.Fatalf("deny events:\n%s", out)
	}
	out, _, _ = run(t, dir, "", "audit", "--db", db, "--session", "s1", "--type", "permission.resolved")
	if !strings.Contains(out, "TIME") || strings.Count(out, "\n") != 3 || !strings.Contains(out, "user_approved") || strings.Contains(out, "rule_deny") {
		t.Fatalf("table:\n%s", out)
	}
	out, _, _ = run(t, dir, "", "audit", "--db", db, "--tool", "Bash", "--since", "2026-01-01T00:04:30Z", "--json", "--events")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "Bash(rm -rf:*)") {
		t.Fatalf("since:\n%s", out)
	}
	if _, stderr, code := run(t, dir, "", "audit", "--db", filepath.Join(dir, "missing.db")); code != 2 || !strings.Contains(stderr, "no event log at") {
		t.Fatalf("missing log: exit %d %s", code, stderr)
	}
	if _, _, code := run(t, dir, "", "audit", "--db", db, "--since", "yesterday"); code != 2 {
		t.Fatalf("bad --since: exit %d", code)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAuditFollow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "events.db")
	store, err := sqlite.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	resolved := func(reason string) eventlog.Draft {
		return eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: json.RawMessage(`{"decision":"deny","reason":"` + reason + `"}`)}
	}
	if _, err := store.Append(context.Background(), "s1", resolved("before")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int)
	go func() {
		done <- RunContext(ctx, []string{"audit", "--db", db, "--follow", "--json"}, strings.NewReader(""), &out, &errb)
	}()
	waitFor := func(s string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(out.String(), s) {
				return
			}
		}
		t.Fatalf("no %q in the output:\n%s%s", s, out.String(), errb.String())
	}
	waitFor("before")
	if _, err := store.Append(context.Background(), "s1", resolved("after")); err != nil {
		t.Fatal(err)
	}
	waitFor("after")
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Count(out.String(), "before") != 1 {
		t.Fatalf("an event printed twice:\n%s", out.String())
	}
}

func TestReplay(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	project := filepath.Join(dir, "project")
	db := filepath.Join(dir, "events.db")
	store, err := sqlite.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, tool, input string) eventlog.Draft {
		return eventlog.Draft{Type: eventlog.TypeToolCallRequested, Payload: json.RawMessage(`{"toolCallId":"` + id + `","tool":"` + tool + `","input":` + input + `,"cwd":"` + project + `"}`)}
	}
	res := func(id, decision, actor string) eventlog.Draft {
		return eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: json.RawMessage(`{"toolCallId":"` + id + `","decision":"` + decision + `","actor":"` + actor + `"}`)}
	}
	if _, err := store.Append(context.Background(), "s1",
		call("tc_1", "Read", `{"file_path":"README.md"}`), res("tc_1", "allow", "policy"),
		call("tc_2", "Bash", `{"command":"npm test"}`), res("tc_2", "allow", "user"),
		call("tc_3", "Bash", `{"command":"git status"}`), res("tc_3", "allow", "policy"),
	); err != nil {
		t.Fatal(err)
	}
	store.Close()
	// Today's policy denies git: tc_3 changes. tc_2 was asked and a
	// person allowed it: today's policy asks too, so it does not change.
	out, stderr, code := run(t, dir, "", "replay", "s1", "--db", db, "--deny", "Bash(git:*)", "--no-verify")
	if code != 1 || !strings.Contains(out, "tc_3") || !strings.Contains(out, "rule_deny") || strings.Contains(out, "tc_2") ||
		strings.Contains(out, "tc_1") || !strings.Contains(out, "1 of 3 calls of session s1 decide differently") || stderr != "" {
		t.Fatalf("exit %d:\n%s--- stderr:\n%s", code, out, stderr)
	}
	// Denying npm today changes the call a person allowed then: the
	// policy asked, and now denies.
	out, stderr, code = run(t, dir, "", "replay", "s1", "--db", db, "--deny", "Bash(npm:*)", "--no-verify")
	if code != 1 || !strings.Contains(out, "tc_2  Bash  ask (user: allow)  deny") || strings.Contains(out, "tc_3") || stderr != "" {
		t.Fatalf("exit %d:\n%s--- stderr:\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, dir, "", "replay", "s1", "--db", db, "--no-verify")
	if code != 0 || !strings.Contains(out, "0 of 3 calls") || strings.Contains(out, "CALL") || stderr != "" {
		t.Fatalf("nothing changes: exit %d:\n%s--- stderr:\n%s", code, out, stderr)
	}
	if _, stderr, code := run(t, dir, "", "replay", "nope", "--db", db, "--no-verify"); code != 2 || !strings.Contains(stderr, "no tool calls") {
		t.Fatalf("unknown session: exit %d %s", code, stderr)
	}
}

// TestAuditPostgres reads a PostgreSQL event log: the store several
// servers share. It runs when TOOLGATE_TEST_POSTGRES names a database.
func TestAuditPostgres(t *testing.T) {
	dsn := pgtest.SchemaDSN(t)
	ctx := context.Background()
	store, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	session := fmt.Sprintf("cli-%d", time.Now().UnixNano())
	if _, err := store.Append(ctx, session, eventlog.Draft{Type: eventlog.TypePermissionResolved,
		Payload: json.RawMessage(`{"tool":"Bash","decision":"deny","reason":"rule_deny"}`)}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	out, stderr, code := run(t, t.TempDir(), "", "audit", "--db", dsn, "--session", session, "--json")
	if code != 0 || !strings.Contains(out, `"reason":"rule_deny"`) {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
}

// TestAuditReplayOldLogShape: a call decided at once is one
// permission.resolved event that carries the call; a log written before
// that holds a model.tool_call_requested and then the decision. audit's
// rows and replay read both shapes alike, and an asked call (request,
// question, answer) the same in both.
func TestAuditReplayOldLogShape(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	project := filepath.Join(dir, "project")
	call := func(id, tool, input string) string {
		return `{"toolCallId":"` + id + `","tool":"` + tool + `","input":` + input + `,"cwd":"` + project + `","agent":"coder"}`
	}
	decided := func(id, tool, decision, reason string) string {
		return `{"toolCallId":"` + id + `","tool":"` + tool + `","decision":"` + decision + `","reason":"` + reason + `","actor":"policy","sourcedFrom":"default"}`
	}
	asked := []eventlog.Draft{
		{Type: eventlog.TypeToolCallRequested, Payload: json.RawMessage(call("tc_3", "Bash", `{"command":"npm test"}`))},
		{Type: eventlog.TypePermissionRequested, Payload: json.RawMessage(`{"toolCallId":"tc_3","tool":"Bash","reason":"execute_effect","sourcedFrom":"default"}`)},
		{Type: eventlog.TypePermissionResolved, Payload: json.RawMessage(`{"toolCallId":"tc_3","tool":"Bash","decision":"allow","reason":"user_approved","actor":"user","via":"page"}`)},
	}
	shapes := []struct {
		name   string
		drafts []eventlog.Draft
	}{
		{"old: the request, then the decision", append([]eventlog.Draft{
			{Type: eventlog.TypeToolCallRequested, Payload: json.RawMessage(call("tc_1", "Read", `{"file_path":"README.md"}`))},
			{Type: eventlog.TypePermissionResolved, Payload: json.RawMessage(decided("tc_1", "Read", "allow", "read_only"))},
			{Type: eventlog.TypeToolCallRequested, Payload: json.RawMessage(call("tc_2", "Bash", `{"command":"git status"}`))},
			{Type: eventlog.TypePermissionResolved, Payload: json.RawMessage(decided("tc_2", "Bash", "allow", "read_only"))},
		}, asked...)},
		{"new: one decision that carries the call", append([]eventlog.Draft{
			{Type: eventlog.TypePermissionResolved, Payload: json.RawMessage(strings.TrimSuffix(decided("tc_1", "Read", "allow", "read_only"), "}") + "," + strings.TrimPrefix(call("tc_1", "Read", `{"file_path":"README.md"}`), "{"))},
			{Type: eventlog.TypePermissionResolved, Payload: json.RawMessage(strings.TrimSuffix(decided("tc_2", "Bash", "allow", "read_only"), "}") + "," + strings.TrimPrefix(call("tc_2", "Bash", `{"command":"git status"}`), "{"))},
		}, asked...)},
	}
	var audits, replays []string
	for _, sh := range shapes {
		db := filepath.Join(t.TempDir(), "events.db")
		store, err := sqlite.Open(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range sh.drafts {
			sh.drafts[i].Time = at
		}
		if _, err := store.Append(context.Background(), "s1", sh.drafts...); err != nil {
			t.Fatal(err)
		}
		store.Close()
		out, stderr, code := run(t, dir, "", "audit", "--db", db, "--json")
		if code != 0 || stderr != "" {
			t.Fatalf("%s: audit exit %d: %s", sh.name, code, stderr)
		}
		for _, want := range []string{`"call":"Read: README.md"`, `"call":"Bash: git status"`, `"call":"Bash: npm test"`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: audit rows lack %s:\n%s", sh.name, want, out)
			}
		}
		if n := strings.Count(out, `"agent":"coder"`); n != 3 {
			t.Errorf("%s: %d rows name the agent, want 3:\n%s", sh.name, n, out)
		}
		audits = append(audits, out)
		// Today's policy denies git: the call decided at once changes,
		// whichever shape recorded it.
		out, stderr, code = run(t, dir, "", "replay", "s1", "--db", db, "--deny", "Bash(git:*)", "--no-verify", "--all")
		if code != 1 || stderr != "" || !strings.Contains(out, "1 of 3 calls of session s1 decide differently") ||
			!strings.Contains(out, "tc_2  Bash  allow") || !strings.Contains(out, "tc_3  Bash  ask (user via page: allow)") {
			t.Fatalf("%s: replay exit %d:\n%s--- stderr:\n%s", sh.name, code, out, stderr)
		}
		replays = append(replays, out)
	}
	if audits[0] != audits[1] {
		t.Errorf("audit reads the shapes differently:\n%s\n---\n%s", audits[0], audits[1])
	}
	if replays[0] != replays[1] {
		t.Errorf("replay reads the shapes differently:\n%s\n---\n%s", replays[0], replays[1])
	}
}
