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

// BenchmarkQuery reads from a log of 20,000 events in 16 sessions: every
// event of one session (1,250, as a session's page or `toolgate log`
// reads them), the last 100 events across sessions (as a follower
// catches up), and every event of one type (a scan of the type index).
func BenchmarkQuery(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "events.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const sessions, perAppend, total = 16, 50, 20000
	drafts := make([]eventlog.Draft, perAppend)
	for i := range drafts {
		drafts[i] = eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: benchPayload}
	}
	var lastID int64
	for i := range total / perAppend {
		evs, err := s.Append(ctx, fmt.Sprintf("bench-%d", i%sessions), drafts...)
		if err != nil {
			b.Fatal(err)
		}
		lastID = evs[len(evs)-1].ID
	}
	for _, q := range []struct {
		name string
		f    eventlog.Filter
		want int
	}{
		{"session", eventlog.Filter{Session: "bench-3"}, total / sessions},
		{"recent", eventlog.Filter{AfterID: lastID - 100}, 100},
		{"type", eventlog.Filter{Types: []eventlog.Type{eventlog.TypePermissionResolved}}, total},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range s.Query(ctx, q.f) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != q.want {
					b.Fatalf("%d events, want %d", n, q.want)
				}
			}
			b.ReportMetric(float64(q.want)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
