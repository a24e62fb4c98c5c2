package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
)

// Append implements [eventlog.Store.Append]. The events go to the writer
// goroutine, which commits them with whatever other appends of this
// process are waiting, in one transaction; Append returns once that
// transaction has committed.
func (s *Store) Append(ctx context.Context, session string, drafts ...eventlog.Draft) ([]eventlog.Event, error) {
	return s.writer.Append(ctx, session, drafts)
}

const (
	takeIDs = `UPDATE eventlog_counter SET last_id = last_id + $1 RETURNING last_id, pg_current_xact_id()::text`

	takeSeqs = `INSERT INTO eventlog_sessions (session, last_seq) VALUES ($1, $2)
ON CONFLICT (session) DO UPDATE SET last_seq = eventlog_sessions.last_seq + excluded.last_seq
RETURNING last_seq, last_hash`

	insertEvents = `INSERT INTO eventlog_events (id, session, seq, turn, time, type, decision, tool, payload, prev_hash, hash)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bytea[], $11::bytea[])`

	setHeads = `UPDATE eventlog_sessions AS s SET last_hash = h.hash
FROM unnest($1::text[], $2::bytea[]) AS h(session, hash) WHERE s.session = h.session`
)

// writeBatch is the writer's [storekit.CommitFunc]. In one transaction it
// takes IDs from the counter (which locks it until the commit, see the
// package documentation), takes each session's sequence numbers, inserts
// the events and notifies the listeners.
//
// A connection found broken — the server restarted, or something between
// dropped an idle connection — is replaced and the batch tried once more:
// a failed attempt committed nothing (when the connection broke during
// COMMIT, commitOutcome asked the server, and an unknown outcome is never
// tried again), so the retry cannot store an event twice.
func (s *Store) writeBatch(batch []*storekit.Request) error {
	err := s.writeOnce(batch)
	if err != nil && brokenConn(err) && !storekit.IsNoRetry(err) && !s.isClosed() {
		err = s.writeOnce(batch)
	}
	return err
}

// brokenConn reports whether err says the connection is lost or closed
// by the server (not a statement the server refused, not a timeout).
func brokenConn(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Connection exceptions, and the server shutting down or
		// terminating the connection.
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Severity == "FATAL"
	}
	return true
}

// writeOnce is one attempt of writeBatch, on the writer's connection,
// which it opens if there is none and closes when it broke.
func (s *Store) writeOnce(batch []*storekit.Request) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CommitTimeout)
	defer cancel()
	if s.wconn == nil || s.wconn.IsClosed() {
		if s.wconn, err = pgx.ConnectConfig(ctx, s.cfg); err != nil {
			s.wconn = nil
			return fmt.Errorf("append to %s: connect: %w", s.where, err)
		}
	}
	conn := s.wconn
	defer func() {
		if err != nil && (brokenConn(err) || !errors.As(err, new(*pgconn.PgError))) {
			// The connection may be unusable; start over with a new one.
			conn.Close(context.Background())
			s.wconn = nil
		}
	}()

	now := time.Now().UTC()
	total := 0
	counts := map[string]int64{}
	for _, r := range batch {
		total += len(r.Drafts)
		counts[r.Session] += int64(len(r.Drafts))
	}
	sessions := make([]string, 0, len(counts))
	for session := range counts {
		sessions = append(sessions, session)
	}
	slices.Sort(sessions)

	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("append to %s: begin: %w", s.where, err)
	}
	committing := false
	defer func() {
		if !committing {
			_ = tx.Rollback(context.Background())
		}
	}()
	var lastID int64
	var xid string
	if err := tx.QueryRow(ctx, takeIDs, total).Scan(&lastID, &xid); err != nil {
		return fmt.Errorf("append to %s: take IDs: %w", s.where, err)
	}
	b := &pgx.Batch{}
	for _, session := range sessions {
		b.Queue(takeSeqs, session, counts[session])
	}
	results := tx.SendBatch(ctx, b)
	nextSeq := make(map[string]int64, len(sessions))
	lastHash := make(map[string][]byte, len(sessions))
	for _, session := range sessions {
		var last int64
		var hash []byte
		if err := results.QueryRow().Scan(&last, &hash); err != nil {
			results.Close()
			return fmt.Errorf("append to %s: take sequence numbers of session %q: %w", s.where, session, err)
		}
		nextSeq[session] = last - counts[session] + 1
		if hash == nil {
			hash = []byte{} // a new session, or one from before the chains
		}
		lastHash[session] = hash
	}
	if err := results.Close(); err != nil {
		return fmt.Errorf("append to %s: take sequence numbers: %w", s.where, err)
	}

	var (
		ids, seqs, times         = make([]int64, 0, total), make([]int64, 0, total), make([]int64, 0, total)
		sessionCol, turns, types = make([]string, 0, total), make([]string, 0, total), make([]string, 0, total)
		decisions, tools         = make([]*string, 0, total), make([]*string, 0, total)
		payloads                 = make([]string, 0, total)
		prevs, hashes            = make([][]byte, 0, total), make([][]byte, 0, total)
		id                       = lastID - int64(total)
	)
	for _, r := range batch {
		r.Events = make([]eventlog.Event, len(r.Drafts))
		for i, d := range r.Drafts {
			id++
			seq := nextSeq[r.Session]
			nextSeq[r.Session]++
			t := now
			if !d.Time.IsZero() {
				t = d.Time.UTC()
			}
			payload := d.Payload
			if len(payload) == 0 {
				payload = emptyObject
			}
			ids = append(ids, id)
			sessionCol = append(sessionCol, r.Session)
			seqs = append(seqs, seq)
			turns = append(turns, d.Turn)
			times = append(times, t.UnixNano())
			types = append(types, string(d.Type))
			decisions = append(decisions, nullable(r.Fields[i].Decision))
			tools = append(tools, nullable(r.Fields[i].Tool))
			payloads = append(payloads, string(payload))
			e := eventlog.Event{ID: id, Seq: seq, Session: r.Session, Turn: d.Turn, Time: t, Type: d.Type, Payload: payload}
			prev := lastHash[r.Session]
			hash := s.chain.Hash(prev, e)
			lastHash[r.Session] = hash
			prevs = append(prevs, prev)
			hashes = append(hashes, hash)
			r.Events[i] = e
		}
	}
	heads := make([][]byte, len(sessions))
	for i, session := range sessions {
		heads[i] = lastHash[session]
	}
	b = &pgx.Batch{}
	b.Queue(insertEvents, ids, sessionCol, seqs, turns, times, types, decisions, tools, payloads, prevs, hashes)
	b.Queue(setHeads, sessions, heads)
	b.Queue("SELECT pg_notify($1, $2)", channel, s.schema)
	results = tx.SendBatch(ctx, b)
	for _, step := range []string{"insert " + strconv.Itoa(total) + " events", "record the sessions' last events", "notify"} {
		if _, err := results.Exec(); err != nil {
			results.Close()
			return fmt.Errorf("append to %s: %s: %w", s.where, step, err)
		}
	}
	if err := results.Close(); err != nil {
		return fmt.Errorf("append to %s: %w", s.where, err)
	}
	committing = true
	if err := tx.Commit(ctx); err != nil {
		if err := s.commitOutcome(xid, err); err != nil {
			return err
		}
	}
	s.notify.Broadcast()
	return nil
}

// commitOutcome finds out whether the transaction xid committed after its
// COMMIT failed with commitErr: nil if it did, an error if it did not, and
// an error wrapping [ErrCommitUnknown] and marked [storekit.NoRetry] if
// that cannot be known.
func (s *Store) commitOutcome(xid string, commitErr error) error {
	failed := fmt.Errorf("append to %s: commit: %w", s.where, commitErr)
	if errors.As(commitErr, new(*pgconn.PgError)) {
		return failed // the server answered: the transaction was rolled back
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CommitTimeout)
	defer cancel()
	for {
		var status *string
		err := s.pool.QueryRow(ctx, "SELECT pg_xact_status($1::xid8)", xid).Scan(&status)
		switch {
		case err != nil:
			return storekit.NoRetry(fmt.Errorf("append to %s: %w: the connection failed during COMMIT (%v), and asking the server afterwards failed too: %w",
				s.where, ErrCommitUnknown, commitErr, err))
		case status != nil && *status == "committed":
			return nil
		case status != nil && *status == "in progress":
			// The server has not finished with the transaction yet.
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		return failed
	}
}

var emptyObject = []byte("{}")

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
