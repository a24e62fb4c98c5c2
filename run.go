package toolgate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/internal/tools"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// Approver puts a call that needs a person's answer to one.
type Approver = approval.Approver

// ApproverFunc is an Approver made of a function.
type ApproverFunc = approval.ApproverFunc

// ApprovalRequest is the question an Approver is asked.
type ApprovalRequest = approval.Request

// Answer is an Approver's reply; AnswerKind is its decision.
type (
	Answer     = approval.Answer
	AnswerKind = approval.Kind
)

// The answers an Approver gives.
const (
	AllowOnce    = approval.AllowOnce
	AllowSession = approval.AllowSession
	Refuse       = approval.Deny
)

// Result is what running a call produced: its exit status, its output
// and the report of the sandbox it ran in.
type Result = gate.Result

// ErrNotRunnable is returned by [Gate.Run] for a call of a tool it cannot
// run: a built-in tool other than the shell when GateOptions.StateDir is
// not set.
var ErrNotRunnable = errors.New("toolgate: the gate runs tools other than the shell only with a state directory (GateOptions.StateDir)")

// GateOptions configure a [Gate].
type GateOptions struct {
	// Engine decides the calls; required.
	Engine *Engine
	// Log is the SQLite file of the event log, created when missing;
	// required.
	Log string
	// Approver is asked when a person must answer; nil denies every such
	// call with reason no_approver.
	Approver Approver
	// ApprovalTimeout is how long an answer is waited for before the call
	// is denied; default 30 s.
	ApprovalTimeout time.Duration
	// Timeout ends a shell call that runs longer; default 2 minutes. A
	// call's own "timeout" (milliseconds) replaces it, up to 10 minutes.
	Timeout time.Duration
	// CredentialPaths are masked from the programs run, in addition to
	// the home directory's and the workspace's credential files.
	CredentialPaths []string
	// StateDir keeps the full output of the built-in tools (read, write,
	// edit, list, search, patch, fetch) as artifacts, their snapshots, and
	// the output and registry of shell calls run with
	// "run_in_background". "" runs shell calls only, in the foreground.
	StateDir string
	// KillEscapees also kills the processes that left a call's process
	// group (setsid, a double fork) when it ends. It makes this process a
	// subreaper and kills every child it has left, so set it only where
	// the gate's calls are the process's only children.
	KillEscapees bool
}

// Gate decides, asks, runs and records tool calls in one step: see
// [Gate.Run]. It is safe for use by multiple goroutines.
type Gate struct {
	g     *gate.Gate
	eng   *engine.Engine
	store *sqlite.Store
	opts  shellrun.Options
	tools *tools.Executor // nil without a state directory
}

// NewGate opens the event log and returns a Gate; Close it when done.
func NewGate(o GateOptions) (*Gate, error) {
	if o.Engine == nil {
		return nil, errors.New("toolgate: GateOptions.Engine is required")
	}
	if o.Log == "" {
		return nil, errors.New("toolgate: GateOptions.Log is required")
	}
	store, err := sqlite.Open(o.Log, nil)
	if err != nil {
		return nil, fmt.Errorf("toolgate: event log %s: %w", o.Log, err)
	}
	g, err := gate.New(o.Engine, store, o.Approver, gate.Options{Timeout: o.ApprovalTimeout})
	if err != nil {
		store.Close()
		return nil, err
	}
	out := &Gate{g: g, eng: o.Engine, store: store, opts: shellrun.Options{
		Timeout: o.Timeout, CredentialPaths: append([]string{o.Log}, o.CredentialPaths...),
		Home: o.Engine.Home(), StateDir: o.StateDir, KillEscapees: o.KillEscapees,
	}}
	if o.StateDir != "" {
		if out.tools, err = tools.New(tools.Options{StateDir: o.StateDir, Home: o.Engine.Home()}); err != nil {
			store.Close()
			return nil, err
		}
	}
	return out, nil
}

// Close closes the event log.
func (g *Gate) Close() error { return g.store.Close() }

// Run decides req, asks the Approver when a person must answer, and runs
// the call only when it is allowed. A caller may rely on this:
//
//   - Every call is recorded in the event log of session req.Session
//     ("default" when empty): the request, the decision with its reason
//     and actor, and for a call that runs tool.started and tool.completed
//     (exit status, output sizes, a redacted preview) or tool.failed,
//     each with the sandbox's report under "sandbox".
//   - A call that is not allowed does not run: Run returns the deny (or
//     the unanswered ask, denied) with a zero Result and a nil error.
//   - The call runs only if it is still exactly what was allowed (the
//     receipt is verified just before the program starts); otherwise it
//     is denied with reason receipt_invalid.
//   - A shell call runs under the operating system's sandbox as the
//     policy and the session say (writes only in the workspace and the
//     writable roots for workspace-write, none for read-only; network
//     off unless allowed; credential files masked), in a process group
//     of its own that is killed when the call ends, times out or ctx is
//     cancelled. Where the system lacks a mechanism of the sandbox, the
//     events say so and the calls only it would have stopped ask.
//   - A program that exits non-zero is a Result with that ExitCode and a
//     nil error; the error is for a program that could not start, timed
//     out or was cancelled (the Result holds its output so far), or for
//     a log that could not be written.
//
// The built-in tools other than the shell run in this process, confined
// to the workspace by their own checks, with their full output kept as
// artifacts in GateOptions.StateDir; without one, Run returns a deny
// decision and [ErrNotRunnable] for them without deciding or recording
// anything.
func (g *Gate) Run(ctx context.Context, req *Request) (*Decision, Result, error) {
	if req == nil {
		return notRunnable("no request"), Result{}, errors.New("toolgate: nil request")
	}
	r := *req
	if r.Session == "" {
		r.Session = "default"
	}
	if tool, ok := policy.Canonical(req.Tool); !ok || tool == policy.ToolShell {
		// An unknown tool is denied by the gate, and recorded.
		return shellrun.Run(ctx, g.g, g.eng, &r, "", g.opts)
	}
	if g.tools == nil {
		return notRunnable(fmt.Sprintf("the %s tool is run by the gate only with a state directory", req.Tool)), Result{}, ErrNotRunnable
	}
	return g.tools.Run(ctx, g.g, &r, "")
}

func notRunnable(msg string) *Decision {
	return &Decision{Decision: policy.Deny, Reason: engine.ReasonInvalidRequest, Risk: risk.Execute, Source: engine.SourceTool, Message: msg}
}
