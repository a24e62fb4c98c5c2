package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Bounds of the event streams (GET …/events with Accept: text/event-stream).
//
// A stream costs nothing while it waits: it holds no connection to the
// store and reads nothing. One reader per server, the hub, follows the log
// and tells the streams which sessions moved; a stream reads the store
// only when its session (or, for one that follows every session, the log)
// has events it has not sent. It reads them a page at a time, a page
// holding at most [streamPageBytes] of payloads beyond its first event, so
// a stream holds at most about one page and one event in memory however
// large the events are. A write that blocks longer than the stream write
// timeout (a reader that stopped reading) drops the stream, and each token
// may hold only so many streams at once.
const (
	// DefaultStreamWriteTimeout is how long one write to an event stream
	// may block before the stream is dropped.
	DefaultStreamWriteTimeout = 30 * time.Second
	// DefaultMaxStreams is how many event streams one token may hold open
	// at once.
	DefaultMaxStreams = 16

	// streamPageEvents and streamPageBytes bound what a stream reads from
	// the store at once: that many events, and no more once their payloads
	// reach that many bytes.
	streamPageEvents = 64
	streamPageBytes  = 256 << 10

	// hubInterval is how often the hub reads the log for what is new, and
	// so the longest a stream waits for an event it follows.
	hubInterval = 50 * time.Millisecond
	// hubLookback is how far back in time the hub starts reading: events
	// committed from its start on carry a later time, whatever the clock
	// of the server that wrote them, within that much.
	hubLookback = 10 * time.Minute
	// hubPage is how many events the hub reads per query.
	hubPage = 1000
	// hubSessions bounds the sessions whose latest event the hub keeps.
	hubSessions = 10_000
)

// streamHub follows the log for the event streams of a server.
type streamHub struct {
	mu      sync.Mutex
	started bool
	last    int64            // the highest event id seen
	bySess  map[string]int64 // each session's highest event id seen
	floor   int64            // a session missing from bySess may have events up to this id
	changed chan struct{}    // closed when last moves on
	open    map[string]int   // principal id → streams open
}

func newStreamHub() *streamHub {
	return &streamHub{bySess: map[string]int64{}, changed: make(chan struct{}), open: map[string]int{}}
}

// acquire counts a stream of principal id; false when it holds max already.
func (h *streamHub) acquire(id string, max int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open[id] >= max {
		return false
	}
	h.open[id]++
	return true
}

func (h *streamHub) release(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open[id]--; h.open[id] <= 0 {
		delete(h.open, id)
	}
}

// high returns a channel closed when the hub sees more, and the highest
// event id the hub has seen of session ("" for every session): every
// event up to it is committed.
func (h *streamHub) high(session string) (<-chan struct{}, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if session == "" {
		return h.changed, h.last
	}
	id, ok := h.bySess[session]
	if !ok {
		id = h.floor
	}
	return h.changed, id
}

// seen records events read from the log and wakes the streams.
func (h *streamHub) seen(evs []eventlog.Event) {
	if len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range evs {
		if _, ok := h.bySess[e.Session]; !ok && len(h.bySess) >= hubSessions {
			// Forget them all: each may have had events up to here.
			h.floor = h.last
			clear(h.bySess)
		}
		h.bySess[e.Session] = e.ID
		h.last = max(h.last, e.ID)
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

// startHub starts the hub's reader at the first stream; it runs until the
// server shuts down.
func (s *Server) startHub() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return
	}
	h.started = true
	since := s.clock().Add(-hubLookback)
	go s.runHub(s.base, since)
}

// runHub reads the log from since on, every hubInterval, and records in
// the hub the latest event of each session.
func (s *Server) runHub(ctx context.Context, since time.Time) {
	tick := time.NewTicker(hubInterval)
	defer tick.Stop()
	cursor := int64(-1) // not found yet: the first event at or after since
	for {
		full := false
		var err error
		if cursor < 0 {
			var first int64
			if first, err = s.firstSince(ctx, since); err == nil && first > 0 {
				cursor = first - 1
			}
		}
		if cursor >= 0 && err == nil {
			evs := make([]eventlog.Event, 0, 64)
			for e, qerr := range s.store.Query(ctx, eventlog.Filter{AfterID: cursor, Limit: hubPage}) {
				if err = qerr; err != nil {
					break
				}
				evs = append(evs, eventlog.Event{ID: e.ID, Session: e.Session})
			}
			if len(evs) > 0 {
				cursor = evs[len(evs)-1].ID
				s.hub.seen(evs)
			}
			full = len(evs) == hubPage
		}
		switch {
		case errors.Is(err, eventlog.ErrClosed) || ctx.Err() != nil:
			return
		case err != nil:
			s.log.Error("follow the event log for event streams", "err", err)
		}
		if full {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// stream sends the stored events matching f after f.AfterID (every stored
// one when it is 0), then the new ones as they are appended, as
// Server-Sent Events, until f.Limit events were sent, the client goes or
// stops reading, or the server shuts down.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p principal, f eventlog.Filter) error {
	if !s.hub.acquire(p.id, s.opts.MaxStreams) {
		return errorf(http.StatusTooManyRequests, "this token holds %d event streams already, the most it may: close one before opening another", s.opts.MaxStreams)
	}
	defer s.hub.release(p.id)
	s.startHub()

	rc := http.NewResponseController(w)
	liftBodyDeadline(w) // a stream outlives the body's deadline
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()

	// write sends b, dropping the stream when the client does not take it
	// within the write timeout.
	write := func(parts ...[]byte) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(s.opts.StreamWriteTimeout)); err != nil {
			return false
		}
		for _, b := range parts {
			if _, err := w.Write(b); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !write([]byte(": toolgate events\n\n")) {
		return nil
	}
	tick := time.NewTicker(s.opts.KeepAlive)
	defer tick.Stop()
	cursor := max(f.AfterID, 0)
	limit := f.Limit
	sent := 0
	first := true
	for {
		wake, high := s.hub.high(f.Session)
		if first || high > cursor {
			first = false
			want := streamPageEvents
			if limit > 0 {
				want = min(want, limit-sent)
			}
			page, more, err := s.streamPage(ctx, f, cursor, want)
			if err != nil {
				if !errors.Is(err, context.Canceled) && !errors.Is(err, eventlog.ErrClosed) {
					s.log.Error("event stream", "err", err)
				}
				return nil
			}
			for i := range page {
				e := page[i]
				page[i] = eventlog.Event{} // let it go once sent
				if !s.writeEvent(write, e) {
					return nil
				}
				cursor = e.ID
				if sent++; limit > 0 && sent >= limit {
					return nil
				}
			}
			if more {
				continue
			}
			// Everything up to high is committed, and the page read after
			// the hub saw it held every match up to it.
			cursor = max(cursor, high)
			continue
		}
		select {
		case <-wake:
		case <-tick.C:
			if !write([]byte(": keepalive\n\n")) {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// streamPage reads the events matching f after cursor: at most want of
// them, and no more once their payloads reach streamPageBytes. more is
// true when there may be further ones.
func (s *Server) streamPage(ctx context.Context, f eventlog.Filter, cursor int64, want int) (page []eventlog.Event, more bool, err error) {
	f.AfterID = cursor
	f.Limit = want
	size := 0
	for e, err := range s.store.Query(ctx, f) {
		if err != nil {
			return nil, false, fmt.Errorf("read the event log: %w", err)
		}
		page = append(page, e)
		if size += len(e.Payload); size >= streamPageBytes {
			return page, true, nil
		}
	}
	return page, len(page) == want, nil
}

// writeEvent sends e as one Server-Sent Event. Its payload, which may be
// large, is written as it is stored, a piece at a time, not copied: the
// line breaks in it, which valid JSON has only between tokens, become
// spaces, so the data stays on one line.
func (s *Server) writeEvent(write func(...[]byte) bool, e eventlog.Event) bool {
	payload := e.Payload
	e.Payload = json.RawMessage("0")
	env, err := json.Marshal(e)
	if err != nil {
		return false
	}
	at := bytes.LastIndex(env, []byte(`"payload":0`))
	if at < 0 {
		return false
	}
	at += len(`"payload":`)
	head := "id: " + strconv.FormatInt(e.ID, 10) + "\nevent: " + sseField(string(e.Type)) + "\ndata: "
	if !write([]byte(head), env[:at]) {
		return false
	}
	buf := make([]byte, min(len(payload), 32<<10))
	for len(payload) > 0 {
		n := copy(buf, payload)
		payload = payload[n:]
		for i, c := range buf[:n] {
			if c == '\n' || c == '\r' {
				buf[i] = ' '
			}
		}
		if !write(buf[:n]) {
			return false
		}
	}
	return write(env[at+1:], []byte("\n\n"))
}
