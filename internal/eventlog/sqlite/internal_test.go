package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
	"github.com/toolgate/toolgate/internal/eventlog/storetest"
)

func TestPragmas(t *testing.T) {
	for _, tc := range []struct {
		sync Sync
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{SyncFull, 2}, {SyncNormal, 1}} {
		s, err := Open(filepath.Join(t.TempDir(), "events.db"), &Options{Sync: tc.sync})
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		var syncLevel int
		ctx := context.Background()
		if err := s.wconn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := s.wconn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&syncLevel); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || syncLevel != tc.want {
			t.Errorf("Sync %d: journal_mode %s, synchronous %d; want wal, %d", tc.sync, mode, syncLevel, tc.want)
		}
		var autoCheckpoint int
		if err := s.wconn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&autoCheckpoint); err != nil {
			t.Fatal(err)
		}
		if autoCheckpoint != checkpointPages {
			t.Errorf("wal_autocheckpoint of the writer's connection is %d, want %d", autoCheckpoint, checkpointPages)
		}
		fi, err := os.Stat(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("database file mode %v, want 0600", perm)
		}
		s.Close()
	}
}

func TestMigrationsRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Opening again applies nothing and keeps one row per migration.
	s, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms, err := storekit.LoadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	var n, max int
	if err := s.db.QueryRow("SELECT COUNT(*), MAX(version) FROM schema_version").Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) || max != len(ms) {
		t.Errorf("schema_version has %d rows up to version %d, want %d", n, max, len(ms))
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO schema_version (version, name, applied_at) VALUES (99, '0099_future.sql', 'later')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(path, nil)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open of a version-99 database: %v, want ErrSchemaTooNew", err)
	}
	ms, loadErr := storekit.LoadMigrations(migrationFiles)
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	for _, want := range []string{path, "version 99", fmt.Sprintf("up to %d", len(ms))} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestFailedMigrationRollsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ms, _ := storekit.LoadMigrations(migrationFiles)
	ms = append(ms,
		storekit.Migration{Version: len(ms) + 1, Name: "good.sql", SQL: "CREATE TABLE extra (x INTEGER)"},
		storekit.Migration{Version: len(ms) + 2, Name: "bad.sql", SQL: "CREATE TABLE oops ("})
	err = migrate(context.Background(), conn, path, ms)
	if err == nil || !strings.Contains(err.Error(), "bad.sql") || !strings.Contains(err.Error(), path) {
		t.Fatalf("migrate with a broken migration: %v; want an error naming bad.sql and the file", err)
	}
	var n int
	if err := conn.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'extra'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the migration before the broken one stayed applied: migrations are not one transaction")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir", "events.db")
	if _, err := Open(missing, nil); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Open in a missing directory: %v; want an error naming %s", err, missing)
	}
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(notDB, nil); err == nil || !strings.Contains(err.Error(), notDB) {
		t.Errorf("Open of a text file: %v; want an error naming %s", err, notDB)
	}
	if _, err := Open(filepath.Join(dir, "x.db"), &Options{Sync: Sync(9)}); err == nil {
		t.Error("Open accepted Sync(9)")
	}
	// A path with characters that mean something in a URI.
	odd := filepath.Join(dir, "a?b#c%20d.db")
	s, err := Open(odd, nil)
	if err != nil {
		t.Fatalf("Open(%q): %v", odd, err)
	}
	s.Close()
	if _, err := os.Stat(odd); err != nil {
		t.Errorf("the database is not at %q: %v", odd, err)
	}
}

// TestMigrateFromVersion1 opens a database written with the first schema,
// whose ids were plain rowids, and checks that the events keep their ids
// and that, once migrated, an id is never handed out twice, even after
// the newest event was deleted behind the store's back.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	ms, err := storekit.LoadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(context.Background(), conn, path, ms[:1]); err != nil {
		t.Fatal(err)
	}
	for _, row := range []struct {
		id, seq  int64
		session  string
		decision any
	}{{1, 1, "a", nil}, {2, 1, "b", "deny"}, {5, 2, "a", "allow"}} {
		if _, err := conn.ExecContext(context.Background(),
			"INSERT INTO events (id, session, seq, time, type, decision, payload) VALUES (?, ?, ?, ?, 'permission.resolved', ?, ?)",
			row.id, row.session, row.seq, int64(1e18)+row.id, row.decision, fmt.Sprintf(`{"decision":%q}`, row.decision)); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	db.Close()

	s, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open of a version 1 database: %v", err)
	}
	defer s.Close()
	var ids []int64
	for e, err := range s.Query(context.Background(), eventlog.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []int64{1, 2, 5}) {
		t.Errorf("after migrating, the ids are %v, want [1 2 5]", ids)
	}
	var deny int
	for _, err := range s.Query(context.Background(), eventlog.Filter{Decisions: []string{"deny"}}) {
		if err != nil {
			t.Fatal(err)
		}
		deny++
	}
	if deny != 1 {
		t.Errorf("after migrating, %d events have decision deny, want 1", deny)
	}
	var schema string
	if err := s.db.QueryRow("SELECT sql FROM sqlite_schema WHERE name = 'events'").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(schema, "AUTOINCREMENT") {
		t.Errorf("the migrated events table is not AUTOINCREMENT:\n%s", schema)
	}
	evs, err := s.Append(context.Background(), "a", eventlog.Draft{Type: eventlog.TypeToolStarted})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].ID != 6 || evs[0].Seq != 3 {
		t.Errorf("the first event after migrating has ID %d seq %d, want ID 6 seq 3", evs[0].ID, evs[0].Seq)
	}
	if _, err := s.db.Exec("DELETE FROM events WHERE id = 6"); err != nil {
		t.Fatal(err)
	}
	evs, err = s.Append(context.Background(), "b", eventlog.Draft{Type: eventlog.TypeToolStarted})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].ID != 7 {
		t.Errorf("after deleting the event with ID 6, the next event got ID %d, want 7: an ID was reused", evs[0].ID)
	}
}

// openAtVersion creates a database in a temporary directory with the
// schema of the first n migrations, and returns its path, the database
// and one connection to write old rows with.
func openAtVersion(t *testing.T, n int) (string, *sql.DB, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	ms, err := storekit.LoadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, conn, path, ms[:n]); err != nil {
		t.Fatal(err)
	}
	return path, db, conn
}

// TestMigrateToChains opens a database written before events were
// chained, with a user.message whose payload claims a decision, and
// checks that the old rows are reported as unchained rather than
// tampered, that the message is no longer selected as a decision, that
// new events chain on and verify, and that an edit of a new one is found.
func TestMigrateToChains(t *testing.T) {
	ctx := context.Background()
	path, db, conn := openAtVersion(t, 2)
	for _, row := range storetest.UnchainedRows {
		if _, err := conn.ExecContext(ctx, "INSERT INTO events (session, seq, time, type, decision, payload) VALUES (?, ?, ?, ?, ?, ?)",
			row.Session, row.Seq, row.Time, row.Type, row.Decision, row.Payload); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	db.Close()

	key := []byte("key")
	s, err := Open(path, &Options{ChainKey: key})
	if err != nil {
		t.Fatalf("Open of a database without chains: %v", err)
	}
	defer s.Close()
	storetest.RunMigratedChains(t, s, key, "events", func(t *testing.T, query string, args ...any) {
		if _, err := s.db.Exec(query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	})
}

// TestMigrateDropsAuditIndexes opens a database of schema version 4, with
// the indexes on decision and tool and chained events in it, and checks
// that the migration drops those two indexes and keeps the others, that
// filters on decision and tool still select the same events (now by
// reading rows), and that the sessions' sequence numbers and chains go on
// from the old rows.
func TestMigrateDropsAuditIndexes(t *testing.T) {
	ctx := context.Background()
	path, db, conn := openAtVersion(t, 4)
	// Rows as a version-4 toolgate wrote them: chained, with chain_heads.
	key := []byte("key")
	h := eventlog.NewChainHasher(key)
	heads := map[string][]byte{}
	for i, row := range []struct {
		session, decision, tool string
		seq                     int64
	}{{"a", "deny", "shell", 1}, {"b", "allow", "read", 1}, {"a", "allow", "shell", 2}, {"a", "", "", 3}} {
		payload := "{}"
		if row.decision != "" {
			payload = fmt.Sprintf(`{"decision":%q,"tool":%q}`, row.decision, row.tool)
		}
		e := eventlog.Event{Session: row.session, Seq: row.seq, Time: time.Unix(1_700_000_000+int64(i), 0).UTC(),
			Type: eventlog.TypePermissionResolved, Payload: []byte(payload)}
		prev := heads[row.session]
		if prev == nil {
			prev = []byte{}
		}
		hash := h.Hash(prev, e)
		if _, err := conn.ExecContext(ctx,
			"INSERT INTO events (session, seq, time, type, decision, tool, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			e.Session, e.Seq, e.Time.UnixNano(), string(e.Type), nullable(row.decision), nullable(row.tool), payload, prev, hash); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx,
			"INSERT INTO chain_heads (session, seq, hash) VALUES (?, ?, ?) ON CONFLICT (session) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
			e.Session, e.Seq, hash); err != nil {
			t.Fatal(err)
		}
		heads[row.session] = hash
	}
	conn.Close()
	db.Close()

	s, err := Open(path, &Options{ChainKey: key})
	if err != nil {
		t.Fatalf("Open of a version 4 database: %v", err)
	}
	defer s.Close()
	indexes := map[string]bool{}
	rows, err := s.db.Query("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes[name] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"events_session_seq": true, "events_type": true, "events_time": true}
	if !maps.Equal(indexes, want) {
		t.Errorf("after migrating, the indexes of events are %v, want %v", slices.Sorted(maps.Keys(indexes)), slices.Sorted(maps.Keys(want)))
	}

	if _, err := s.Append(ctx, "a", eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: []byte(`{"decision":"deny","tool":"read"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    eventlog.Filter
		want []string // session/seq
	}{
		{eventlog.Filter{Decisions: []string{"deny"}}, []string{"a/1", "a/4"}},
		{eventlog.Filter{Tools: []string{"shell"}}, []string{"a/1", "a/2"}},
		{eventlog.Filter{Decisions: []string{"allow"}, Tools: []string{"read"}}, []string{"b/1"}},
		{eventlog.Filter{Decisions: []string{"deny"}, Since: time.Unix(1_700_000_001, 0)}, []string{"a/4"}},
	} {
		var got []string
		for e, err := range s.Query(ctx, tc.f) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s/%d", e.Session, e.Seq))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Query(%+v) after migrating = %v, want %v", tc.f, got, tc.want)
		}
	}
	rep, err := eventlog.Verify(ctx, s, key, "")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("the chains do not verify after migrating and appending: %v", rep.Problems)
	}
}
