package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/termtext"
)

// isPostgres reports whether db names a PostgreSQL database rather than a
// SQLite file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openStore opens the event log db: a PostgreSQL connection string, or
// the path of a SQLite file. With mustExist a missing SQLite file is a
// usage error rather than a new, empty log. chainKey is the key the
// events appended through the store are chained under; readers pass nil.
func openStore(ctx context.Context, db string, mustExist bool, chainKey []byte) (eventlog.Store, error) {
	if db == "" {
		return nil, usageError("no event log: give --db")
	}
	if isPostgres(db) {
		return postgres.Open(ctx, db, &postgres.Options{ChainKey: chainKey})
	}
	if mustExist {
		if _, err := os.Stat(db); err != nil {
			return nil, usageError("no event log at %s: %v", db, errors.Unwrap(err))
		}
	}
	return sqlite.Open(db, &sqlite.Options{ChainKey: chainKey})
}

// chainKey reads the approver token of stateDir and returns the key the
// event log's chains are checked with.
func chainKey(stateDir string) ([]byte, error) {
	if stateDir == "" {
		return nil, usageError("no state directory to read the approver token from: give --state-dir")
	}
	tok, err := server.ReadTokenFile(filepath.Join(stateDir, server.ApproverTokenFile))
	if err != nil {
		return nil, usageError("checking the event log needs the approver token that signs it: %v (give --state-dir, the server's state directory)", err)
	}
	return server.ChainKeyFor(tok), nil
}

// verifyLog checks the chains of session (of every session when it is
// empty) in store under key and prints what it found to w, each problem
// on a line of its own, escaped. It returns the report, or an error when
// the store keeps no chains or cannot be read.
func verifyLog(ctx context.Context, w io.Writer, store eventlog.Store, key []byte, session string) (*eventlog.VerifyReport, error) {
	cr, ok := store.(eventlog.ChainReader)
	if !ok {
		return nil, fmt.Errorf("the event log %T keeps no chain of hashes to verify", store)
	}
	rep, err := eventlog.Verify(ctx, cr, key, session)
	if err != nil {
		return nil, err
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "TAMPERED %s\n", termtext.Escape(p.String()))
	}
	fmt.Fprintf(w, "verified %d event(s) in %d session(s): %d problem(s)", rep.Events, rep.Sessions, len(rep.Problems))
	if rep.Unchained > 0 {
		fmt.Fprintf(w, "; %d event(s) stored before the log was chained, not checked", rep.Unchained)
	}
	fmt.Fprintln(w)
	return rep, nil
}
