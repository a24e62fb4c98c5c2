package gate

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/userhook"
	"github.com/toolgate/toolgate/policy"
)

// MaxInputChanges is how many times the PreToolUse hooks of one call may
// change its input; each change is decided again from the start, and a
// call whose hooks change it once more is denied.
const MaxInputChanges = 3

// HookRan is the payload of a hook.ran event: one run of a user hook.
type HookRan struct {
	ToolCallID string           `json:"toolCallId"`
	Tool       string           `json:"tool"`
	Event      policy.HookEvent `json:"event"`
	// Hook is where the hook was written (file:line), Layer its policy
	// layer, Type "command" or "http" and Target its command or URL.
	Hook   string `json:"hook"`
	Layer  string `json:"layer"`
	Type   string `json:"type"`
	Target string `json:"target"`
	// Outcome is what the hook answered: pass, allow, deny, ask or error.
	Outcome userhook.Outcome `json:"outcome"`
	Reason  string           `json:"reason,omitempty"`
	// ExitCode is a command hook's exit status (absent when it had
	// none); Status an http hook's response status.
	ExitCode   *int  `json:"exitCode,omitempty"`
	Status     int   `json:"status,omitempty"`
	DurationMs int64 `json:"durationMs"`
	// UpdatedInput is the input the hook asked to run instead.
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
	// Effect is what the gate made of the answer: "denied", "asked",
	// "allowed", "input changed", "none", or why an answer was set aside.
	Effect string `json:"effect"`
}

// hooksFor returns the hooks of d's policy for event and tool, in order.
func hooksFor(d *engine.Decision, event policy.HookEvent, tool string) []*policy.Hook {
	var out []*policy.Hook
	for _, h := range d.Hooks {
		if h.Event == event && h.Matches(tool) {
			out = append(out, h)
		}
	}
	return out
}

// runHook runs h for req and returns its result with the hook.ran payload
// to record (whose Effect the caller fills in).
func (g *Gate) runHook(ctx context.Context, h *policy.Hook, req *engine.Request, id string, d *engine.Decision, resp *userhook.ToolResponse) (userhook.Result, HookRan) {
	in := &userhook.Input{
		HookEventName: h.Event, SessionID: req.Session, ToolUseID: id, Cwd: req.Cwd,
		ToolName: req.Tool, ToolInput: req.Input, PermissionMode: req.Mode, ToolResponse: resp,
	}
	if in.ToolInput == nil {
		in.ToolInput = map[string]any{}
	}
	if d != nil && resp == nil {
		in.Decision = &userhook.Verdict{Decision: d.Decision.String(), Reason: string(d.Reason), Message: d.Message}
	}
	start := g.opts.Clock()
	r := g.hooks.Run(ctx, h, in)
	// Timed by the gate's clock, as every other duration it records.
	r.Duration = g.opts.Clock().Sub(start)
	ran := HookRan{
		ToolCallID: id, Tool: req.Tool, Event: h.Event, Hook: h.Origin(), Layer: h.Layer.String(),
		Type: h.Type, Target: h.Target(), Outcome: r.Outcome, Reason: r.Reason, Status: r.Status,
		DurationMs: r.Duration.Milliseconds(), UpdatedInput: r.UpdatedInput,
	}
	if r.ExitCode >= 0 {
		code := r.ExitCode
		ran.ExitCode = &code
	}
	return r, ran
}

// hookDecision is d decided by hook h: a deny or an ask with reason hook.
func hookDecision(d *engine.Decision, h *policy.Hook, dec policy.Decision, msg string) *engine.Decision {
	return &engine.Decision{
		Decision: dec, Reason: engine.ReasonHook, Message: msg, Risk: d.Risk, Source: engine.SourceHook,
		RuleOrigin: h.Origin(), PolicyVersion: d.PolicyVersion, Hooks: d.Hooks, Hard: dec == policy.Ask,
	}
}

// failedMessage is the reason of a deny for a hook that failed.
func failedMessage(h *policy.Hook, r userhook.Result) string {
	return fmt.Sprintf("%s failed, so the call is denied: %s", h, r.Reason)
}

// preToolUse runs the PreToolUse hooks of a call the policy does not deny,
// in the order the policy lists them, recording each run with add. A deny
// or a failure ends the runs and denies; an ask makes an allowed call ask;
// an allow lifts an ask only where [userhook.AllowBlocked] lets it; a
// changed input is decided again from the start (decide) and its hooks run
// again, at most [MaxInputChanges] times. It returns the request and the
// decision and call that stand.
func (g *Gate) preToolUse(ctx context.Context, req *engine.Request, id string, d *engine.Decision, call *engine.Call,
	decide func(*engine.Request) (*engine.Decision, *engine.Call), add func(eventlog.Type, any)) (*engine.Request, *engine.Decision, *engine.Call) {
	changed := 0
	for {
		if d.Decision == policy.Deny {
			return req, d, call
		}
		hooks := hooksFor(d, policy.HookPreToolUse, req.Tool)
		if len(hooks) == 0 {
			return req, d, call
		}
		var allowBy, askBy *policy.Hook
		var allowWhy, askWhy string
		var newInput map[string]any
		for _, h := range hooks {
			r, ran := g.runHook(ctx, h, req, id, d, nil)
			switch r.Outcome {
			case userhook.Failed:
				ran.Effect = "denied"
				add(eventlog.TypeHookRan, ran)
				return req, hookDecision(d, h, policy.Deny, failedMessage(h, r)), call
			case userhook.Deny:
				ran.Effect = "denied"
				add(eventlog.TypeHookRan, ran)
				return req, hookDecision(d, h, policy.Deny, fmt.Sprintf("denied by %s: %s", h, r.Reason)), call
			case userhook.Ask:
				ran.Effect = "asked"
				if askBy == nil {
					askBy, askWhy = h, r.Reason
				}
			case userhook.Allow:
				if why := userhook.AllowBlocked(h, d); why != "" {
					ran.Effect = "allow set aside: " + why
				} else {
					ran.Effect = "allowed"
					if allowBy == nil {
						allowBy, allowWhy = h, r.Reason
					}
				}
			default:
				ran.Effect = "none"
			}
			if r.UpdatedInput != nil && !reflect.DeepEqual(r.UpdatedInput, req.Input) {
				ran.Effect = "input changed"
				newInput = r.UpdatedInput
				add(eventlog.TypeHookRan, ran)
				break
			}
			add(eventlog.TypeHookRan, ran)
		}
		if newInput != nil {
			changed++
			if changed > MaxInputChanges {
				return req, hookDecision(d, hooks[0], policy.Deny, fmt.Sprintf(
					"the PreToolUse hooks changed the call's input more than %d times, so the call is denied", MaxInputChanges)), call
			}
			// The new input is a new call: decided from the start, by the
			// whole pipeline and by the hooks again.
			next := *req
			next.Input = newInput
			req = &next
			d, call = decide(req)
			d.UpdatedInput = newInput
			continue
		}
		switch {
		case askBy != nil && !(d.Decision == policy.Ask && d.Hard):
			// A hard ask already goes to a person; any other decision
			// now does too.
			msg := fmt.Sprintf("%s asks", askBy)
			if askWhy != "" {
				msg += ": " + askWhy
			}
			if d.Decision == policy.Ask {
				msg += " (" + d.Message + ")"
			}
			nd := hookDecision(d, askBy, policy.Ask, msg)
			nd.UpdatedInput = d.UpdatedInput
			d = nd
		case allowBy != nil && askBy == nil && d.Decision == policy.Ask:
			nd := hookDecision(d, allowBy, policy.Allow, fmt.Sprintf("allowed by %s%s (the policy would ask: %s)", allowBy, prefixed(allowWhy), d.Message))
			nd.Hard = false
			nd.UpdatedInput = d.UpdatedInput
			d = nd
		}
		return req, d, call
	}
}

// permissionRequest runs the PermissionRequest hooks of a call that would
// be put to a person. A deny or a failure denies; an allow answers the
// question where [userhook.AllowBlocked] lets it (else the person is
// still asked); no answer leaves the question to the person. It returns
// the decision that stands: d unchanged when no hook answered.
func (g *Gate) permissionRequest(ctx context.Context, req *engine.Request, id string, d *engine.Decision, add func(eventlog.Type, any)) *engine.Decision {
	var allowBy *policy.Hook
	var allowWhy string
	for _, h := range hooksFor(d, policy.HookPermissionRequest, req.Tool) {
		r, ran := g.runHook(ctx, h, req, id, d, nil)
		switch r.Outcome {
		case userhook.Failed:
			ran.Effect = "denied"
			add(eventlog.TypeHookRan, ran)
			return keepInput(d, hookDecision(d, h, policy.Deny, failedMessage(h, r)))
		case userhook.Deny:
			ran.Effect = "denied"
			add(eventlog.TypeHookRan, ran)
			return keepInput(d, hookDecision(d, h, policy.Deny, fmt.Sprintf("denied by %s: %s", h, r.Reason)))
		case userhook.Allow:
			if why := userhook.AllowBlocked(h, d); why != "" {
				ran.Effect = "allow set aside: " + why
			} else {
				ran.Effect = "allowed"
				if allowBy == nil {
					allowBy, allowWhy = h, r.Reason
				}
			}
		default:
			ran.Effect = "none: the question goes to a person"
		}
		add(eventlog.TypeHookRan, ran)
	}
	if allowBy != nil {
		nd := hookDecision(d, allowBy, policy.Allow, fmt.Sprintf("approved by %s%s (%s)", allowBy, prefixed(allowWhy), d.Message))
		nd.Hard = false
		return keepInput(d, nd)
	}
	return d
}

// postToolUse runs the PostToolUse hooks of a call that ran and records
// each run. A hook cannot undo the call: a deny or a failure is recorded
// and its reason added to what the agent is told (res.Stderr).
func (g *Gate) postToolUse(ctx context.Context, req *engine.Request, turn, id string, d *engine.Decision, res *Result, execErr error) error {
	hooks := hooksFor(d, policy.HookPostToolUse, req.Tool)
	if len(hooks) == 0 {
		return nil
	}
	resp := &userhook.ToolResponse{ExitCode: res.ExitCode, Stdout: previewOf(res.Stdout), Stderr: previewOf(res.Stderr)}
	if execErr != nil {
		resp.Error = execErr.Error()
	}
	for _, h := range hooks {
		r, ran := g.runHook(ctx, h, req, id, nil, resp)
		switch r.Outcome {
		case userhook.Failed, userhook.Deny:
			ran.Effect = "reported to the agent: the call had already run"
			res.Stderr = append(res.Stderr, fmt.Sprintf("\ntoolgate: %s: %s\n", h, r.Reason)...)
		default:
			ran.Effect = "none"
		}
		if err := g.record(ctx, req.Session, turn, eventlog.TypeHookRan, ran); err != nil {
			return err
		}
	}
	return nil
}

// previewOf is at most 64 KiB of a tool's output, as valid UTF-8, for a
// PostToolUse hook.
func previewOf(b []byte) string {
	const n = 64 << 10
	if len(b) > n {
		b = b[:n]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func keepInput(from, to *engine.Decision) *engine.Decision {
	to.UpdatedInput = from.UpdatedInput
	return to
}

func prefixed(why string) string {
	if why == "" {
		return ""
	}
	return ": " + why
}
