package gate

import (
	"context"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// failAfterStore fails every Append after the first n.
type failAfterStore struct {
	eventlog.Store
	n int
}

func (f *failAfterStore) Append(ctx context.Context, s string, d ...eventlog.Draft) ([]eventlog.Event, error) {
	if f.n <= 0 {
		return nil, errors.New("disk full")
	}
	f.n--
	return f.Store.Append(ctx, s, d...)
}

// TestRefuseRecordsRequestWithOutcome: a refusal is one event that
// carries the call and its deny, so a store that fails cannot leave a
// request without its outcome in the log, nor an outcome without its call.
func TestRefuseRecordsRequestWithOutcome(t *testing.T) {
	for _, n := range []int{0, 1} {
		fx := newFixture(t, Options{})
		g, err := New(fx.g.engine, &failAfterStore{Store: fx.store, n: n}, nil, Options{Clock: fx.clock.Now})
		must(t, err)
		req := fx.req("Write", map[string]any{"file_path": "a.txt", "content": "x"})
		d, err := g.Refuse(context.Background(), req, "t1", engine.ReasonInvalidArguments, "input.content: bad")
		if d == nil || d.Decision != policy.Deny {
			t.Fatalf("appends allowed %d: decision %+v, want deny", n, d)
		}
		requested := fx.events(t, eventlog.TypeToolCallRequested)
		resolved := fx.events(t, eventlog.TypePermissionResolved)
		if len(requested) != 0 {
			t.Fatalf("appends allowed %d: %d model.tool_call_requested events, want none", n, len(requested))
		}
		for _, r := range resolved {
			if in, _ := r["input"].(map[string]any); in["content"] != "x" || r["cwd"] != req.Cwd {
				t.Fatalf("appends allowed %d: the outcome does not carry the call: %v", n, r)
			}
		}
		if len(resolved) != n || (n == 0) != (err != nil) {
			t.Fatalf("appends allowed %d: %d outcomes, err %v", n, len(resolved), err)
		}
		if n == 1 && (resolved[0]["reason"] != string(engine.ReasonInvalidArguments) || resolved[0]["actor"] != string(ActorSystem)) {
			t.Errorf("outcome %v", resolved[0])
		}
	}
}
