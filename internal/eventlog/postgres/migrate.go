package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
)

// The schema is a series of migrations, migrations/NNNN_name.sql, numbered
// from 1 without gaps. A database records the ones applied in its
// eventlog_schema_version table; Open applies the missing ones in one
// transaction.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrateLock is the key of the advisory lock that makes concurrent
// migrations of one database wait for each other.
const migrateLock = 0x746f6f6c67617465 // "toolgate"

// migrate brings the database on conn up to the newest migration, all in
// one transaction, so a failure leaves either the old schema or the new
// one. It refuses a database whose version is newer than the code.
func migrate(ctx context.Context, conn *pgx.Conn, where string, ms []storekit.Migration) (err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: begin migration: %w", where, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.Background())
		}
	}()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("%s: lock for migration: %w", where, err)
	}
	const create = `CREATE TABLE IF NOT EXISTS eventlog_schema_version (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`
	if _, err := tx.Exec(ctx, create); err != nil {
		return fmt.Errorf("%s: create eventlog_schema_version table: %w", where, err)
	}
	var current int
	if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM eventlog_schema_version").Scan(&current); err != nil {
		return fmt.Errorf("%s: read schema version: %w", where, err)
	}
	latest := len(ms)
	if current > latest {
		return fmt.Errorf("%w: %s has schema version %d, this toolgate knows versions up to %d; use the newer toolgate that wrote it",
			ErrSchemaTooNew, where, current, latest)
	}
	for _, m := range ms[current:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("%s: apply migration %s (version %d → %d): %w", where, m.Name, m.Version-1, m.Version, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO eventlog_schema_version (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return fmt.Errorf("%s: record migration %s: %w", where, m.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%s: commit migrations %d → %d: %w", where, current, latest, err)
	}
	return nil
}
