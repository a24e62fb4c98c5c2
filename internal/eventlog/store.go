package eventlog

import (
	"context"
	"errors"
	"iter"
	"slices"
	"time"
)

// CommitStats are counters of a store's writes since it was opened:
// Commits transactions holding Events events, so Events/Commits is the
// average group commit. Stores that batch appends report them with a
// Stats() CommitStats method.
type CommitStats struct {
	Commits int64
	Events  int64
}

// Store is an append-only, durable log of [Event]s.
//
// All methods are safe for use by multiple goroutines at once. Events of
// one session are totally ordered by Seq; all events, across sessions, are
// totally ordered by ID, which is commit order: an event with a smaller ID
// was committed no later than one with a larger ID, so once a reader has
// seen an ID, no event with a smaller ID can appear after it. Query yields
// events in ID order when the filter names no session.
type Store interface {
	// Append stores events for session, in the order given, and returns
	// them as stored, with ID and Seq assigned. The sequence numbers of a
	// session start at 1 and are strictly increasing and gapless, however
	// many goroutines (or processes sharing the store) append at once; the
	// events of one call get consecutive numbers. Their IDs increase in
	// the order given and are larger than the ID of every event whose
	// Append returned before this one was called.
	//
	// Append returns only after the events are durable: once it returns
	// without error they survive the process being killed (and, for the
	// SQLite store in its default mode, the machine losing power).
	//
	// Input that fails [Validate] is an error wrapping [ErrInvalid], and
	// then nothing is written. If ctx is done before the events were handed
	// to the storage, Append returns ctx.Err() and nothing is written; once
	// they were, it waits for the outcome and reports that, so an error
	// never hides a written event. Appending no events does nothing.
	Append(ctx context.Context, session string, events ...Draft) ([]Event, error)

	// Query yields the stored events that match f, oldest first (by Seq
	// when f names a session, by ID otherwise; within a session the two
	// orders agree). An error ends the sequence: it is yielded once, with a
	// zero Event. Stopping the iteration early releases everything Query
	// holds.
	Query(ctx context.Context, f Filter) iter.Seq2[Event, error]

	// Subscribe yields events matching f as they are appended, in ID
	// (commit) order, until ctx is done (the sequence then ends without an
	// error), f.Limit events were yielded, or the store is closed (it then
	// yields [ErrClosed]).
	//
	// The starting point is fixed when Subscribe is called, not when the
	// iteration starts: every matching event committed after the call is
	// yielded. Stored events come first when f asks for them:
	//
	//   - with AfterID > 0, every stored matching event with a larger ID,
	//     in any session: a reader that has seen everything up to an ID
	//     (an SSE client's Last-Event-ID) resumes from it;
	//   - with AfterID < 0 ([ReplayAll]), every stored matching event;
	//   - with a session and AfterSeq > 0, the session's stored events
	//     after AfterSeq, so a Query followed by a Subscribe from the last
	//     Seq seen misses nothing.
	//
	// Stored and live events form one sequence in ID order: none is
	// missed and none is yielded twice, however many appends run
	// meanwhile.
	//
	// A slow subscriber holds back no one: the store never blocks an
	// Append on a subscriber and keeps nothing in memory for it. A
	// subscriber that falls behind reads the events it has not seen yet
	// from the store itself when it next asks for one, so it loses nothing;
	// it only lags.
	Subscribe(ctx context.Context, f Filter) iter.Seq2[Event, error]

	// Close waits for the appends already accepted to be committed, ends
	// the subscriptions and releases the store. Later calls to Append
	// return [ErrClosed]. Close is idempotent.
	Close() error
}

// Filter selects events. The zero Filter matches every event; each set
// field narrows the selection, and a list matches when any element does.
type Filter struct {
	// Session keeps the events of one session.
	Session string
	// Types keeps events of these types.
	Types []Type
	// Decisions keeps events whose payload has a top-level string field
	// "decision" with one of these values ("allow", "ask", "deny"). Events
	// an agent posts ([PostedByAgent]) are never kept.
	Decisions []string
	// Tools keeps events whose payload has a top-level string field "tool"
	// with one of these values. Events an agent posts are never kept.
	Tools []string
	// Since keeps events at or after this time; zero means no bound.
	Since time.Time
	// Until keeps events before this time; zero means no bound.
	Until time.Time
	// AfterSeq keeps events with Seq > AfterSeq. It is meant for one
	// session (set Session too): sequence numbers of different sessions are
	// unrelated.
	AfterSeq int64
	// AfterID keeps events with ID > AfterID, across sessions. Zero and
	// negative values keep every event; for Subscribe, a positive value or
	// [ReplayAll] also means "yield the stored events first".
	AfterID int64
	// Limit stops after this many events; 0 means no limit.
	Limit int
}

// Match reports whether e is selected by f, ignoring Limit. It is the
// reference meaning of a Filter; stores may evaluate filters otherwise but
// must agree with it.
func (f Filter) Match(e Event) bool {
	if f.Session != "" && e.Session != f.Session {
		return false
	}
	if len(f.Types) > 0 && !slices.Contains(f.Types, e.Type) {
		return false
	}
	if e.Seq <= f.AfterSeq || e.ID <= f.AfterID {
		return false
	}
	if !f.Since.IsZero() && e.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !e.Time.Before(f.Until) {
		return false
	}
	if len(f.Decisions) > 0 || len(f.Tools) > 0 {
		fields, err := IndexedFieldsOf(e.Type, e.Payload)
		if err != nil {
			return false
		}
		if len(f.Decisions) > 0 && (fields.Decision == "" || !slices.Contains(f.Decisions, fields.Decision)) {
			return false
		}
		if len(f.Tools) > 0 && (fields.Tool == "" || !slices.Contains(f.Tools, fields.Tool)) {
			return false
		}
	}
	return true
}

// ReplayAll, as a [Filter]'s AfterID, makes [Store.Subscribe] yield every
// stored event that matches the filter before the live ones; to
// [Filter.Match] and [Store.Query] it is no bound, like 0. It is how a
// reader that has seen nothing yet follows the log from its start without
// a window between reading and subscribing.
const ReplayAll int64 = -1

// Errors a caller may branch on with [errors.Is].
var (
	// ErrInvalid marks input that can never be stored: an empty session or
	// type, a payload that is not a JSON object. See [Validate].
	ErrInvalid = errors.New("invalid event")
	// ErrClosed is returned by a [Store] after Close.
	ErrClosed = errors.New("event log closed")
)
