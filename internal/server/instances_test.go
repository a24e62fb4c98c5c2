package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/eventlog"
)

// TestPeersLosingAnswer: of two answers given to a question on servers
// that do not hold it, the holder takes the first in the log; the server
// that wrote the second answers 409, not 200 with the other answer's
// outcome. The first answer is written as a third server writes it:
// signed, straight into the shared PostgreSQL log.
func TestPeersLosingAnswer(t *testing.T) {
	a, b := newPair(t, "postgres")
	for round := range 5 {
		id := a.ask("s1", cmdAsk)
		b.waitPending(t, "s1", id)
		ra, ok := b.srv.remote(context.Background(), id)
		if !ok {
			t.Fatalf("round %d: B does not know %s", round, id)
		}
		first := answerPayload{ToolCallID: id, Question: ra.digest, Answer: approval.Deny, Message: "from C", Actor: "user"}
		first.Sig = b.srv.signAnswer("s1", first)
		raw, err := json.Marshal(first)
		must(t, err)
		_, err = b.store.Append(context.Background(), "s1", eventlog.Draft{Type: eventlog.TypePermissionAnswered, Payload: raw})
		must(t, err)

		r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once"})
		if r.code != 409 {
			t.Fatalf("round %d: the losing answer on B got %d, want 409: %s", round, r.code, r.body)
		}
		res := a.resolvedPayload("s1")
		if res["toolCallId"] != id || res["decision"] != "deny" || res["answer"] != "deny" {
			t.Fatalf("round %d: permission.resolved %v", round, res)
		}
	}
	// The answer that is taken still gets 200 with its outcome.
	id := a.ask("s1", cmdAsk)
	b.waitPending(t, "s1", id)
	r := b.call("POST", "/v1/approvals/"+id, b.tokens.Approver, map[string]any{"answer": "allow_once"})
	var got Approval
	r.decode(t, &got)
	if r.code != 200 || got.Decision == nil || got.Decision.Decision != "allow" {
		t.Fatalf("the winning answer on B: %d %s", r.code, r.body)
	}
}
