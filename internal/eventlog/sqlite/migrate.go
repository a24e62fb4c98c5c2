package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// The schema is a series of migrations, migrations/NNNN_name.sql, numbered
// from 1 without gaps. A database records the ones applied in its
// schema_version table; Open applies the missing ones in one transaction.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrSchemaTooNew is returned by [Open] for a database written by a newer
// toolgate, whose schema this code does not know.
var ErrSchemaTooNew = errors.New("event log schema is newer than this toolgate")

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded migrations in version order and checks
// that they are numbered 1, 2, 3, … .
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: the name must be NNNN_description.sql with NNNN > 0", name)
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(src)})
	}
	// fs.Glob returns names sorted; with zero-padded numbers that is version order.
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s has version %d, want %d: versions must run 1, 2, 3, … without gaps or duplicates", m.name, m.version, i+1)
		}
	}
	return ms, nil
}

// migrate brings the database on conn up to the newest migration, all in
// one IMMEDIATE transaction, so a crash leaves either the old schema or the
// new one. It refuses a database whose version is newer than the code.
func migrate(ctx context.Context, conn *sql.Conn, file string, ms []migration) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("event log %s: begin migration: %w", file, err)
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	const create = `CREATE TABLE IF NOT EXISTS schema_version (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
) STRICT`
	if _, err := conn.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("event log %s: create schema_version table: %w", file, err)
	}
	var current int
	if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&current); err != nil {
		return fmt.Errorf("event log %s: read schema version: %w", file, err)
	}
	latest := len(ms)
	if current > latest {
		return fmt.Errorf("%w: %s has schema version %d, this toolgate knows versions up to %d; use the newer toolgate that wrote it, or move the file aside to start a new log",
			ErrSchemaTooNew, file, current, latest)
	}
	for _, m := range ms[current:] {
		if _, err := conn.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("event log %s: apply migration %s (version %d → %d): %w", file, m.name, m.version-1, m.version, err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return fmt.Errorf("event log %s: record migration %s: %w", file, m.name, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("event log %s: commit migrations %d → %d: %w", file, current, latest, err)
	}
	return nil
}
