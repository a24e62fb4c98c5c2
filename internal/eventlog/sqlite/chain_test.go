package sqlite_test

import (
	"database/sql"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/eventlog/storetest"
)

// TestTamper edits, deletes and reorders rows of a real database file
// with a second connection, as anyone who can write the file could, and
// checks that Verify reports each change.
func TestTamper(t *testing.T) {
	storetest.RunTamper(t, func(t *testing.T) eventlog.Store {
		s, err := sqlite.Open(dbFile(t), &sqlite.Options{ChainKey: storetest.ChainKey})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, storetest.Tables{Events: "events", Heads: "chain_heads", HeadSeq: "seq", HeadHash: "hash"},
		func(t *testing.T, query string, args ...any) {
			t.Helper()
			db, err := sql.Open("sqlite", dbFile(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(query, args...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		})
}
