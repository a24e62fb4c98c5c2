// Package spool keeps, in a local file, the decisions an event log could
// not take while it was unreachable, and appends them to it once it takes
// events again, each marked as recovered.
//
// A call decided while the log is down is still denied (the gate fails
// closed when it cannot record), but the record of that denial — and of
// the call it was for — is not lost: [Store.Append] writes the events of
// a failed append to the spool file (one JSON line per append, synced to
// disk before Append returns), up to a size limit, and a background loop
// appends them to the log when it is back, in their order, with a
// top-level "recovered" object added to each payload. Only the records of
// decided calls are kept (permission.resolved, which carries a call decided
// at once, model.tool_call_requested, tool.*, injection.suspected): an
// answer, a grant or a settings switch that was refused is not replayed
// later behind the person's back.
//
// A record leaves the file once its events are appended; a process that
// dies between the two appends them again at its next start (each copy
// marked recovered, with the same tool call id).
package spool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/internal/storekit"
	"github.com/toolgate/toolgate/internal/fslock"
)

// Options configure [Wrap]; the zero value of each field means its
// default.
type Options struct {
	// MaxBytes bounds the spool file; records beyond it are dropped and
	// counted. Default 4 MiB.
	MaxBytes int64
	// RetryEvery is how often the spooled records are tried against the
	// log; default one second.
	RetryEvery time.Duration
	// Logger receives the spool's own errors; default slog.Default().
	Logger *slog.Logger
}

// kept are the event types the spool keeps: the records of decided calls.
var kept = []eventlog.Type{
	eventlog.TypeToolCallRequested, eventlog.TypePermissionResolved, eventlog.TypeToolStarted,
	eventlog.TypeToolCompleted, eventlog.TypeToolFailed, eventlog.TypeInjectionSuspected,
}

// record is one line of the spool file: the kept events of one failed
// append.
type record struct {
	Session string    `json:"session"`
	At      time.Time `json:"at"`
	Error   string    `json:"error"`
	// MaybeStored: the log could not tell whether the append committed.
	MaybeStored bool    `json:"maybeStored,omitempty"`
	Events      []draft `json:"events,omitempty"`
}

type draft struct {
	Turn    string          `json:"turn,omitempty"`
	Time    time.Time       `json:"time"`
	Type    eventlog.Type   `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// Recovered is the object added, as "recovered", to the payload of every
// event appended from the spool.
type Recovered struct {
	// From says where the event comes from: "outage record".
	From string `json:"from"`
	// RecordedAt is when the failed append was kept.
	RecordedAt time.Time `json:"recordedAt"`
	// Error is why the append failed.
	Error string `json:"error"`
	// MaybeStored reports that the log could not tell whether the failed
	// append had committed: the event may be in the log twice.
	MaybeStored bool `json:"maybeStored,omitempty"`
	// Unrecorded, on a permission.resolved event, is the decision and
	// reason the event held when the log failed to take it, if not a
	// deny: a decision the log did not take is not acted on (the gate
	// denies the call with reason policy_error instead), so the event is
	// appended as that deny.
	Unrecorded string `json:"unrecorded,omitempty"`
}

// RecoveredSession is the session of the note that records how many
// failed appends did not fit in the spool.
const RecoveredSession = "toolgate/outage"

// TypeOutageDropped is the type of that note.
const TypeOutageDropped eventlog.Type = "outage.dropped"

// Store is an [eventlog.Store] whose failed appends are spooled. It is
// safe for use by multiple goroutines.
type Store struct {
	eventlog.Store
	path string
	opts Options

	mu      sync.Mutex // guards the file, size and dropped
	f       *os.File
	size    int64
	dropped int

	stop    context.CancelFunc
	stopped chan struct{}
}

// Wrap returns store with its failed appends spooled to the file path
// (created 0600 if missing; records left in it by an earlier run are
// replayed too). Closing the returned store closes store.
func Wrap(store eventlog.Store, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 4 << 20
	}
	if o.RetryEvery <= 0 {
		o.RetryEvery = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the outage record: %w", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open the outage record %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open the outage record: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Store{Store: store, path: path, opts: o, f: f, size: st.Size(), stop: cancel, stopped: make(chan struct{})}
	go s.loop(ctx)
	return s, nil
}

// Path returns the spool file.
func (s *Store) Path() string { return s.path }

// Append implements [eventlog.Store.Append]. When the log fails to take
// the events (for another reason than invalid input or a closed store),
// those of them that record a decided call are spooled; the error is
// returned all the same: nothing is in the log yet.
func (s *Store) Append(ctx context.Context, session string, events ...eventlog.Draft) ([]eventlog.Event, error) {
	evs, err := s.Store.Append(ctx, session, events...)
	if err == nil || errors.Is(err, eventlog.ErrInvalid) || errors.Is(err, eventlog.ErrClosed) {
		return evs, err
	}
	if kerr := s.keep(session, events, err); kerr != nil {
		s.opts.Logger.Error("the outage record could not be written", "file", s.path, "err", kerr)
	}
	return evs, err
}

// Stats passes on the wrapped store's commit counts, when it has them.
func (s *Store) Stats() eventlog.CommitStats {
	if st, ok := s.Store.(interface{ Stats() eventlog.CommitStats }); ok {
		return st.Stats()
	}
	return eventlog.CommitStats{}
}

// keep appends the kept events of a failed append to the spool file and
// syncs it.
func (s *Store) keep(session string, events []eventlog.Draft, cause error) error {
	rec := record{Session: session, At: time.Now().UTC(), Error: cause.Error(), MaybeStored: storekit.IsNoRetry(cause)}
	for _, d := range events {
		if !slices.Contains(kept, d.Type) {
			continue
		}
		t := d.Time
		if t.IsZero() {
			t = rec.At
		}
		payload := d.Payload
		if len(payload) == 0 {
			payload = []byte("{}")
		}
		rec.Events = append(rec.Events, draft{Turn: d.Turn, Time: t.UTC(), Type: d.Type, Payload: payload})
	}
	if len(rec.Events) == 0 {
		return nil
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.size+int64(len(line)) > s.opts.MaxBytes {
		// Said once an outage: the count goes to the log when it is back.
		if s.dropped++; s.dropped == 1 {
			return fmt.Errorf("the outage record is full (%d bytes): failed appends are no longer kept, only counted", s.opts.MaxBytes)
		}
		return nil
	}
	if _, err := s.f.Write(line); err != nil {
		return err
	}
	s.size += int64(len(line))
	return s.f.Sync()
}

// loop replays the spool every RetryEvery until Close.
func (s *Store) loop(ctx context.Context) {
	defer close(s.stopped)
	tick := time.NewTicker(s.opts.RetryEvery)
	defer tick.Stop()
	for {
		if err := s.replay(ctx); err != nil && ctx.Err() == nil {
			s.opts.Logger.Debug("outage record not appended yet", "file", s.path, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// replay appends the spooled records to the log, in order, until one
// fails, and keeps in the file only those not appended (and any spooled
// meanwhile).
func (s *Store) replay(ctx context.Context) error {
	s.mu.Lock()
	size, dropped := s.size, s.dropped
	s.mu.Unlock()
	if size == 0 && dropped == 0 {
		return nil
	}
	snap := make([]byte, size)
	if _, err := s.f.ReadAt(snap, 0); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	done := 0 // bytes of snap appended
	var failed error
	sc := bufio.NewScanner(bytes.NewReader(snap))
	sc.Buffer(nil, int(s.opts.MaxBytes)+1)
	for sc.Scan() {
		line := sc.Bytes()
		if err := s.appendRecord(ctx, line); err != nil {
			failed = err
			break
		}
		done += len(line) + 1
	}
	if failed == nil && dropped > 0 {
		note, _ := json.Marshal(map[string]any{"dropped": dropped, "file": s.path,
			"message": fmt.Sprintf("%d failed appends did not fit in the outage record and are lost", dropped)})
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, failed = s.Store.Append(actx, RecoveredSession, eventlog.Draft{Type: TypeOutageDropped, Payload: note})
		cancel()
		if failed == nil {
			s.mu.Lock()
			s.dropped -= dropped
			s.mu.Unlock()
		}
	}
	if done == 0 {
		return failed
	}
	if err := s.cut(int64(done)); err != nil {
		return err
	}
	return failed
}

// appendRecord appends the events of one spool line, marked recovered.
// A line that cannot be read is skipped (and logged): it can never be
// appended.
func (s *Store) appendRecord(ctx context.Context, line []byte) error {
	var rec record
	if err := json.Unmarshal(line, &rec); err != nil || rec.Session == "" {
		s.opts.Logger.Error("an unreadable line of the outage record is skipped", "file", s.path, "err", err)
		return nil
	}
	drafts := make([]eventlog.Draft, 0, len(rec.Events))
	for _, d := range rec.Events {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(d.Payload, &obj); err != nil || obj == nil {
			obj = map[string]json.RawMessage{"unreadable": mustJSON(string(d.Payload))}
		}
		mark := Recovered{From: "outage record", RecordedAt: rec.At, Error: rec.Error, MaybeStored: rec.MaybeStored}
		if d.Type == eventlog.TypePermissionResolved {
			var decision, reason string
			_ = json.Unmarshal(obj["decision"], &decision)
			_ = json.Unmarshal(obj["reason"], &reason)
			if decision != "deny" {
				mark.Unrecorded = decision + " (" + reason + ")"
				obj["decision"], obj["reason"] = mustJSON("deny"), mustJSON("policy_error")
				obj["message"] = mustJSON("the event log could not be written, so the call was denied")
				delete(obj, "receipt")
				delete(obj, "scope")
			}
		}
		obj["recovered"] = mustJSON(mark)
		payload, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		drafts = append(drafts, eventlog.Draft{Turn: d.Turn, Time: d.Time, Type: d.Type, Payload: payload})
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := s.Store.Append(actx, rec.Session, drafts...)
	if errors.Is(err, eventlog.ErrInvalid) {
		s.opts.Logger.Error("a record of the outage record is not valid for the log and is skipped", "file", s.path, "session", rec.Session, "err", err)
		return nil
	}
	return err
}

// lock takes the lock of the spool file f, which the process holds until
// it closes f: the records of a file are appended to the log, and the file
// rewritten, by one process alone. Where files cannot be locked, nothing
// is taken.
func lock(f *os.File) error {
	held, err := fslock.TryFile(f)
	switch {
	case errors.Is(err, fslock.ErrUnsupported):
		return nil
	case err != nil:
		return fmt.Errorf("lock: %w", err)
	case !held:
		return errors.New("another process keeps its outage record in this file: each needs one of its own")
	}
	return nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// cut removes the first n bytes of the spool file, keeping what follows
// (records spooled while the others were appended): the rest is written
// to a new file, synced and renamed over the old one.
func (s *Store) cut(n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rest := make([]byte, s.size-n)
	if _, err := s.f.ReadAt(rest, n); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	err = lock(f) // before it takes the name: one process holds the record throughout
	if err == nil {
		_, err = f.Write(rest)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("rewrite the outage record: %w", err)
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	s.f.Close()
	s.f, s.size = f, int64(len(rest))
	return nil
}

// Close stops the replay loop and closes the wrapped store. Records
// still spooled stay in the file for the next run.
func (s *Store) Close() error {
	s.stop()
	<-s.stopped
	s.mu.Lock()
	s.f.Close()
	s.mu.Unlock()
	return s.Store.Close()
}
