package gate

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/internal/userhook"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// DefaultTimeout is how long the gate waits for a person's answer when
// Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// appendTimeout bounds how long recording a decision may take once the
// caller's context is done; the decision is still written (invariant 11).
const appendTimeout = 10 * time.Second

// Actor says who made a decision, as recorded in permission.resolved.
type Actor string

// The actors the gate records.
const (
	ActorUser   Actor = "user"
	ActorPolicy Actor = "policy"
	ActorSystem Actor = "system"
	ActorHook   Actor = "hook"
	// ActorClassifier is the auto-mode classifier.
	ActorClassifier Actor = "classifier"
)

// Options configure a [Gate]. The zero value of each field means its default.
type Options struct {
	// Timeout is how long to wait for the approver; default [DefaultTimeout].
	Timeout time.Duration
	// Clock gives the time stamped on events and used for durations;
	// default time.Now.
	Clock func() time.Time
	// NewID returns a fresh tool call id; default a random "tc_" id.
	NewID func() string
	// ReceiptTTL is how long a receipt stays valid; default
	// [DefaultReceiptTTL].
	ReceiptTTL time.Duration
	// Rules saves "always allow" answers into policy files; nil means
	// such answers are taken as allow once.
	Rules RuleWriter
	// Classifier, when set, runs the gate in auto mode: asks go to the
	// classifier first, except destructive ones, and to the approver when
	// the classifier defers, fails, or its circuit breaker is open.
	Classifier approval.Classifier
	// Headless runs the gate without a person: the approver is a hook
	// (its answers are recorded with actor hook), and with no approver
	// every ask is denied with reason headless.
	Headless bool
	// LogKey signs what this gate records for other gates sharing its log
	// to act on: session approvals and leases (lease.granted events, which
	// [Gate.Adopt] checks), and questions put to a person
	// (permission.requested events, which [Gate.VerifyQuestion] checks).
	// Gates that share a log and a key share their grants and questions.
	// Nil: nothing is signed, no grant is adopted and no question verifies.
	LogKey []byte
	// Instance names the server this gate decides for among those sharing
	// its log, the same across its restarts; it is recorded, signed, on
	// every question put to a person (PermissionRequested.Holder), so that
	// the server can settle its unanswered questions when it starts again
	// and the others can tell when it is gone. "" records none.
	Instance string
	// WrapUntrusted makes [Gate.Run] wrap a tool's stdout or stderr that
	// looks like prompt injection between untrusted-output markers with a
	// note for the model ([injection.Wrap]); the log records the output as
	// the tool wrote it. False returns the output unchanged.
	WrapUntrusted bool
}

// RuleWriter saves a rule a person chose to always allow.
type RuleWriter interface {
	// SaveRule adds rule as an allow rule for scope "project" (the
	// project's local policy file under root) or "user" (the user's
	// policy file), and says where it was written.
	SaveRule(ctx context.Context, scope, root, rule string) (SavedRule, error)
}

// SavedRule is where a [RuleWriter] wrote a rule.
type SavedRule struct {
	File string
	Line int
}

// Gate decides tool calls with an engine, asks a person through an
// approver when the engine says ask, and records every step in an event
// log. It is safe for use by multiple goroutines if its approver is.
type Gate struct {
	engine   *engine.Engine
	store    eventlog.Store
	approver approval.Approver
	opts     Options
	grants   *grants
	breaker  *breaker
	redact   *Redactor
	hooks    *userhook.Runner
}

// New returns a gate. eng and store are required; approver may be nil, in
// which case every ask is denied with reason no_approver.
func New(eng *engine.Engine, store eventlog.Store, approver approval.Approver, opts Options) (*Gate, error) {
	if eng == nil {
		return nil, errors.New("gate: engine is required")
	}
	if store == nil {
		return nil, errors.New("gate: event store is required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = NewToolCallID
	}
	if opts.ReceiptTTL <= 0 {
		opts.ReceiptTTL = DefaultReceiptTTL
	}
	g := &Gate{engine: eng, store: store, approver: approver, opts: opts, breaker: newBreaker(), redact: NewRedactor(opts.LogKey),
		hooks: &userhook.Runner{Home: eng.Home()}}
	g.grants = newGrants(g)
	return g, nil
}

func (g *Gate) engineHome() string { return g.engine.Home() }

// Redactor returns the redactor the gate records with: every event it
// writes has its secrets replaced by markers keyed under Options.LogKey.
// The decisions are made on the calls as they came.
func (g *Gate) Redactor() *Redactor { return g.redact }

// The payloads of the events the gate writes.
type (
	// toolCallRequested is the payload of a model.tool_call_requested
	// event, the first event of a call a person is asked about.
	toolCallRequested struct {
		ToolCallID string `json:"toolCallId"`
		Tool       string `json:"tool"`
		*CallRequest
	}
	// PermissionRequested is the payload of a permission.requested event:
	// the question a person (or a hook, or a classifier) is asked.
	PermissionRequested struct {
		ToolCallID        string          `json:"toolCallId"`
		Tool              string          `json:"tool"`
		Args              map[string]any  `json:"args"`
		Cwd               string          `json:"cwd,omitempty"`
		Summary           string          `json:"summary,omitempty"`
		RiskAtDecision    risk.Level      `json:"riskAtDecision"`
		SourcedFrom       engine.Source   `json:"sourcedFrom"`
		Reason            engine.Reason   `json:"reason"`
		Message           string          `json:"message,omitempty"`
		Rule              string          `json:"rule,omitempty"`
		Destructive       bool            `json:"destructive,omitempty"`
		SuggestedDecision string          `json:"suggestedDecision"`
		SuggestedRule     string          `json:"suggestedRule,omitempty"`
		Units             []approval.Unit `json:"units,omitempty"`
		ConfirmTarget     string          `json:"confirmTarget,omitempty"`
		// AskedOf is who is asked first: user, hook or classifier.
		AskedOf Actor `json:"askedOf"`
		// Channel is how the person is asked when not through the
		// approver every gate sharing the log serves (see [AskThrough]),
		// such as "mcp-elicitation"; such a question is not signed, so
		// no other server lists it.
		Channel  string    `json:"channel,omitempty"`
		Deadline time.Time `json:"deadline"`
		// Holder is the Options.Instance of the gate that holds the
		// question, when it has one.
		Holder string `json:"holder,omitempty"`
		// Sig signs a question asked of the user, under Options.LogKey
		// ([Gate.VerifyQuestion]).
		Sig string `json:"sig,omitempty"`
	}
	// CallRequest is the call as the agent asked for it, as a
	// model.tool_call_requested event carries it. A permission.resolved
	// event of a call decided without a person carries it too (its
	// fields inline): that event is then the call's only one, and no
	// model.tool_call_requested precedes it. Input is never null there,
	// so a reader tells such an event by its "input" ([CarriesCall]).
	CallRequest struct {
		Input  map[string]any `json:"input"`
		Cwd    string         `json:"cwd,omitempty"`
		Agent  string         `json:"agent,omitempty"`
		Parent string         `json:"parentAgent,omitempty"`
		// Workspace is the workspace the call's session is bound to
		// (engine.Request.Workspace): "/" for none.
		Workspace string `json:"workspace,omitempty"`
	}
	// PermissionResolved is the payload of a permission.resolved event:
	// the decision and who made it.
	PermissionResolved struct {
		ToolCallID     string          `json:"toolCallId"`
		Tool           string          `json:"tool"`
		Decision       policy.Decision `json:"decision"`
		Reason         engine.Reason   `json:"reason"`
		Actor          Actor           `json:"actor"`
		RiskAtDecision risk.Level      `json:"riskAtDecision"`
		SourcedFrom    engine.Source   `json:"sourcedFrom"`
		Rule           string          `json:"rule,omitempty"`
		RuleOrigin     string          `json:"ruleOrigin,omitempty"`
		// PolicyVersion names the contents of the policy files the
		// call was judged under (engine.Decision.PolicyVersion).
		PolicyVersion string `json:"policyVersion,omitempty"`
		Message       string `json:"message"`
		// Answer is the kind the person chose, when a person answered.
		Answer approval.Kind `json:"answer,omitempty"`
		// AnswerID is the id of the answer taken (approval.Answer.ID),
		// when it has one.
		AnswerID string `json:"answerId,omitempty"`
		// Via is where the person answered (approval.Answer.Via):
		// "terminal", "page", "link" or "api"; empty when unknown.
		Via string `json:"via,omitempty"`
		// Scope is how long an allow holds: "once", "session", "project"
		// or "user". The gate records it; remembering is done elsewhere.
		Scope string `json:"scope,omitempty"`
		// Downgraded reports that a remembered allow was given for a
		// destructive call and taken as allow once.
		Downgraded bool   `json:"downgraded,omitempty"`
		TimeoutMs  int64  `json:"timeoutMs,omitempty"`
		Error      string `json:"error,omitempty"`
		// Channel is the channel the person answered through, when the
		// question went through one of its own ([AskThrough]).
		Channel string `json:"channel,omitempty"`
		// Grant is the session approval or lease that allowed the call,
		// or the session approval this answer created.
		Grant string `json:"grant,omitempty"`
		// Receipt binds an allow to what was allowed.
		Receipt *Receipt `json:"receipt,omitempty"`
		// BreakerOpened reports that this classifier denial opened the
		// auto-mode circuit breaker for the session.
		BreakerOpened bool `json:"breakerOpened,omitempty"`
		// CallRequest is the call, on a decision made without a person
		// (the call's only event); nil on the decision of a question,
		// whose call its model.tool_call_requested holds.
		*CallRequest
	}
)

// CarriesCall reports whether an event of type typ whose payload's
// "input" is input records a call as the agent asked for it: a
// model.tool_call_requested, or the permission.resolved of a call decided
// without a person, whose "input" is a JSON object ([CallRequest]). Any
// other permission.resolved (the answer to a question, or a decision of a
// log written before, whose model.tool_call_requested precedes it) ends a
// call recorded by an earlier event. The readers of the log (audit,
// replay, stats) tell the two apart with this alone.
func CarriesCall(typ eventlog.Type, input json.RawMessage) bool {
	switch typ {
	case eventlog.TypeToolCallRequested:
		return true
	case eventlog.TypePermissionResolved:
		in := bytes.TrimLeft(input, " \t\r\n")
		return len(in) > 0 && in[0] == '{'
	}
	return false
}

// callRequest returns the call req asks for, as its events record it.
func callRequest(req *engine.Request) *CallRequest {
	in := req.Input
	if in == nil {
		in = map[string]any{}
	}
	return &CallRequest{Input: in, Cwd: req.Cwd, Agent: req.Agent, Parent: req.Parent, Workspace: req.Workspace}
}

// Check decides req and records it as events of session req.Session, in
// turn turn (which may be empty). It returns the final decision: the
// engine's, or — when the engine asked — the answer of the classifier, the
// hook or the person, or a deny.
//
// Check fails only when the request has no session or the event log
// cannot be written; the returned decision is then a deny, so a caller that
// ignores the error still fails closed.
func (g *Gate) Check(ctx context.Context, req *engine.Request, turn string) (*engine.Decision, error) {
	v, err := g.decide(ctx, req, turn)
	return v.d, err
}

// CheckCall is [Gate.Check] that also returns the tool call id its events
// carry (the id an approval of the call is known by).
func (g *Gate) CheckCall(ctx context.Context, req *engine.Request, turn string) (*engine.Decision, string, error) {
	v, err := g.decide(ctx, req, turn)
	return v.d, v.id, err
}

// verdict is a decided call: the decision, the tool call id, the call in
// normalized form and, for an allow, its receipt.
type verdict struct {
	d       *engine.Decision
	id      string
	call    *engine.Call
	receipt *Receipt
}

func (g *Gate) decide(ctx context.Context, req *engine.Request, turn string) (verdict, error) {
	v, q, err := g.begin(ctx, req, turn)
	if q == nil {
		return v, err
	}
	return q.wait(ctx)
}

// Question is a call the gate could not decide alone, between its
// permission.requested event and its answer: see [Gate.Begin].
type Question struct {
	g           *Gate
	req         *engine.Request
	turn        string
	id          string
	d           *engine.Decision
	call        *engine.Call
	res         PermissionResolved
	ar          *approval.Request
	question    PermissionRequested // as first recorded
	askedOf     Actor
	destructive bool
	suggested   string
	userRule    string // suggested with its path absolute, for the user's policy
	bound       *Receipt
	via         *through // the caller's channel to the person, or nil
	waited      atomic.Bool
}

// Begin decides req as [Gate.CheckCall] does, up to the point where a
// person or a classifier would be asked. An allow or a deny comes back at
// once, recorded, with q nil. A call that needs an answer comes back as
// the ask decision with q non-nil and its question already in the log;
// the caller must then call q.Wait exactly once, which asks, waits and
// records the answer. A server uses Begin to answer "pending" without
// holding a goroutine for the calls that need no one.
func (g *Gate) Begin(ctx context.Context, req *engine.Request, turn string) (d *engine.Decision, id string, q *Question, err error) {
	v, q, err := g.begin(ctx, req, turn)
	return v.d, v.id, q, err
}

// Wait asks about the call Begin returned q for, waits for the answer (or
// the timeout, or ctx) and records it, as [Gate.CheckCall] would. A second
// Wait on the same question denies without asking again.
//
// The answer applies to the call as it was when the question was asked:
// when a file the call depends on changed in the meantime, the call is
// denied with reason receipt_invalid and nothing is remembered from the
// answer.
func (q *Question) Wait(ctx context.Context) (*engine.Decision, error) {
	v, err := q.wait(ctx)
	return v.d, err
}

// Outcome is a decided call as [Gate.BeginCall] and [Question.WaitCall]
// return it.
type Outcome struct {
	Decision *engine.Decision
	// ToolCallID is the id the call's events carry.
	ToolCallID string
	// Receipt binds an allow to what was allowed (see [Gate.Verify]); it
	// is nil unless Decision is an allow. The call should be checked
	// against it just before it runs.
	Receipt *Receipt
}

// BeginCall is [Gate.Begin] that also returns the receipt of an allow.
func (g *Gate) BeginCall(ctx context.Context, req *engine.Request, turn string) (Outcome, *Question, error) {
	v, q, err := g.begin(ctx, req, turn)
	return v.outcome(), q, err
}

// WaitCall is [Question.Wait] that also returns the receipt of an allow.
func (q *Question) WaitCall(ctx context.Context) (Outcome, error) {
	v, err := q.wait(ctx)
	return v.outcome(), err
}

func (v verdict) outcome() Outcome {
	o := Outcome{Decision: v.d, ToolCallID: v.id}
	if v.d != nil && v.d.Decision == policy.Allow {
		o.Receipt = v.receipt
	}
	return o
}

// begin is the part of a decision that needs no one: it returns the
// recorded verdict, or a question still to be asked.
func (g *Gate) begin(ctx context.Context, req *engine.Request, turn string) (verdict, *Question, error) {
	if req == nil {
		return verdict{d: systemDeny(engine.ReasonInvalidRequest, "no request")}, nil, errors.New("gate: nil request")
	}
	if req.Session == "" {
		return verdict{d: systemDeny(engine.ReasonInvalidRequest, "the request names no session")}, nil, errors.New("gate: request has no session")
	}
	id := g.opts.NewID()
	// The events up to the decision (or the question) are written in one
	// append: one commit, and never a request without its outcome. A call
	// decided without a person is one permission.resolved event that
	// carries the call; a call a person is asked about is recorded as
	// model.tool_call_requested, then permission.requested (and, once
	// answered, permission.resolved). Either way the call is recorded as
	// the agent asked for it, before any user hook changed it.
	var pending []eventlog.Draft
	var encodeErr error
	add := func(typ eventlog.Type, payload any) {
		// A question was redacted before it was signed, so the redaction
		// of draft leaves its bytes as they are.
		d, err := g.draft(turn, typ, payload)
		if err != nil {
			encodeErr = cmp.Or(encodeErr, err)
			return
		}
		pending = append(pending, d)
	}
	flush := func() error {
		if encodeErr != nil {
			// A chain with a hole is not written, and the call is denied.
			return encodeErr
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
		defer cancel()
		if _, err := g.store.Append(actx, req.Session, pending...); err != nil {
			return fmt.Errorf("gate: record the decision: %w", err)
		}
		return nil
	}

	lk := &lookup{gr: g.grants}
	decide := func(req *engine.Request) (*engine.Decision, *engine.Call) {
		d, call := g.engine.Decide(ctx, req, lk)
		for _, r := range lk.revoked {
			add(eventlog.TypeLeaseRevoked, revokedPayload(r))
		}
		lk.revoked = nil
		return d, call
	}
	d, call := decide(req)
	// The call as the agent asked for it, without a secret that its
	// words hold.
	logReq, _ := g.loggedRequest(req, call)
	asked := toolCallRequested{ToolCallID: id, Tool: req.Tool, CallRequest: callRequest(logReq)}
	if len(d.Hooks) > 0 {
		// The policy's user hooks: none configured costs nothing.
		req, d, call = g.preToolUse(ctx, req, id, d, call, decide, add)
		if d.Decision == policy.Ask {
			d = g.permissionRequest(ctx, req, id, d, add)
		}
	}
	actor := ActorPolicy
	if d.Source == engine.SourceHook {
		actor = ActorHook
	}
	res := PermissionResolved{
		ToolCallID: id, Tool: req.Tool, Decision: d.Decision, Reason: d.Reason,
		Actor: actor, RiskAtDecision: d.Risk, SourcedFrom: d.Source,
		Rule: d.Rule, RuleOrigin: d.RuleOrigin, Message: d.Message, Grant: d.Grant,
		PolicyVersion: d.PolicyVersion,
	}
	if d.Decision != policy.Ask {
		v := verdict{d: d, id: id, call: call}
		if d.Decision == policy.Allow {
			v.receipt = g.issue(id, call)
			res.Receipt = v.receipt
		}
		res.CallRequest = asked.CallRequest
		add(eventlog.TypePermissionResolved, res)
		if err := flush(); err != nil {
			return verdict{d: systemDeny(engine.ReasonPolicyError, "the event log could not be written"), id: id}, nil, err
		}
		return v, nil, nil
	}

	destructive := d.Risk == risk.Destructive
	// The call as the person is shown it: a command whose words hold a
	// secret its text still gives back is shown as markers, and no rule
	// is suggested from it.
	shown, hidden := g.loggedRequest(req, call)
	arg, summary := describe(shown, g.redact)
	suggested, userRule := "", ""
	if !destructive && !hidden {
		// A destructive call is never remembered, so no rule is offered.
		root := ""
		if call != nil {
			root = call.Root
		}
		suggested = approval.SuggestIn(req.Tool, arg, req.Cwd, root)
		userRule = approval.SuggestAbsolute(req.Tool, arg, req.Cwd)
	}
	target := ""
	if destructive {
		target = confirmTarget(call, arg, g.redact)
	}
	askedOf := ActorUser
	via := throughOf(ctx)
	switch {
	case via != nil:
		// The caller's channel reaches the person: no classifier or hook.
	case g.opts.Classifier != nil && !destructive && d.Source == engine.SourceDefault && !g.breaker.open(req.Session):
		// Only the asks of the default risk table: an ask rule, a
		// protected path, approval=always or a call that cannot be judged
		// is a person's to answer, never a classifier's.
		askedOf = ActorClassifier
	case g.opts.Headless:
		askedOf = ActorHook
	}
	question := PermissionRequested{
		ToolCallID: id, Tool: req.Tool, Args: shown.Input, Cwd: req.Cwd, Summary: summary, RiskAtDecision: d.Risk,
		SourcedFrom: d.Source, Reason: d.Reason, Message: d.Message, Rule: d.Rule,
		Destructive: destructive, SuggestedDecision: "ask", SuggestedRule: suggested,
		Units: units(call), ConfirmTarget: target, AskedOf: askedOf,
		Deadline: g.opts.Clock().Add(g.opts.Timeout).UTC(), Holder: g.opts.Instance,
	}
	if via != nil {
		question.Channel = via.channel
	}
	// The question is shown, signed and recorded without its secrets: what
	// is signed is what the log holds, and a person (or a classifier, or
	// a hook) sees what the log shows. A destructive call is confirmed by
	// typing its redacted target. A suggested rule that held a secret is
	// not offered, so no rule with a marker in place of the secret is
	// written to a policy file.
	if red, changed, err := redactJSON(g.redact, question); err != nil {
		encodeErr = cmp.Or(encodeErr, fmt.Errorf("gate: redact the question: %w", err))
	} else if changed {
		if red.SuggestedRule != suggested {
			red.SuggestedRule, suggested, userRule = "", "", ""
		}
		question = red
	}
	ar := &approval.Request{
		Session: req.Session, Turn: turn, ToolCallID: id, Tool: question.Tool, Input: question.Args,
		Cwd: question.Cwd, Reason: string(d.Reason), Message: question.Message, Risk: d.Risk.String(),
		Rule: question.Rule, Summary: question.Summary, Destructive: destructive, SuggestedRule: question.SuggestedRule,
		Units: question.Units, ConfirmTarget: question.ConfirmTarget,
	}
	if askedOf == ActorUser && via == nil {
		question.Sig = g.signQuestion(req.Session, question)
	}
	// The receipt binds what the person is asked about, as it is when the
	// question goes out: the answer applies to that and to nothing else
	// (see wait), and a session approval it creates is built from it.
	bound := g.issue(id, call)
	if first, err := g.draft(turn, eventlog.TypeToolCallRequested, asked); err != nil {
		encodeErr = cmp.Or(encodeErr, err)
	} else {
		pending = slices.Insert(pending, 0, first)
	}
	add(eventlog.TypePermissionRequested, question)
	if askedOf == ActorUser && encodeErr == nil {
		ar.Recorded = pending[len(pending)-1].Payload
	}
	if err := flush(); err != nil {
		out := *d
		out.Decision, out.Reason, out.Message = policy.Deny, engine.ReasonPolicyError, "the event log could not be written"
		return verdict{d: &out, id: id, call: call}, nil, err
	}

	q := &Question{
		g: g, req: req, turn: turn, id: id, d: d, call: call, res: res, ar: ar, question: question,
		askedOf: askedOf, destructive: destructive, suggested: suggested, userRule: userRule, bound: bound, via: via,
	}
	return verdict{d: d, id: id, call: call}, q, nil
}

// wait is the part of a decision that waits for an answer.
func (q *Question) wait(ctx context.Context) (verdict, error) {
	g, req, turn, id, d, call, ar := q.g, q.req, q.turn, q.id, q.d, q.call, q.ar
	askedOf, destructive, suggested, userRule, bound := q.askedOf, q.destructive, q.suggested, q.userRule, q.bound
	res := q.res
	if q.waited.Swap(true) {
		out := *d
		out.Decision, out.Reason, out.Message = policy.Deny, engine.ReasonPolicyError, "the question was already answered"
		return verdict{d: &out, id: id, call: call}, errors.New("gate: Wait called twice on one question")
	}
	res.TimeoutMs = g.opts.Timeout.Milliseconds()
	res.Rule, res.RuleOrigin = "", ""
	out := *d
	out.Trace = nil
	setDeny := func(reason engine.Reason, actor Actor, msg string) {
		res.Decision, res.Reason, res.Actor, res.Message = policy.Deny, reason, actor, msg
	}
	// asAsked reports whether the call is still what the question showed:
	// an answer applies only to that. A call that changed while the
	// question was open is denied (receipt_invalid) and nothing is
	// remembered from the answer. A call the engine could not analyse
	// has no receipt: an allow of it is taken as allow once, and Run
	// does not run it.
	asAsked := func() bool {
		if bound == nil {
			return true
		}
		err := g.holds(ctx, req, bound, "since the question was asked")
		if err == nil {
			return true
		}
		setDeny(engine.ReasonReceiptInvalid, ActorSystem,
			"the call changed while the question was open, so the answer does not apply to it: "+err.Error())
		res.SourcedFrom, res.Scope, res.Grant = engine.SourceSafety, "", ""
		out.Source = engine.SourceSafety
		return false
	}

	approver, headless := g.approver, g.opts.Headless
	if q.via != nil {
		approver, headless = q.via.approver, false
		res.Channel = q.via.channel
	}
	answered := false
	if askedOf == ActorClassifier {
		answered = g.classify(ctx, ar, &res)
		if !answered && g.approver != nil && !g.opts.Headless && ctx.Err() == nil {
			// Handed to a person: a question of its own in the log, which
			// every server sharing it lists.
			if err := g.handOver(ctx, q); err != nil {
				res.Decision, res.Reason, res.Actor = policy.Deny, engine.ReasonPolicyError, ActorSystem
				res.Message, res.Error = "the question to a person could not be recorded, so the call is denied", err.Error()
				out.Decision, out.Reason, out.Message = res.Decision, res.Reason, res.Message
				_ = g.resolve(ctx, req.Session, turn, res)
				return verdict{d: &out, id: id, call: call}, err
			}
		}
	}
	switch {
	case answered:
		if res.Decision == policy.Allow {
			asAsked()
		}
	case approver == nil && headless:
		setDeny(engine.ReasonHeadless, ActorSystem, "running headless and no hook answered, so the call is denied")
	case approver == nil:
		setDeny(engine.ReasonNoApprover, ActorSystem, "no approver is configured to ask a person, so the call is denied")
	default:
		actor := ActorUser
		if headless {
			actor = ActorHook
		}
		ans, outcome, err := g.ask(ctx, approver, ar)
		switch outcome {
		case outcomeTimeout:
			setDeny(engine.ReasonApprovalTimeout, ActorSystem,
				fmt.Sprintf("no answer within %s, so the call is denied", g.opts.Timeout))
		case outcomeCancelled:
			setDeny(engine.ReasonApprovalCancelled, ActorSystem,
				cancelledWhy(err))
			res.Error = err.Error()
		default:
			res.AnswerID, res.Via = ans.ID, ans.Via
			if err == nil {
				err = ans.Validate()
			}
			switch {
			case err != nil:
				setDeny(engine.ReasonApproverError, ActorSystem, "the approver failed, so the call is denied: "+err.Error())
				res.Error = err.Error()
			case destructive && ans.Kind.Allows() && !ar.Confirmed(ans.Confirm):
				setDeny(engine.ReasonUserDenied, actor, fmt.Sprintf("the destructive call was not confirmed: allowing it needs the person to type %q", ar.ConfirmTarget))
				res.Answer = ans.Kind
			case ans.Kind == approval.Deny:
				msg := ans.Message
				if msg == "" {
					msg = "the user denied the call"
				}
				setDeny(engine.ReasonUserDenied, actor, msg)
				res.Answer = ans.Kind
			case !asAsked():
				res.Answer = ans.Kind
			default:
				res.Decision, res.Reason, res.Actor = policy.Allow, engine.ReasonUserApproved, actor
				res.Answer = ans.Kind
				res.Scope = scopeOf(ans.Kind)
				res.Message = fmt.Sprintf("user approved (%s)", ans.Kind)
				if ans.Kind.Remembered() {
					if destructive || call == nil {
						res.Scope, res.Downgraded = "once", true
						res.Message = fmt.Sprintf("user approved (%s, taken as allow_once: destructive calls are never remembered)", ans.Kind)
					} else if err := g.remember(ctx, turn, ans, suggested, userRule, call, bound, &res); err != nil {
						// What was remembered cannot be shown in the log:
						// the call is not allowed.
						res.Decision, res.Reason, res.Actor = policy.Deny, engine.ReasonPolicyError, ActorSystem
						res.Message, res.Error = "the approval could not be recorded, so the call is denied", err.Error()
						res.Receipt = nil
						out.Decision, out.Reason, out.Message = res.Decision, res.Reason, res.Message
						_ = g.resolve(ctx, req.Session, turn, res)
						return verdict{d: &out, id: id, call: call}, err
					}
				}
				if ans.Message != "" {
					res.Message += ": " + ans.Message
				}
			}
		}
	}
	out.Decision, out.Reason, out.Message, out.Grant = res.Decision, res.Reason, res.Message, res.Grant
	v := verdict{d: &out, id: id, call: call}
	switch {
	case out.Decision == policy.Allow && bound != nil:
		bound.Expires = g.opts.Clock().Add(g.opts.ReceiptTTL)
		v.receipt, res.Receipt = bound, bound
	case res.Reason == engine.ReasonReceiptInvalid:
		// The receipt of what was asked, for the audit: what the answer
		// would have applied to.
		res.Receipt = bound
	}
	if err := g.resolve(ctx, req.Session, turn, res); err != nil {
		// An answer the log does not hold is not acted on.
		out.Decision, out.Reason, out.Message = policy.Deny, engine.ReasonPolicyError, "the event log could not be written, so the call is denied"
		return verdict{d: &out, id: id, call: call}, err
	}
	return v, nil
}

// remember makes a remembered allow outlive the call: a session approval,
// or a rule written to a policy file. res records what was remembered.
// A session approval is built from bound, the receipt of the call as it
// was when the question was asked.
//
// The suggested rule names a path inside the project relative to the
// project root; kept in the user's policy, which holds for every project,
// it is kept as userRule, with the path absolute, so that it allows no
// more there than was seen.
func (g *Gate) remember(ctx context.Context, turn string, ans approval.Answer, suggested, userRule string, call *engine.Call, bound *Receipt, res *PermissionResolved) error {
	req := call.Request
	if ans.Kind == approval.AllowSession {
		if why := call.UnseenDependency(); why != "" || bound == nil {
			if why == "" {
				why = "the call has no receipt"
			}
			res.Scope, res.Downgraded = "once", true
			res.Message = fmt.Sprintf("user approved (%s, taken as allow_once: %s, so a later call cannot be checked against this one)", ans.Kind, why)
			return nil
		}
		shown, _ := g.loggedRequest(req, call)
		_, summary := describe(shown, g.redact)
		summary = g.redact.String(summary)
		sa := newSessionApproval(call, bound, "sa_"+strings.TrimPrefix(res.ToolCallID, "tc_"), res.ToolCallID, summary, g.opts.Clock())
		if err := g.record(ctx, req.Session, turn, eventlog.TypeLeaseGranted, g.signGrant(req.Session, sa.rec)); err != nil {
			return err
		}
		// Kept only once the log holds it.
		g.grants.keep(sa)
		res.Grant = sa.id
		return nil
	}
	rule := ans.Rule
	if rule == "" {
		rule = suggested
		if res.Scope == "user" && userRule != "" {
			rule = userRule
		}
	}
	res.Rule = rule
	if rule == "" {
		res.Scope, res.Downgraded = "once", true
		res.Message = fmt.Sprintf("user approved (%s, taken as allow_once: no single rule covers this call)", ans.Kind)
		return nil
	}
	if g.opts.Rules == nil {
		res.Scope, res.Downgraded = "once", true
		res.Message = fmt.Sprintf("user approved (%s, taken as allow_once: this gate writes no policy files)", ans.Kind)
		return nil
	}
	saved, err := g.opts.Rules.SaveRule(ctx, res.Scope, call.Root, rule)
	if err != nil {
		res.Scope, res.Downgraded = "once", true
		res.Message = fmt.Sprintf("user approved (%s, taken as allow_once: the rule was not saved: %v)", ans.Kind, err)
		res.Error = err.Error()
		return nil
	}
	res.RuleOrigin = fmt.Sprintf("%s:%d", saved.File, saved.Line)
	g.engine.Forget()
	return g.record(ctx, req.Session, turn, eventlog.TypePolicyChanged, map[string]any{
		"toolCallId": res.ToolCallID, "change": "rule_added", "decision": "allow", "rule": rule,
		"file": saved.File, "line": saved.Line, "scope": res.Scope, "actor": ActorUser,
	})
}

// issue makes the receipt of an allowed call.
func (g *Gate) issue(id string, call *engine.Call) *Receipt {
	if call == nil {
		return nil
	}
	return &Receipt{
		ID: "rc_" + strings.TrimPrefix(id, "tc_"), ToolCallID: id, Tool: string(call.Tool), ArgsHash: argsHash(call),
		Cwd: call.Cwd, Resources: resources(call), Expires: g.opts.Clock().Add(g.opts.ReceiptTTL),
	}
}

// Verify checks, just before an allowed call runs, that req is still the
// call rc was issued for: the same tool and normalized arguments, the same
// real working directory, every resource at the same real path in the same
// version, and rc not expired. It returns nil only when all hold.
func (g *Gate) Verify(ctx context.Context, req *engine.Request, rc *Receipt) error {
	if rc == nil {
		return errors.New("no receipt: the call was not allowed")
	}
	if now := g.opts.Clock(); !now.Before(rc.Expires) {
		return fmt.Errorf("receipt %s expired at %s", rc.ID, rc.Expires.UTC().Format(time.RFC3339))
	}
	return g.holds(ctx, req, rc, "after the call was allowed")
}

// holds is Verify without the expiry: req is still the call rc was issued
// for. since says when rc was issued, for the error.
func (g *Gate) holds(ctx context.Context, req *engine.Request, rc *Receipt, since string) error {
	if rc == nil {
		return errors.New("no receipt: the call cannot be analysed")
	}
	_, call := g.engine.Decide(ctx, req, noPrior{})
	if call == nil {
		return fmt.Errorf("receipt %s: the call can no longer be analysed", rc.ID)
	}
	switch {
	case string(call.Tool) != rc.Tool:
		return fmt.Errorf("receipt %s: the tool changed from %s to %s", rc.ID, rc.Tool, call.Tool)
	case call.Cwd != rc.Cwd:
		return fmt.Errorf("receipt %s: the working directory is now %s, not %s", rc.ID, call.Cwd, rc.Cwd)
	case argsHash(call) != rc.ArgsHash:
		return fmt.Errorf("receipt %s: the arguments changed %s", rc.ID, since)
	}
	now := resources(call)
	if r := changed(rc.Resources, now); r != nil {
		return fmt.Errorf("receipt %s: %s changed %s", rc.ID, r.Path, since)
	}
	if r := changed(now, rc.Resources); r != nil {
		return fmt.Errorf("receipt %s: the call now touches %s", rc.ID, r.Path)
	}
	return nil
}

// noPrior is a PriorApprovals that knows none.
type noPrior struct{}

func (noPrior) Lookup(context.Context, *engine.Call) (engine.Grant, bool) {
	return engine.Grant{}, false
}

// The reason a wait for an approver ended.
type outcome int

const (
	outcomeAnswered outcome = iota
	outcomeTimeout
	outcomeCancelled
)

// handOver records that the classifier left q to a person: a
// permission.requested event asked of the user, with a deadline of its
// own, whose payload q's request then carries (approval.Request.Recorded).
func (g *Gate) handOver(ctx context.Context, q *Question) error {
	p := q.question
	p.AskedOf = ActorUser
	p.Deadline = g.opts.Clock().Add(g.opts.Timeout).UTC()
	p.Sig = g.signQuestion(q.req.Session, p)
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("gate: encode %s: %w", eventlog.TypePermissionRequested, err)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	if _, err := g.store.Append(actx, q.req.Session, eventlog.Draft{Turn: q.turn, Time: g.opts.Clock(), Type: eventlog.TypePermissionRequested, Payload: raw}); err != nil {
		return fmt.Errorf("gate: record the question: %w", err)
	}
	q.ar.Recorded = raw
	return nil
}

// ask puts ar to the approver and waits at most the timeout; it stops
// waiting at once when ctx is done, even if the approver does not.
func (g *Gate) ask(ctx context.Context, approver approval.Approver, ar *approval.Request) (approval.Answer, outcome, error) {
	actx, cancel := context.WithTimeout(ctx, g.opts.Timeout)
	defer cancel()
	type result struct {
		a   approval.Answer
		err error
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- result{approval.Answer{Kind: approval.Deny}, fmt.Errorf("approver panicked: %v", p)}
			}
		}()
		a, err := approver.Approve(actx, ar)
		ch <- result{a, err}
	}()
	select {
	case r := <-ch:
		// An approver that returns because its context ended did not answer.
		if ctx.Err() != nil {
			return approval.Answer{}, outcomeCancelled, ctx.Err()
		}
		if actx.Err() != nil && r.err != nil && errors.Is(r.err, actx.Err()) {
			return approval.Answer{}, outcomeTimeout, actx.Err()
		}
		return r.a, outcomeAnswered, r.err
	case <-actx.Done():
		if ctx.Err() != nil {
			return approval.Answer{}, outcomeCancelled, ctx.Err()
		}
		return approval.Answer{}, outcomeTimeout, actx.Err()
	}
}

func scopeOf(k approval.Kind) string {
	switch k {
	case approval.AllowSession:
		return "session"
	case approval.AllowProject:
		return "project"
	case approval.AllowUser:
		return "user"
	}
	return "once"
}

// resolve writes the permission.resolved event. It is written even when
// ctx is already done, since a decision must never be lost.
func (g *Gate) resolve(ctx context.Context, session, turn string, res PermissionResolved) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	return g.append(actx, session, turn, eventlog.TypePermissionResolved, res)
}

func (g *Gate) append(ctx context.Context, session, turn string, typ eventlog.Type, payload any) error {
	d, err := g.draft(turn, typ, payload)
	if err != nil {
		return err
	}
	_, err = g.store.Append(ctx, session, d)
	if err != nil {
		return fmt.Errorf("gate: record %s: %w", typ, err)
	}
	return nil
}

// draft encodes payload as an event of type typ, with the secrets in it
// redacted: no secret at rest.
func (g *Gate) draft(turn string, typ eventlog.Type, payload any) (eventlog.Draft, error) {
	raw, err := json.Marshal(payload)
	if err == nil {
		raw, err = g.redact.valid(raw) // json.Marshal gives valid JSON
	}
	if err != nil {
		return eventlog.Draft{}, fmt.Errorf("gate: encode %s: %w", typ, err)
	}
	return eventlog.Draft{Turn: turn, Time: g.opts.Clock(), Type: typ, Payload: raw}, nil
}

func systemDeny(reason engine.Reason, msg string) *engine.Decision {
	return &engine.Decision{Decision: policy.Deny, Reason: reason, Message: msg, Risk: risk.Execute, Source: engine.SourceTool}
}

// describe returns the argument a rule suggestion is made from (the
// command, path or URL) and a one-line summary of the call for a person,
// with the secrets red finds redacted.
func describe(req *engine.Request, red *Redactor) (arg, summary string) {
	for _, k := range []string{"command", "cmd", "file_path", "path", "absolute_path", "notebook_path", "url"} {
		switch v := req.Input[k].(type) {
		case string:
			arg = v
		case []any:
			var parts []string
			for _, p := range v {
				s, ok := p.(string)
				if !ok {
					parts = nil
					break
				}
				parts = append(parts, s)
			}
			arg = strings.Join(parts, " ")
		}
		if arg != "" {
			break
		}
	}
	summary = req.Tool
	if arg != "" {
		summary += ": " + oneLine(red, arg, 200)
	}
	return arg, summary
}

// oneLine returns s on one line, its secrets redacted by red, cut to at
// most n bytes on a character boundary. The secrets are redacted first: a
// secret cut in two is no longer recognised, and its first part would be
// shown, recorded and sent on.
func oneLine(red *Redactor, s string, n int) string {
	return termtext.OneLine(red.String(s), n)
}

// units describes the call's parts for a person.
func units(call *engine.Call) []approval.Unit {
	if call == nil {
		return nil
	}
	out := make([]approval.Unit, 0, len(call.Units))
	for _, u := range call.Units {
		au := approval.Unit{Label: u.Label, Risk: u.Risk.String(), Decision: u.Decision.String(), Reason: string(u.Reason)}
		for _, p := range u.Reads {
			au.Reads = append(au.Reads, shownPath(p))
		}
		for _, p := range u.Writes {
			if p.Delete {
				au.Deletes = append(au.Deletes, shownPath(p))
			} else {
				au.Writes = append(au.Writes, shownPath(p))
			}
		}
		for _, h := range u.Hosts {
			au.Hosts = append(au.Hosts, h.Host)
		}
		out = append(out, au)
	}
	return out
}

func shownPath(p engine.PathFact) string {
	if p.Real != "" {
		return p.Real
	}
	return p.Requested
}

// cancelledWhy says, in a decision's message, why a question was given up
// before it was answered; the error itself is recorded apart.
func cancelledWhy(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "the call was withdrawn (the agent, the connection or the server stopped) before anyone answered, so it is denied"
	case errors.Is(err, context.DeadlineExceeded):
		return "the call's own deadline passed before anyone answered, so it is denied"
	}
	return "the question was given up before anyone answered, so the call is denied"
}
