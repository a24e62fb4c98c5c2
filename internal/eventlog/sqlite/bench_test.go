package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

// benchPayload is the size and shape of a permission.resolved payload.
var benchPayload = json.RawMessage(`{"decision":"allow","reason":"rule_allow","actor":"policy","riskAtDecision":"execute","sourcedFrom":"project","rule":"Bash(npm run test:*)","rule_origin":".toolgate/policy.toml:4:3","tool":"shell","receipt":"r-01HZX3"}`)

// BenchmarkAppend measures appends of one event per call, each call
// waiting for its commit, with 1, 8 and 64 goroutines appending at once,
// in the durable mode (fsync at every commit) and in SyncNormal. It
// reports events/s, the 99th percentile latency of one Append and the
// average number of events per commit (the group-commit batch; with N
// writers of one event each it cannot exceed N) and the CPU time the
// process spent per event, which disk latency does not change.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []struct {
		name    string
		sync    sqlite.Sync
		writers []int
	}{
		{"durable", sqlite.SyncFull, []int{1, 8, 64}},
		{"normal", sqlite.SyncNormal, []int{1, 8}},
	} {
		for _, writers := range mode.writers {
			b.Run(fmt.Sprintf("%s/writers=%d", mode.name, writers), func(b *testing.B) {
				benchAppend(b, mode.sync, writers)
			})
		}
	}
}

func benchAppend(b *testing.B, sync_ sqlite.Sync, writers int) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "events.db"), &sqlite.Options{Sync: sync_})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start, cpuStart := time.Now(), cpuTime()
	for w := range writers {
		wg.Go(func() {
			session := fmt.Sprintf("bench-%d", w%4)
			d := eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: benchPayload}
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if _, err := s.Append(ctx, session, d); err != nil {
					b.Error(err)
					return
				}
				latencies[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime()-cpuStart
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(latencies[(len(latencies)*99)/100].Microseconds()), "p99-µs")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
	}
	if st := s.Stats(); st.Commits > 0 {
		b.ReportMetric(float64(st.Events)/float64(st.Commits), "events/commit")
	}
}
