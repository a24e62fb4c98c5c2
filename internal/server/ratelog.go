package server

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// errorLogEvery is how often one error is logged at most: while the event
// log is unreachable every check, follower and heartbeat fails the same
// way, many times a second.
const errorLogEvery = 10 * time.Second

// maxLimitedKeys bounds the distinct errors remembered.
const maxLimitedKeys = 1000

// limitedHandler passes records below Warn through, and of the records at
// Warn and above the first of each kind (message and "err" attribute) per
// interval; the next one of that kind logged carries "suppressed", the
// count of those dropped in between.
type limitedHandler struct {
	next  slog.Handler
	state *limitState
}

type limitState struct {
	every time.Duration
	now   func() time.Time
	mu    sync.Mutex
	seen  map[string]*limitedKind
}

type limitedKind struct {
	logged     time.Time
	suppressed int
}

// rateLimited returns a logger that logs at most one line per distinct
// error and interval.
func rateLimited(l *slog.Logger, every time.Duration, now func() time.Time) *slog.Logger {
	return slog.New(&limitedHandler{next: l.Handler(), state: &limitState{every: every, now: now, seen: map[string]*limitedKind{}}})
}

func (h *limitedHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *limitedHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.next.Handle(ctx, r)
	}
	key := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			key += "\x00" + a.Value.String()
			return false
		}
		return true
	})
	st := h.state
	now := st.now()
	st.mu.Lock()
	k := st.seen[key]
	if k != nil && now.Sub(k.logged) < st.every {
		k.suppressed++
		st.mu.Unlock()
		return nil
	}
	if k == nil {
		if len(st.seen) >= maxLimitedKeys {
			for old, v := range st.seen {
				if now.Sub(v.logged) >= st.every {
					delete(st.seen, old)
				}
			}
		}
		if len(st.seen) >= maxLimitedKeys {
			st.mu.Unlock()
			return h.next.Handle(ctx, r) // too many kinds to tell apart: log it
		}
		k = &limitedKind{}
		st.seen[key] = k
	}
	n := k.suppressed
	k.logged, k.suppressed = now, 0
	st.mu.Unlock()
	if n > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", n), slog.Duration("in", st.every))
	}
	return h.next.Handle(ctx, r)
}

func (h *limitedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &limitedHandler{next: h.next.WithAttrs(attrs), state: h.state}
}

func (h *limitedHandler) WithGroup(name string) slog.Handler {
	return &limitedHandler{next: h.next.WithGroup(name), state: h.state}
}
