package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
)

func TestBrokerFirstAnswerWins(t *testing.T) {
	b := NewBroker(BrokerOptions{})
	id := b.NewID()
	got := make(chan approval.Answer, 1)
	go func() {
		a, err := b.Approve(context.Background(), &approval.Request{Session: "s1", ToolCallID: id, Tool: "Bash"})
		must(t, err)
		got <- a
	}()
	if _, err := b.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			kind := approval.AllowOnce
			if i%2 == 0 {
				kind = approval.Deny
			}
			_, err := b.Answer(id, Reply{Answer: kind})
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, ErrResolved):
				t.Errorf("answer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d answers won", wins.Load())
	}
	ans := <-got
	a, err := b.Get(context.Background(), id)
	must(t, err)
	if a.State != StateResolved || a.Decision.Answer != ans.Kind {
		t.Fatalf("approval %+v, answer %v", a.Decision, ans)
	}
}

func TestBrokerKeepsTheLastResolved(t *testing.T) {
	b := NewBroker(BrokerOptions{Keep: 3})
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("tc_%d", i)
		ids = append(ids, id)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = b.Approve(context.Background(), &approval.Request{Session: "s", ToolCallID: id})
		}()
		waitFor(t, "pending", func() bool { return b.Pending() == 1 })
		_, err := b.Answer(id, Reply{Answer: approval.Deny})
		must(t, err)
		<-done
	}
	if got := b.List("", ""); len(got) != 3 || got[0].ID != ids[2] || got[2].ID != ids[4] {
		t.Fatalf("kept %v", got)
	}
	if _, err := b.Get(context.Background(), ids[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the oldest is still kept: %v", err)
	}
}

func TestBrokerContextEnds(t *testing.T) {
	b := NewBroker(BrokerOptions{})
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		reason string
	}{
		{"timeout", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, "approval_timeout"},
		{"cancel", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx, cancel
		}, "approval_cancelled"},
	} {
		ctx, cancel := tc.ctx()
		_, err := b.Approve(ctx, &approval.Request{Session: "s", ToolCallID: "tc_" + tc.name})
		cancel()
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		a, err := b.Get(context.Background(), "tc_"+tc.name)
		must(t, err)
		if a.State != StateResolved || a.Decision.Reason != tc.reason || a.Decision.Actor != "system" {
			t.Fatalf("%s: %+v", tc.name, a.Decision)
		}
		if _, err := b.Answer("tc_"+tc.name, Reply{Answer: approval.AllowOnce}); !errors.Is(err, ErrResolved) {
			t.Fatalf("%s: answer after the end: %v", tc.name, err)
		}
	}
}

func TestBrokerLimits(t *testing.T) {
	b := NewBroker(BrokerOptions{MaxPending: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = b.Approve(ctx, &approval.Request{Session: "s", ToolCallID: "tc_1"}) }()
	waitFor(t, "pending", func() bool { return b.Pending() == 1 })
	if _, err := b.Approve(ctx, &approval.Request{Session: "s", ToolCallID: "tc_2"}); !errors.Is(err, ErrTooManyPending) {
		t.Fatalf("second question: %v", err)
	}
	if _, err := b.Approve(ctx, &approval.Request{Session: "s", ToolCallID: "tc_1"}); err == nil {
		t.Fatal("the same id was asked twice")
	}
	b.Close()
	cancel()
	waitFor(t, "no pending", func() bool { return b.Pending() == 0 })
	if _, err := b.Approve(context.Background(), &approval.Request{Session: "s", ToolCallID: "tc_3"}); !errors.Is(err, ErrBrokerClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestLoadTokens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	tok, err := LoadTokens(dir)
	must(t, err)
	if len(tok.Agent) != 64 || len(tok.Approver) != 64 || tok.Agent == tok.Approver {
		t.Fatalf("tokens %+v", tok)
	}
	fi, err := os.Stat(dir)
	must(t, err)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("state directory mode %o", fi.Mode().Perm())
	}
	for _, f := range []string{AgentTokenFile, ApproverTokenFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		must(t, err)
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %o", f, fi.Mode().Perm())
		}
	}
	again, err := LoadTokens(dir)
	must(t, err)
	if !reflect.DeepEqual(again, tok) {
		t.Fatal("the tokens were not reused")
	}
	// A further agent token is read from its file, and one that repeats
	// the approver token is refused.
	must(t, os.WriteFile(filepath.Join(dir, "agent-ci.token"), []byte("ci-agent-token\n"), 0o600))
	more, err := LoadTokens(dir)
	must(t, err)
	if !reflect.DeepEqual(more.Agents, []string{"ci-agent-token"}) || more.Agent != tok.Agent {
		t.Fatalf("further agent tokens %q", more.Agents)
	}
	must(t, os.WriteFile(filepath.Join(dir, "agent-ci.token"), []byte(tok.Approver+"\n"), 0o600))
	if _, err := LoadTokens(dir); err == nil || !strings.Contains(err.Error(), "must differ") {
		t.Fatalf("an agent token equal to the approver token was accepted: %v", err)
	}
	must(t, os.Remove(filepath.Join(dir, "agent-ci.token")))
	must(t, os.Chmod(filepath.Join(dir, ApproverTokenFile), 0o644))
	if _, err := LoadTokens(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable token file was accepted: %v", err)
	}
	must(t, os.Chmod(filepath.Join(dir, ApproverTokenFile), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, AgentTokenFile), []byte("\n"), 0o600))
	if _, err := LoadTokens(dir); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty token file was accepted: %v", err)
	}
}

// TestBrokerInflight: a request about an id the gate handed out but has
// not asked about yet waits for it, and learns at once when the call was
// decided without a question.
func TestBrokerInflight(t *testing.T) {
	b := NewBroker(BrokerOptions{})
	asked, decided := b.NewID(), b.NewID()
	go func() {
		time.Sleep(30 * time.Millisecond)
		_, _ = b.Approve(context.Background(), &approval.Request{Session: "s", ToolCallID: asked})
	}()
	go func() {
		time.Sleep(30 * time.Millisecond)
		b.finish(decided, nil, nil)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := b.Get(ctx, asked)
	if err != nil || a.State != StatePending {
		t.Fatalf("asked: %+v %v", a, err)
	}
	start := time.Now()
	if _, err := b.Get(ctx, decided); !errors.Is(err, ErrNotFound) || time.Since(start) > 5*time.Second {
		t.Fatalf("decided: %v after %s", err, time.Since(start))
	}
	if _, err := b.Get(ctx, "tc_never"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	_, err = b.Answer(asked, Reply{Answer: approval.Deny})
	must(t, err)
}

// TestPendingPerSession: one session cannot hold more questions than its
// share; other sessions still get theirs asked.
func TestPendingPerSession(t *testing.T) {
	b := NewBroker(BrokerOptions{MaxPendingPerSession: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ask := func(session, id string) chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := b.Approve(ctx, &approval.Request{Session: session, ToolCallID: id})
			ch <- err
		}()
		return ch
	}
	ask("s1", "tc_1")
	ask("s1", "tc_2")
	waitFor(t, "two pending", func() bool { return b.Pending() == 2 })
	if err := <-ask("s1", "tc_3"); !errors.Is(err, ErrTooManyPending) {
		t.Fatalf("third question of s1: %v, want ErrTooManyPending", err)
	}
	ask("s2", "tc_4")
	waitFor(t, "s2's question pending", func() bool { return b.Pending() == 3 })
	if _, err := b.Answer("tc_1", Reply{Answer: approval.Deny}); err != nil {
		t.Fatal(err)
	}
	ask("s1", "tc_5")
	waitFor(t, "a new question of s1 once one was answered", func() bool { return b.Pending() == 3 })
}
