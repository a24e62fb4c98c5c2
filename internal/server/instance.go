package server

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// A server sharing its log with others has an identity of its own
// (Options.Instance), kept in its state directory so that it is the same
// after a restart or a crash ([ClaimInstance]). Every question it puts to
// a person names it as the holder (gate.PermissionRequested.Holder), so:
//
//   - when it starts again, it records the questions it held and never
//     resolved — those of a crash — as denied with reason
//     approval_cancelled, as a clean shutdown does;
//   - while it holds questions it writes a signed server.alive event
//     every heartbeatInterval; a server that shows another's question
//     stops offering it once its holder has not been heard from for
//     holderGrace, and answers an answer to it with 410, since nothing
//     would act on the answer.

// TypeServerAlive is the event a server writes, in session
// [ServersSession], while it holds questions put to a person.
const TypeServerAlive eventlog.Type = "server.alive"

// ServersSession is the session of the [TypeServerAlive] events: not a
// valid session id of the API, so no agent's session is it.
const ServersSession = "toolgate/servers"

// How often a server that holds questions says so, and how long the
// others wait past its last word before they take it for gone.
var (
	heartbeatInterval = 3 * time.Second
	holderGrace       = 10 * time.Second
)

// alivePayload is the payload of a server.alive event.
type alivePayload struct {
	Instance string    `json:"instance"`
	At       time.Time `json:"at"`
	Sig      string    `json:"sig"`
}

func (s *Server) signAlive(p alivePayload) string {
	return mac(s.opts.Tokens.Approver, "toolgate alive v1", ServersSession, p.Instance, p.At.UTC().Format(time.RFC3339Nano))
}

// heartbeat writes server.alive every heartbeatInterval while this server
// holds questions, until ctx ends or the store closes.
func (s *Server) heartbeat(ctx context.Context) {
	tick := time.NewTicker(heartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if s.broker.Pending() == 0 {
			continue
		}
		p := alivePayload{Instance: s.opts.Instance, At: s.clock().UTC()}
		p.Sig = s.signAlive(p)
		raw, err := json.Marshal(p)
		if err != nil {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, appendTimeout)
		_, err = s.store.Append(actx, ServersSession, eventlog.Draft{Time: p.At, Type: TypeServerAlive, Payload: raw})
		cancel()
		if errors.Is(err, eventlog.ErrClosed) {
			return
		}
		if err != nil && ctx.Err() == nil {
			s.log.Error("write server.alive to the event log", "err", err)
		}
	}
}

// remoteAlive notes the server.alive event e of another server.
func (s *Server) remoteAlive(e eventlog.Event) {
	var p alivePayload
	if e.Session != ServersSession || json.Unmarshal(e.Payload, &p) != nil || p.Instance == "" {
		return
	}
	if !hmac.Equal([]byte(p.Sig), []byte(s.signAlive(p))) {
		s.log.Debug("server.alive not taken: its signature does not verify", "event", e.ID)
		return
	}
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	// Heard from when its word moves on, by this server's clock: the two
	// clocks need not agree.
	if prev := s.peers.alive[p.Instance]; p.At.After(prev.at) {
		s.peers.alive[p.Instance] = heard{at: p.At, seen: s.clock()}
	}
}

// heard is the latest server.alive of an instance: its time, by the
// instance's clock, and when it was read here, by this server's.
type heard struct{ at, seen time.Time }

// holderGoneLocked reports whether the server holding the remote question
// a has not been heard from, by its question or a server.alive read here,
// for holderGrace; false when the question names no holder. s.peers.mu is
// held.
func (s *Server) holderGoneLocked(a Approval) (time.Time, bool) {
	if a.holder == "" {
		return time.Time{}, false
	}
	last := a.seen
	if h := s.peers.alive[a.holder]; h.seen.After(last) {
		last = h.seen
	}
	return last, s.clock().Sub(last) > holderGrace
}

// holderGone is holderGoneLocked, taking the lock.
func (s *Server) holderGone(a Approval) error {
	s.peers.mu.Lock()
	last, gone := s.holderGoneLocked(a)
	s.peers.mu.Unlock()
	if !gone {
		return nil
	}
	return errorf(http.StatusGone, "approval %s cannot be answered: the server holding it (instance %s) has not been heard from since %s and is taken to be gone; "+
		"nothing would act on an answer, and the call is denied (approval_cancelled) when that server starts again", a.ID, a.holder, last.UTC().Format(time.RFC3339))
}

// settleOwnQuestions records, as denied with reason approval_cancelled,
// the questions this instance asked in the last maxRemoteWait that the
// log holds no decision for: those it held when it stopped without
// shutting down. It returns how many.
func (s *Server) settleOwnQuestions(ctx context.Context) (int, error) {
	if s.opts.Instance == "" {
		return 0, nil
	}
	start, err := s.firstSince(ctx, s.clock().Add(-maxRemoteWait))
	if err != nil || start == 0 {
		return 0, err
	}
	type question struct {
		e eventlog.Event
		p gate.PermissionRequested
	}
	open := map[string]question{}
	from := map[string]int64{} // session → the seq of its first open question
	f := eventlog.Filter{Types: []eventlog.Type{eventlog.TypePermissionRequested}, AfterID: start - 1}
	for e, err := range s.store.Query(ctx, f) {
		if err != nil {
			return 0, err
		}
		p, err := s.gate.VerifyQuestion(e.Session, e.Payload)
		if err != nil || p.Holder != s.opts.Instance || p.ToolCallID == "" {
			continue
		}
		open[p.ToolCallID] = question{e, p}
		if seq, ok := from[e.Session]; !ok || e.Seq < seq {
			from[e.Session] = e.Seq
		}
	}
	for session, seq := range from {
		f := eventlog.Filter{Session: session, Types: []eventlog.Type{eventlog.TypePermissionResolved}, AfterSeq: seq}
		for e, err := range s.store.Query(ctx, f) {
			if err != nil {
				return 0, err
			}
			var p gate.PermissionResolved
			if json.Unmarshal(e.Payload, &p) == nil {
				delete(open, p.ToolCallID)
			}
		}
	}
	n := 0
	for id, q := range open {
		res := gate.PermissionResolved{
			ToolCallID: id, Tool: q.p.Tool, Decision: policy.Deny, Reason: engine.ReasonApprovalCancelled, Actor: gate.ActorSystem,
			RiskAtDecision: q.p.RiskAtDecision, SourcedFrom: q.p.SourcedFrom,
			Message: fmt.Sprintf("the server holding the question (instance %s) stopped before it was answered, so the call is denied", s.opts.Instance),
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return n, err
		}
		actx, cancel := context.WithTimeout(ctx, appendTimeout)
		_, err = s.store.Append(actx, q.e.Session, eventlog.Draft{Turn: q.e.Turn, Time: s.clock(), Type: eventlog.TypePermissionResolved, Payload: raw})
		cancel()
		if err != nil {
			return n, fmt.Errorf("record the unanswered question %s of session %s as denied: %w", id, q.e.Session, err)
		}
		n++
	}
	return n, nil
}
