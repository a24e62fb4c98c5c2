package gate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
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
}

// Gate decides tool calls with an engine, asks a person through an
// approver when the engine says ask, and records every step in an event
// log. It is safe for use by multiple goroutines if its approver is.
type Gate struct {
	engine   *engine.Engine
	store    eventlog.Store
	approver approval.Approver
	opts     Options
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
		opts.NewID = randomID
	}
	return &Gate{engine: eng, store: store, approver: approver, opts: opts}, nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "tc_" + hex.EncodeToString(b[:])
}

// The payloads of the events the gate writes.
type (
	toolCallRequested struct {
		ToolCallID string         `json:"toolCallId"`
		Tool       string         `json:"tool"`
		Input      map[string]any `json:"input"`
		Cwd        string         `json:"cwd"`
	}
	permissionRequested struct {
		ToolCallID        string         `json:"toolCallId"`
		Tool              string         `json:"tool"`
		Args              map[string]any `json:"args"`
		RiskAtDecision    risk.Level     `json:"riskAtDecision"`
		SourcedFrom       engine.Source  `json:"sourcedFrom"`
		Reason            engine.Reason  `json:"reason"`
		Message           string         `json:"message,omitempty"`
		Rule              string         `json:"rule,omitempty"`
		Destructive       bool           `json:"destructive,omitempty"`
		SuggestedDecision string         `json:"suggestedDecision"`
		SuggestedRule     string         `json:"suggestedRule,omitempty"`
	}
	permissionResolved struct {
		ToolCallID     string          `json:"toolCallId"`
		Tool           string          `json:"tool"`
		Decision       policy.Decision `json:"decision"`
		Reason         engine.Reason   `json:"reason"`
		Actor          Actor           `json:"actor"`
		RiskAtDecision risk.Level      `json:"riskAtDecision"`
		SourcedFrom    engine.Source   `json:"sourcedFrom"`
		Rule           string          `json:"rule,omitempty"`
		RuleOrigin     string          `json:"ruleOrigin,omitempty"`
		Message        string          `json:"message"`
		// Answer is the kind the person chose, when a person answered.
		Answer approval.Kind `json:"answer,omitempty"`
		// Scope is how long an allow holds: "once", "session", "project"
		// or "user". The gate records it; remembering is done elsewhere.
		Scope string `json:"scope,omitempty"`
		// Downgraded reports that a remembered allow was given for a
		// destructive call and taken as allow once.
		Downgraded bool   `json:"downgraded,omitempty"`
		TimeoutMs  int64  `json:"timeoutMs,omitempty"`
		Error      string `json:"error,omitempty"`
	}
)

// Check decides req and records it as events of session req.Session, in
// turn turn (which may be empty). It returns the final decision: the
// engine's, or — when the engine asked — the person's answer or a deny.
//
// Check fails only when the request has no session or the event log
// cannot be written; the returned decision is then a deny, so a caller that
// ignores the error still fails closed.
func (g *Gate) Check(ctx context.Context, req *engine.Request, turn string) (*engine.Decision, error) {
	d, _, err := g.check(ctx, req, turn)
	return d, err
}

// CheckCall is [Gate.Check] that also returns the tool call id its events
// carry (the id an approval of the call is known by).
func (g *Gate) CheckCall(ctx context.Context, req *engine.Request, turn string) (*engine.Decision, string, error) {
	return g.check(ctx, req, turn)
}

func (g *Gate) check(ctx context.Context, req *engine.Request, turn string) (*engine.Decision, string, error) {
	if req == nil {
		return systemDeny(engine.ReasonInvalidRequest, "no request"), "", errors.New("gate: nil request")
	}
	if req.Session == "" {
		return systemDeny(engine.ReasonInvalidRequest, "the request names no session"), "", errors.New("gate: request has no session")
	}
	id := g.opts.NewID()
	if err := g.append(ctx, req.Session, turn, eventlog.TypeToolCallRequested, toolCallRequested{
		ToolCallID: id, Tool: req.Tool, Input: req.Input, Cwd: req.Cwd,
	}); err != nil {
		return systemDeny(engine.ReasonPolicyError, "the event log could not be written"), id, err
	}

	d := g.engine.Check(ctx, req)
	res := permissionResolved{
		ToolCallID: id, Tool: req.Tool, Decision: d.Decision, Reason: d.Reason,
		Actor: ActorPolicy, RiskAtDecision: d.Risk, SourcedFrom: d.Source,
		Rule: d.Rule, RuleOrigin: d.RuleOrigin, Message: d.Message,
	}
	if d.Decision != policy.Ask {
		return d, id, g.resolve(ctx, req.Session, turn, res)
	}

	destructive := d.Risk == risk.Destructive
	arg, summary := describe(req)
	suggested := ""
	if !destructive {
		// A destructive call is never remembered, so no rule is offered.
		suggested = approval.Suggest(req.Tool, arg)
	}
	if err := g.append(ctx, req.Session, turn, eventlog.TypePermissionRequested, permissionRequested{
		ToolCallID: id, Tool: req.Tool, Args: req.Input, RiskAtDecision: d.Risk,
		SourcedFrom: d.Source, Reason: d.Reason, Message: d.Message, Rule: d.Rule,
		Destructive: destructive, SuggestedDecision: "ask", SuggestedRule: suggested,
	}); err != nil {
		out := *d
		out.Decision, out.Reason, out.Message = policy.Deny, engine.ReasonPolicyError, "the event log could not be written"
		return &out, id, err
	}

	res.TimeoutMs = g.opts.Timeout.Milliseconds()
	res.Rule, res.RuleOrigin = "", ""
	out := *d
	out.Trace = nil
	setDeny := func(reason engine.Reason, actor Actor, msg string) {
		res.Decision, res.Reason, res.Actor, res.Message = policy.Deny, reason, actor, msg
	}

	if g.approver == nil {
		setDeny(engine.ReasonNoApprover, ActorSystem, "no approver is configured to ask a person, so the call is denied")
	} else {
		ar := &approval.Request{
			Session: req.Session, Turn: turn, ToolCallID: id, Tool: req.Tool, Input: req.Input,
			Cwd: req.Cwd, Reason: string(d.Reason), Message: d.Message, Risk: d.Risk.String(),
			Rule: d.Rule, Summary: summary, Destructive: destructive, SuggestedRule: suggested,
		}
		ans, outcome, err := g.ask(ctx, ar)
		switch outcome {
		case outcomeTimeout:
			setDeny(engine.ReasonApprovalTimeout, ActorSystem,
				fmt.Sprintf("no answer within %s, so the call is denied", g.opts.Timeout))
		case outcomeCancelled:
			setDeny(engine.ReasonApprovalCancelled, ActorSystem,
				fmt.Sprintf("the request was cancelled while waiting for approval: %v", err))
			res.Error = err.Error()
		default:
			if err == nil {
				err = ans.Validate()
			}
			switch {
			case err != nil:
				setDeny(engine.ReasonApproverError, ActorSystem, "the approver failed, so the call is denied: "+err.Error())
				res.Error = err.Error()
			case ans.Kind == approval.Deny:
				msg := ans.Message
				if msg == "" {
					msg = "the user denied the call"
				}
				setDeny(engine.ReasonUserDenied, ActorUser, msg)
				res.Answer = ans.Kind
			default:
				res.Decision, res.Reason, res.Actor = policy.Allow, engine.ReasonUserApproved, ActorUser
				res.Answer = ans.Kind
				res.Scope = scopeOf(ans.Kind)
				res.Message = fmt.Sprintf("user approved (%s)", ans.Kind)
				if ans.Kind.Remembered() {
					if destructive {
						res.Scope, res.Downgraded = "once", true
						res.Message = fmt.Sprintf("user approved (%s, taken as allow_once: destructive calls are never remembered)", ans.Kind)
					} else {
						res.Rule = ans.Rule
						if res.Rule == "" {
							res.Rule = suggested
						}
					}
				}
				if ans.Message != "" {
					res.Message += ": " + ans.Message
				}
			}
		}
	}
	out.Decision, out.Reason, out.Message = res.Decision, res.Reason, res.Message
	return &out, id, g.resolve(ctx, req.Session, turn, res)
}

// The reason a wait for an approver ended.
type outcome int

const (
	outcomeAnswered outcome = iota
	outcomeTimeout
	outcomeCancelled
)

// ask puts ar to the approver and waits at most the timeout; it stops
// waiting at once when ctx is done, even if the approver does not.
func (g *Gate) ask(ctx context.Context, ar *approval.Request) (approval.Answer, outcome, error) {
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
		a, err := g.approver.Approve(actx, ar)
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
func (g *Gate) resolve(ctx context.Context, session, turn string, res permissionResolved) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	return g.append(actx, session, turn, eventlog.TypePermissionResolved, res)
}

func (g *Gate) append(ctx context.Context, session, turn string, typ eventlog.Type, payload any) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("gate: encode %s: %w", typ, err)
	}
	_, err = g.store.Append(ctx, session, eventlog.Draft{Turn: turn, Time: g.opts.Clock(), Type: typ, Payload: raw})
	if err != nil {
		return fmt.Errorf("gate: record %s: %w", typ, err)
	}
	return nil
}

func systemDeny(reason engine.Reason, msg string) *engine.Decision {
	return &engine.Decision{Decision: policy.Deny, Reason: reason, Message: msg, Risk: risk.Execute, Source: engine.SourceTool}
}

// describe returns the argument a rule suggestion is made from (the
// command, path or URL) and a one-line summary of the call for a person.
func describe(req *engine.Request) (arg, summary string) {
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
		summary += ": " + oneLine(arg, 200)
	}
	return arg, summary
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
