package storekit

import (
	"context"
	"iter"

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
