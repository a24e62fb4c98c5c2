package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/internal/eventlog/storetest"
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
	if _, err := conn.Exec(ctx, `UPDATE eventlog_counter SET last_id = 3`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO eventlog_sessions (session, last_seq) VALUES ('a', 2), ('b', 1)`); err != nil {
		t.Fatal(err)
	}
	for i, row := range storetest.UnchainedRows {
		if _, err := conn.Exec(ctx, "INSERT INTO eventlog_events (id, session, seq, time, type, decision, payload) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			i+1, row.Session, row.Seq, row.Time, row.Type, row.Decision, row.Payload); err != nil {
			t.Fatal(err)
		}
	}

	key := []byte("key")
	s, err := Open(ctx, dsn, &Options{ChainKey: key})
	if err != nil {
		t.Fatalf("Open of a database without chains: %v", err)
	}
	defer s.Close()
	storetest.RunMigratedChains(t, s, key, "eventlog_events", func(t *testing.T, query string, args ...any) {
		// The statement has one placeholder.
		if _, err := conn.Exec(ctx, strings.Replace(query, "?", "$1", 1), args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	})
}
