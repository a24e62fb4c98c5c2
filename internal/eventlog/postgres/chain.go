package postgres

import (
	"context"
	"iter"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

var _ eventlog.ChainReader = (*Store)(nil)

// ChainRows implements [eventlog.ChainReader.ChainRows].
func (s *Store) ChainRows(ctx context.Context, session string) iter.Seq2[eventlog.ChainRow, error] {
	return func(yield func(eventlog.ChainRow, error) bool) {
		q := "SELECT id, session, seq, turn, time, type, payload, decision, tool, prev_hash, hash FROM eventlog_events"
		var args []any
		if session != "" {
			q += " WHERE session = $1"
			args = append(args, session)
		}
		q += " ORDER BY session, seq"
		rows, err := s.pool.Query(ctx, q, args...)
		if err != nil {
			yield(eventlog.ChainRow{}, s.queryErr(ctx, err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var (
				r              eventlog.ChainRow
				nanos          int64
				typ, payload   string
				decision, tool *string
			)
			if err := rows.Scan(&r.ID, &r.Session, &r.Seq, &r.Turn, &nanos, &typ, &payload, &decision, &tool, &r.Prev, &r.Hash); err != nil {
				yield(eventlog.ChainRow{}, s.queryErr(ctx, err))
				return
			}
			r.Time = time.Unix(0, nanos).UTC()
			r.Type = eventlog.Type(typ)
			r.Payload = []byte(payload)
			if decision != nil {
				r.Decision = *decision
			}
			if tool != nil {
				r.Tool = *tool
			}
			if !yield(r, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(eventlog.ChainRow{}, s.queryErr(ctx, err))
		}
	}
}

// ChainHeads implements [eventlog.ChainReader.ChainHeads]: the last seq
// and hash of eventlog_sessions, which the writer takes and sets under
// the session row's lock.
func (s *Store) ChainHeads(ctx context.Context, session string) (map[string]eventlog.ChainHead, error) {
	q := "SELECT session, last_seq, last_hash FROM eventlog_sessions"
	var args []any
	if session != "" {
		q += " WHERE session = $1"
		args = append(args, session)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, s.queryErr(ctx, err)
	}
	defer rows.Close()
	heads := map[string]eventlog.ChainHead{}
	for rows.Next() {
		var (
			name string
			h    eventlog.ChainHead
		)
		if err := rows.Scan(&name, &h.Seq, &h.Hash); err != nil {
			return nil, s.queryErr(ctx, err)
		}
		heads[name] = h
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryErr(ctx, err)
	}
	return heads, nil
}

// ChainOrigin implements [eventlog.ChainReader.ChainOrigin].
func (s *Store) ChainOrigin(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, "SELECT last_unchained_id FROM eventlog_chain_origin").Scan(&id); err != nil {
		return 0, s.queryErr(ctx, err)
	}
	return id, nil
}
