package sqlite_test

import (
	"path/filepath"
	"sync"
	"testing"

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
