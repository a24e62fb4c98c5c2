// Package pgtest gives tests a PostgreSQL database of their own: it reads
// the server to use from $TOOLGATE_TEST_POSTGRES and skips the test when
// it is unset.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/testnote"
)

// DSN returns the database the tests use, or skips the test.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("TOOLGATE_TEST_POSTGRES")
	if dsn == "" {
		testnote.Skip(t, "PostgreSQL suite", "$TOOLGATE_TEST_POSTGRES is not set (each test makes a schema of its own in that database and drops it)",
			"TOOLGATE_TEST_POSTGRES='postgres://postgres@localhost:5432/toolgate_test?sslmode=disable' go test ./..., or .ci/run, which starts one")
	}
	return dsn
}

// SchemaDSN creates a new, empty schema for t, dropped when t ends, and
// returns a connection string whose search_path is that schema.
func SchemaDSN(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "eventlog_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to TOOLGATE_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + schema
	}
	return dsn + " search_path=" + schema
}
