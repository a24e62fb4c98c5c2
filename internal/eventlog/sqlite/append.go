package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
)

// checkpointPages is the size of the WAL, in pages, past which a commit
// is followed by a checkpoint (SQLite's wal_autocheckpoint; its default is
// 1000). A checkpoint writes the pages back into the database file and
// syncs it, and the next commit then starts the WAL over, which costs one
// more sync. A larger WAL makes both rarer, and since the same pages are
// rewritten commit after commit, a checkpoint's work grows less than the
// WAL does.
const checkpointPages = 8192

// writerStmts are the writer's prepared statements, reused for every batch.
type writerStmts struct {
	begin, commit, rollback, dataVersion, insert, maxSeq, head, hashAt, setHead *sql.Stmt
}

func (w *writerStmts) prepare(ctx context.Context, conn *sql.Conn) error {
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&w.begin, "BEGIN IMMEDIATE"},
		{&w.commit, "COMMIT"},
		{&w.rollback, "ROLLBACK"},
		{&w.dataVersion, "PRAGMA data_version"},
		{&w.insert, "INSERT INTO events (session, seq, turn, time, type, decision, tool, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		{&w.maxSeq, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session = ?"},
		{&w.head, "SELECT seq, hash FROM chain_heads WHERE session = ?"},
		{&w.hashAt, "SELECT hash FROM events WHERE session = ? AND seq = ?"},
		{&w.setHead, "INSERT INTO chain_heads (session, seq, hash) VALUES (?, ?, ?) ON CONFLICT (session) DO UPDATE SET seq = excluded.seq, hash = excluded.hash"},
	} {
		stmt, err := conn.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.stmt = stmt
	}
	return nil
}

func (w *writerStmts) close() error {
	var errs []error
	for _, stmt := range []*sql.Stmt{w.begin, w.commit, w.rollback, w.dataVersion, w.insert, w.maxSeq, w.head, w.hashAt, w.setHead} {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	return errors.Join(errs...)
}

// Append implements [eventlog.Store.Append]. The events go to the writer
// goroutine, which commits them with whatever other appends are waiting in
// one transaction and one fsync; Append returns once that transaction has
// committed.
func (s *Store) Append(ctx context.Context, session string, drafts ...eventlog.Draft) ([]eventlog.Event, error) {
	return s.writer.Append(ctx, session, drafts)
}

// writeBatch is the writer's [storekit.CommitFunc]: it assigns sequence
// numbers, inserts the batch in one IMMEDIATE transaction and commits.
func (s *Store) writeBatch(batch []*storekit.Request) (err error) {
	ctx := context.Background()
	now := time.Now().UTC()
	if _, err := s.stmts.begin.ExecContext(ctx); err != nil {
		return fmt.Errorf("append to %s: begin: %w", s.path, err)
	}
	clear(s.staged)
	defer func() {
		if err != nil {
			_, _ = s.stmts.rollback.ExecContext(ctx)
		}
	}()

	// Another process may have appended since our last transaction; then
	// the cached last sequence numbers are stale.
	var dv int64
	if err := s.stmts.dataVersion.QueryRowContext(ctx).Scan(&dv); err != nil {
		return fmt.Errorf("append to %s: %w", s.path, err)
	}
	if dv != s.dataVersion || len(s.lastSeq) > maxCachedSessions {
		clear(s.lastSeq)
		s.dataVersion = dv
	}

	var lastID int64
	for _, r := range batch {
		h, ok := s.staged[r.Session]
		if !ok {
			if h, ok = s.lastSeq[r.Session]; !ok {
				if h, err = s.readHead(ctx, r.Session); err != nil {
					return err
				}
			}
		}
		r.Events = make([]eventlog.Event, len(r.Drafts))
		for i, d := range r.Drafts {
			h.Seq++
			t := now
			if !d.Time.IsZero() {
				t = d.Time.UTC()
			}
			payload := d.Payload
			if len(payload) == 0 {
				payload = emptyObject
			}
			e := eventlog.Event{Seq: h.Seq, Session: r.Session, Turn: d.Turn, Time: t, Type: d.Type, Payload: payload}
			prev := h.Hash
			if prev == nil {
				prev = []byte{}
			}
			h.Hash = s.chain.Hash(prev, e)
			res, err := s.stmts.insert.ExecContext(ctx, r.Session, h.Seq, d.Turn, t.UnixNano(), string(d.Type),
				nullable(r.Fields[i].Decision), nullable(r.Fields[i].Tool), string(payload), prev, h.Hash)
			if err != nil {
				return fmt.Errorf("append to %s: insert event %d of session %q: %w", s.path, h.Seq, r.Session, err)
			}
			if lastID, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("append to %s: %w", s.path, err)
			}
			e.ID = lastID
			r.Events[i] = e
		}
		s.staged[r.Session] = h
	}
	for session, h := range s.staged {
		if _, err := s.stmts.setHead.ExecContext(ctx, session, h.Seq, h.Hash); err != nil {
			return fmt.Errorf("append to %s: record the last event of session %q: %w", s.path, session, err)
		}
	}
	if _, err := s.stmts.commit.ExecContext(ctx); err != nil {
		// A failed COMMIT leaves the transaction open; the deferred
		// ROLLBACK ends it and the cache is rebuilt from the file.
		clear(s.lastSeq)
		return fmt.Errorf("append to %s: commit: %w", s.path, err)
	}
	for session, h := range s.staged {
		s.lastSeq[session] = h
	}
	s.lastID.Store(lastID)
	s.notify.Broadcast()
	return nil
}

// readHead returns the last event of session that the next one chains
// from: the store's record of it (chain_heads), or, when the events table
// goes further (rows added by a toolgate without chains), its last row.
// A head ahead of the rows stays ahead: events cut off the end leave a gap
// that a verifier reports, rather than numbers reused.
func (s *Store) readHead(ctx context.Context, session string) (eventlog.ChainHead, error) {
	var h eventlog.ChainHead
	err := s.stmts.head.QueryRowContext(ctx, session).Scan(&h.Seq, &h.Hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("append to %s: read the last event of session %q: %w", s.path, session, err)
	}
	var maxSeq int64
	if err := s.stmts.maxSeq.QueryRowContext(ctx, session).Scan(&maxSeq); err != nil {
		return h, fmt.Errorf("append to %s: read last seq of session %q: %w", s.path, session, err)
	}
	if maxSeq > h.Seq {
		h = eventlog.ChainHead{Seq: maxSeq}
		if err := s.stmts.hashAt.QueryRowContext(ctx, session, maxSeq).Scan(&h.Hash); err != nil {
			return h, fmt.Errorf("append to %s: read the last event of session %q: %w", s.path, session, err)
		}
	}
	return h, nil
}

// maxCachedSessions bounds the cache of last sequence numbers; past it the
// cache starts over, and a session's number is read again from its index.
const maxCachedSessions = 1 << 16

var emptyObject = []byte("{}")

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
