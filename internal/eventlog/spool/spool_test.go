package spool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/internal/eventlog/spool"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func count(t *testing.T, s eventlog.Store, session string, typ eventlog.Type) []eventlog.Event {
	t.Helper()
	var out []eventlog.Event
	for e, err := range s.Query(context.Background(), eventlog.Filter{Session: session, Types: []eventlog.Type{typ}}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestSpool: while PostgreSQL is down, the decisions of failed appends
// are spooled, up to MaxBytes, and only decisions (not a refused answer);
// invalid input is not. The spool survives the store being closed, and a
// store wrapped again on the same file appends the spooled events, marked
// recovered, once PostgreSQL is back; a store running through an outage
// also notes how many did not fit.
func TestSpool(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	path := filepath.Join(t.TempDir(), "outage.jsonl")
	open := func() *spool.Store {
		pg, err := postgres.Open(context.Background(), cluster.DSN(), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := spool.Wrap(pg, path, &spool.Options{MaxBytes: 2000, RetryEvery: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if _, err := s.Append(context.Background(), "", eventlog.Draft{Type: eventlog.TypePermissionResolved}); !errors.Is(err, eventlog.ErrInvalid) {
		t.Fatalf("invalid input: %v", err)
	}
	cluster.Stop()
	ctx := context.Background()
	for i := range 20 {
		payload := fmt.Appendf(nil, `{"toolCallId":"tc_%d","decision":"deny","reason":"rule_deny"}`, i)
		if _, err := s.Append(ctx, "s1",
			eventlog.Draft{Type: eventlog.TypePermissionAnswered, Payload: []byte(`{"toolCallId":"x"}`)},
			eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: payload}); err == nil {
			t.Fatal("an append to a stopped PostgreSQL succeeded")
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kept := strings.Count(string(raw), "\n")
	if len(raw) > 2000 || kept == 0 || kept >= 20 || strings.Contains(string(raw), "permission.answered") {
		t.Fatalf("the spool holds %d bytes, %d records:\n%s", len(raw), kept, raw)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	cluster.Start()
	s = open()
	defer s.Close()
	waitFor(t, "the spooled decisions in the log", func() bool { return len(count(t, s, "s1", eventlog.TypePermissionResolved)) == kept })
	for i, e := range count(t, s, "s1", eventlog.TypePermissionResolved) {
		var p struct {
			ToolCallID string          `json:"toolCallId"`
			Recovered  spool.Recovered `json:"recovered"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p.ToolCallID != fmt.Sprintf("tc_%d", i) || p.Recovered.From != "outage record" || p.Recovered.Unrecorded != "" {
			t.Fatalf("recovered event %d: %s", i, e.Payload)
		}
	}
	if n := len(count(t, s, "s1", eventlog.TypePermissionAnswered)); n != 0 {
		t.Fatalf("%d refused answers were replayed", n)
	}
	waitFor(t, "the spool emptied", func() bool { st, err := os.Stat(path); return err == nil && st.Size() == 0 })

	// A store that keeps running through an outage reports, when it is
	// over, how many failed appends did not fit.
	cluster.Stop()
	for i := range 20 {
		payload := fmt.Appendf(nil, `{"toolCallId":"tc_b%d","decision":"deny","reason":"rule_deny"}`, i)
		_, _ = s.Append(ctx, "s2", eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: payload})
	}
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kept = strings.Count(string(raw), "\n")
	cluster.Start()
	waitFor(t, "the note of the dropped records", func() bool { return len(count(t, s, spool.RecoveredSession, spool.TypeOutageDropped)) == 1 })
	var note struct {
		Dropped int `json:"dropped"`
	}
	if err := json.Unmarshal(count(t, s, spool.RecoveredSession, spool.TypeOutageDropped)[0].Payload, &note); err != nil || note.Dropped != 20-kept {
		t.Fatalf("dropped %d, want %d (%v)", note.Dropped, 20-kept, err)
	}
	waitFor(t, "the second outage's decisions in the log", func() bool { return len(count(t, s, "s2", eventlog.TypePermissionResolved)) == kept })
}

// TestSpoolFileHeldByOne: a spool file in use is refused to a second
// store, which would append its records to the log a second time and
// rewrite the file under the first; once the first is closed it is free.
func TestSpoolFileHeldByOne(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "outage.jsonl")
	wrap := func() (*spool.Store, error) {
		db, err := sqlite.Open(filepath.Join(dir, "events.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := spool.Wrap(db, path, nil)
		if err != nil {
			db.Close()
		}
		return s, err
	}
	first, err := wrap()
	if err != nil {
		t.Fatal(err)
	}
	if second, err := wrap(); err == nil || !strings.Contains(err.Error(), path) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second store on a spool file in use: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := wrap()
	if err != nil {
		t.Fatalf("the spool file once its store is closed: %v", err)
	}
	again.Close()
}
