package cli

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

// isPostgres reports whether db names a PostgreSQL database rather than a
// SQLite file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openStore opens the event log db: a PostgreSQL connection string, or
// the path of a SQLite file. With mustExist a missing SQLite file is a
// usage error rather than a new, empty log.
func openStore(ctx context.Context, db string, mustExist bool) (eventlog.Store, error) {
	if db == "" {
		return nil, usageError("no event log: give --db")
	}
	if isPostgres(db) {
		return postgres.Open(ctx, db, nil)
	}
	if mustExist {
		if _, err := os.Stat(db); err != nil {
			return nil, usageError("no event log at %s: %v", db, errors.Unwrap(err))
		}
	}
	return sqlite.Open(db, nil)
}
