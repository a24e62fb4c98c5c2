package sqlite

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// A request is one Append call waiting for the writer.
type request struct {
	session string
	drafts  []eventlog.Draft
	fields  []eventlog.Fields

	// state moves from pending to taken (by the writer) or to abandoned (by
	// a caller whose context ended first), exactly once.
	state atomic.Int32

	events []eventlog.Event
	err    error
	done   chan struct{} // closed by the writer once events or err is set
}

const (
	pending int32 = iota
	taken
	abandoned
)

// Append implements [eventlog.Store.Append]. The events go to the writer
// goroutine, which commits them with whatever other appends are waiting in
// one transaction and one fsync; Append returns once that transaction has
// committed.
func (s *Store) Append(ctx context.Context, session string, drafts ...eventlog.Draft) ([]eventlog.Event, error) {
	fields, err := eventlog.Prepare(session, drafts)
	if err != nil {
		return nil, err
	}
	if len(drafts) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &request{session: session, drafts: drafts, fields: fields, done: make(chan struct{})}

	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, fmt.Errorf("append to %s: %w", s.path, eventlog.ErrClosed)
	}
	select {
	case s.queue <- r:
	case <-ctx.Done():
		s.mu.RUnlock()
		return nil, ctx.Err()
	}
	s.mu.RUnlock()

	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(pending, abandoned) {
			return nil, ctx.Err()
		}
		// The writer has the events: report what became of them.
		<-r.done
	}
	return r.events, r.err
}

// write is the writer goroutine. It takes the first waiting request, adds
// every other request already queued (up to MaxBatch events), commits them
// in one transaction and acknowledges each. The batch is whatever queued up
// while the previous commit was being synced, so batches grow with the load
// and a lone writer waits for no timer.
func (s *Store) write() {
	defer close(s.writerDone)
	batch := make([]*request, 0, 64)
	for {
		r, ok := <-s.queue
		if !ok {
			return
		}
		batch = batch[:0]
		n := 0
		if r.state.CompareAndSwap(pending, taken) {
			batch = append(batch, r)
			n += len(r.drafts)
		}
		// Let appenders that are runnable reach the queue first: after a
		// commit acknowledges a batch, its callers append again within
		// microseconds, and without this yield the next batch would leave
		// with only the first of them.
		runtime.Gosched()
		open := true
	fill:
		for n < s.opts.MaxBatch {
			select {
			case r, ok := <-s.queue:
				if !ok {
					open = false
					break fill
				}
				if r.state.CompareAndSwap(pending, taken) {
					batch = append(batch, r)
					n += len(r.drafts)
				}
			default:
				break fill
			}
		}
		if len(batch) > 0 {
			s.commit(batch)
		}
		if !open {
			return
		}
	}
}

// commit writes batch in one transaction and acknowledges every request in
// it. If the transaction fails, each request is retried in a transaction of
// its own, so one request's failure is not another's.
func (s *Store) commit(batch []*request) {
	now := time.Now().UTC()
	err := s.writeBatch(batch, now)
	if err != nil && len(batch) > 1 {
		for _, r := range batch {
			r.err = s.writeBatch([]*request{r}, now)
			close(r.done)
		}
		return
	}
	for _, r := range batch {
		r.err = err
		close(r.done)
	}
}

func (s *Store) writeBatch(batch []*request, now time.Time) (err error) {
	ctx := context.Background()
	if _, err := s.wconn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("append to %s: begin: %w", s.path, err)
	}
	clear(s.staged)
	defer func() {
		if err != nil {
			_, _ = s.wconn.ExecContext(ctx, "ROLLBACK")
			for _, r := range batch {
				r.events = nil
			}
		}
	}()

	// Another process may have appended since our last transaction; then
	// the cached last sequence numbers are stale.
	var dv int64
	if err := s.wconn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&dv); err != nil {
		return fmt.Errorf("append to %s: %w", s.path, err)
	}
	if dv != s.dataVersion || len(s.lastSeq) > maxCachedSessions {
		clear(s.lastSeq)
		s.dataVersion = dv
	}

	var firstID, lastID int64
	for _, r := range batch {
		seq, ok := s.staged[r.session]
		if !ok {
			if seq, ok = s.lastSeq[r.session]; !ok {
				if err := s.maxSeq.QueryRowContext(ctx, r.session).Scan(&seq); err != nil {
					return fmt.Errorf("append to %s: read last seq of session %q: %w", s.path, r.session, err)
				}
			}
		}
		r.events = make([]eventlog.Event, len(r.drafts))
		for i, d := range r.drafts {
			seq++
			t := now
			if !d.Time.IsZero() {
				t = d.Time.UTC()
			}
			payload := d.Payload
			if len(payload) == 0 {
				payload = emptyObject
			}
			res, err := s.insert.ExecContext(ctx, r.session, seq, d.Turn, t.UnixNano(), string(d.Type),
				nullable(r.fields[i].Decision), nullable(r.fields[i].Tool), string(payload))
			if err != nil {
				return fmt.Errorf("append to %s: insert event %d of session %q: %w", s.path, seq, r.session, err)
			}
			if lastID, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("append to %s: %w", s.path, err)
			}
			if firstID == 0 {
				firstID = lastID
			}
			r.events[i] = eventlog.Event{Seq: seq, Session: r.session, Turn: d.Turn, Time: t, Type: d.Type, Payload: payload}
		}
		s.staged[r.session] = seq
	}
	if _, err := s.wconn.ExecContext(ctx, "COMMIT"); err != nil {
		// A failed COMMIT leaves the transaction open; the deferred
		// ROLLBACK ends it and the cache is rebuilt from the file.
		clear(s.lastSeq)
		return fmt.Errorf("append to %s: commit: %w", s.path, err)
	}
	for session, seq := range s.staged {
		s.lastSeq[session] = seq
	}
	s.lastID.Store(lastID)
	s.commits.Add(1)
	s.committed.Add(int64(lastID - firstID + 1))
	s.broadcast()
	return nil
}

// maxCachedSessions bounds the cache of last sequence numbers; past it the
// cache starts over, and a session's number is read again from its index.
const maxCachedSessions = 1 << 16

var emptyObject = []byte("{}")

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
