package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/internal/eventlog/storetest"
)

// TestTamper edits, deletes and reorders rows of a real PostgreSQL
// database with a connection of its own, as anyone holding the
// database's password could, and checks that Verify reports each change.
func TestTamper(t *testing.T) {
	pgtest.DSN(t)
	storetest.RunTamper(t, func(t *testing.T) eventlog.Store {
		return open(t, dsnFor(t), &postgres.Options{ChainKey: storetest.ChainKey})
	}, storetest.Tables{Events: "eventlog_events", Heads: "eventlog_sessions", HeadSeq: "last_seq", HeadHash: "last_hash"},
		func(t *testing.T, query string, args ...any) {
			t.Helper()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, dsnFor(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var b strings.Builder
			n := 0
			for _, r := range query {
				if r == '?' {
					n++
					b.WriteString("$" + strconv.Itoa(n))
					continue
				}
				b.WriteRune(r)
			}
			if _, err := conn.Exec(ctx, b.String(), args...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		})
}
