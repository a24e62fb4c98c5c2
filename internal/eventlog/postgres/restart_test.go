package postgres_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
)

// TestServerRestart: after the PostgreSQL server restarts, the store's
// connections are all dead; the first query and the first append each
// succeed all the same (on new connections), and nothing is written twice.
func TestServerRestart(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	s, err := postgres.Open(context.Background(), cluster.DSN(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	all := func() ([]eventlog.Event, error) {
		var out []eventlog.Event
		for e, err := range s.Query(ctx, eventlog.Filter{Session: "s1"}) {
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	for round := range 3 {
		if _, err := s.Append(ctx, "s1", eventlog.Draft{Type: eventlog.TypeToolCompleted, Payload: []byte(`{}`)}); err != nil {
			t.Fatalf("round %d: append: %v", round, err)
		}
		if evs, err := all(); err != nil || len(evs) != 2*round+1 {
			t.Fatalf("round %d: query: %d events, %v", round, len(evs), err)
		}
		cluster.Stop()
		cluster.Start()
		if evs, err := all(); err != nil || len(evs) != 2*round+1 {
			t.Fatalf("round %d: the first query after the restart: %d events, %v", round, len(evs), err)
		}
		if _, err := s.Append(ctx, "s1", eventlog.Draft{Type: eventlog.TypeToolCompleted, Payload: []byte(`{}`)}); err != nil {
			t.Fatalf("round %d: the first append after the restart: %v", round, err)
		}
	}
	if evs, err := all(); err != nil || len(evs) != 6 || evs[5].Seq != 6 {
		t.Fatalf("after three restarts: %d events, %v", len(evs), err)
	}
}
