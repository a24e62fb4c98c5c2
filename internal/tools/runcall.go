package tools

import (
	"context"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/policy"
)

// RunCall decides req through g and runs it only when it is allowed, as
// `toolgate run` does: a shell call with [shellrun.Run] under the sandbox
// its policy and session settings give it (shell holds how), any other
// tool with an [Executor] made from opts, whose "~" is eng's home unless
// opts.Home names one. eng must be g's engine. It
// returns the decision, the Result and the error of the run; a call that
// is not allowed does not run and its deny is in the log. An executor
// that cannot be made is an error with a nil decision: nothing was run.
func RunCall(ctx context.Context, g *gate.Gate, eng *engine.Engine, req *engine.Request, turn string, shell shellrun.Options, opts Options) (*engine.Decision, gate.Result, error) {
	if tool, _ := policy.Canonical(req.Tool); tool == policy.ToolShell {
		return shellrun.Run(ctx, g, eng, req, turn, shell)
	}
	if opts.Home == "" {
		opts.Home = eng.Home()
	}
	x, err := New(opts)
	if err != nil {
		return nil, gate.Result{}, err
	}
	return x.Run(ctx, g, req, turn)
}
