package postgres

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
)

// Query implements [eventlog.Store.Query]. It is one SELECT, so the
// sequence is a consistent snapshot of the log; rows are read from the
// server as the iteration asks for them, and the connection goes back to
// the pool when the iteration ends.
func (s *Store) Query(ctx context.Context, f eventlog.Filter) iter.Seq2[eventlog.Event, error] {
	return storekit.Query(ctx, f, func() error {
		if s.isClosed() {
			return fmt.Errorf("query %s: %w", s.where, eventlog.ErrClosed)
		}
		return nil
	}, s.scan)
}

// Subscribe implements [eventlog.Store.Subscribe]. A subscription is a
// cursor over IDs, which are in commit order (see the package
// documentation): it reads the events past its cursor a page at a time
// and, when it has seen all of them, waits for a notification. Where it
// starts is read from the database when Subscribe is called.
func (s *Store) Subscribe(ctx context.Context, f eventlog.Filter) iter.Seq2[eventlog.Event, error] {
	var start int64
	var startErr error
	if f.AfterID == 0 && (f.Session == "" || f.AfterSeq <= 0) && !s.isClosed() {
		start, startErr = s.highestID(ctx)
	}
	follow := storekit.Follow(ctx, f, storekit.StartID(f, start), storekit.Source{
		Where: s.where,
		High:  s.highestID,
		Scan: func(ctx context.Context, f eventlog.Filter, afterID, upToID int64, limit int) ([]eventlog.Event, error) {
			page := make([]eventlog.Event, 0, limit)
			err := s.scan(ctx, f, afterID, upToID, limit, "id", func(e eventlog.Event) bool {
				page = append(page, e)
				return true
			})
			return page, err
		},
		Notifier: &s.notify,
		Closed:   s.done,
		Poll:     s.opts.PollInterval,
	})
	return func(yield func(eventlog.Event, error) bool) {
		if startErr != nil {
			if ctx.Err() == nil {
				yield(eventlog.Event{}, fmt.Errorf("subscribe to %s: %w", s.where, startErr))
			}
			return
		}
		follow(yield)
	}
}

// scan runs the query for f over events with afterID < id <= upToID (a
// bound of 0 is no bound), ordered by order ("id" or "seq"), at most limit
// rows when limit > 0, and calls fn for each row until it returns false.
//
// When the pooled connection it ran on turns out broken before any row was
// read — the server restarted while the pool was idle — the pool drops
// all its connections, which are as stale, and the query runs once more.
func (s *Store) scan(ctx context.Context, f eventlog.Filter, afterID, upToID int64, limit int, order string, fn func(e eventlog.Event) bool) error {
	read := false
	err := s.scanOnce(ctx, f, afterID, upToID, limit, order, func(e eventlog.Event) bool {
		read = true
		return fn(e)
	})
	if err != nil && !read && ctx.Err() == nil && !s.isClosed() && brokenConn(err) {
		s.pool.Reset()
		err = s.scanOnce(ctx, f, afterID, upToID, limit, order, fn)
	}
	return err
}

// scanOnce is one attempt of scan.
func (s *Store) scanOnce(ctx context.Context, f eventlog.Filter, afterID, upToID int64, limit int, order string, fn func(e eventlog.Event) bool) error {
	q, args := buildQuery(f, afterID, upToID, limit, order)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return s.queryErr(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			e       eventlog.Event
			nanos   int64
			typ     string
			payload string
		)
		if err := rows.Scan(&e.ID, &e.Session, &e.Seq, &e.Turn, &nanos, &typ, &payload); err != nil {
			return s.queryErr(ctx, err)
		}
		e.Time = time.Unix(0, nanos).UTC()
		e.Type = eventlog.Type(typ)
		e.Payload = []byte(payload)
		if !fn(e) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return s.queryErr(ctx, err)
	}
	return nil
}

// queryErr reports a cancelled query as the context's error, which is the
// cause, a query on a closed store as [eventlog.ErrClosed], and any other
// failure with the store it happened in.
func (s *Store) queryErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if s.isClosed() {
		return fmt.Errorf("query %s: %w", s.where, eventlog.ErrClosed)
	}
	return fmt.Errorf("query %s: %w", s.where, err)
}

// buildQuery turns a filter into SQL. Every value is a bound parameter.
func buildQuery(f eventlog.Filter, afterID, upToID int64, limit int, order string) (string, []any) {
	var b strings.Builder
	var args []any
	b.WriteString("SELECT id, session, seq, turn, time, type, payload FROM eventlog_events WHERE true")
	cond := func(sql string, val any) {
		args = append(args, val)
		b.WriteString(" AND ")
		b.WriteString(strings.Replace(sql, "?", "$"+strconv.Itoa(len(args)), 1))
	}
	in := func(col string, vals []string) { cond(col+" = ANY(?)", vals) }
	storekit.Where(f, afterID, upToID, cond, in)
	b.WriteString(" ORDER BY ")
	b.WriteString(order)
	if limit > 0 {
		args = append(args, limit)
		b.WriteString(" LIMIT $" + strconv.Itoa(len(args)))
	}
	return b.String(), args
}
