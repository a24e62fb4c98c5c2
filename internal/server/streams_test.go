package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// rawStream opens an event stream on a new connection and reads nothing
// from it: a reader that stalls. The connection's receive buffer is
// small, so that what the server writes soon blocks.
func (e *testEnv) rawStream(t *testing.T, path, token string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", e.ts.Listener.Addr().String())
	must(t, err)
	tc := c.(*net.TCPConn)
	must(t, tc.SetReadBuffer(4096))
	t.Cleanup(func() { tc.Close() })
	_, err = fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
		path, e.ts.Listener.Addr(), token)
	must(t, err)
	return tc
}

// postBig writes n events of about size bytes each to session. Agents
// may post at most 64 KiB, but the gate's own events can be as large as a
// request (a 1 MiB command line), so the log holds them as the gate would.
func (e *testEnv) postBig(t *testing.T, session string, n, size int) {
	t.Helper()
	// The agent's own event makes the session the agent's.
	if r := e.call("POST", "/v1/sessions/"+session+"/events", e.tokens.Agent, map[string]any{"type": "user.message", "payload": map[string]any{"text": "hi"}}); r.code != 200 {
		t.Fatalf("post event: %d %s", r.code, r.body)
	}
	text := strings.Repeat("lorem ipsum ", size/12)
	for i := range n {
		payload, err := json.Marshal(map[string]any{"toolCallId": fmt.Sprintf("tc_big%d", i), "tool": "Bash", "input": map[string]any{"command": text}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Append(context.Background(), session, eventlog.Draft{Type: eventlog.TypeToolCallRequested, Payload: payload}); err != nil {
			t.Fatalf("append event %d: %v", i, err)
		}
	}
}

// liveHeap is the memory the process holds after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// vmRSS is the resident set of the process, from /proc/self/status.
func vmRSS() string {
	b, _ := os.ReadFile("/proc/self/status")
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
		}
	}
	return "?"
}

// TestStalledStreamsBoundMemory: an agent posts large events and opens
// streams over them that it never reads. Each stream holds about a page
// of events in memory, not the hundreds a page of the log's subscription
// holds, so the streams pin a few megabytes, not hundreds.
func TestStalledStreamsBoundMemory(t *testing.T) {
	e := newEnv(t, func(o *Options, _ *policy.File) { o.StreamWriteTimeout = time.Minute })
	const events, size, streams = 40, 900 << 10, 8
	e.postBig(t, "big", events, size)
	before, rssBefore := liveHeap(), vmRSS()
	for range streams {
		e.rawStream(t, "/v1/sessions/big/events", e.tokens.Agent)
	}
	// The streams read and block; the most they hold at once counts.
	var grew int64
	rssAfter := ""
	for range 8 {
		time.Sleep(600 * time.Millisecond)
		if g := int64(liveHeap()) - int64(before); g > grew {
			grew, rssAfter = g, vmRSS()
		}
	}
	t.Logf("%d stalled streams over %d events of %d KiB: live heap %+d MiB, VmRSS %s → %s", streams, events, size>>10, grew>>20, rssBefore, rssAfter)
	if limit := int64(streams) * 4 << 20; grew > limit {
		t.Fatalf("%d stalled streams hold %d MiB, want at most %d MiB", streams, grew>>20, limit>>20)
	}
}

// TestStalledStreamDropped: a stream whose reader stopped reading is
// dropped once a write blocks longer than the write timeout, and the
// connection is closed.
func TestStalledStreamDropped(t *testing.T) {
	e := newEnv(t, func(o *Options, _ *policy.File) { o.StreamWriteTimeout = 300 * time.Millisecond })
	e.postBig(t, "big", 12, 900<<10)
	conns := []*net.TCPConn{
		e.rawStream(t, "/v1/sessions/big/events", e.tokens.Agent),
		e.rawStream(t, "/v1/events?session=big", e.tokens.Agent),
		e.rawStream(t, "/v1/events", e.tokens.Approver),
	}
	waitFor(t, "the streams to block", func() bool { return streamHandlers() == len(conns) })
	time.Sleep(2 * time.Second) // blocked writes time out
	if n := streamHandlers(); n != 0 {
		t.Fatalf("%d of %d streams whose readers stalled are still served after the write timeout", n, len(conns))
	}
}

// streamHandlers counts the goroutines serving an event stream.
func streamHandlers() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "server.(*Server).stream(") {
			n++
		}
	}
	return n
}

// TestStreamsPerToken: a token holds at most MaxStreams streams; one more
// is refused with 429 and a message, while another token still gets
// one, and a stream closed frees its place.
func TestStreamsPerToken(t *testing.T) {
	e := newEnv(t, func(o *Options, _ *policy.File) { o.MaxStreams = 3 })
	if r := e.call("POST", "/v1/sessions/s1/events", e.tokens.Agent, map[string]any{"type": "turn.started"}); r.code != 200 {
		t.Fatalf("post: %d %s", r.code, r.body)
	}
	var cancels []func()
	for range 3 {
		_, _, cancel := e.openStream(t, "/v1/sessions/s1/events", e.tokens.Agent, "")
		cancels = append(cancels, cancel)
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	ctx, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	r := e.callCtx(ctx, "GET", "/v1/sessions/s1/events", e.tokens.Agent, nil, "Accept", "text/event-stream")
	if r.code != 429 || !strings.Contains(string(r.body), "event streams") {
		t.Fatalf("a fourth stream of the token: %d %s, want 429", r.code, r.body)
	}
	_, _, cancel := e.openStream(t, "/v1/events", e.tokens.Approver, "")
	cancels = append(cancels, cancel)
	cancels[0]()
	waitFor(t, "a freed place", func() bool {
		ctxR := e.call("GET", "/v1/sessions/s1/events?limit=1", e.tokens.Agent, nil, "Accept", "text/event-stream")
		return ctxR.code == 200
	})
}

// TestIdleStreamsDoNotSlowChecks: many streams that have nothing to send
// cost the checks nothing: an append does not wake every stream into a
// query of the store. What a check costs is measured as the CPU time of
// the process per check, which other work on the machine disturbs less
// than the checks per second (both are reported).
func TestIdleStreamsDoNotSlowChecks(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures throughput")
	}
	e := newEnv(t, func(o *Options, _ *policy.File) { o.MaxStreams = 1000 })
	body := e.check("busy", cmdAllow, false)
	// measure returns the checks per second and the CPU time per check.
	measure := func() (float64, time.Duration) {
		var n atomic.Int64
		cpu0 := cpuTime(t)
		start := time.Now()
		stop := start.Add(1500 * time.Millisecond)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for time.Now().Before(stop) {
					if r := e.call("POST", "/v1/check", e.tokens.Agent, body); r.code != 200 {
						t.Errorf("check: %d %s", r.code, r.body)
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		checks := max(n.Load(), 1)
		return float64(checks) / time.Since(start).Seconds(), (cpuTime(t) - cpu0) / time.Duration(checks)
	}
	measure() // warm up
	idleRate, idleCPU := measure()
	const streams = 300
	for i := range streams {
		c := e.rawStream(t, fmt.Sprintf("/v1/sessions/idle%d/events", i), e.tokens.Approver)
		must(t, c.SetReadBuffer(64<<10))
		must(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil || !strings.Contains(line, "200") {
			t.Fatalf("stream %d: %q %v", i, line, err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	loadedRate, loadedCPU := measure()
	t.Logf("without streams: %.0f checks/s, %s CPU a check; with %d idle streams: %.0f checks/s, %s CPU a check (%.1f×)",
		idleRate, idleCPU, streams, loadedRate, loadedCPU, float64(loadedCPU)/float64(idleCPU))
	// When every append woke each stream into a query, a check cost
	// about 50 times the CPU.
	if loadedCPU > 3*idleCPU {
		t.Fatalf("%d idle streams made a check cost %s of CPU, not %s", streams, loadedCPU, idleCPU)
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	must(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestStreamAcrossServers: a stream on one server sees, in order and
// once each, the events another server sharing the log appends, on SQLite
// and on PostgreSQL.
func TestStreamAcrossServers(t *testing.T) {
	onBothLogs(t, func(t *testing.T, a, b *testEnv) {
		if r := a.call("POST", "/v1/sessions/s1/events", a.tokens.Agent, map[string]any{"type": "turn.started"}); r.code != 200 {
			t.Fatalf("post: %d %s", r.code, r.body)
		}
		msgs, _, cancel := b.openStream(t, "/v1/events?type=turn.started,turn.completed", b.tokens.Approver, "")
		defer cancel()
		for i := range 20 {
			typ := "turn.started"
			if i%2 == 1 {
				typ = "turn.completed"
			}
			if r := a.call("POST", "/v1/sessions/s1/events", a.tokens.Agent, map[string]any{"type": typ}); r.code != 200 {
				t.Fatalf("post: %d %s", r.code, r.body)
			}
		}
		last := ""
		for n := 0; n < 21; n++ {
			select {
			case m, ok := <-msgs:
				if !ok {
					t.Fatal("the stream ended")
				}
				if last != "" && len(m.id) <= len(last) && m.id <= last {
					t.Fatalf("event %s after %s", m.id, last)
				}
				last = m.id
			case <-time.After(10 * time.Second):
				t.Fatalf("%d of 21 events arrived", n)
			}
		}
	})
}
