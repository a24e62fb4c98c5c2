// Command checkload is a loopback load generator for a running toolgate
// server: it sends POST /v1/check requests over keep-alive connections
// and reports decisions per second and the latency percentiles.
//
//	checkload -server http://127.0.0.1:8765 -token-file ~/.local/state/toolgate/agent.token \
//	    -conns 32 -duration 10s -cwd "$PWD" -command 'npm test'
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8765", "URL of the toolgate server")
	tokenFile := flag.String("token-file", "", "agent token file (required)")
	conns := flag.Int("conns", 16, "concurrent keep-alive connections")
	duration := flag.Duration("duration", 10*time.Second, "how long to send requests")
	warmup := flag.Duration("warmup", time.Second, "requests sent before measuring starts")
	cwd := flag.String("cwd", "", "working directory of the calls (default the current one)")
	tool := flag.String("tool", "Bash", "tool of the calls")
	command := flag.String("command", "git status", "shell command of the calls")
	sessions := flag.Int("sessions", 16, "sessions the calls are spread over")
	flag.Parse()
	if *tokenFile == "" || *conns < 1 || *sessions < 1 {
		fmt.Fprintln(os.Stderr, "checkload: -token-file is required; -conns and -sessions must be at least 1")
		os.Exit(2)
	}
	raw, err := os.ReadFile(*tokenFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkload:", err)
		os.Exit(2)
	}
	token := strings.TrimSpace(string(raw))
	if *cwd == "" {
		*cwd, _ = os.Getwd()
	}
	bodies := make([][]byte, *sessions)
	for i := range bodies {
		bodies[i], _ = json.Marshal(map[string]any{
			"tool": *tool, "input": map[string]any{"command": *command}, "cwd": *cwd,
			"session": fmt.Sprintf("checkload-%d", i),
		})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}}
	url := strings.TrimSuffix(*server, "/") + "/v1/check"

	var measuring atomic.Bool
	var failures atomic.Int64
	decisions := map[string]int{}
	var mu sync.Mutex
	var lat []time.Duration
	stop := time.Now().Add(*warmup + *duration)
	time.AfterFunc(*warmup, func() { measuring.Store(true) })
	var start time.Time
	var startOnce sync.Once
	var wg sync.WaitGroup
	for c := range *conns {
		wg.Go(func() {
			var mine []time.Duration
			mineDec := map[string]int{}
			for i := c; time.Now().Before(stop); i += *conns {
				t0 := time.Now()
				req, _ := http.NewRequest("POST", url, bytes.NewReader(bodies[i%len(bodies)]))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				var out struct{ Decision string }
				err = json.NewDecoder(resp.Body).Decode(&out)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					failures.Add(1)
					continue
				}
				if measuring.Load() {
					startOnce.Do(func() { mu.Lock(); start = t0; mu.Unlock() })
					mine = append(mine, time.Since(t0))
					mineDec[out.Decision]++
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			for k, v := range mineDec {
				decisions[k] += v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(lat) == 0 {
		fmt.Fprintf(os.Stderr, "checkload: no successful request (%d failures)\n", failures.Load())
		os.Exit(1)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	fmt.Printf("requests:    %d in %s over %d connections (%d failed)\n", len(lat), elapsed.Round(time.Millisecond), *conns, failures.Load())
	fmt.Printf("decisions/s: %.0f\n", float64(len(lat))/elapsed.Seconds())
	fmt.Printf("latency:     p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), lat[len(lat)-1])
	fmt.Printf("decisions:   %v\n", decisions)
}
