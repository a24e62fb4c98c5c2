package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
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

// migrate brings the database on conn up to the newest migration, all in
// one IMMEDIATE transaction, so a crash leaves either the old schema or the
// new one. It refuses a database whose version is newer than the code.
func migrate(ctx context.Context, conn *sql.Conn, file string, ms []storekit.Migration) (err error) {
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
		if _, err := conn.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("event log %s: apply migration %s (version %d → %d): %w", file, m.Name, m.Version-1, m.Version, err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
			m.Version, m.Name, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return fmt.Errorf("event log %s: record migration %s: %w", file, m.Name, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("event log %s: commit migrations %d → %d: %w", file, current, latest, err)
	}
	return nil
}
