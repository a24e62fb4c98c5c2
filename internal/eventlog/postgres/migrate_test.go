package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
)

// TestMigrateToChains opens a database written before events were
// chained, with a user.message indexed as an allow, and checks that the
// old rows are counted as unchained rather than tampered, that the
// message is no longer selected as a decision, that new events of the
// same session chain on and verify, and that an edit of one is found.
func TestMigrateToChains(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.SchemaDSN(t)
	ms, err := storekit.LoadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := migrate(ctx, conn, "test", ms[:1]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE eventlog_counter SET last_id = 3`,
		`INSERT INTO eventlog_sessions (session, last_seq) VALUES ('a', 2), ('b', 1)`,
		`INSERT INTO eventlog_events (id, session, seq, time, type, decision, payload) VALUES
			(1, 'a', 1, 1, 'permission.resolved', 'deny', '{"decision":"deny","toolCallId":"c1"}'),
			(2, 'a', 2, 2, 'user.message', 'allow', '{"decision":"allow","actor":"user","toolCallId":"c1"}'),
			(3, 'b', 1, 3, 'permission.resolved', 'allow', '{"decision":"allow"}')`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	key := []byte("key")
	s, err := Open(ctx, dsn, &Options{ChainKey: key})
	if err != nil {
		t.Fatalf("Open of a database without chains: %v", err)
	}
	defer s.Close()
	for _, err := range s.Query(ctx, eventlog.Filter{Decisions: []string{"allow"}, Session: "a"}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("after migrating, the user.message is still selected as an allow")
	}
	rep, err := eventlog.Verify(ctx, s, key, "")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Unchained != 3 {
		t.Fatalf("before any new event: %d unchained, problems %v; want 3 unchained and no problem", rep.Unchained, rep.Problems)
	}
	evs, err := s.Append(ctx, "a", eventlog.Draft{Type: eventlog.TypeToolStarted}, eventlog.Draft{Type: eventlog.TypeToolCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Seq != 3 {
		t.Fatalf("the first event after migrating has seq %d, want 3", evs[0].Seq)
	}
	if rep, err = eventlog.Verify(ctx, s, key, ""); err != nil || !rep.OK() || rep.Unchained != 3 || rep.Events != 5 {
		t.Fatalf("after new events: %+v, %v; want 5 events, 3 unchained, no problem", rep, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE eventlog_events SET payload = '{"x":1}' WHERE id = $1`, evs[1].ID); err != nil {
		t.Fatal(err)
	}
	if rep, err = eventlog.Verify(ctx, s, key, ""); err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != eventlog.ProblemEdited || rep.Problems[0].Seq != 4 {
		t.Fatalf("after an edit of a new event: %+v, %v; want one edit at seq 4", rep, err)
	}
}
