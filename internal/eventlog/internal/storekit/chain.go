package storekit

import (
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Rows is what [ChainRows] and [ChainHeads] need of a driver's result
// rows; database/sql's and pgx's rows both have it. The caller closes
// them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ChainRows yields each row of rows, the result of a query that selects
// id, session, seq, turn, time (nanoseconds), type, payload, decision,
// tool, prev_hash and hash, and then stops; wrap turns a driver's error
// into the store's, which is yielded last.
func ChainRows(rows Rows, wrap func(error) error, yield func(eventlog.ChainRow, error) bool) {
	for rows.Next() {
		var (
			r              eventlog.ChainRow
			nanos          int64
			typ, payload   string
			decision, tool *string
		)
		if err := rows.Scan(&r.ID, &r.Session, &r.Seq, &r.Turn, &nanos, &typ, &payload, &decision, &tool, &r.Prev, &r.Hash); err != nil {
			yield(eventlog.ChainRow{}, wrap(err))
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
		yield(eventlog.ChainRow{}, wrap(err))
	}
}

// ChainHeads returns the heads in rows, the result of a query that
// selects session, seq and hash, by session; wrap turns a driver's error
// into the store's.
func ChainHeads(rows Rows, wrap func(error) error) (map[string]eventlog.ChainHead, error) {
	heads := map[string]eventlog.ChainHead{}
	for rows.Next() {
		var (
			name string
			h    eventlog.ChainHead
		)
		if err := rows.Scan(&name, &h.Seq, &h.Hash); err != nil {
			return nil, wrap(err)
		}
		heads[name] = h
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err)
	}
	return heads, nil
}
