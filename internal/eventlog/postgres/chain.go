package postgres

import (
	"context"
	"iter"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
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
		storekit.ChainRows(rows, func(err error) error { return s.queryErr(ctx, err) }, yield)
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
	return storekit.ChainHeads(rows, func(err error) error { return s.queryErr(ctx, err) })
}

// ChainOrigin implements [eventlog.ChainReader.ChainOrigin].
func (s *Store) ChainOrigin(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, "SELECT last_unchained_id FROM eventlog_chain_origin").Scan(&id); err != nil {
		return 0, s.queryErr(ctx, err)
	}
	return id, nil
}
