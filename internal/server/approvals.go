package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// The states of an [Approval].
const (
	StatePending  = "pending"
	StateResolved = "resolved"
)

// Approval is one question put to a person, as GET /v1/approvals shows it.
type Approval struct {
	// ID is the tool call id of the call in question.
	ID string `json:"id"`
	// Session and Turn are the call's session and turn.
	Session string `json:"session"`
	Turn    string `json:"turn,omitempty"`
	// State is [StatePending] until the question is answered, timed out or
	// cancelled, then [StateResolved].
	State string `json:"state"`
	// Created is when the question was asked; Deadline is when it times
	// out.
	Created  time.Time `json:"created"`
	Deadline time.Time `json:"deadline"`
	// Request is what the person is shown.
	Request *approval.Request `json:"request"`
	// ConfirmWord, for a destructive call, is what the person must type
	// (field "confirm" of the answer) to allow it: Request.ConfirmWord.
	ConfirmWord string `json:"confirmWord,omitempty"`
	// Agent is the name of the (sub)agent that made the call, when it
	// gave one.
	Agent string `json:"agent,omitempty"`
	// Files are the files an edit, write or patch would change, as they
	// were when the question was asked (see [File]); empty for other
	// tools, for questions another server holds, and in what an agent
	// token is shown.
	Files []File `json:"files,omitempty"`

	digest string    // of another server's question: its payloadDigest
	seq    int64     // and the seq of its permission.requested event
	holder string    // and the instance that holds it, "" when it names none
	seen   time.Time // and when this server read it
	size   int       // and the size of that event's payload
	// Decision is the outcome, nil while pending.
	Decision *Outcome `json:"decision"`
}

// Outcome is how an [Approval] was resolved.
type Outcome struct {
	// Decision is "allow" or "deny".
	Decision string `json:"decision"`
	// Reason is the reason code of the final decision (user_approved,
	// user_denied, approval_timeout, approval_cancelled, ...).
	Reason string `json:"reason"`
	// Actor is who decided: "user" or "system".
	Actor string `json:"actor"`
	// Answer is the kind the person chose, when a person answered.
	Answer approval.Kind `json:"answer,omitempty"`
	// Message is the decision's message.
	Message string `json:"message,omitempty"`
	// Rule is the rule the person asked to remember, for remembered allows.
	Rule string `json:"rule,omitempty"`

	// answerID is the id of the answer taken, when it came from the log
	// (gate.PermissionResolved.AnswerID).
	answerID string

	// Receipt, for an allow, binds the call to what was allowed, as in
	// the response of POST /v1/check.
	Receipt *gate.Receipt `json:"receipt,omitempty"`
}

// allowReceipt is rc when the decision is an allow, else nil.
func allowReceipt(d policy.Decision, rc *gate.Receipt) *gate.Receipt {
	if d != policy.Allow {
		return nil
	}
	return rc
}

// Errors of [Broker.Answer] and [Broker.Get], for [errors.Is].
var (
	// ErrNotFound: no approval has the id (it never asked, or it was
	// resolved so long ago that it is no longer kept).
	ErrNotFound = errors.New("no such approval")
	// ErrResolved: the approval was already resolved; the first answer wins.
	ErrResolved = errors.New("approval already resolved")
	// ErrBadAnswer: the answer is not one the approval accepts.
	ErrBadAnswer = errors.New("answer not accepted")
	// ErrBrokerClosed: the broker was closed and asks no more questions.
	ErrBrokerClosed = errors.New("the approval broker is closed")
	// ErrTooManyPending: MaxPending questions are already waiting.
	ErrTooManyPending = errors.New("too many approvals are pending")
)

// BrokerOptions configure a [Broker]. The zero value of each field means
// its default.
type BrokerOptions struct {
	// Timeout is the deadline given to an approval whose context has
	// none; default [gate.DefaultTimeout]. The gate's own context usually
	// carries the deadline.
	Timeout time.Duration
	// Keep is how many resolved approvals are kept for GET; default 10,000.
	Keep int
	// MaxPending bounds the approvals waiting at once; a question beyond
	// it is refused (the gate denies the call). Default 10,000.
	MaxPending int
	// MaxPendingPerSession bounds the approvals one session may have
	// waiting, so that one agent cannot crowd out the others' questions.
	// Default 100.
	MaxPendingPerSession int
	// MaxPendingPerToken bounds the approvals waiting at once in all the
	// sessions one token started, so that an agent cannot crowd out the
	// others' questions by spreading its own over many sessions. Default
	// 1,000.
	MaxPendingPerToken int
	// MaxPendingBytes and MaxPendingBytesPerToken bound the size of the
	// questions waiting at once (their input and recorded question, as
	// [RequestSize] counts them), in all and in the sessions of one
	// token, so that an agent cannot fill the server's memory with a few
	// hundred calls of a megabyte each. A question beyond either is
	// refused (the gate denies the call). Defaults 256 MiB and 32 MiB.
	MaxPendingBytes         int
	MaxPendingBytesPerToken int
	// KeepBytes bounds the size of the resolved approvals kept, besides
	// Keep: the oldest are dropped first, never the latest. Default
	// 64 MiB.
	KeepBytes int
	// Clock gives the time; default time.Now.
	Clock func() time.Time
}

// Broker is an [approval.Approver] that holds each question until it is
// answered through [Broker.Answer] or its context ends. It keeps the
// pending questions and the last resolved ones for listing. It is safe for
// use by multiple goroutines.
type Broker struct {
	opts BrokerOptions

	mu       sync.Mutex
	n        uint64
	inflight map[string]inflight // ids handed out by NewID, not yet asking
	pending  map[string]*entry
	perSess  map[string]int // pending approvals per session
	perOwner map[string]int // pending approvals per token that started their session
	bytes    int            // the size of the pending approvals
	ownBytes map[string]int // the size of the pending approvals per token
	kept     int            // the size of the resolved approvals kept
	resolved map[string]*entry
	order    []string // resolved ids, oldest first
	// dropped holds the sessions whose last question left pending without
	// an answer (cancelled, timed out) and that have asked none since.
	dropped map[string]bool
	closed  bool

	onWait    func(time.Duration)            // observes how long each approval waited
	onPending func(Approval)                 // told of each new pending approval
	ownerOf   func(string) string            // the token that started a session, "" unknown
	files     func(*approval.Request) []File // reads the files a question's call changes
}

// inflight is an id the gate is deciding a call under.
type inflight struct {
	ch      chan struct{} // closed when the call asks or is decided
	created time.Time
}

// inflightTTL is how long an id handed out by NewID is waited for; ids
// of calls that never reach the broker or finish are dropped after it.
const inflightTTL = 10 * time.Minute

// entry is the broker's record of one approval. Its fields are guarded by
// the broker's mutex, except the channels.
type entry struct {
	a      Approval
	owner  string // the token that started its session, as ownerOf said
	n      uint64
	size   int                  // RequestSize of its request
	answer chan approval.Answer // receives the person's answer, once
	final  chan struct{}        // closed when the gate's final decision is in
	done   bool                 // final is closed
	// crowded is set once another approval of the same session was
	// pending at the same time, or when it followed one that left pending
	// without an answer: an answer that does not name it may have been
	// meant for the other.
	crowded bool
}

// NewBroker returns a broker.
func NewBroker(opts BrokerOptions) *Broker {
	if opts.Timeout <= 0 {
		opts.Timeout = gate.DefaultTimeout
	}
	if opts.Keep <= 0 {
		opts.Keep = 10_000
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 10_000
	}
	if opts.MaxPendingPerSession <= 0 {
		opts.MaxPendingPerSession = 100
	}
	if opts.MaxPendingPerToken <= 0 {
		opts.MaxPendingPerToken = 1000
	}
	if opts.MaxPendingBytes <= 0 {
		opts.MaxPendingBytes = 256 << 20
	}
	if opts.MaxPendingBytesPerToken <= 0 {
		opts.MaxPendingBytesPerToken = 32 << 20
	}
	if opts.KeepBytes <= 0 {
		opts.KeepBytes = 64 << 20
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	return &Broker{
		opts:     opts,
		inflight: map[string]inflight{},
		pending:  map[string]*entry{},
		perSess:  map[string]int{},
		perOwner: map[string]int{},
		ownBytes: map[string]int{},
		resolved: map[string]*entry{},
		dropped:  map[string]bool{},
	}
}

// NewID returns a fresh tool call id and remembers it as in flight, so
// that a request about it made between the gate's permission.requested
// event and the question reaching the broker waits instead of failing.
// Give it to the gate as [gate.Options.NewID].
func (b *Broker) NewID() string {
	id := gate.NewToolCallID()
	now := b.opts.Clock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.inflight) >= 1024 && len(b.inflight)%1024 == 0 {
		for k, f := range b.inflight {
			if now.Sub(f.created) > inflightTTL {
				close(f.ch)
				delete(b.inflight, k)
			}
		}
	}
	b.inflight[id] = inflight{make(chan struct{}), now}
	return id
}

// registeredKey is the context key of a function Approve calls once the
// question is pending.
type registeredKey struct{}

// withRegistered returns ctx carrying f, which [Broker.Approve] calls with
// the approval once it is pending.
func withRegistered(ctx context.Context, f func(Approval)) context.Context {
	return context.WithValue(ctx, registeredKey{}, f)
}

type agentKey struct{}

// withAgent returns ctx carrying the name of the agent that made the call,
// which [Broker.Approve] shows with its question.
func withAgent(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, agentKey{}, agent)
}

// Approve implements [approval.Approver]: it makes req pending and waits
// for [Broker.Answer] or the end of ctx, whose deadline is the approval's.
func (b *Broker) Approve(ctx context.Context, req *approval.Request) (approval.Answer, error) {
	if req == nil || req.ToolCallID == "" {
		return approval.Answer{}, errors.New("approval request without a tool call id")
	}
	rq := *req
	e := &entry{
		a:      Approval{ID: req.ToolCallID, Session: req.Session, Turn: req.Turn, State: StatePending, Request: &rq},
		size:   RequestSize(&rq),
		answer: make(chan approval.Answer, 1),
		final:  make(chan struct{}),
	}
	if rq.Destructive {
		e.a.ConfirmWord = rq.ConfirmWord()
	}
	if agent, ok := ctx.Value(agentKey{}).(string); ok {
		e.a.Agent = agent
	}
	b.mu.Lock()
	ownerOf, files := b.ownerOf, b.files
	b.mu.Unlock()
	if files != nil {
		// Read as the question goes out, just after the gate issued the
		// receipt the answer will be bound to.
		e.a.Files = files(&rq)
		for _, f := range e.a.Files {
			e.size += len(f.Path) + len(f.Content) + len(f.Version) + len(f.Note)
		}
	}
	if ownerOf != nil {
		e.owner = ownerOf(e.a.Session)
	}
	b.mu.Lock()
	// Taken under the lock, so that the creation times follow the order.
	e.a.Created = b.opts.Clock().UTC()
	if deadline, ok := ctx.Deadline(); ok {
		e.a.Deadline = deadline.UTC()
	} else {
		e.a.Deadline = e.a.Created.Add(b.opts.Timeout)
	}
	switch {
	case b.closed:
		b.mu.Unlock()
		return approval.Answer{}, ErrBrokerClosed
	case b.pending[e.a.ID] != nil || b.resolved[e.a.ID] != nil:
		b.mu.Unlock()
		return approval.Answer{}, fmt.Errorf("approval %s was already asked", e.a.ID)
	case len(b.pending) >= b.opts.MaxPending:
		b.mu.Unlock()
		return approval.Answer{}, fmt.Errorf("%w (%d): answer some before more are asked", ErrTooManyPending, len(b.pending))
	case b.perSess[e.a.Session] >= b.opts.MaxPendingPerSession:
		b.mu.Unlock()
		return approval.Answer{}, fmt.Errorf("%w: session %s already has %d questions waiting", ErrTooManyPending, e.a.Session, b.perSess[e.a.Session])
	case e.owner != "" && b.perOwner[e.owner] >= b.opts.MaxPendingPerToken:
		b.mu.Unlock()
		return approval.Answer{}, fmt.Errorf("%w: the sessions of the token that started session %s already have %d questions waiting", ErrTooManyPending, e.a.Session, b.perOwner[e.owner])
	case b.bytes+e.size > b.opts.MaxPendingBytes:
		b.mu.Unlock()
		return approval.Answer{}, fmt.Errorf("%w: the questions waiting hold %d bytes, this one %d more, beyond the %d allowed", ErrTooManyPending, b.bytes, e.size, b.opts.MaxPendingBytes)
	case b.ownBytes[e.owner]+e.size > b.opts.MaxPendingBytesPerToken:
		b.mu.Unlock()
		return approval.Answer{}, fmt.Errorf("%w: the questions waiting in the sessions of the token that started session %s hold %d bytes, this one %d more, beyond the %d allowed", ErrTooManyPending, e.a.Session, b.ownBytes[e.owner], e.size, b.opts.MaxPendingBytesPerToken)
	}
	b.n++
	e.n = b.n
	if b.dropped[e.a.Session] {
		// The question before may still be on the person's screen.
		e.crowded = true
		delete(b.dropped, e.a.Session)
	}
	if b.perSess[e.a.Session] > 0 {
		for _, o := range b.pending {
			if o.a.Session == e.a.Session {
				o.crowded, e.crowded = true, true
			}
		}
	}
	b.pending[e.a.ID] = e
	b.perSess[e.a.Session]++
	if e.owner != "" {
		b.perOwner[e.owner]++
	}
	b.bytes += e.size
	b.ownBytes[e.owner] += e.size
	if f, ok := b.inflight[e.a.ID]; ok {
		close(f.ch)
		delete(b.inflight, e.a.ID)
	}
	snapshot := e.a
	onPending := b.onPending
	b.mu.Unlock()

	if onPending != nil {
		onPending(snapshot)
	}

	if f, ok := ctx.Value(registeredKey{}).(func(Approval)); ok {
		f(snapshot)
	}
	select {
	case ans := <-e.answer:
		return ans, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case ans := <-e.answer:
		// The answer came in as the context ended; it was first.
		return ans, nil
	default:
	}
	if b.pending[e.a.ID] == e {
		out := &Outcome{Decision: "deny", Actor: string(gate.ActorSystem),
			Reason: string(engine.ReasonApprovalCancelled), Message: "the request was cancelled while waiting for approval"}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			out.Reason, out.Message = string(engine.ReasonApprovalTimeout), "no answer before the deadline"
		}
		b.resolveLocked(e, out)
		b.dropped[e.a.Session] = true
	}
	return approval.Answer{}, ctx.Err()
}

// RequestSize is the number of bytes a question is counted as in the
// broker's bounds: its request as JSON and its recorded question. A
// request that cannot be encoded counts as too large to hold.
func RequestSize(r *approval.Request) int {
	b, err := json.Marshal(r)
	if err != nil {
		return math.MaxInt / 4
	}
	return len(b) + len(r.Recorded)
}

// Alone reports whether approval id, pending here, has been its
// session's only pending approval ever since it was asked, and did not
// follow one that left pending without an answer; known is false
// when this broker does not hold it pending.
func (b *Broker) Alone(id string) (alone, known bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.pending[id]
	if e == nil {
		return false, false
	}
	return !e.crowded, true
}

// Reply is a person's answer to one approval.
type Reply struct {
	// Answer is the kind chosen.
	Answer approval.Kind
	// Message is passed to the model on deny.
	Message string
	// Rule is the edited rule for a remembered allow.
	Rule string
	// Confirm must equal the request's ConfirmTarget to allow a
	// destructive call.
	Confirm string
	// Via is where the person answered (approval.Answer.Via).
	Via string
}

// Answer gives the approval id the person's reply. Errors wrap
// [ErrNotFound], [ErrResolved] (the first answer wins) or [ErrBadAnswer].
// It returns the approval as resolved by the answer; the gate's final
// decision follows (see [Broker.Wait]).
func (b *Broker) Answer(id string, r Reply) (Approval, error) {
	return b.answer(id, r, "")
}

// answer is [Broker.Answer] for an answer known by answerID (that of its
// permission.answered event), which the gate records with the decision.
func (b *Broker) answer(id string, r Reply, answerID string) (Approval, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.pending[id]
	if e == nil {
		if b.resolved[id] != nil {
			return Approval{}, fmt.Errorf("%w: %s was resolved (%s); the first answer wins", ErrResolved, id, b.resolved[id].a.Decision.Reason)
		}
		return Approval{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	req := e.a.Request
	if err := checkAnswer(req, r); err != nil {
		return Approval{}, err
	}
	out := &Outcome{Decision: "allow", Reason: string(engine.ReasonUserApproved), Actor: string(gate.ActorUser), Answer: r.Answer, Message: r.Message}
	if r.Answer == approval.Deny {
		out.Decision, out.Reason = "deny", string(engine.ReasonUserDenied)
	} else if r.Answer.Remembered() {
		out.Rule = r.Rule
		if out.Rule == "" {
			out.Rule = req.SuggestedRule
		}
	}
	e.answer <- approval.Answer{Kind: r.Answer, Message: r.Message, Rule: r.Rule, Confirm: r.Confirm, ID: answerID, Via: r.Via}
	b.resolveLocked(e, out)
	return b.copyLocked(e), nil
}

// checkAnswer checks r against the question req: a destructive call is
// allowed only once, and only with its confirmation word typed.
func checkAnswer(req *approval.Request, r Reply) error {
	if !r.Answer.Valid() {
		return fmt.Errorf("%w: answer %q is not one of allow_once, allow_session, allow_project, allow_user, deny", ErrBadAnswer, r.Answer)
	}
	if req.Destructive && r.Answer.Allows() {
		if r.Answer != approval.AllowOnce {
			return fmt.Errorf("%w: the call is destructive, so only allow_once or deny are accepted, not %s", ErrBadAnswer, r.Answer)
		}
		want := req.ConfirmWord()
		if r.Confirm == "" {
			return fmt.Errorf("%w: the call is destructive: field \"confirm\" must be %q to allow it", ErrBadAnswer, want)
		}
		if !req.Confirmed(r.Confirm) {
			return fmt.Errorf("%w: field \"confirm\" must be %q to allow this destructive call, got %q", ErrBadAnswer, want, clip(r.Confirm, 80))
		}
	}
	return nil
}

// knows reports whether id is a call of this broker's: handed out by
// NewID, asking, or resolved not long ago.
func (b *Broker) knows(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, inflight := b.inflight[id]
	return inflight || b.pending[id] != nil || b.resolved[id] != nil
}

// pendingApproval returns approval id if it waits for an answer here.
func (b *Broker) pendingApproval(id string) (Approval, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.pending[id]
	if e == nil {
		return Approval{}, false
	}
	return b.copyLocked(e), true
}

// resolveLocked moves e from pending to resolved with outcome out.
func (b *Broker) resolveLocked(e *entry, out *Outcome) {
	delete(b.pending, e.a.ID)
	if b.perSess[e.a.Session]--; b.perSess[e.a.Session] <= 0 {
		delete(b.perSess, e.a.Session)
	}
	if e.owner != "" {
		if b.perOwner[e.owner]--; b.perOwner[e.owner] <= 0 {
			delete(b.perOwner, e.owner)
		}
	}
	b.bytes -= e.size
	if b.ownBytes[e.owner] -= e.size; b.ownBytes[e.owner] <= 0 {
		delete(b.ownBytes, e.owner)
	}
	// The recorded question is needed only to take an answer to it.
	if e.a.Request.Recorded != nil {
		rq := *e.a.Request
		rq.Recorded = nil
		e.a.Request = &rq
		e.size = RequestSize(&rq)
	}
	e.a.State, e.a.Decision = StateResolved, out
	b.resolved[e.a.ID] = e
	b.order = append(b.order, e.a.ID)
	b.kept += e.size
	for len(b.order) > 1 && (len(b.order) > b.opts.Keep || b.kept > b.opts.KeepBytes) {
		old := b.resolved[b.order[0]]
		b.kept -= old.size
		delete(b.resolved, b.order[0])
		b.order = b.order[1:]
	}
	if b.onWait != nil {
		b.onWait(b.opts.Clock().Sub(e.a.Created))
	}
}

// finish records the gate's final decision d for the call id, with the
// receipt rc of an allow, once the gate returned. A call that never asked
// is forgotten.
func (b *Broker) finish(id string, d *engine.Decision, rc *gate.Receipt) {
	if id == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if f, ok := b.inflight[id]; ok {
		close(f.ch)
		delete(b.inflight, id)
	}
	e := b.pending[id]
	if e != nil {
		// The gate stopped waiting before Approve returned.
		b.resolveLocked(e, &Outcome{})
	} else if e = b.resolved[id]; e == nil {
		return
	}
	if d != nil {
		out := *e.a.Decision
		out.Decision, out.Reason, out.Message = d.Decision.String(), string(d.Reason), d.Message
		out.Actor = string(gate.ActorSystem)
		if d.Reason == engine.ReasonUserApproved || d.Reason == engine.ReasonUserDenied {
			out.Actor = string(gate.ActorUser)
		} else {
			out.Answer, out.Rule = "", ""
		}
		if d.Decision != policy.Allow {
			out.Rule = ""
		}
		out.Receipt = allowReceipt(d.Decision, rc)
		e.a.Decision = &out
	}
	if !e.done {
		e.done = true
		close(e.final)
	}
}

// Wait returns approval id once the gate has recorded its final decision,
// or as it stands when ctx ends first.
func (b *Broker) Wait(ctx context.Context, id string) (Approval, error) {
	b.mu.Lock()
	e := b.resolved[id]
	if e == nil {
		e = b.pending[id]
	}
	b.mu.Unlock()
	if e == nil {
		return Approval{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	select {
	case <-e.final:
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.copyLocked(e), nil
}

// Get returns approval id. An id the gate handed out that has not reached
// the broker yet is waited for until ctx ends.
func (b *Broker) Get(ctx context.Context, id string) (Approval, error) {
	for {
		b.mu.Lock()
		e := b.pending[id]
		if e == nil {
			e = b.resolved[id]
		}
		if e != nil {
			a := b.copyLocked(e)
			b.mu.Unlock()
			return a, nil
		}
		f, ok := b.inflight[id]
		b.mu.Unlock()
		if !ok {
			return Approval{}, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		select {
		case <-f.ch:
		case <-ctx.Done():
			return Approval{}, fmt.Errorf("%w: %s", ErrNotFound, id)
		}
	}
}

// awaitInflight waits while id is in flight (handed out, not yet asking
// or finished), at most until ctx ends.
func (b *Broker) awaitInflight(ctx context.Context, id string) {
	b.mu.Lock()
	f, ok := b.inflight[id]
	b.mu.Unlock()
	if ok {
		select {
		case <-f.ch:
		case <-ctx.Done():
		}
	}
}

// List returns the approvals in state (StatePending, StateResolved, or ""
// for both) of session ("" for all), oldest first.
func (b *Broker) List(state, session string) []Approval {
	b.mu.Lock()
	defer b.mu.Unlock()
	var es []*entry
	add := func(m map[string]*entry) {
		for _, e := range m {
			if session == "" || e.a.Session == session {
				es = append(es, e)
			}
		}
	}
	if state == "" || state == StatePending {
		add(b.pending)
	}
	if state == "" || state == StateResolved {
		add(b.resolved)
	}
	slices.SortFunc(es, func(x, y *entry) int { return cmp.Compare(x.n, y.n) })
	out := make([]Approval, len(es))
	for i, e := range es {
		out[i] = b.copyLocked(e)
	}
	return out
}

// Pending returns how many approvals are pending.
func (b *Broker) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// Close makes the broker refuse new questions. Questions already pending
// end when their contexts do.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

func (b *Broker) copyLocked(e *entry) Approval {
	a := e.a
	if a.Decision != nil {
		d := *a.Decision
		a.Decision = &d
	}
	return a
}
