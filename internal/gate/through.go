package gate

import (
	"context"

	"github.com/toolgate/toolgate/internal/approval"
)

// through is a caller's own channel to the person, carried by a context.
type through struct {
	approver approval.Approver
	channel  string
}

type throughKey struct{}

// AskThrough returns ctx carrying approver, which the gate asks in place
// of its own approver (or of none, when it is headless) about a call
// decided with the returned context: a channel of the caller's own to the
// person, named channel in the log (such as "mcp-elicitation"). The
// question is recorded as asked of the user and the answer as the user's,
// both with the channel, as any answered question is: allowed once,
// denied, timed out (Options.Timeout) or failed. The question is not
// signed, so no other server sharing the log lists it: only approver can
// answer it. A nil approver leaves ctx as it is.
func AskThrough(ctx context.Context, approver approval.Approver, channel string) context.Context {
	if approver == nil {
		return ctx
	}
	return context.WithValue(ctx, throughKey{}, &through{approver: approver, channel: channel})
}

func throughOf(ctx context.Context) *through {
	t, _ := ctx.Value(throughKey{}).(*through)
	return t
}
