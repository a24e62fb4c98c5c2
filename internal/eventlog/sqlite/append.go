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
	begin, commit, rollback, dataVersion, insert, maxSeq *sql.Stmt
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
		{&w.insert, "INSERT INTO events (session, seq, turn, time, type, decision, tool, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"},
		{&w.maxSeq, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session = ?"},
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
	for _, stmt := range []*sql.Stmt{w.begin, w.commit, w.rollback, w.dataVersion, w.insert, w.maxSeq} {
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
		seq, ok := s.staged[r.Session]
		if !ok {
			if seq, ok = s.lastSeq[r.Session]; !ok {
				if err := s.stmts.maxSeq.QueryRowContext(ctx, r.Session).Scan(&seq); err != nil {
					return fmt.Errorf("append to %s: read last seq of session %q: %w", s.path, r.Session, err)
				}
			}
		}
		r.Events = make([]eventlog.Event, len(r.Drafts))
		for i, d := range r.Drafts {
			seq++
			t := now
			if !d.Time.IsZero() {
				t = d.Time.UTC()
			}
			payload := d.Payload
			if len(payload) == 0 {
				payload = emptyObject
			}
			res, err := s.stmts.insert.ExecContext(ctx, r.Session, seq, d.Turn, t.UnixNano(), string(d.Type),
				nullable(r.Fields[i].Decision), nullable(r.Fields[i].Tool), string(payload))
			if err != nil {
				return fmt.Errorf("append to %s: insert event %d of session %q: %w", s.path, seq, r.Session, err)
			}
			if lastID, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("append to %s: %w", s.path, err)
			}
			r.Events[i] = eventlog.Event{ID: lastID, Seq: seq, Session: r.Session, Turn: d.Turn, Time: t, Type: d.Type, Payload: payload}
		}
		s.staged[r.Session] = seq
	}
	if _, err := s.stmts.commit.ExecContext(ctx); err != nil {
		// A failed COMMIT leaves the transaction open; the deferred
		// ROLLBACK ends it and the cache is rebuilt from the file.
		clear(s.lastSeq)
		return fmt.Errorf("append to %s: commit: %w", s.path, err)
	}
	for session, seq := range s.staged {
		s.lastSeq[session] = seq
	}
	s.lastID.Store(lastID)
	s.notify.Broadcast()
	return nil
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
