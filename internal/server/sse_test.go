package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// sseEvent is one message read from an event stream.
type sseEvent struct {
	id    string
	event string
	data  string
}

// openStream connects to an event stream and returns its messages and
// comment lines on channels; cancel drops the connection.
func (e *testEnv) openStream(t *testing.T, path, token, lastID string) (<-chan sseEvent, <-chan string, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.ts.URL+path, nil)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := e.ts.Client().Do(req)
	must(t, err)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream %s: %d %v", path, resp.StatusCode, resp.Header)
	}
	msgs := make(chan sseEvent)
	comments := make(chan string, 16)
	go func() {
		defer resp.Body.Close()
		defer close(msgs)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var m sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if m.data != "" {
					select {
					case msgs <- m:
					case <-ctx.Done():
						return
					}
				}
				m = sseEvent{}
			case strings.HasPrefix(line, ":"):
				select {
				case comments <- line:
				default:
				}
			case strings.HasPrefix(line, "id: "):
				m.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				m.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				m.data = line[6:]
			}
		}
	}()
	return msgs, comments, cancel
}

// TestSSEResume drops the connection again and again while events are
// appended, resuming each time with Last-Event-ID: every event arrives
// once, in order.
func TestSSEResume(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		sessions   int // sessions written to; the stream sees the first
	}{
		{"all events", "/v1/events?type=turn.started", 3},
		{"one session", "/v1/sessions/s0/events", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			const n = 600
			want := n
			if strings.Contains(tc.path, "/sessions/") {
				want = n / tc.sessions
			}
			// A few events before the first connection.
			for i := range 30 {
				_, err := e.store.Append(context.Background(), fmt.Sprintf("s%d", i%tc.sessions),
					eventlog.Draft{Type: eventlog.TypeTurnStarted, Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
				must(t, err)
			}
			writerDone := make(chan error, 1)
			go func() {
				for i := 30; i < n; i++ {
					_, err := e.store.Append(context.Background(), fmt.Sprintf("s%d", i%tc.sessions),
						eventlog.Draft{Type: eventlog.TypeTurnStarted, Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
					if err != nil {
						writerDone <- err
						return
					}
					if i%7 == 0 {
						time.Sleep(time.Millisecond)
					}
				}
				writerDone <- nil
			}()
			var got []eventlog.Event
			last := ""
			drops := 0
			deadline := time.After(30 * time.Second)
			for len(got) < want {
				msgs, _, cancel := e.openStream(t, tc.path, e.tokens.Approver, last)
				take := 1 + drops*13%50
			read:
				for k := 0; k < take && len(got) < want; k++ {
					select {
					case m, ok := <-msgs:
						if !ok {
							t.Fatal("the stream ended")
						}
						var ev eventlog.Event
						must(t, json.Unmarshal([]byte(m.data), &ev))
						if m.id != fmt.Sprint(ev.ID) || m.event != string(ev.Type) {
							t.Fatalf("message id %q event %q for %+v", m.id, m.event, ev)
						}
						got = append(got, ev)
						last = m.id
					case <-deadline:
						t.Fatalf("got %d of %d events", len(got), want)
						break read
					}
				}
				cancel()
				drops++
			}
			must(t, <-writerDone)
			if drops < 5 {
				t.Fatalf("only %d connections: the test did not drop mid-stream", drops)
			}
			seen := map[int]bool{}
			for i, ev := range got {
				if i > 0 && ev.ID <= got[i-1].ID {
					t.Fatalf("event %d has id %d after %d", i, ev.ID, got[i-1].ID)
				}
				var p struct{ I int }
				must(t, json.Unmarshal(ev.Payload, &p))
				if seen[p.I] {
					t.Fatalf("event %d arrived twice", p.I)
				}
				seen[p.I] = true
				if strings.Contains(tc.path, "/sessions/") {
					if ev.Session != "s0" || ev.Seq != int64(i+1) {
						t.Fatalf("event %d: session %s seq %d", i, ev.Session, ev.Seq)
					}
				}
			}
			if len(seen) != want {
				t.Fatalf("got %d distinct events, want %d", len(seen), want)
			}
		})
	}
}

// skipBound returns the next message of msgs that is not a session.bound
// event.
func skipBound(msgs <-chan sseEvent) sseEvent {
	for m := range msgs {
		if m.event != string(TypeSessionBound) {
			return m
		}
	}
	return sseEvent{}
}

// TestSSELiveAndKeepAlive follows a stream that starts empty: it gets
// keep-alive comments, then events as the API writes them, the agent only
// for its own session.
func TestSSELiveAndKeepAlive(t *testing.T) {
	e := newEnv(t, func(o *Options, _ *policy.File) { o.KeepAlive = 20 * time.Millisecond })
	e.call("POST", "/v1/sessions/s1/events", e.tokens.Agent, map[string]any{"type": "session.started"})
	msgs, comments, cancel := e.openStream(t, "/v1/sessions/s1/events", e.tokens.Agent, "")
	defer cancel()
	first := skipBound(msgs)
	if first.event != "session.started" {
		t.Fatalf("first message %+v", first)
	}
	select {
	case c := <-comments:
		if !strings.HasPrefix(c, ":") {
			t.Fatalf("comment %q", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no keep-alive comment")
	}
	for len(comments) > 0 {
		<-comments
	}
	select {
	case c := <-comments:
		if c != ": keepalive" {
			t.Fatalf("comment %q", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no keep-alive comment")
	}
	e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAllow, true))
	e.call("POST", "/v1/check", e.tokens.Agent, e.check("s2", cmdAllow, true))
	// A call decided at once is one event.
	for _, want := range []string{"permission.resolved"} {
		select {
		case m := <-msgs:
			if m.event == string(TypeSessionBound) {
				// The first check binds the session's workspace.
				if !strings.Contains(m.data, `"workspace":"`+e.project+`"`) {
					t.Fatalf("binding %+v, want workspace %s", m, e.project)
				}
				m = <-msgs
			}
			if m.event != want || !strings.Contains(m.data, `"session":"s1"`) {
				t.Fatalf("got %+v, want %s of s1", m, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s event", want)
		}
	}
	select {
	case m := <-msgs:
		t.Fatalf("the stream of s1 carried %+v", m)
	case <-time.After(100 * time.Millisecond):
	}
	// after= works like Last-Event-ID, and a stream ends at shutdown.
	msgs2, _, cancel2 := e.openStream(t, "/v1/events?after="+first.id, e.tokens.Approver, "")
	defer cancel2()
	if m := skipBound(msgs2); m.event != "permission.resolved" {
		t.Fatalf("after=%s began with %+v", first.id, m)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	must(t, e.srv.Shutdown(ctx))
	for range msgs2 {
	}
}
