package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkCheckHTTP measures POST /v1/check over loopback HTTP with
// keep-alive connections (one per parallel goroutine; -cpu and
// b.SetParallelism choose how many), on the real engine and a real SQLite
// log. It reports decisions per second and the p50 and p99 latency.
func BenchmarkCheckHTTP(b *testing.B) {
	e := newEnv(b)
	body, err := json.Marshal(map[string]any{"tool": "Bash", "input": map[string]any{"command": cmdAllow}, "cwd": e.project, "session": "bench"})
	must(b, err)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			t0 := time.Now()
			req, _ := http.NewRequest("POST", e.ts.URL+"/v1/check", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.tokens.Agent)
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
