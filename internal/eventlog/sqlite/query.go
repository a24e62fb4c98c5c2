package sqlite

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
)

// Query implements [eventlog.Store.Query]. Rows are read as the iteration
// asks for them, inside one read transaction, so the sequence is a
// consistent snapshot of the log; appends go on meanwhile (WAL readers do
// not block the writer), and the snapshot ends when the iteration does.
func (s *Store) Query(ctx context.Context, f eventlog.Filter) iter.Seq2[eventlog.Event, error] {
	return storekit.Query(ctx, f, func() error {
		if s.isClosed() {
			return fmt.Errorf("query %s: %w", s.path, eventlog.ErrClosed)
		}
		return nil
	}, s.scan)
}

// Subscribe implements [eventlog.Store.Subscribe]. A subscription is a
// cursor over events.id, the commit order: it reads the events past its
// cursor a page at a time and, when it has seen all of them, waits for the
// next commit. The writer only closes a channel to wake subscribers, so a
// slow one never delays an append and costs no memory while it lags; it
// reads what it missed from the file. Appends by other processes sharing
// the file are seen at the next poll (Options.PollInterval).
func (s *Store) Subscribe(ctx context.Context, f eventlog.Filter) iter.Seq2[eventlog.Event, error] {
	return storekit.Follow(ctx, f, storekit.StartID(f, s.lastID.Load()), storekit.Source{
		Where: s.path,
		High: func(ctx context.Context) (int64, error) {
			var high int64
			if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM events").Scan(&high); err != nil {
				return 0, queryErr(ctx, s.path, err)
			}
			return high, nil
		},
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
}

func (s *Store) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// scan runs the query for f over events with afterID < id <= upToID (a
// bound of 0 is no bound), ordered by order ("id" or "seq"), at most limit
// rows when limit > 0, and calls fn for each row until it returns false.
func (s *Store) scan(ctx context.Context, f eventlog.Filter, afterID, upToID int64, limit int, order string, fn func(e eventlog.Event) bool) error {
	q, args := buildQuery(f, afterID, upToID, limit, order)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return queryErr(ctx, s.path, err)
	}
	defer rows.Close()
	// Scan's destinations live across the rows, so that taking their
	// addresses costs one allocation a query rather than four a row; every
	// field of r is set again by each row.
	var (
		nanos   int64
		r       eventlog.Event
		typ     string
		payload []byte
	)
	dest := []any{&r.ID, &r.Session, &r.Seq, &r.Turn, &nanos, &typ, &payload}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return queryErr(ctx, s.path, err)
		}
		// Scan gives payload a new slice for each row and the strings
		// are new values, so e shares nothing with the next row.
		e := r
		e.Time = time.Unix(0, nanos).UTC()
		e.Type = eventlog.Type(typ)
		e.Payload = payload
		if !fn(e) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return queryErr(ctx, s.path, err)
	}
	return nil
}

// queryErr reports a cancelled query as the context's error, which is the
// cause, and any other failure with the file it happened in.
func queryErr(ctx context.Context, path string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("query %s: %w", path, err)
}

// buildQuery turns a filter into SQL. Every value is a bound parameter.
func buildQuery(f eventlog.Filter, afterID, upToID int64, limit int, order string) (string, []any) {
	var b strings.Builder
	var args []any
	b.WriteString("SELECT id, session, seq, turn, time, type, payload FROM events WHERE 1")
	cond := func(sql string, val any) {
		b.WriteString(" AND ")
		b.WriteString(sql)
		args = append(args, val)
	}
	in := func(col string, vals []string) {
		b.WriteString(" AND ")
		b.WriteString(col)
		b.WriteString(" IN (")
		for i, v := range vals {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("?")
			args = append(args, v)
		}
		b.WriteString(")")
	}
	storekit.Where(f, afterID, upToID, cond, in)
	b.WriteString(" ORDER BY ")
	b.WriteString(order)
	if limit > 0 {
		b.WriteString(" LIMIT ?")
		args = append(args, limit)
	}
	return b.String(), args
}
