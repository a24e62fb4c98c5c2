package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Sync chooses when a commit reaches stable storage.
type Sync int

const (
	// SyncFull, the default, fsyncs the write-ahead log at every commit
	// (PRAGMA synchronous=FULL): an acknowledged append survives the
	// process being killed, the kernel crashing and the power failing.
	// Group commit makes the fsync one per batch, not one per event.
	SyncFull Sync = iota
	// SyncNormal leaves the fsync to checkpoints (PRAGMA
	// synchronous=NORMAL in WAL mode): an acknowledged append survives the
	// process being killed, since the commit is in the operating system's
	// page cache, but the last commits may be lost if the machine loses
	// power or the kernel crashes. The database is never corrupted.
	SyncNormal
)

func (s Sync) pragma() (string, error) {
	switch s {
	case SyncFull:
		return "FULL", nil
	case SyncNormal:
		return "NORMAL", nil
	}
	return "", fmt.Errorf("unknown Sync value %d", int(s))
}

// Options configures [Open]. The zero value, and nil, mean the defaults.
type Options struct {
	// Sync is the durability of a commit; the default is [SyncFull].
	Sync Sync
	// MaxBatch caps the events committed in one transaction; the default
	// is 4096. A single Append larger than that is still one transaction.
	MaxBatch int
	// PollInterval is how often a subscriber looks for events appended by
	// other processes sharing the file (appends through this Store wake
	// subscribers at once); the default is one second.
	PollInterval time.Duration
	// ChainKey is the key of the chain of hashes that makes the log
	// tamper-evident (see package eventlog); toolgate derives it from the
	// approver token. Every process appending to one file must use the
	// same key. Without one, chains reveal damage but not tampering, since
	// anyone can recompute them.
	ChainKey []byte
}

// Store is the SQLite [eventlog.Store]: one database file in WAL mode,
// written by one goroutine that commits concurrent appends together.
// All methods are safe for use by multiple goroutines.
type Store struct {
	path string
	opts Options
	db   *sql.DB

	// The writer goroutine owns wconn, its statements, lastSeq, staged and
	// dataVersion.
	wconn       *sql.Conn
	stmts       writerStmts
	lastSeq     map[string]eventlog.ChainHead // committed last event per session; a cache of chain_heads
	staged      map[string]eventlog.ChainHead // last event per session in the open transaction
	chain       *eventlog.ChainHasher
	dataVersion int64
	args        []any // the values of a batch's INSERTs, reused

	writer *storekit.Committer

	lastID atomic.Int64 // highest committed events.id, the subscription cursor

	notify storekit.Notifier // broadcast after each commit

	done      chan struct{} // closed when the store is closed
	closeOnce sync.Once
	closeErr  error
}

var _ eventlog.Store = (*Store)(nil)

// Open opens the event log in the SQLite database file at path, creating
// the file (mode 0600: the log records what agents did) if it does not
// exist and bringing its schema up to date. The directory must exist. A
// database written by a newer toolgate is refused with [ErrSchemaTooNew].
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 4096
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	syncMode, err := o.Sync.pragma()
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	if err := createFile(abs); err != nil {
		return nil, err
	}

	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+syncMode+")")
	q.Add("_pragma", "journal_size_limit(67108864)")
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", abs, err)
	}
	s := &Store{
		path:    abs,
		opts:    o,
		db:      db,
		lastSeq: make(map[string]eventlog.ChainHead),
		staged:  make(map[string]eventlog.ChainHead),
		chain:   eventlog.NewChainHasher(o.ChainKey),
		done:    make(chan struct{}),
	}
	if err := s.init(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	s.writer = storekit.NewCommitter(abs, o.MaxBatch, s.writeBatch)
	return s, nil
}

// createFile creates the database file with mode 0600 if it is missing,
// so that SQLite (which gives its -wal and -shm files the database's mode)
// does not create it world-readable.
func createFile(abs string) error {
	dir := filepath.Dir(abs)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("open event log %s: the directory: %w", abs, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("open event log %s: %s is not a directory", abs, dir)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open event log: %w", err)
	}
	return f.Close()
}

func (s *Store) init(ctx context.Context) error {
	ms, err := storekit.LoadMigrations(migrationFiles)
	if err != nil {
		return fmt.Errorf("event log migrations (a build problem, not the file's): %w", err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open event log %s: %w", s.path, err)
	}
	s.wconn = conn
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("open event log %s: is it an SQLite database? %w", s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("open event log %s: journal mode is %q, not WAL; the file system may not support the shared memory WAL needs", s.path, mode)
	}
	if err := migrate(ctx, conn, s.path, ms); err != nil {
		return err
	}
	// Checkpoints run on the writer's connection, after a commit has been
	// synced, when the WAL has grown past checkpointPages.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", checkpointPages)); err != nil {
		return fmt.Errorf("open event log %s: %w", s.path, err)
	}
	if err := s.stmts.prepare(ctx, conn); err != nil {
		return fmt.Errorf("open event log %s: %w", s.path, err)
	}
	var last int64
	if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM events").Scan(&last); err != nil {
		return fmt.Errorf("open event log %s: %w", s.path, err)
	}
	s.lastID.Store(last)
	return nil
}

// busyTimeout is how long a connection waits for another's lock before it
// fails with SQLITE_BUSY; [Store.TrimWAL] lowers it for its checkpoint and
// sets it back to this.
const busyTimeout = 10 * time.Second

// TrimWAL copies the write-ahead log into the database file and empties
// it (PRAGMA wal_checkpoint(TRUNCATE): two syncs) when the WAL file is
// larger than maxBytes, and does nothing otherwise. It is for a process
// that appends and then exits without [Store.Close], which would
// checkpoint and delete the WAL every time (two more syncs, and two more
// again when the next process creates it): the WAL it leaves is read
// whole by the next process that opens the file, so it is kept small this
// way instead, once in many appends. What was committed stays committed
// whatever TrimWAL does; it waits at most wait for readers of other
// processes to move on, and reports an error when it did not trim.
func (s *Store) TrimWAL(ctx context.Context, maxBytes int64, wait time.Duration) error {
	fi, err := os.Stat(s.path + "-wal")
	if errors.Is(err, os.ErrNotExist) || err == nil && fi.Size() <= maxBytes {
		return nil
	}
	if err != nil {
		return fmt.Errorf("trim the write-ahead log of %s: %w", s.path, err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("trim the write-ahead log of %s: %w", s.path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", wait.Milliseconds())); err != nil {
		return fmt.Errorf("trim the write-ahead log of %s: %w", s.path, err)
	}
	defer conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
	var busy, frames, copied int64
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied); err != nil {
		return fmt.Errorf("trim the write-ahead log of %s: %w", s.path, err)
	}
	if busy != 0 {
		return fmt.Errorf("trim the write-ahead log of %s: another connection is using it (%d of %d frames copied)", s.path, copied, frames)
	}
	return nil
}

// Stats are counters of a [Store] since it was opened; each commit is one
// fsync in the default mode.
type Stats = eventlog.CommitStats

// Stats returns the store's counters.
func (s *Store) Stats() Stats { return s.writer.Stats() }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close implements [eventlog.Store.Close]: it stops accepting appends,
// commits those already queued, ends subscriptions and closes the file.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.writer.Close()
		close(s.done)
		err := errors.Join(s.stmts.close(), s.wconn.Close(), s.db.Close())
		if err != nil {
			s.closeErr = fmt.Errorf("close event log %s: %w", s.path, err)
		}
	})
	return s.closeErr
}
