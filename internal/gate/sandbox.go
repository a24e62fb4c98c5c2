package gate

import (
	"context"

	"github.com/toolgate/toolgate/internal/sandbox"
)

type sandboxKey struct{}

// WithSandbox returns a context that tells [Gate.Run] which sandbox the
// call will run in: rep, the report of the mechanisms that confine it, is
// recorded under "sandbox" on tool.started, and on tool.completed and
// tool.failed unless the Result carries the report of the program's
// actual start ([Result.Sandbox]). A run without it records no "sandbox"
// field: the tool ran unconfined as far as the gate knows.
func WithSandbox(ctx context.Context, rep sandbox.Report) context.Context {
	return context.WithValue(ctx, sandboxKey{}, &rep)
}

// sandboxOf returns the report WithSandbox put in ctx, or nil.
func sandboxOf(ctx context.Context) *sandbox.Report {
	rep, _ := ctx.Value(sandboxKey{}).(*sandbox.Report)
	return rep
}

// ranUnder returns the report to record on the events after the tool ran:
// the program's own, else the one given before it started.
func ranUnder(ctx context.Context, res Result) *sandbox.Report {
	if res.Sandbox != nil {
		return res.Sandbox
	}
	return sandboxOf(ctx)
}
