package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
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
	ms, err := loadMigrations(migrationFiles)
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
	for _, want := range []string{path, "version 99", "up to 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestMigrationNumbering(t *testing.T) {
	for name, files := range map[string]fstest.MapFS{
		"gap":        {"migrations/0001_a.sql": {}, "migrations/0003_c.sql": {}},
		"duplicate":  {"migrations/0001_a.sql": {}, "migrations/0001_b.sql": {}},
		"unnumbered": {"migrations/init.sql": {}},
		"zero":       {"migrations/0000_a.sql": {}},
	} {
		if _, err := loadMigrations(files); err == nil {
			t.Errorf("%s: loadMigrations accepted %v", name, files)
		}
	}
	ms, err := loadMigrations(fstest.MapFS{"migrations/0002_b.sql": {Data: []byte("B")}, "migrations/0001_a.sql": {Data: []byte("A")}})
	if err != nil || len(ms) != 2 || ms[0].sql != "A" || ms[1].sql != "B" {
		t.Errorf("loadMigrations = %v, %v; want A then B", ms, err)
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
	ms, _ := loadMigrations(migrationFiles)
	ms = append(ms,
		migration{version: len(ms) + 1, name: "good.sql", sql: "CREATE TABLE extra (x INTEGER)"},
		migration{version: len(ms) + 2, name: "bad.sql", sql: "CREATE TABLE oops ("})
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
