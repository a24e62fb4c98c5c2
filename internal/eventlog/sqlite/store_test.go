package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/eventlog/storetest"
)

// dbFiles maps each test to its database file, so that opening a store a
// second time for the same test reopens the same file.
var dbFiles sync.Map // *testing.T → string

func dbFile(t *testing.T) string {
	if p, ok := dbFiles.Load(t); ok {
		return p.(string)
	}
	p := filepath.Join(t.TempDir(), "events.db")
	dbFiles.Store(t, p)
	t.Cleanup(func() { dbFiles.Delete(t) })
	return p
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) eventlog.Store {
		s, err := sqlite.Open(dbFile(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestConformanceSyncNormal(t *testing.T) {
	if testing.Short() {
		t.Skip("the durable mode is enough in -short")
	}
	storetest.Run(t, func(t *testing.T) eventlog.Store {
		s, err := sqlite.Open(dbFile(t), &sqlite.Options{Sync: sqlite.SyncNormal})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestTrimWAL: TrimWAL leaves a WAL no larger than its limit alone, and
// empties a larger one into the database file; every event stays, in its
// chain, for the next opener.
func TestTrimWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	key := []byte("chain key")
	s, err := sqlite.Open(path, &sqlite.Options{ChainKey: key})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := s.Append(ctx, "s1", eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: fmt.Appendf(nil, `{"i":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := walSize()
	if before == 0 {
		t.Fatal("no write-ahead log to trim")
	}
	if err := s.TrimWAL(ctx, before, time.Second); err != nil || walSize() != before {
		t.Fatalf("a WAL at the limit: err %v, %d bytes, want %d", err, walSize(), before)
	}
	if err := s.TrimWAL(ctx, before-1, time.Second); err != nil || walSize() != 0 {
		t.Fatalf("a WAL past the limit: err %v, %d bytes, want 0", err, walSize())
	}
	if _, err := s.Append(ctx, "s1", eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: []byte(`{"i":20}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(path, &sqlite.Options{ChainKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for e, err := range s.Query(ctx, eventlog.Filter{Session: "s1"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if e.Seq != int64(n) {
			t.Fatalf("event %d has seq %d", n, e.Seq)
		}
	}
	rep, err := eventlog.Verify(ctx, s, key, "s1")
	if err != nil || n != 21 || !rep.OK() {
		t.Fatalf("%d events, verify %+v %v", n, rep, err)
	}
}
