package server

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
)

// Several servers may share one event log (PostgreSQL, or one SQLite file)
// behind a load balancer. A question lives in the memory of the server
// whose check asked it, but every server follows the log:
//
//   - a permission.requested event of another server, asked of a person
//     and signed under a key derived from the approver token
//     (gate.VerifyQuestion), makes its question visible here (GET
//     /v1/approvals), until its permission.resolved;
//   - an answer given here to such a question is written to the log as a
//     permission.answered event, signed under the approver token, and the
//     server holding the question acts on it as on an answer of its own;
//   - a switch of a session's settings made anywhere applies everywhere,
//     in the order of the log (see sessionlog.go);
//   - a session approval or a lease granted anywhere, signed under the
//     same key, is held everywhere, and ends everywhere when it is revoked
//     (gate.Adopt); at start, those still current are taken up again.

// The streams the follower reads: session switches, every one after those
// the restore read, whatever their time says; questions and answers, from
// a while back (no question outlives its deadline); and grants and their
// revocations, from grantsLookback back.
const (
	policyStream = iota
	permissionStream
	grantStream
)

var streamTypes = [...][]eventlog.Type{
	policyStream: {eventlog.TypePolicyChanged},
	// Not permission.resolved: every call writes one, and reading them all
	// would cost every call. The outcomes of the few questions of other
	// servers are read by session when they are asked for (settleRemote).
	permissionStream: {eventlog.TypePermissionRequested, eventlog.TypePermissionAnswered, TypeServerAlive},
	grantStream:      {eventlog.TypeLeaseGranted, eventlog.TypeLeaseRevoked},
}

// peerKeep bounds the remote questions remembered once resolved.
const peerKeep = 1000

// peerMaxPendingBytes and peerKeepBytes bound the size of the questions of
// other servers held here, pending and resolved (each counted as its
// permission.requested payload): a question that is soon cancelled frees
// its place on the server that asked it at once, but is held here until
// its deadline.
var (
	peerMaxPendingBytes = 256 << 20
	peerKeepBytes       = 64 << 20
)

// peers is what the follower learned from the log.
type peers struct {
	mu       sync.Mutex
	pending  map[string]Approval     // questions other servers hold
	resolved map[string]Approval     // and those of them since resolved
	order    []string                // resolved ids, oldest first
	bytes    int                     // the size of pending
	kept     int                     // the size of resolved
	alive    map[string]heard        // instance → the latest server.alive of it
	followed [len(streamTypes)]int64 // per stream, the highest event id handled
	advanced chan struct{}           // closed when followed moves on
}

func newPeers() *peers {
	return &peers{pending: map[string]Approval{}, resolved: map[string]Approval{}, alive: map[string]heard{}, advanced: make(chan struct{})}
}

// followInterval is how often the follower reads the log for what is new.
// Reading on a clock, not at every commit, keeps its cost flat however
// many calls are decided: one small query per stream and interval.
const followInterval = 50 * time.Millisecond

// follow reads one stream of the log, from f on (f.Since, or f.AfterID),
// every followInterval, until ctx ends or the store closes. A read error
// is logged and the reading goes on after the last event handled.
func (s *Server) follow(ctx context.Context, stream int, f eventlog.Filter) {
	f.Types = streamTypes[stream]
	tick := time.NewTicker(followInterval)
	defer tick.Stop()
	for {
		var err error
		f, err = s.readStream(ctx, stream, f)
		if errors.Is(err, eventlog.ErrClosed) {
			return
		}
		if err != nil && ctx.Err() == nil {
			s.log.Error("follow the event log", "err", err)
		}
		if stream == grantStream {
			s.saveEnded()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// readStream handles the events of stream that f selects, and returns the
// filter of those after them.
//
// A stream that starts at a time is read by id from the first event of
// that time on, found once by the time index: a query by type and time
// walks every event of those types, however old, and would do so at every
// poll until one came.
func (s *Server) readStream(ctx context.Context, stream int, f eventlog.Filter) (eventlog.Filter, error) {
	if !f.Since.IsZero() {
		start, err := s.firstSince(ctx, f.Since)
		if err != nil || start == 0 {
			return f, err // nothing at or after f.Since yet
		}
		f = eventlog.Filter{Types: streamTypes[stream], AfterID: start - 1}
	}
	for e, err := range s.store.Query(ctx, f) {
		if err != nil {
			return f, err
		}
		s.peerEvent(e)
		s.peers.mu.Lock()
		s.peers.followed[stream] = e.ID
		close(s.peers.advanced)
		s.peers.advanced = make(chan struct{})
		s.peers.mu.Unlock()
		f = eventlog.Filter{Types: streamTypes[stream], AfterID: e.ID}
	}
	return f, nil
}

// firstSince returns the id of the first event at or after since, or 0
// when there is none.
func (s *Server) firstSince(ctx context.Context, since time.Time) (int64, error) {
	for e, err := range s.store.Query(ctx, eventlog.Filter{Since: since, Limit: 1}) {
		return e.ID, err
	}
	return 0, nil
}

// waitFollowedPolicy waits until the follower has handled the session
// switch of event id; false if ctx ended first.
func (s *Server) waitFollowedPolicy(ctx context.Context, id int64) bool {
	return s.waitFollowed(ctx, policyStream, id)
}

// waitFollowedPermissions waits until the follower has handled the
// question or answer of event id; false if ctx ended first.
func (s *Server) waitFollowedPermissions(ctx context.Context, id int64) bool {
	return s.waitFollowed(ctx, permissionStream, id)
}

func (s *Server) waitFollowed(ctx context.Context, stream int, id int64) bool {
	for {
		s.peers.mu.Lock()
		done, ch := s.peers.followed[stream] >= id, s.peers.advanced
		s.peers.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// peerEvent handles one event the follower read.
func (s *Server) peerEvent(e eventlog.Event) {
	switch e.Type {
	case eventlog.TypePolicyChanged:
		s.applySessionEvent(e)
	case eventlog.TypePermissionRequested:
		s.remoteQuestion(e)
	case eventlog.TypePermissionAnswered:
		s.remoteAnswer(e)
	case TypeServerAlive:
		s.remoteAlive(e)
	case eventlog.TypeLeaseGranted, eventlog.TypeLeaseRevoked:
		if _, err := s.gate.Adopt(e); err != nil {
			s.log.Warn("grant from the event log not taken up", "event", e.ID, "session", e.Session, "err", err)
		}
	}
}

// remoteQuestion notes the question of e if another server holds it: a
// question asked of a person, signed under the approver token's key.
func (s *Server) remoteQuestion(e eventlog.Event) {
	p, err := s.gate.VerifyQuestion(e.Session, e.Payload)
	if p.ToolCallID == "" || s.broker.knows(p.ToolCallID) {
		return // unreadable, or a question of ours
	}
	if err != nil {
		if p.AskedOf == gate.ActorUser {
			s.log.Debug("question from the event log not listed", "event", e.ID, "session", e.Session, "err", err)
		}
		return
	}
	digest := payloadDigest(e.Session, e.Payload)
	now := s.clock()
	if !p.Deadline.After(now) || p.Deadline.After(now.Add(maxRemoteWait)) {
		return // over, or not a real deadline
	}
	req := &approval.Request{
		Session: e.Session, Turn: e.Turn, ToolCallID: p.ToolCallID, Tool: p.Tool, Input: p.Args, Cwd: p.Cwd,
		Reason: string(p.Reason), Message: p.Message, Risk: p.RiskAtDecision.String(), Rule: p.Rule, Summary: p.Summary,
		Destructive: p.Destructive, SuggestedRule: p.SuggestedRule, Units: p.Units, ConfirmTarget: p.ConfirmTarget,
	}
	a := Approval{
		ID: p.ToolCallID, Session: e.Session, Turn: e.Turn, State: StatePending,
		Created: e.Time.UTC(), Deadline: p.Deadline.UTC(), Request: req, digest: digest, seq: e.Seq, holder: p.Holder, seen: now,
		size: len(e.Payload),
	}
	if req.Destructive {
		a.ConfirmWord = req.ConfirmWord()
	}
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	s.prunePeersLocked()
	_, done := s.peers.resolved[a.ID]
	_, have := s.peers.pending[a.ID]
	if done || have || len(s.peers.pending) >= peerMaxPending || s.peers.bytes+a.size > peerMaxPendingBytes ||
		s.remoteInSessionLocked(a.Session) >= perSessionPending {
		// The first question under an id stands: a later one under the
		// same id, even signed (copied), is no question of the holder's.
		return
	}
	s.peers.pending[a.ID] = a
	s.peers.bytes += a.size
}

// perSessionPending bounds the questions of other servers held here for
// one session, as the broker bounds its own.
const perSessionPending = 100

// maxRemoteWait bounds the deadline of a question another server holds:
// one further off is not a real question.
const maxRemoteWait = 24 * time.Hour

// remoteInSessionLocked counts the pending remote questions of session.
func (s *Server) remoteInSessionLocked(session string) int {
	n := 0
	for _, a := range s.peers.pending {
		if a.Session == session {
			n++
		}
	}
	return n
}

// payloadDigest is the SHA-256 of a permission.requested event: its
// session and its payload as stored. The server that shows the question
// hashes the event it read; the server that holds it hashes the payload
// its gate recorded (approval.Request.Recorded), the same bytes, never an
// event merely found in the log under the call's id. So an answer names
// exactly what the person was shown — the summary, the suggested rule, the
// arguments — and a question written into the log under a real call's id,
// differing in anything, gets answers that answer nothing.
func payloadDigest(session string, payload []byte) string {
	return mac("", "toolgate question v1", session, string(payload)) // a keyless MAC: a hash of the parts
}

// peerMaxPending bounds the questions of other servers held here.
const peerMaxPending = 10000

// prunePeersLocked forgets the questions of other servers past their
// deadline: their holder has denied them, or is gone.
func (s *Server) prunePeersLocked() {
	now := s.clock()
	for id, a := range s.peers.pending {
		if !a.Deadline.After(now) {
			delete(s.peers.pending, id)
			s.peers.bytes -= a.size
		}
	}
}

// settleRemote reads, for the sessions of the pending questions of other
// servers (only session if not ""), the permission.resolved events written
// since, and moves the questions they decide to resolved.
func (s *Server) settleRemote(ctx context.Context, session string) {
	s.peers.mu.Lock()
	s.prunePeersLocked()
	from := map[string]int64{} // session → the lowest seq of its questions
	for _, a := range s.peers.pending {
		if session == "" || a.Session == session {
			if f, ok := from[a.Session]; !ok || a.seq < f {
				from[a.Session] = a.seq
			}
		}
	}
	s.peers.mu.Unlock()
	for sess, seq := range from {
		f := eventlog.Filter{Session: sess, Types: []eventlog.Type{eventlog.TypePermissionResolved}, AfterSeq: seq}
		for e, err := range s.store.Query(ctx, f) {
			if err != nil {
				s.log.Error("read the outcomes of other servers' questions", "session", sess, "err", err)
				break
			}
			s.remoteResolved(e)
		}
	}
}

// remoteResolved moves a remote question to resolved.
func (s *Server) remoteResolved(e eventlog.Event) {
	var p gate.PermissionResolved
	if json.Unmarshal(e.Payload, &p) != nil || p.ToolCallID == "" {
		return
	}
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	a, ok := s.peers.pending[p.ToolCallID]
	if !ok {
		return
	}
	delete(s.peers.pending, a.ID)
	s.peers.bytes -= a.size
	a.State = StateResolved
	a.Decision = &Outcome{Decision: p.Decision.String(), Reason: string(p.Reason), Actor: string(p.Actor), Answer: p.Answer, Message: p.Message, Rule: p.Rule, answerID: p.AnswerID, Receipt: allowReceipt(p.Decision, p.Receipt)}
	s.peers.resolved[a.ID] = a
	s.peers.order = append(s.peers.order, a.ID)
	s.peers.kept += a.size
	for len(s.peers.order) > 1 && (len(s.peers.order) > peerKeep || s.peers.kept > peerKeepBytes) {
		s.peers.kept -= s.peers.resolved[s.peers.order[0]].size
		delete(s.peers.resolved, s.peers.order[0])
		s.peers.order = s.peers.order[1:]
	}
}

// answerPayload is the payload of a permission.answered event. Question
// is the digest of the question as the answering server showed it
// (payloadDigest): the holder takes the answer only for the question it
// asked, so an answer given to a question forged in the log, under a real
// call's id, answers nothing.
type answerPayload struct {
	ToolCallID string        `json:"toolCallId"`
	Question   string        `json:"question"`
	Answer     approval.Kind `json:"answer"`
	Message    string        `json:"message,omitempty"`
	Rule       string        `json:"rule,omitempty"`
	Confirm    string        `json:"confirm,omitempty"`
	Actor      gate.Actor    `json:"actor"`
	Sig        string        `json:"sig"`
}

// signAnswer returns the signature of p, an answer in session, under the
// approver token.
func (s *Server) signAnswer(session string, p answerPayload) string {
	return mac(s.opts.Tokens.Approver, "toolgate answer v2", session, p.ToolCallID, p.Question,
		string(p.Answer), p.Message, p.Rule, p.Confirm)
}

// remoteAnswer acts on an answer given to another server, if this server
// holds the question, in that session, as the answer describes it, and
// the answer is signed under its approver token. An answer that arrives
// while the call is still being decided waits for its question.
func (s *Server) remoteAnswer(e eventlog.Event) {
	var p answerPayload
	if json.Unmarshal(e.Payload, &p) != nil || p.ToolCallID == "" || !s.broker.knows(p.ToolCallID) {
		return
	}
	if !hmac.Equal([]byte(p.Sig), []byte(s.signAnswer(e.Session, p))) {
		s.log.Warn("answer from the event log not taken: its signature does not verify", "event", e.ID, "session", e.Session, "tool_call_id", p.ToolCallID)
		return
	}
	take := func() {
		a, ok := s.broker.pendingApproval(p.ToolCallID)
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%w: %s is not waiting for an answer here", ErrNotFound, p.ToolCallID)
		case a.Session != e.Session:
			err = fmt.Errorf("the answer was written to session %s, the question is in %s", e.Session, a.Session)
		case len(a.Request.Recorded) == 0:
			err = errors.New("the question asked here is not in the log, so no answer from the log is taken for it")
		case !hmac.Equal([]byte(payloadDigest(a.Session, a.Request.Recorded)), []byte(p.Question)):
			err = errors.New("the answer was given to another question than the one asked here")
		default:
			if aerr := checkReply(p.Answer, p.Message, p.Rule); aerr != nil {
				err = aerr
			} else {
				_, err = s.broker.answer(p.ToolCallID, Reply{Answer: p.Answer, Message: p.Message, Rule: p.Rule, Confirm: p.Confirm, Via: "remote"}, answerID(e.ID))
			}
		}
		if err != nil {
			s.log.Warn("answer from the event log not taken", "event", e.ID, "tool_call_id", p.ToolCallID, "err", err)
		}
	}
	if _, pending := s.broker.pendingApproval(p.ToolCallID); pending {
		take()
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(s.base, lookupWait)
		defer cancel()
		s.broker.awaitInflight(ctx, p.ToolCallID)
		take()
	}()
}

// remote returns the question id another server holds, pending or
// recently resolved.
func (s *Server) remote(ctx context.Context, id string) (Approval, bool) {
	s.peers.mu.Lock()
	a, pending := s.peers.pending[id]
	s.peers.mu.Unlock()
	if pending {
		s.settleRemote(ctx, a.Session)
	}
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	if a, ok := s.peers.pending[id]; ok {
		return a, true
	}
	a, ok := s.peers.resolved[id]
	return a, ok
}

// remoteList returns the questions other servers hold, in state
// (StatePending, StateResolved or "" for both) and session ("" for all).
// A pending one past its deadline is left out: its holder has denied it,
// or is gone; so is one whose holder has gone silent (holderGone).
func (s *Server) remoteList(ctx context.Context, state, session string) []Approval {
	s.settleRemote(ctx, session)
	now := s.clock()
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	var out []Approval
	add := func(m map[string]Approval, pending bool) {
		for _, a := range m {
			if pending {
				if _, gone := s.holderGoneLocked(a); gone || !a.Deadline.After(now) {
					continue
				}
			}
			if (session == "" || a.Session == session) && !s.broker.knows(a.ID) {
				out = append(out, a)
			}
		}
	}
	if state == "" || state == StatePending {
		add(s.peers.pending, true)
	}
	if state == "" || state == StateResolved {
		add(s.peers.resolved, false)
	}
	return out
}

// answerID names the answer of the permission.answered event id, as the
// holder of the question records it on permission.resolved.
func answerID(id int64) string { return "ev" + strconv.FormatInt(id, 10) }

// answerRemote writes the reply to the question id, which another server
// holds, to the log, and waits until that server has recorded its
// decision. The approval comes back pending when it has not within the
// wait. When the holder took another answer, or decided without one (its
// deadline passed), the error wraps [ErrResolved]: this reply changed
// nothing.
func (s *Server) answerRemote(ctx context.Context, a Approval, reply Reply) (Approval, error) {
	if a.State != StatePending {
		return Approval{}, fmt.Errorf("%w: %s was resolved (%s); the first answer wins", ErrResolved, a.ID, a.Decision.Reason)
	}
	if err := checkAnswer(a.Request, reply); err != nil {
		return Approval{}, err
	}
	if err := s.holderGone(a); err != nil {
		return Approval{}, err
	}
	// Signed as the log holds it: without secrets.
	red := s.gate.Redactor()
	p := answerPayload{
		ToolCallID: a.ID, Question: a.digest, Answer: reply.Answer,
		Message: red.String(reply.Message), Rule: red.String(reply.Rule), Confirm: reply.Confirm, Actor: gate.ActorUser,
	}
	p.Sig = s.signAnswer(a.Session, p)
	payload, err := json.Marshal(p)
	if err != nil {
		return Approval{}, err
	}
	actx, cancel := s.appendContext()
	defer cancel()
	evs, err := s.store.Append(actx, a.Session, eventlog.Draft{Turn: a.Turn, Time: s.clock(), Type: eventlog.TypePermissionAnswered, Payload: payload})
	if err != nil {
		return Approval{}, fmt.Errorf("write the answer to the event log: %w", err)
	}
	mine := answerID(evs[0].ID)
	tick := time.NewTicker(followInterval)
	defer tick.Stop()
	for {
		s.settleRemote(ctx, a.Session)
		s.peers.mu.Lock()
		got, ok := s.peers.resolved[a.ID]
		s.peers.mu.Unlock()
		if ok {
			if got.Decision == nil || got.Decision.answerID != mine {
				how := "without an answer"
				if got.Decision != nil {
					how = fmt.Sprintf("%s (%s)", got.Decision.Decision, got.Decision.Reason)
					if got.Decision.Answer != "" {
						how = fmt.Sprintf("%s by another answer, %s", got.Decision.Decision, got.Decision.Answer)
					}
				}
				return Approval{}, fmt.Errorf("%w: %s was resolved %s before this answer reached the server holding it; the first answer wins, and this one changed nothing", ErrResolved, a.ID, how)
			}
			return got, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return a, nil
		}
	}
}

// sortApprovals orders approvals by creation, oldest first.
func sortApprovals(list []Approval) {
	slices.SortStableFunc(list, func(x, y Approval) int { return x.Created.Compare(y.Created) })
}
