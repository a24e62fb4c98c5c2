package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

// The fsync floor: what the disk allows a durable log at all. Each of N
// writers makes a record of benchPayload's size durable and waits for it,
// over and over, with nothing else done: no SQL, no index, no hash.
//
//   - perEvent: each writer appends its record to a shared file and
//     fsyncs it itself, one fsync per event (concurrent fsyncs of one file
//     may still share the disk's flush, as the kernel allows).
//   - grouped: the writers hand their records to one flusher, which takes
//     every record waiting, appends them in one write, fsyncs once and
//     acknowledges them all: the best a log can do with one fsync per
//     batch, and the floor the store is compared with.
//
// Both append to a file that grows, as SQLite's write-ahead log does
// between checkpoints, and keep appending to it from one measurement to
// the next.

// floorRun measures one variant for d and returns durable records/s.
type floorRun func(tb testing.TB, dir string, writers int, d time.Duration) float64

func floorPerEvent(tb testing.TB, dir string, writers int, d time.Duration) float64 {
	f, err := os.OpenFile(filepath.Join(dir, "floor-per-event"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rec := append(append([]byte{}, benchPayload...), '\n')
	var count atomic.Int64
	stop := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if _, err := f.Write(rec); err != nil {
					tb.Error(err)
					return
				}
				if err := f.Sync(); err != nil {
					tb.Error(err)
					return
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(count.Load()) / time.Since(start).Seconds()
}

func floorGrouped(tb testing.TB, dir string, writers int, d time.Duration) float64 {
	f, err := os.OpenFile(filepath.Join(dir, "floor-grouped"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rec := append(append([]byte{}, benchPayload...), '\n')
	queue := make(chan chan error, 1024)
	flusherDone := make(chan struct{})
	go func() {
		defer close(flusherDone)
		var batch []chan error
		var buf []byte
		for first := range queue {
			batch = append(batch[:0], first)
			// Let the writers acknowledged last time queue again, then
			// take every record waiting.
			runtime.Gosched()
		drain:
			for {
				select {
				case r, ok := <-queue:
					if !ok {
						break drain
					}
					batch = append(batch, r)
				default:
					break drain
				}
			}
			buf = buf[:0]
			for range batch {
				buf = append(buf, rec...)
			}
			_, err := f.Write(buf)
			if err == nil {
				err = f.Sync()
			}
			for _, r := range batch {
				r <- err
			}
		}
	}()
	var count atomic.Int64
	stop := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			done := make(chan error, 1)
			for time.Now().Before(stop) {
				queue <- done
				if err := <-done; err != nil {
					tb.Error(err)
					return
				}
				count.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(queue)
	<-flusherDone
	return float64(count.Load()) / elapsed.Seconds()
}

// storeRun appends one event per call from each writer for d to the
// durable store s and returns events/s and the latencies of the appends.
func storeRun(tb testing.TB, s *sqlite.Store, writers int, d time.Duration) (float64, []time.Duration) {
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	stop := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			session := fmt.Sprintf("bench-%d", w%4)
			draft := eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: benchPayload}
			var mine []time.Duration
			for time.Now().Before(stop) {
				t0 := time.Now()
				if _, err := s.Append(ctx, session, draft); err != nil {
					tb.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return float64(len(lat)) / time.Since(start).Seconds(), lat
}

// BenchmarkFsyncFloor reports the floor's durable records/s at 1, 8 and
// 64 writers; each iteration runs for one second, so -benchtime=1x is
// enough. Compare with BenchmarkAppend/durable.
func BenchmarkFsyncFloor(b *testing.B) {
	for _, v := range []struct {
		name string
		run  floorRun
	}{{"per-event", floorPerEvent}, {"grouped", floorGrouped}} {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", v.name, writers), func(b *testing.B) {
				dir := b.TempDir()
				var rate float64
				for range b.N {
					rate = v.run(b, dir, writers, time.Second)
				}
				b.ReportMetric(rate, "records/s")
			})
		}
	}
}

// TestDurableFloorRatio measures, side by side in one run, the fsync floor
// (one fsync per event, and one fsync per batch of concurrent writers) and
// the durable store's events/s at 1, 8 and 64 writers, and logs the ratio
// of the store to each floor. The disk's speed changes from one second to
// the next on a shared machine, so the three alternate in short slices
// (TOOLGATE_FLOOR_SLICES of 250 ms each, default 12) and each rate is the
// median of its slices. It only measures: set TOOLGATE_FLOOR=1 to run it.
//
//	TOOLGATE_FLOOR=1 go test ./internal/eventlog/sqlite -run TestDurableFloorRatio -v -count=1
func TestDurableFloorRatio(t *testing.T) {
	if os.Getenv("TOOLGATE_FLOOR") == "" {
		t.Skip("set TOOLGATE_FLOOR=1 to measure the store against the disk's fsync floor")
	}
	rounds := envInt(t, "TOOLGATE_FLOOR_SLICES", 12)
	const d = 250 * time.Millisecond
	for _, writers := range []int{1, 8, 64} {
		dir := t.TempDir()
		s, err := sqlite.Open(filepath.Join(dir, "events.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		var per, grouped, store, ratios []float64
		var lat []time.Duration
		for range rounds {
			p := floorPerEvent(t, dir, writers, d)
			g := floorGrouped(t, dir, writers, d)
			r, l := storeRun(t, s, writers, d)
			per, grouped, store, lat = append(per, p), append(grouped, g), append(store, r), append(lat, l...)
			ratios = append(ratios, r/max(p, g))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(lat)
		mp, mg, ms := median(per), median(grouped), median(store)
		t.Logf("writers=%-2d  floor per-event %6.0f/s  grouped %6.0f/s  store %6.0f/s (p99 %5.1f ms)  store/grouped %.2f  store/per-event %.2f  store/best-floor per slice: median %.2f, %.2f–%.2f",
			writers, mp, mg, ms, float64(lat[len(lat)*99/100].Microseconds())/1000, ms/mg, ms/mp, median(ratios), slices.Min(ratios), slices.Max(ratios))
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var n int
	if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
