package gate

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// TestAskThrough: a headless gate asks the approver a context carries, as
// a person answering through that channel: the question is asked of the
// user and unsigned (no other server lists it), the answer is the user's
// with the channel, and an error or a timeout still denies.
func TestAskThrough(t *testing.T) {
	project, home := realDir(t), realDir(t)
	f, err := policy.ParseRules(policy.LayerProject, nil, nil, nil)
	must(t, err)
	eng, store := engineAndStore(t, f, project, home)
	g, err := New(eng, store, nil, Options{Headless: true, LogKey: []byte("k"), Timeout: 300 * time.Millisecond})
	must(t, err)
	tests := []struct {
		name     string
		answer   func(context.Context) (approval.Answer, error)
		decision policy.Decision
		reason   engine.Reason
		actor    Actor
	}{
		{"allow", func(context.Context) (approval.Answer, error) { return approval.Answer{Kind: approval.AllowOnce}, nil },
			policy.Allow, engine.ReasonUserApproved, ActorUser},
		{"deny", func(context.Context) (approval.Answer, error) { return approval.Answer{Kind: approval.Deny}, nil },
			policy.Deny, engine.ReasonUserDenied, ActorUser},
		{"error", func(context.Context) (approval.Answer, error) {
			return approval.Answer{}, errors.New("client went away")
		},
			policy.Deny, engine.ReasonApproverError, ActorSystem},
		{"timeout", func(ctx context.Context) (approval.Answer, error) { <-ctx.Done(); return approval.Answer{}, ctx.Err() },
			policy.Deny, engine.ReasonApprovalTimeout, ActorSystem},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			session := "s-" + tt.name
			ctx := AskThrough(context.Background(), approval.ApproverFunc(func(ctx context.Context, _ *approval.Request) (approval.Answer, error) {
				return tt.answer(ctx)
			}), "test-channel")
			req := &engine.Request{Tool: "Bash", Input: map[string]any{"command": "npm test"}, Cwd: project, Session: session}
			d, err := g.Check(ctx, req, "")
			must(t, err)
			if d.Decision != tt.decision || d.Reason != tt.reason {
				t.Fatalf("decision %s (%s), want %s (%s)", d.Decision, d.Reason, tt.decision, tt.reason)
			}
			res := resolved(t, store, session)
			if res["actor"] != string(tt.actor) || res["channel"] != "test-channel" || res["decision"] != tt.decision.String() {
				t.Fatalf("resolved %v", res)
			}
			var q PermissionRequested
			for e, err := range store.Query(context.Background(), eventlog.Filter{Session: session, Types: []eventlog.Type{eventlog.TypePermissionRequested}}) {
				must(t, err)
				must(t, json.Unmarshal(e.Payload, &q))
			}
			if q.AskedOf != ActorUser || q.Channel != "test-channel" || q.Sig != "" {
				t.Fatalf("question asked of %s through %q, sig %q", q.AskedOf, q.Channel, q.Sig)
			}
		})
	}
	// Without the context's approver the gate is as headless as it was.
	d, err := g.Check(context.Background(), &engine.Request{Tool: "Bash", Input: map[string]any{"command": "npm test"}, Cwd: project, Session: "plain"}, "")
	must(t, err)
	if d.Decision != policy.Deny || d.Reason != engine.ReasonHeadless {
		t.Fatalf("plain headless: %s (%s)", d.Decision, d.Reason)
	}
	if _, ok := resolved(t, store, "plain")["channel"]; ok {
		t.Fatal("a headless deny has a channel")
	}
}
