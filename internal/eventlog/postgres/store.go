package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
)

// Options configures [Open]. The zero value, and nil, mean the defaults.
type Options struct {
	// MaxBatch caps the events committed in one transaction; the default
	// is 4096. A single Append larger than that is still one transaction.
	MaxBatch int
	// PollInterval is how often a subscriber looks for new events while
	// the store's listening connection is down (otherwise notifications
	// wake it at once); the default is one second.
	PollInterval time.Duration
	// CommitTimeout bounds the time one append transaction may take,
	// waiting for the lock included; the default is 30 seconds. Appends
	// in a transaction that timed out fail, and nothing of them is written.
	CommitTimeout time.Duration
	// ChainKey is the key of the chain of hashes that makes the log
	// tamper-evident (see package eventlog); toolgate derives it from the
	// approver token. Every server sharing the database must use the same
	// key. Without one, chains reveal damage but not tampering, since
	// anyone can recompute them.
	ChainKey []byte
}

// Errors a caller may branch on with [errors.Is].
var (
	// ErrSchemaTooNew is returned by [Open] for a database written by a
	// newer toolgate, whose schema this code does not know.
	ErrSchemaTooNew = errors.New("event log schema is newer than this toolgate")
	// ErrCommitUnknown is returned by Append when the connection was lost
	// while the transaction was committing and the server could not be
	// asked afterwards whether it had: the events may or may not be
	// stored. They are not written again.
	ErrCommitUnknown = errors.New("the outcome of the commit is unknown")
)

// channel is the notification channel of every store; the payload is the
// schema of the tables that changed.
const channel = "toolgate_eventlog"

// Store is the PostgreSQL [eventlog.Store]. All methods are safe for use
// by multiple goroutines.
type Store struct {
	where  string // names the store in errors, never with a password
	opts   Options
	cfg    *pgx.ConnConfig // for the writer's and the listener's connections
	pool   *pgxpool.Pool   // for queries and subscriptions
	schema string          // the schema of the tables: current_schema()

	wconn  *pgx.Conn // the writer's; owned by the writer goroutine, nil until (re)connected
	writer *storekit.Committer
	chain  *eventlog.ChainHasher // the writer's

	notify storekit.Notifier // broadcast after local commits and notifications

	stopListening context.CancelFunc
	listening     chan struct{} // closed when the listener has returned

	done      chan struct{} // closed when the store is closed
	closeOnce sync.Once
	closeErr  error
}

var _ eventlog.Store = (*Store)(nil)

// Open opens the event log in the PostgreSQL database that dsn names (a
// URL or key=value connection string, as pgx accepts), creating its tables
// in the current schema or bringing them up to date. A database written
// by a newer toolgate is refused with [ErrSchemaTooNew].
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
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
	if o.CommitTimeout <= 0 {
		o.CommitTimeout = 30 * time.Second
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL event log: %w", err)
	}
	params := pcfg.ConnConfig.RuntimeParams
	if _, ok := params["synchronous_commit"]; !ok {
		params["synchronous_commit"] = "on"
	}
	if _, ok := params["application_name"]; !ok {
		params["application_name"] = "toolgate eventlog"
	}
	s := &Store{
		where: describe(pcfg.ConnConfig, ""),
		opts:  o,
		cfg:   pcfg.ConnConfig.Copy(),
		done:  make(chan struct{}),
		chain: eventlog.NewChainHasher(o.ChainKey),
	}
	if s.wconn, err = pgx.ConnectConfig(ctx, s.cfg); err != nil {
		return nil, fmt.Errorf("open %s: %w", s.where, err)
	}
	if err := s.init(ctx); err != nil {
		s.wconn.Close(context.Background())
		return nil, err
	}
	if s.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		s.wconn.Close(context.Background())
		return nil, fmt.Errorf("open %s: %w", s.where, err)
	}
	listenCtx, stop := context.WithCancel(context.Background())
	s.stopListening = stop
	s.listening = make(chan struct{})
	go s.listen(listenCtx)
	s.writer = storekit.NewCommitter(s.where, o.MaxBatch, s.writeBatch)
	return s, nil
}

// describe names the database and schema of cfg for errors.
func describe(cfg *pgx.ConnConfig, schema string) string {
	where := fmt.Sprintf("PostgreSQL event log (database %q on %s:%d", cfg.Database, cfg.Host, cfg.Port)
	if schema != "" {
		where += fmt.Sprintf(", schema %q", schema)
	}
	return where + ")"
}

func (s *Store) init(ctx context.Context) error {
	ms, err := storekit.LoadMigrations(migrationFiles)
	if err != nil {
		return fmt.Errorf("event log migrations (a build problem, not the database's): %w", err)
	}
	var version string
	if err := s.wconn.QueryRow(ctx, "SHOW server_version_num").Scan(&version); err != nil {
		return fmt.Errorf("open %s: %w", s.where, err)
	}
	if n, err := strconv.Atoi(version); err != nil || n < 130000 {
		return fmt.Errorf("open %s: the server is PostgreSQL %s; the event log needs 13 or newer", s.where, version)
	}
	var schema *string
	if err := s.wconn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("open %s: %w", s.where, err)
	}
	if schema == nil {
		return fmt.Errorf("open %s: no schema of the search_path exists to hold the tables", s.where)
	}
	s.schema = *schema
	s.where = describe(s.cfg, s.schema)
	return migrate(ctx, s.wconn, s.where, ms)
}

// Close implements [eventlog.Store.Close]: it stops accepting appends,
// commits those already queued, ends subscriptions and closes the
// connections, waiting for queries in progress to end.
// Stats returns the transactions this process committed and the events
// they held.
func (s *Store) Stats() eventlog.CommitStats { return s.writer.Stats() }

func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.writer.Close()
		close(s.done)
		s.stopListening()
		<-s.listening
		var err error
		if s.wconn != nil {
			err = s.wconn.Close(context.Background())
		}
		s.pool.Close()
		if err != nil {
			s.closeErr = fmt.Errorf("close %s: %w", s.where, err)
		}
	})
	return s.closeErr
}

func (s *Store) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// highestID returns the highest ID committed.
func (s *Store) highestID(ctx context.Context) (int64, error) {
	var last int64
	if err := s.pool.QueryRow(ctx, "SELECT last_id FROM eventlog_counter").Scan(&last); err != nil {
		return 0, s.queryErr(ctx, err)
	}
	return last, nil
}

// listen keeps a connection that listens for the notifications of append
// transactions, from this store and every other on the database, and
// wakes the subscribers. It reconnects after an error; while it is not
// listening, subscribers poll.
func (s *Store) listen(ctx context.Context) {
	defer close(s.listening)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, s.cfg)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err == nil {
				backoff = 100 * time.Millisecond
				// Commits may have gone unnoticed while not listening.
				s.notify.Broadcast()
				for {
					n, err := conn.WaitForNotification(ctx)
					if err != nil {
						break
					}
					if n.Payload == s.schema {
						s.notify.Broadcast()
					}
				}
			}
			conn.Close(context.Background())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
