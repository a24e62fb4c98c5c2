package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/injection"
	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/secrets"
)

// PreviewBytes is the most stdout a tool.completed event keeps.
const PreviewBytes = 2 << 10

// redactWindow is how much stdout is redacted before the preview is cut,
// so that a secret crossing the cut is still found whole.
const redactWindow = PreviewBytes + 8<<10

// Result is what running a tool produced.
type Result struct {
	// ExitCode is the process's exit status, or 0 for a tool that has none.
	ExitCode int
	// Stdout and Stderr are the tool's output.
	Stdout, Stderr []byte
	// Detail is recorded as it is in tool.completed, under "detail": what
	// the tool did that its output does not show (a fetch's redirect hops).
	Detail map[string]any
	// Sandbox is the report of the sandbox the program actually ran in,
	// when it ran in one; see [WithSandbox].
	Sandbox *sandbox.Report
	// Artifact, when set, is the id under which the full output was
	// stored; it is recorded in tool.completed under "artifact".
	Artifact string
}

type callIDKey struct{}

// CallID returns the tool call id of the call [Gate.Run] runs, from the
// context it gives its [Exec]; "" outside one.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// Refuse records req as a call refused before it was decided, by whoever
// runs tools for the gate (plan mode, arguments its tool cannot take): one
// permission.resolved event that carries the call, with decision deny, the
// reason and message given and actor system. It returns that deny.
func (g *Gate) Refuse(ctx context.Context, req *engine.Request, turn string, reason engine.Reason, msg string) (*engine.Decision, error) {
	d, _, err := g.RefuseCall(ctx, req, turn, reason, msg)
	return d, err
}

// RefuseCall is [Gate.Refuse] that also returns the tool call id the
// events carry. The decision is a deny whatever happens.
func (g *Gate) RefuseCall(ctx context.Context, req *engine.Request, turn string, reason engine.Reason, msg string) (*engine.Decision, string, error) {
	d := systemDeny(reason, msg)
	id, err := g.Record(ctx, req, turn, d, ActorSystem)
	return d, id, err
}

// Record records a decision made without the gate, with the gate's engine
// alone, by an entry point that decides at once (an agent client's hook):
// one permission.resolved event that carries the call ([CallRequest]) and
// d's decision, reason, risk, source, rule and message, and actor, as
// [Gate.Check] records a call decided without a person. An ask is recorded
// as the decision that hands the question to the client, whose person
// answers it outside toolgate. Record decides nothing; it returns the
// tool call id the event carries once the log holds it, and an error when
// the request names no session or the log cannot be written.
//
// The call is recorded as [Gate.Check] records it: a shell command whose
// words hold a secret that its text still gives back is recorded as
// markers. For that Record reads the command of a shell tool's request
// with the engine; [Gate.RecordCall] takes the engine's reading instead.
func (g *Gate) Record(ctx context.Context, req *engine.Request, turn string, d *engine.Decision, actor Actor) (string, error) {
	var call *engine.Call
	if req != nil && hasShellField(req) {
		_, call = g.engine.Decide(ctx, req, nil)
	}
	return g.RecordCall(ctx, req, call, turn, d, actor)
}

// RecordCall is [Gate.Record] for a request the engine has read: call is
// what [engine.Engine.Decide] returned for req (nil for a call it did not
// read). It records the command as markers when call's words hold a
// secret that the command's text still gives back.
func (g *Gate) RecordCall(ctx context.Context, req *engine.Request, call *engine.Call, turn string, d *engine.Decision, actor Actor) (string, error) {
	if req == nil || req.Session == "" {
		return "", errors.New("gate: request has no session")
	}
	if d == nil {
		return "", errors.New("gate: no decision to record")
	}
	logReq, _ := g.loggedRequest(req, call)
	id := g.opts.NewID()
	resolved, err := g.draft(turn, eventlog.TypePermissionResolved, PermissionResolved{
		ToolCallID: id, Tool: req.Tool, Decision: d.Decision, Reason: d.Reason, Actor: actor,
		RiskAtDecision: d.Risk, SourcedFrom: d.Source, Rule: d.Rule, RuleOrigin: d.RuleOrigin,
		Message: d.Message, Grant: d.Grant, PolicyVersion: d.PolicyVersion, CallRequest: callRequest(logReq),
	})
	if err != nil {
		return id, err
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	if _, err := g.store.Append(actx, req.Session, resolved); err != nil {
		return id, fmt.Errorf("gate: record the decision: %w", err)
	}
	return id, nil
}

// Exec runs an allowed tool call. It should stop when ctx is done.
type Exec func(ctx context.Context) (Result, error)

// Run decides req as [Gate.Check] does and, only when the call is allowed
// and its receipt still holds (see [Gate.Verify]; a call that changed after
// it was allowed is denied with reason receipt_invalid), runs exec: it records tool.started, calls exec, and records
// tool.completed (exit code, byte counts, duration and a redacted stdout
// preview of at most [PreviewBytes]) or, when exec returns an error,
// tool.failed; with [WithSandbox], each of these events carries the
// sandbox report under "sandbox". Output that looks like prompt
// injection (see package injection) is recorded as injection.suspected,
// one event per class found, carrying the class, the spans of stdout and
// stderr where it was found and an escaped excerpt; with
// Options.WrapUntrusted the returned Result's flagged streams are then
// wrapped as untrusted data ([injection.Wrap]). Output is only ever
// recorded: nothing in it makes the gate request or run another call.
//
// PostToolUse user hooks run after the call and are recorded as hook.ran
// events; what a blocking one says is added to the Result's Stderr. A
// call whose input a PreToolUse hook changed is denied, since exec runs the
// call as it was given.
//
// When the call is not allowed exec is not called and the zero Result is
// returned with the deny decision and a nil error: the deny is already in
// the log. The error is exec's error, or a failure to write the log.
func (g *Gate) Run(ctx context.Context, req *engine.Request, turn string, exec Exec) (*engine.Decision, Result, error) {
	v, err := g.decide(ctx, req, turn)
	if err != nil || v.d.Decision != policy.Allow {
		return v.d, Result{}, err
	}
	if v.d.UpdatedInput != nil {
		// exec runs the call as it was given; what was allowed is the
		// input a hook changed it to.
		d := *v.d
		d.Decision, d.Reason, d.Source = policy.Deny, engine.ReasonHook, engine.SourceHook
		d.Message = "a PreToolUse hook changed the call's input, and this runner runs a call only as it was given, so it does not run"
		res := PermissionResolved{
			ToolCallID: v.id, Tool: req.Tool, Decision: d.Decision, Reason: d.Reason, Actor: ActorSystem,
			RiskAtDecision: d.Risk, SourcedFrom: d.Source, Message: d.Message, Receipt: v.receipt,
		}
		return &d, Result{}, g.resolve(ctx, req.Session, turn, res)
	}
	// The call may have changed while a person looked at it: run it only
	// if it is still exactly what was allowed.
	if verr := g.Verify(ctx, req, v.receipt); verr != nil {
		d := *v.d
		d.Decision, d.Reason, d.Source = policy.Deny, engine.ReasonReceiptInvalid, engine.SourceSafety
		d.Message = "the call changed after it was allowed, so it does not run: " + verr.Error()
		res := PermissionResolved{
			ToolCallID: v.id, Tool: req.Tool, Decision: d.Decision, Reason: d.Reason, Actor: ActorSystem,
			RiskAtDecision: d.Risk, SourcedFrom: d.Source, Message: d.Message, Receipt: v.receipt,
		}
		return &d, Result{}, g.resolve(ctx, req.Session, turn, res)
	}
	id := v.id
	d := v.d
	started := map[string]any{"toolCallId": id}
	if sb := sandboxOf(ctx); sb != nil {
		started["sandbox"] = sb
	}
	if err := g.append(ctx, req.Session, turn, eventlog.TypeToolStarted, started); err != nil {
		return d, Result{}, err
	}
	start := g.opts.Clock()
	res, execErr := exec(context.WithValue(ctx, callIDKey{}, id))
	dur := g.opts.Clock().Sub(start)
	if execErr != nil {
		failed := map[string]any{"toolCallId": id, "error": execErr.Error(), "durationMs": dur.Milliseconds()}
		if sb := ranUnder(ctx, res); sb != nil {
			failed["sandbox"] = sb
		}
		if err := g.record(ctx, req.Session, turn, eventlog.TypeToolFailed, failed); err != nil {
			return d, res, err
		}
		if err := g.postToolUse(ctx, req, turn, id, d, &res, execErr); err != nil {
			return d, res, err
		}
		return d, res, execErr
	}
	preview, truncated := Preview(res.Stdout)
	completed := map[string]any{
		"toolCallId":      id,
		"exitCode":        res.ExitCode,
		"stdoutBytes":     len(res.Stdout),
		"stderrBytes":     len(res.Stderr),
		"durationMs":      dur.Milliseconds(),
		"stdoutPreview":   preview,
		"stdoutTruncated": truncated,
	}
	if res.Detail != nil {
		completed["detail"] = res.Detail
	}
	if sb := ranUnder(ctx, res); sb != nil {
		completed["sandbox"] = sb
	}
	if res.Artifact != "" {
		completed["artifact"] = res.Artifact
	}
	if err := g.record(ctx, req.Session, turn, eventlog.TypeToolCompleted, completed); err != nil {
		return d, res, err
	}
	if err := g.recordInjection(ctx, req.Session, turn, id, &res); err != nil {
		return d, res, err
	}
	if err := g.postToolUse(ctx, req, turn, id, d, &res, nil); err != nil {
		return d, res, err
	}
	return d, res, nil
}

// record appends an event that must be written even when ctx ended after
// the tool ran.
func (g *Gate) record(ctx context.Context, session, turn string, typ eventlog.Type, payload any) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	return g.append(actx, session, turn, typ, payload)
}

// Preview returns the first [PreviewBytes] of out as valid UTF-8 with
// secrets redacted, and whether anything was cut.
func Preview(out []byte) (string, bool) {
	window := out
	if len(window) > redactWindow {
		window = window[:redactWindow]
	}
	s := secrets.Redact(strings.ToValidUTF8(string(window), "\uFFFD"))
	truncated := len(out) > PreviewBytes
	if len(s) > PreviewBytes {
		cut := PreviewBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
		truncated = true
	}
	return s, truncated
}

// InjectionSpan is where in a tool's output an injection.suspected
// finding is: a byte range of stdout or stderr.
type InjectionSpan struct {
	Stream string `json:"stream"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
}

// InjectionSuspected is the payload of an injection.suspected event: one
// class of prompt injection found in a tool call's output, every place
// it was found (at most [injection.MaxPerClass] per stream), and an
// escaped excerpt of the first.
type InjectionSuspected struct {
	ToolCallID string          `json:"toolCallId,omitempty"`
	Class      injection.Class `json:"class"`
	Spans      []InjectionSpan `json:"spans"`
	Excerpt    string          `json:"excerpt"`
}

// recordInjection scans res's stdout and stderr, records one
// injection.suspected event per class found, and, with
// Options.WrapUntrusted, wraps each flagged stream of res.
func (g *Gate) recordInjection(ctx context.Context, session, turn, id string, res *Result) error {
	out, errOut := injection.Scan(res.Stdout), injection.Scan(res.Stderr)
	for _, ev := range injectionEvents(id, out, errOut) {
		if err := g.record(ctx, session, turn, eventlog.TypeInjectionSuspected, ev); err != nil {
			return err
		}
	}
	if g.opts.WrapUntrusted {
		res.Stdout = injection.Wrap(res.Stdout, out)
		res.Stderr = injection.Wrap(res.Stderr, errOut)
	}
	return nil
}

// injectionEvents groups the findings of stdout and stderr by class, in
// the order of [injection.Classes].
func injectionEvents(id string, stdout, stderr []injection.Finding) []InjectionSuspected {
	var evs []InjectionSuspected
	for _, c := range injection.Classes {
		ev := InjectionSuspected{ToolCallID: id, Class: c}
		for _, s := range []struct {
			name string
			fs   []injection.Finding
		}{{"stdout", stdout}, {"stderr", stderr}} {
			for _, f := range s.fs {
				if f.Class != c {
					continue
				}
				if ev.Excerpt == "" {
					ev.Excerpt = f.Excerpt
				}
				ev.Spans = append(ev.Spans, InjectionSpan{Stream: s.name, Start: f.Span.Start, End: f.Span.End})
			}
		}
		if len(ev.Spans) > 0 {
			evs = append(evs, ev)
		}
	}
	return evs
}

// InjectionEvents returns the injection.suspected payloads for the
// stdout and stderr of the tool call id, one per class of prompt
// injection found, in the order of [injection.Classes]: what [Gate.Run]
// records, for a caller that records a call's output itself.
func InjectionEvents(id string, stdout, stderr []byte) []InjectionSuspected {
	return injectionEvents(id, injection.Scan(stdout), injection.Scan(stderr))
}

// SuspectedInjection returns the classes of prompt injection
// ([injection.Scan]) found in any of the outputs, each once, in the order
// of [injection.Classes].
func SuspectedInjection(outs ...[]byte) []string {
	found := map[injection.Class]bool{}
	for _, out := range outs {
		for _, f := range injection.Scan(out) {
			found[f.Class] = true
		}
	}
	var classes []string
	for _, c := range injection.Classes {
		if found[c] {
			classes = append(classes, string(c))
		}
	}
	return classes
}
