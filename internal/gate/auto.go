package gate

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
)

// The circuit breaker of auto mode: after this many classifier denials in
// a row, or in all, asks go to a person again. They are counted per
// session and across sessions, so an agent that starts a new session does
// not start the count afresh.
const (
	BreakerConsecutive = 3
	BreakerTotal       = 20
)

// breaker counts the classifier's denials per session.
type breaker struct {
	mu       sync.Mutex
	sessions map[string]*denials
}

type denials struct{ consecutive, total int }

func newBreaker() *breaker { return &breaker{sessions: map[string]*denials{}} }

// global is the key under which the denials of every session are counted.
const global = "\x00all"

func tripped(d *denials) bool {
	return d != nil && (d.consecutive >= BreakerConsecutive || d.total >= BreakerTotal)
}

// open reports whether the classifier may no longer decide for session.
func (b *breaker) open(session string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return tripped(b.sessions[session]) || tripped(b.sessions[global])
}

// note counts one classifier verdict for session and reports whether it
// opened the breaker.
func (b *breaker) note(session string, denied bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	wasOpen := tripped(b.sessions[session]) || tripped(b.sessions[global])
	for _, k := range []string{session, global} {
		d := b.sessions[k]
		if d == nil {
			d = &denials{}
			b.sessions[k] = d
		}
		if denied {
			d.consecutive++
			d.total++
		} else {
			d.consecutive = 0
		}
	}
	return !wasOpen && (tripped(b.sessions[session]) || tripped(b.sessions[global]))
}

// classify puts ar to the classifier and records its verdict in res. It
// returns false when a person must answer instead: the classifier deferred
// ("ask"), failed, or ran out of time.
func (g *Gate) classify(ctx context.Context, ar *approval.Request, res *PermissionResolved) bool {
	cctx, cancel := context.WithTimeout(ctx, g.opts.Timeout)
	defer cancel()
	v, err := g.opts.Classifier.Classify(cctx, ar)
	if err == nil {
		err = v.Validate()
	}
	if err != nil {
		res.Error = "classifier: " + err.Error()
		return false
	}
	switch v.Decision {
	case "allow":
		g.breaker.note(ar.Session, false)
		res.Decision, res.Reason, res.Actor = policy.Allow, engine.ReasonClassifier, ActorClassifier
		res.Message = "allowed by the auto-mode classifier"
	case "deny":
		opened := g.breaker.note(ar.Session, true)
		res.Decision, res.Reason, res.Actor = policy.Deny, engine.ReasonClassifier, ActorClassifier
		res.Message = "denied by the auto-mode classifier"
		if opened {
			res.Message += fmt.Sprintf("; the classifier denied %d calls in a row or %d in all, so later asks of this session go to a person",
				BreakerConsecutive, BreakerTotal)
			res.BreakerOpened = true
		}
	default:
		return false
	}
	if v.Reason != "" {
		res.Message += ": " + v.Reason
	}
	return true
}
