// Package storekit holds what the stores of package eventlog share: the
// group commit of concurrent appends ([Committer]) and the loop that
// follows the log for a subscriber ([Follow]).
package storekit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// A Request is one Append call waiting to be committed.
type Request struct {
	Session string
	Drafts  []eventlog.Draft
	// Fields are the indexed fields of each draft, from [eventlog.Prepare].
	Fields []eventlog.Fields
	// Events is set by the [CommitFunc]: the events as stored, in the order
	// of Drafts. The Committer clears it if the commit fails.
	Events []eventlog.Event

	err error
	// state moves from pending to taken (by the committer) or to abandoned
	// (by a caller whose context ended first), exactly once.
	state atomic.Int32
	done  chan struct{} // closed once Events or err is final
}

const (
	pending int32 = iota
	taken
	abandoned
)

// A CommitFunc stores a batch of requests in one transaction and sets the
// Events of each. It returns only once the transaction is durable or has
// failed; a failed transaction must have written nothing, unless its error
// is marked with [NoRetry].
type CommitFunc func(batch []*Request) error

// NoRetry marks an error after which a batch must not be written again:
// the transaction's outcome is unknown, so a retry could store its events
// twice. The error is reported to every request of the batch as it is.
func NoRetry(err error) error { return noRetry{err} }

type noRetry struct{ error }

func (e noRetry) Unwrap() error { return e.error }

// IsNoRetry reports whether err was marked with [NoRetry].
func IsNoRetry(err error) bool { return errors.As(err, new(noRetry)) }

// Committer runs one goroutine that commits concurrent appends together.
// It takes the first waiting request, adds every other request already
// queued or arriving within maxGather (up to a maximum number of events),
// commits them with one call to its CommitFunc and acknowledges each. The
// batch is whatever queued up while the previous commit was being made
// durable, so batches grow with the load and a lone writer waits for no
// timer. If a batch fails, each request in it is retried alone, so one
// request's failure is not another's.
type Committer struct {
	where    string // names the store in errors: "append to WHERE: …"
	maxBatch int
	commit   CommitFunc

	mu     sync.RWMutex // guards closed and sending on queue
	closed bool
	queue  chan *Request

	stopped chan struct{} // closed when the goroutine has returned

	commits, events atomic.Int64 // for Stats
}

// Stats returns the transactions committed and the events they held.
func (c *Committer) Stats() eventlog.CommitStats {
	return eventlog.CommitStats{Commits: c.commits.Load(), Events: c.events.Load()}
}

// maxGather bounds how long the committer waits for the callers of the
// previous batch to append again before it commits without them.
const maxGather = 50 * time.Microsecond

// NewCommitter starts a committer that calls commit with batches of at
// most maxBatch events (a single larger request is still one batch).
// where names the store in errors.
func NewCommitter(where string, maxBatch int, commit CommitFunc) *Committer {
	c := &Committer{
		where:    where,
		maxBatch: max(maxBatch, 1),
		commit:   commit,
		queue:    make(chan *Request, 1024),
		stopped:  make(chan struct{}),
	}
	go c.run()
	return c
}

// Append validates drafts, queues them and waits for their commit, with
// the semantics of [eventlog.Store.Append]: input that fails
// [eventlog.Validate] is an error wrapping [eventlog.ErrInvalid]; if ctx
// ends before the committer took the request, Append returns ctx.Err()
// and nothing is written, and once it was taken, Append waits for the
// outcome. After Close it returns an error wrapping [eventlog.ErrClosed].
func (c *Committer) Append(ctx context.Context, session string, drafts []eventlog.Draft) ([]eventlog.Event, error) {
	if len(drafts) == 0 {
		return nil, eventlog.Validate(session, nil)
	}
	r, err := c.enqueue(ctx, session, drafts)
	if err != nil {
		return nil, err
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(pending, abandoned) {
			return nil, ctx.Err()
		}
		// The committer has the events: report what became of them.
		<-r.done
	}
	return r.Events, r.err
}

func (c *Committer) enqueue(ctx context.Context, session string, drafts []eventlog.Draft) (*Request, error) {
	fields, err := eventlog.Prepare(session, drafts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &Request{Session: session, Drafts: drafts, Fields: fields, done: make(chan struct{})}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, fmt.Errorf("append to %s: %w", c.where, eventlog.ErrClosed)
	}
	select {
	case c.queue <- r:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops accepting appends, commits those already queued and waits
// until they are acknowledged. It must be called once.
func (c *Committer) Close() {
	c.mu.Lock()
	c.closed = true
	close(c.queue)
	c.mu.Unlock()
	<-c.stopped
}

func (c *Committer) run() {
	defer close(c.stopped)
	batch := make([]*Request, 0, 64)
	expect := 0 // how many requests a batch is expected to gather
	for {
		r, ok := <-c.queue
		if !ok {
			return
		}
		batch = batch[:0]
		n := 0
		if r.state.CompareAndSwap(pending, taken) {
			batch = append(batch, r)
			n += len(r.Drafts)
		}
		// Callers that wait for each append before making the next come
		// back within microseconds of their acknowledgement, but not all
		// at once: without waiting for them, the batch would leave with
		// the first few and the others would wait a whole commit for the
		// next one. So the committer lets runnable goroutines go first and
		// gathers until as many requests are in as recent batches had,
		// for at most maxGather, which is short next to a commit's sync.
		// The expectation follows the largest recent batch and, when
		// callers stop coming back, shrinks by one a batch.
		open := true
		deadline := time.Now().Add(maxGather)
		for {
			runtime.Gosched()
			open = c.fill(&batch, &n)
			if !open || n >= c.maxBatch || len(batch) >= expect || time.Now().After(deadline) {
				break
			}
		}
		expect = max(len(batch), expect-1)
		if len(batch) > 0 {
			c.commitBatch(batch)
		}
		if !open {
			return
		}
	}
}

// fill adds the requests waiting in the queue to batch, up to maxBatch
// events, without blocking. It reports false if the queue is closed.
func (c *Committer) fill(batch *[]*Request, n *int) bool {
	for *n < c.maxBatch {
		select {
		case r, ok := <-c.queue:
			if !ok {
				return false
			}
			if r.state.CompareAndSwap(pending, taken) {
				*batch = append(*batch, r)
				*n += len(r.Drafts)
			}
		default:
			return true
		}
	}
	return true
}

func (c *Committer) commitBatch(batch []*Request) {
	err := c.try(batch)
	if err != nil && len(batch) > 1 && !IsNoRetry(err) {
		for _, r := range batch {
			r.err = c.try([]*Request{r})
			close(r.done)
		}
		return
	}
	for _, r := range batch {
		r.err = err
		close(r.done)
	}
}

func (c *Committer) try(batch []*Request) error {
	err := c.commit(batch)
	if err != nil {
		for _, r := range batch {
			r.Events = nil
		}
		return err
	}
	n := 0
	for _, r := range batch {
		n += len(r.Events)
	}
	c.commits.Add(1)
	c.events.Add(int64(n))
	return nil
}
