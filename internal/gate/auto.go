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
// a row, or in all, in one session, asks go to a person again.
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

// open reports whether the classifier may no longer decide for session.
func (b *breaker) open(session string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.sessions[session]
	return d != nil && (d.consecutive >= BreakerConsecutive || d.total >= BreakerTotal)
}

// note counts one classifier verdict for session and reports whether it
// opened the breaker.
func (b *breaker) note(session string, denied bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.sessions[session]
	if d == nil {
		d = &denials{}
		b.sessions[session] = d
	}
	wasOpen := d.consecutive >= BreakerConsecutive || d.total >= BreakerTotal
	if denied {
		d.consecutive++
		d.total++
	} else {
		d.consecutive = 0
	}
	return !wasOpen && (d.consecutive >= BreakerConsecutive || d.total >= BreakerTotal)
}

// classify puts ar to the classifier and records its verdict in res. It
// returns false when a person must answer instead: the classifier deferred
// ("ask"), failed, or ran out of time.
func (g *Gate) classify(ctx context.Context, ar *approval.Request, res *permissionResolved) bool {
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
