package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/internal/eventlog/storetest"
)

// dsns maps each test to its schema, so that opening a store a second
// time for the same test reopens the same tables.
var dsns sync.Map // *testing.T → string

func dsnFor(t *testing.T) string {
	if d, ok := dsns.Load(t); ok {
		return d.(string)
	}
	d := pgtest.SchemaDSN(t)
	dsns.Store(t, d)
	t.Cleanup(func() { dsns.Delete(t) })
	return d
}

func open(t *testing.T, dsn string, opts *postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	pgtest.DSN(t)
	storetest.Run(t, func(t *testing.T) eventlog.Store {
		return open(t, dsnFor(t), nil)
	})
}

// TestSharedDatabase runs several stores on one database, as several
// toolgate servers would, each with goroutines appending to the same
// sessions, and a subscriber on one store that takes a few events at a
// time and resumes from the last ID it saw. The sessions must be gapless,
// IDs unique and in commit order, and the subscriber must receive every
// event, including those of the other stores, exactly once. Polling is
// off, so it also shows that notifications cross stores.
func TestSharedDatabase(t *testing.T) {
	dsn := pgtest.SchemaDSN(t)
	const stores, writers, calls, sessions = 3, 4, 25, 3
	opts := &postgres.Options{PollInterval: time.Hour}
	var ss []*postgres.Store
	for range stores {
		s := open(t, dsn, opts)
		t.Cleanup(func() { s.Close() })
		ss = append(ss, s)
	}
	total := 0
	for w := range writers {
		for i := range calls {
			total += 1 + (w+i)%2
		}
	}
	total *= stores

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []eventlog.Event
	subscribed := make(chan error, 1)
	go func() {
		after := eventlog.ReplayAll
		for reconnect := 0; len(got) < total; reconnect++ {
			f := eventlog.Filter{AfterID: after, Limit: min(1+reconnect%5, total-len(got))}
			evs, err := collect(ss[reconnect%stores].Subscribe(ctx, f))
			if err == nil && ctx.Err() != nil {
				err = fmt.Errorf("received %d events of %d, then waited until the timeout", len(got)+len(evs), total)
			}
			if err != nil {
				subscribed <- err
				return
			}
			got = append(got, evs...)
			after = got[len(got)-1].ID
		}
		subscribed <- nil
	}()

	var wg sync.WaitGroup
	acked := make([][]eventlog.Event, stores*writers)
	for k, s := range ss {
		for w := range writers {
			wg.Go(func() {
				for i := range calls {
					ds := make([]eventlog.Draft, 1+(w+i)%2)
					for j := range ds {
						ds[j] = eventlog.Draft{Type: eventlog.TypeToolStarted, Payload: fmt.Appendf(nil, `{"store":%d,"w":%d,"i":%d,"j":%d}`, k, w, i, j)}
					}
					evs, err := s.Append(ctx, fmt.Sprintf("shared-%d", (w+i)%sessions), ds...)
					if err != nil {
						t.Errorf("store %d writer %d: %v", k, w, err)
						return
					}
					acked[k*writers+w] = append(acked[k*writers+w], evs...)
				}
			})
		}
	}
	wg.Wait()
	// Once the appends are done, the subscriber catches up at once, or
	// it has missed events.
	select {
	case err := <-subscribed:
		if err != nil {
			t.Fatalf("subscriber: %v", err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatalf("subscriber: %v", <-subscribed)
	}

	var all []eventlog.Event
	for e, err := range ss[1].Query(ctx, eventlog.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	if len(all) != total {
		t.Fatalf("Query(all) = %d events, want %d", len(all), total)
	}
	// The stores took turns on each session: its chain is one, unforked.
	rep, err := eventlog.Verify(ctx, ss[0], nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Events != total {
		t.Fatalf("the chains of events appended by %d stores at once: %d events verified, problems %v", stores, rep.Events, rep.Problems)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID {
			t.Fatalf("Query(all): ID %d after ID %d", all[i].ID, all[i-1].ID)
		}
	}
	for sess := range sessions {
		name := fmt.Sprintf("shared-%d", sess)
		var seq int64
		for e, err := range ss[2].Query(ctx, eventlog.Filter{Session: name}) {
			if err != nil {
				t.Fatal(err)
			}
			if seq++; e.Seq != seq {
				t.Fatalf("session %s: seq %d where %d was due: a gap", name, e.Seq, seq)
			}
		}
	}
	stored := map[int64]eventlog.Event{}
	for _, e := range all {
		stored[e.ID] = e
	}
	for _, evs := range acked {
		for _, e := range evs {
			if diff := cmp.Diff(e, stored[e.ID]); diff != "" {
				t.Fatalf("acknowledged event differs from the stored one with its ID (-acknowledged +stored):\n%s", diff)
			}
		}
	}
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("the resuming subscriber's events differ from Query (-query +subscriber):\n%s", diff)
	}
}

func TestMigrations(t *testing.T) {
	dsn := pgtest.SchemaDSN(t)
	// Stores opening a new database at once: one migrates, the others
	// wait for it and find the schema up to date.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), dsn, nil)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open of a new database: %v", err)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, latest int
	if err := conn.QueryRow(ctx, "SELECT COUNT(*), MAX(version) FROM eventlog_schema_version").Scan(&n, &latest); err != nil {
		t.Fatal(err)
	}
	if n != latest || n == 0 {
		t.Fatalf("eventlog_schema_version has %d rows up to version %d, want one row per version", n, latest)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO eventlog_schema_version (version, name) VALUES (99, '0099_future.sql')"); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, dsn, nil)
	if !errors.Is(err, postgres.ErrSchemaTooNew) {
		t.Fatalf("Open of a version-99 database: %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{"version 99", fmt.Sprintf("up to %d", latest), "schema \"eventlog_test_"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, dsn, want string
	}{
		{"not a connection string", "postgres://%zz", "open PostgreSQL event log"},
		{"no such database", replaceDatabase(pgtest.DSN(t), "toolgate_no_such_database"), "toolgate_no_such_database"},
		{"no schema on the search path", pgtest.SchemaDSN(t) + "_missing", "no schema of the search_path"},
	} {
		s, err := postgres.Open(ctx, tc.dsn, nil)
		if err == nil {
			s.Close()
			t.Errorf("%s: Open succeeded", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Open: %v; want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}

// replaceDatabase returns dsn with its database name replaced by db.
func replaceDatabase(dsn, db string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return dsn
	}
	if strings.Contains(dsn, "://") {
		return strings.Replace(dsn, "/"+cfg.Database, "/"+db, 1)
	}
	return strings.Replace(dsn, "dbname="+cfg.Database, "dbname="+db, 1)
}

func collect(seq func(func(eventlog.Event, error) bool)) ([]eventlog.Event, error) {
	var evs []eventlog.Event
	for e, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, e)
	}
	return evs, nil
}
