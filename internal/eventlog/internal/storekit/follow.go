package storekit

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Notifier wakes subscribers: Changed returns a channel that Broadcast
// closes.
type Notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// Changed returns a channel that is closed at the next Broadcast.
func (n *Notifier) Changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// Broadcast closes the channel Changed returned, waking everyone waiting
// on it.
func (n *Notifier) Broadcast() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// StartID is where a subscription with filter f starts, given the highest
// ID committed when Subscribe was called: it yields the events with an ID
// above the result. Stored events come first when f asks for them, per
// [eventlog.Store.Subscribe].
func StartID(f eventlog.Filter, committed int64) int64 {
	switch {
	case f.AfterID != 0:
		return max(f.AfterID, 0)
	case f.Session != "" && f.AfterSeq > 0:
		return 0
	}
	return committed
}

// A Source is what [Follow] reads a store through.
type Source struct {
	// Where names the store in errors: "subscribe to WHERE: …".
	Where string
	// High returns the highest ID committed. Every event with a lower ID
	// that will ever be committed already is.
	High func(ctx context.Context) (int64, error)
	// Scan returns, in ID order, at most limit events that match f with
	// afterID < ID <= upToID.
	Scan func(ctx context.Context, f eventlog.Filter, afterID, upToID int64, limit int) ([]eventlog.Event, error)
	// Notifier is broadcast after commits (at least those of this store).
	Notifier *Notifier
	// Closed is closed when the store is.
	Closed <-chan struct{}
	// Poll is how often to look for commits that were not broadcast.
	Poll time.Duration
}

// Page is how many events Follow reads per query.
const Page = 256

// Follow yields the events matching f with an ID above start, in ID order,
// as [eventlog.Store.Subscribe] describes. It is a cursor over IDs: it
// reads the events past its cursor a page at a time and, when it has seen
// all of them, waits for the next broadcast or poll. A slow subscriber
// costs no memory while it lags; it reads what it missed from the store.
func Follow(ctx context.Context, f eventlog.Filter, start int64, src Source) iter.Seq2[eventlog.Event, error] {
	return func(yield func(eventlog.Event, error) bool) {
		cursor := start
		sent := 0
		var poll *time.Ticker
		defer func() {
			if poll != nil {
				poll.Stop()
			}
		}()
		closedErr := func() bool {
			select {
			case <-src.Closed:
				yield(eventlog.Event{}, fmt.Errorf("subscribe to %s: %w", src.Where, eventlog.ErrClosed))
				return true
			default:
				return false
			}
		}
		for {
			if ctx.Err() != nil || closedErr() {
				return
			}
			wake := src.Notifier.Changed()
			limit := Page
			if f.Limit > 0 && f.Limit-sent < limit {
				limit = f.Limit - sent
			}
			high, err := src.High(ctx)
			var page []eventlog.Event
			if err == nil && high > cursor {
				page, err = src.Scan(ctx, f, cursor, high, limit)
			}
			if err != nil {
				if ctx.Err() == nil && !closedErr() {
					yield(eventlog.Event{}, err)
				}
				return
			}
			full := len(page) == limit
			if full {
				cursor = page[len(page)-1].ID
			} else if high > cursor {
				cursor = high // every event up to high has been looked at
			}
			for _, e := range page {
				if !yield(e, nil) {
					return
				}
				sent++
				if f.Limit > 0 && sent >= f.Limit {
					return
				}
			}
			if full {
				continue
			}
			if poll == nil {
				poll = time.NewTicker(src.Poll)
			}
			select {
			case <-wake:
			case <-poll.C:
			case <-ctx.Done():
				return
			case <-src.Closed:
			}
		}
	}
}
