package sqlite

import (
	"context"
	"fmt"
	"iter"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
)

var _ eventlog.ChainReader = (*Store)(nil)

// ChainRows implements [eventlog.ChainReader.ChainRows].
func (s *Store) ChainRows(ctx context.Context, session string) iter.Seq2[eventlog.ChainRow, error] {
	return func(yield func(eventlog.ChainRow, error) bool) {
		q := "SELECT id, session, seq, turn, time, type, payload, decision, tool, prev_hash, hash FROM events"
		var args []any
		if session != "" {
			q += " WHERE session = ?"
			args = append(args, session)
		}
		q += " ORDER BY session, seq"
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			yield(eventlog.ChainRow{}, queryErr(ctx, s.path, err))
			return
		}
		defer rows.Close()
		storekit.ChainRows(rows, func(err error) error { return queryErr(ctx, s.path, err) }, yield)
	}
}

// ChainHeads implements [eventlog.ChainReader.ChainHeads].
func (s *Store) ChainHeads(ctx context.Context, session string) (map[string]eventlog.ChainHead, error) {
	q := "SELECT session, seq, hash FROM chain_heads"
	var args []any
	if session != "" {
		q += " WHERE session = ?"
		args = append(args, session)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, queryErr(ctx, s.path, err)
	}
	defer rows.Close()
	return storekit.ChainHeads(rows, func(err error) error { return queryErr(ctx, s.path, err) })
}

// ChainOrigin implements [eventlog.ChainReader.ChainOrigin].
func (s *Store) ChainOrigin(ctx context.Context) (int64, error) {
	var id int64
	if err := s.db.QueryRowContext(ctx, "SELECT last_unchained_id FROM chain_origin").Scan(&id); err != nil {
		return 0, fmt.Errorf("%s: the record of where the chains begin: %w", s.path, queryErr(ctx, s.path, err))
	}
	return id, nil
}
