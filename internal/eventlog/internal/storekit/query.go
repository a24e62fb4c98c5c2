package storekit

import (
	"context"
	"iter"
	"math"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Scan reads the stored events matching f with an id above afterID and,
// when upToID is positive, at most upToID, at most limit of them (0: no
// limit), ordered by order ("id" or "seq"), calling fn for each until it
// returns false.
type Scan func(ctx context.Context, f eventlog.Filter, afterID, upToID int64, limit int, order string, fn func(eventlog.Event) bool) error

// Query is the [eventlog.Store.Query] of a store that reads with scan:
// ordered by seq when f names a session, by id otherwise. closed reports
// the error to give when the store is closed, or nil.
func Query(ctx context.Context, f eventlog.Filter, closed func() error, scan Scan) iter.Seq2[eventlog.Event, error] {
	return func(yield func(eventlog.Event, error) bool) {
		if err := closed(); err != nil {
			yield(eventlog.Event{}, err)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(eventlog.Event{}, err)
			return
		}
		order := "id"
		if f.Session != "" {
			order = "seq"
		}
		err := scan(ctx, f, 0, 0, f.Limit, order, func(e eventlog.Event) bool {
			return yield(e, nil)
		})
		if err != nil {
			yield(eventlog.Event{}, err)
		}
	}
}

// Where adds the conditions that select f's events, with an id above
// afterID (or f.AfterID, whichever is higher) and, when upToID is
// positive, at most upToID. cond adds "AND sql", where sql holds one "?"
// for val; in adds "AND col is one of vals". The columns are those of both
// stores' events tables; times are compared in Unix nanoseconds.
func Where(f eventlog.Filter, afterID, upToID int64, cond func(sql string, val any), in func(col string, vals []string)) {
	if afterID = max(afterID, f.AfterID); afterID > 0 {
		cond("id > ?", afterID)
	}
	if upToID > 0 {
		cond("id <= ?", upToID)
	}
	if f.Session != "" {
		cond("session = ?", f.Session)
	}
	if f.AfterSeq > 0 {
		cond("seq > ?", f.AfterSeq)
	}
	if len(f.Types) > 0 {
		types := make([]string, len(f.Types))
		for i, t := range f.Types {
			types[i] = string(t)
		}
		in("type", types)
	}
	if len(f.Decisions) > 0 {
		in("decision", f.Decisions)
	}
	if len(f.Tools) > 0 {
		in("tool", f.Tools)
	}
	if !f.Since.IsZero() {
		cond("time >= ?", Nanos(f.Since))
	}
	if !f.Until.IsZero() {
		cond("time < ?", Nanos(f.Until))
	}
}

// Nanos is t in Unix nanoseconds, clamped to what an int64 holds: the
// form both stores keep times in.
func Nanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}
