package fslock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDirExcludes: holders of the lock of one directory never overlap,
// however many ask at once (on Unix each holds its own open of the
// directory, as separate processes would).
func TestDirExcludes(t *testing.T) {
	dir := t.TempDir()
	var holding, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				unlock, err := Dir(dir)
				if err != nil {
					t.Error(err)
					return
				}
				n := holding.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				holding.Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d holders at once", most.Load())
	}
}
