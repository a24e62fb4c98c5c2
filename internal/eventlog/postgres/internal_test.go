package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
)

// TestCommitOutcome checks how a COMMIT that failed is resolved: by what
// the server says about the transaction, or as unknown when it cannot be
// asked.
func TestCommitOutcome(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s, err := Open(ctx, pgtest.SchemaDSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	lost := errors.New("read tcp: connection reset by peer")
	// transaction runs a transaction on its own connection and ends it as
	// end says: "commit", "rollback", or "commit later" (after 200 ms, in
	// the background).
	transaction := func(end string) string {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var xid string
		if err := tx.QueryRow(ctx, "SELECT pg_current_xact_id()::text").Scan(&xid); err != nil {
			t.Fatal(err)
		}
		finish := func() {
			defer conn.Close(ctx)
			if end == "rollback" {
				tx.Rollback(ctx)
			} else if err := tx.Commit(ctx); err != nil {
				t.Error(err)
			}
		}
		if end == "commit later" {
			go func() {
				time.Sleep(200 * time.Millisecond)
				finish()
			}()
		} else {
			finish()
		}
		return xid
	}
	for _, tc := range []struct {
		name      string
		end       string
		commitErr error
		want      string // "", "failed" or "unknown"
	}{
		{"committed", "commit", lost, ""},
		{"rolled back", "rollback", lost, "failed"},
		{"still committing", "commit later", lost, ""},
		{"the server refused the commit", "commit", &pgconn.PgError{Code: "40001", Message: "could not serialize access"}, "failed"},
	} {
		err := s.commitOutcome(transaction(tc.end), tc.commitErr)
		switch got := outcome(err); {
		case got != tc.want:
			t.Errorf("%s: commitOutcome = %v, want outcome %q", tc.name, err, tc.want)
		case err != nil && !errors.Is(err, tc.commitErr):
			t.Errorf("%s: commitOutcome = %v, which does not wrap the COMMIT's error", tc.name, err)
		}
	}

	xid := transaction("commit")
	s.Close()
	if err := s.commitOutcome(xid, lost); outcome(err) != "unknown" {
		t.Errorf("with the store's connections closed, commitOutcome = %v, want an error wrapping ErrCommitUnknown, not to be retried", err)
	}
}

func outcome(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrCommitUnknown) && storekit.IsNoRetry(err):
		return "unknown"
	case errors.Is(err, ErrCommitUnknown):
		return "unknown, but to be retried"
	}
	return "failed"
}
