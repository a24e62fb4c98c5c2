package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// insertRows is the most rows one INSERT statement adds; a batch is
// inserted in statements of this many rows and one for the rest.
const insertRows = 64

// insertColumns are the columns of events an append writes, in the order
// of an INSERT's values.
const insertColumns = "session, seq, turn, time, type, decision, tool, payload, prev_hash, hash"

// insertArgs is the number of values of one row in an INSERT.
const insertArgs = 10

// writerStmts are the writer's prepared statements, reused for every batch.
type writerStmts struct {
	begin, commit, rollback, dataVersion, maxSeq, head, hashAt, idAt *sql.Stmt
	// insert[n] adds n events and setHeads[n] records the heads of n
	// sessions, each in one statement, prepared when first needed: one
	// statement of many rows costs far less than as many of one row.
	insert, setHeads [insertRows + 1]*sql.Stmt
}

// insertStmt returns the statement that inserts n events, 1 <= n <= insertRows.
func (w *writerStmts) insertStmt(ctx context.Context, conn *sql.Conn, n int) (*sql.Stmt, error) {
	// OR ROLLBACK: a row that breaks a constraint ends the transaction,
	// which the writer would roll back anyway. With the default (ABORT)
	// SQLite keeps a statement journal of every page a statement of many
	// rows changes, to undo that statement alone.
	return multiRow(ctx, conn, &w.insert, n, "INSERT OR ROLLBACK INTO events ("+insertColumns+") VALUES ",
		"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "")
}

// setHeadsStmt returns the statement that records the last event of n
// sessions in chain_heads, 1 <= n <= insertRows.
func (w *writerStmts) setHeadsStmt(ctx context.Context, conn *sql.Conn, n int) (*sql.Stmt, error) {
	return multiRow(ctx, conn, &w.setHeads, n, "INSERT OR ROLLBACK INTO chain_heads (session, seq, hash) VALUES ",
		"(?, ?, ?)", " ON CONFLICT (session) DO UPDATE SET seq = excluded.seq, hash = excluded.hash")
}

// multiRow returns the statement head + n times tuple + tail from cache,
// preparing it on conn the first time.
func multiRow(ctx context.Context, conn *sql.Conn, cache *[insertRows + 1]*sql.Stmt, n int, head, tuple, tail string) (*sql.Stmt, error) {
	if cache[n] != nil {
		return cache[n], nil
	}
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	b.WriteString(tail)
	stmt, err := conn.PrepareContext(ctx, b.String())
	if err != nil {
		return nil, fmt.Errorf("prepare %q with %d rows: %w", head, n, err)
	}
	cache[n] = stmt
	return stmt, nil
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
		{&w.maxSeq, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session = ?"},
		{&w.head, "SELECT seq, hash FROM chain_heads WHERE session = ?"},
		{&w.hashAt, "SELECT hash FROM events WHERE session = ? AND seq = ?"},
		{&w.idAt, "SELECT id FROM events WHERE session = ? AND seq = ?"},
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
	stmts := append([]*sql.Stmt{w.begin, w.commit, w.rollback, w.dataVersion, w.maxSeq, w.head, w.hashAt, w.idAt}, w.insert[:]...)
	stmts = append(stmts, w.setHeads[:]...)
	for _, stmt := range stmts {
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

	// The events get their sequence numbers and hashes first, then go in
	// with as few INSERT statements as the batch allows.
	args := s.args[:0]
	var events []*eventlog.Event
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
			args = append(args, r.Session, h.Seq, d.Turn, t.UnixNano(), string(d.Type),
				nullable(r.Fields[i].Decision), nullable(r.Fields[i].Tool), string(payload), prev, h.Hash)
			r.Events[i] = e
			events = append(events, &r.Events[i])
		}
		s.staged[r.Session] = h
	}
	var lastID int64
	for done := 0; done < len(events); {
		n := min(len(events)-done, insertRows)
		stmt, err := s.stmts.insertStmt(ctx, s.wconn, n)
		if err != nil {
			return fmt.Errorf("append to %s: %w", s.path, err)
		}
		res, err := stmt.ExecContext(ctx, args[done*insertArgs:(done+n)*insertArgs]...)
		if err != nil {
			first := events[done]
			return fmt.Errorf("append to %s: insert events from %d of session %q: %w", s.path, first.Seq, first.Session, err)
		}
		if lastID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("append to %s: %w", s.path, err)
		}
		// The rows of one statement get consecutive ids: the writer holds
		// the database's write lock, and AUTOINCREMENT hands out the next
		// id above every one used. SQLite documents only that each is
		// larger, so the first row's id is read back: ids that did not run
		// on end the batch (nothing is committed) rather than go out
		// wrong as the cursors of readers.
		if n > 1 {
			first := events[done]
			var id int64
			if err := s.stmts.idAt.QueryRowContext(ctx, first.Session, first.Seq).Scan(&id); err != nil {
				return fmt.Errorf("append to %s: read the id of event %d of session %q: %w", s.path, first.Seq, first.Session, err)
			}
			if id != lastID-int64(n-1) {
				return fmt.Errorf("append to %s: the %d events from id %d end at id %d: SQLite gave a statement's rows ids that are not consecutive", s.path, n, id, lastID)
			}
		}
		for i, e := range events[done : done+n] {
			e.ID = lastID - int64(n-1-i)
		}
		done += n
	}
	clear(args)
	args = args[:0]
	for session, h := range s.staged {
		args = append(args, session, h.Seq, h.Hash)
	}
	for done := 0; done < len(s.staged); {
		n := min(len(s.staged)-done, insertRows)
		stmt, err := s.stmts.setHeadsStmt(ctx, s.wconn, n)
		if err != nil {
			return fmt.Errorf("append to %s: %w", s.path, err)
		}
		if _, err := stmt.ExecContext(ctx, args[done*3:(done+n)*3]...); err != nil {
			return fmt.Errorf("append to %s: record the last event of %d sessions: %w", s.path, n, err)
		}
		done += n
	}
	clear(args)
	s.args = args[:0]
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
