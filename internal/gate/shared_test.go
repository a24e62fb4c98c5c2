package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
)

// follower is a gate reading the grant events of a shared log, as a
// server follows it.
type follower struct {
	g     *Gate
	asked atomic.Int32
	after int64
}

// newFollower is a gate over fx's engine and log, with its own approver
// (which denies) and key.
func newFollower(t *testing.T, fx *fixture, key []byte) *follower {
	t.Helper()
	f := &follower{}
	ap := approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
		f.asked.Add(1)
		return approval.Answer{Kind: approval.Deny}, nil
	})
	g, err := New(fx.g.engine, fx.store, ap, Options{LogKey: key, Clock: fx.clock.Now})
	must(t, err)
	f.g = g
	return f
}

// follow adopts the grant events written since the last call, and
// returns the errors of those not adopted.
func (f *follower) follow(t *testing.T, store eventlog.Store) []error {
	t.Helper()
	var errs []error
	flt := eventlog.Filter{Types: []eventlog.Type{eventlog.TypeLeaseGranted, eventlog.TypeLeaseRevoked}, AfterID: f.after}
	for e, err := range store.Query(context.Background(), flt) {
		must(t, err)
		if _, err := f.g.Adopt(e); err != nil {
			errs = append(errs, err)
		}
		f.after = e.ID
	}
	return errs
}

// TestGrantsSharedThroughTheLog: gates sharing a log and a key share
// their session approvals and leases, and their revocations; a gate with
// another key, a grant tampered with in the log, a grant ended before it
// is read and a grant too old are not taken up.
func TestGrantsSharedThroughTheLog(t *testing.T) {
	key := []byte("approver-derived key")
	a := newFixture(t, Options{LogKey: key})
	a.answer = func(*approval.Request) approval.Answer { return approval.Answer{Kind: approval.AllowSession} }
	notes := a.write(t, filepath.Join(a.home, "notes.txt"), "todo\n")
	read := func() *engine.Request {
		r := a.req("Read", map[string]any{"file_path": notes})
		r.Agent = "main"
		return r
	}
	ctx := context.Background()
	check := func(name string, g *Gate, req *engine.Request, want engine.Reason) {
		t.Helper()
		d, err := g.Check(ctx, req, "t1")
		must(t, err)
		if d.Reason != want {
			t.Fatalf("%s: %s (%s), want %s", name, d.Reason, d.Message, want)
		}
	}

	b := newFollower(t, a, key)
	stranger := newFollower(t, a, []byte("another approver token"))
	check("asked on a", a.g, read(), engine.ReasonUserApproved)
	if errs := b.follow(t, a.store); len(errs) != 0 {
		t.Fatalf("b did not adopt the session approval: %v", errs)
	}
	check("approved on a, reused on b", b.g, read(), engine.ReasonPriorApproval)
	if b.asked.Load() != 0 {
		t.Fatal("b asked for a call approved for the session on a")
	}
	if errs := stranger.follow(t, a.store); len(errs) != 1 || !strings.Contains(errs[0].Error(), "does not verify") {
		t.Fatalf("a gate with another key: %v, want the signature refused", errs)
	}
	check("not on a gate with another key", stranger.g, read(), engine.ReasonUserDenied)

	grants := b.g.Grants("s1")
	if len(grants) != 1 || grants[0].Kind != KindSessionApproval || grants[0].Agent != "main" ||
		grants[0].Summary == "" || len(grants[0].Resources) != 1 || grants[0].Resources[0].Path != notes {
		t.Fatalf("b lists %+v, want the session approval of the Read of %s", grants, notes)
	}
	if got := b.g.Grants("s2"); len(got) != 0 {
		t.Fatalf("another session lists %+v", got)
	}

	// Revoked on b, it ends on a. The person approves the call again, a
	// second later: a revocation ends only the approvals granted until it.
	must(t, b.g.Revoke(ctx, grants[0].ID))
	af := &follower{g: a.g}
	af.follow(t, a.store)
	a.clock.Advance(time.Second)
	check("revoked on b, asked again on a", a.g, read(), engine.ReasonUserApproved)
	if n := a.asked.Load(); n != 2 {
		t.Fatalf("a asked %d times, want 2", n)
	}
	// The grant event read again after the revocation, before the
	// revocation event is (a follower a little behind), ends nothing and
	// revives nothing.
	for e, err := range a.store.Query(ctx, eventlog.Filter{Types: []eventlog.Type{eventlog.TypeLeaseGranted}}) {
		must(t, err)
		if changed, err := b.g.Adopt(e); changed || err != nil || len(b.g.Grants("s1")) != 0 {
			t.Fatalf("revoked approval read again: changed=%v err=%v grants=%+v", changed, err, b.g.Grants("s1"))
		}
		break
	}
	b.follow(t, a.store) // the new approval
	if got := b.g.Grants("s1"); len(got) != 1 || got[0].ID == grants[0].ID {
		t.Fatalf("after following a: %+v, want only the new approval", got)
	}

	// A lease granted on a covers reads on b.
	_, err := a.g.GrantLease(ctx, LeaseSpec{Session: "s1", Agent: "main", Path: notes, Capability: CapRead, TTL: time.Hour})
	must(t, err)
	b.follow(t, a.store)
	cat := a.req("Bash", map[string]any{"command": "cat " + notes})
	cat.Agent = "main"
	check("leased on a, read on b", b.g, cat, engine.ReasonLease)

	// Tampered with: the lease widened to write, or the approval moved to
	// another agent. The signature no longer verifies.
	var granted []eventlog.Event
	for e, err := range a.store.Query(ctx, eventlog.Filter{Types: []eventlog.Type{eventlog.TypeLeaseGranted}}) {
		must(t, err)
		granted = append(granted, e)
	}
	for _, tc := range []struct {
		name   string
		change func(rec *grantRecord)
		want   string
	}{
		{"lease widened", func(rec *grantRecord) { rec.Capability = CapWrite; rec.ID = "ls_w" }, "does not verify"},
		{"approval for another agent", func(rec *grantRecord) { rec.Agent = "other"; rec.ID = "sa_o" }, "does not verify"},
		{"unsigned", func(rec *grantRecord) { rec.Sig = ""; rec.ID = "sa_u" }, "not signed"},
		{"granted in the future", func(rec *grantRecord) {
			rec.Granted = rec.Granted.Add(time.Hour)
			rec.ID = "sa_f"
			rec.Sig = grantSig(key, "s1", *rec)
		}, "in the future"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var src eventlog.Event
			for _, e := range granted {
				var rec grantRecord
				must(t, json.Unmarshal(e.Payload, &rec))
				if (rec.Kind == KindLease) == strings.HasPrefix(tc.name, "lease") {
					src = e
				}
			}
			var rec grantRecord
			must(t, json.Unmarshal(src.Payload, &rec))
			tc.change(&rec)
			raw, err := json.Marshal(rec)
			must(t, err)
			f := newFollower(t, a, key)
			_, err = f.g.Adopt(eventlog.Event{ID: 99, Session: "s1", Type: eventlog.TypeLeaseGranted, Payload: raw})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("adopt: %v, want an error saying %q", err, tc.want)
			}
			if len(f.g.Grants("s1")) != 0 {
				t.Fatal("a refused grant is held")
			}
		})
	}

	// Too old: a gate started 13 hours later takes up neither the
	// approval (past AdoptWindow) nor the lease (expired).
	a.clock.Advance(13 * time.Hour)
	late := newFollower(t, a, key)
	errs := late.follow(t, a.store)
	if len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), "more than 12h0m0s ago") {
		t.Fatalf("adopting old grants: %v, want the session approval refused as too old", errs)
	}
	if got := late.g.Grants("s1"); len(got) != 0 {
		t.Fatalf("a gate started later holds %+v", got)
	}
}

// sharedFixture is a gate signing under a key, and a file outside its
// project to grant.
func sharedFixture(t *testing.T) (a *fixture, key []byte, notes string) {
	t.Helper()
	key = []byte("k")
	a = newFixture(t, Options{LogKey: key})
	return a, key, a.write(t, filepath.Join(a.home, "notes.txt"), "todo\n")
}

// TestEndedGrantsStayEnded: whoever can write to the log but has no key
// cannot bring a revoked grant back: not by writing many revocations of
// made-up ids and then the grant's signed event again, and not, across a
// restart, by deleting the revocation (the ended ids are kept outside the
// log and given back with RestoreEnded).
func TestEndedGrantsStayEnded(t *testing.T) {
	a, key, notes := sharedFixture(t)
	ctx := context.Background()
	b := newFollower(t, a, key)
	ls, err := a.g.GrantLease(ctx, LeaseSpec{Session: "s1", Path: notes, Capability: CapWrite, TTL: time.Hour})
	must(t, err)
	b.follow(t, a.store)
	must(t, a.g.Revoke(ctx, ls.ID))
	b.follow(t, a.store)
	var granted eventlog.Event
	for e, err := range a.store.Query(ctx, eventlog.Filter{Types: []eventlog.Type{eventlog.TypeLeaseGranted}}) {
		must(t, err)
		granted = e
	}
	drafts := make([]eventlog.Draft, 0, 20001)
	for i := range 20001 {
		drafts = append(drafts, eventlog.Draft{Time: a.clock.Now(), Type: eventlog.TypeLeaseRevoked, Payload: fmt.Appendf(nil, `{"id":"ls_%d"}`, i)})
	}
	_, err = a.store.Append(ctx, "junk", drafts...)
	must(t, err)
	_, err = a.store.Append(ctx, "s1", eventlog.Draft{Time: a.clock.Now(), Type: eventlog.TypeLeaseGranted, Payload: granted.Payload})
	must(t, err)
	b.follow(t, a.store)
	af := &follower{g: a.g, after: granted.ID}
	af.follow(t, a.store)
	cat := a.req("Bash", map[string]any{"command": "cat " + notes})
	for name, g := range map[string]*Gate{"the gate that revoked it": a.g, "its follower": b.g} {
		if got := g.Grants("s1"); len(got) != 0 {
			t.Errorf("%s: the revoked lease is held again: %+v", name, got)
		}
		if d, _ := g.Check(ctx, cat, "t1"); d.Reason == engine.ReasonLease {
			t.Errorf("%s: cat allowed by the revoked lease", name)
		}
	}

	// A restart: a new gate reads the log with the revocation gone (only
	// the grant's events are given to it), knowing what ended.
	ended, _ := b.g.EndedGrants()
	if _, ok := ended.Grants[ls.ID]; !ok || len(ended.Grants) != 1 {
		t.Fatalf("ended grants %v, want only %s", ended, ls.ID)
	}
	restarted := newFollower(t, a, key)
	restarted.g.RestoreEnded(ended)
	if changed, err := restarted.g.Adopt(granted); changed || err != nil || len(restarted.g.Grants("s1")) != 0 {
		t.Fatalf("a restarted gate took the revoked lease up again: %v %v", changed, err)
	}
	fresh := newFollower(t, a, key)
	if changed, _ := fresh.g.Adopt(granted); !changed {
		t.Fatal("without the ended ids the lease is taken up: the check above tests nothing")
	}
	// Past the lease's expiry, its id is forgotten: it could not be
	// adopted anyway.
	a.clock.Advance(2 * time.Hour)
	if ended, _ := b.g.EndedGrants(); len(ended.Grants) != 0 {
		t.Fatalf("ended grants past their expiry: %v", ended)
	}
}

// TestSameCallApprovedOnTwoGates: two gates each grant a session approval
// of the same call before reading the other's. Reading each other's, both
// hold the later one, so revoking what one lists ends it on both.
func TestSameCallApprovedOnTwoGates(t *testing.T) {
	key := []byte("k")
	a := newFixture(t, Options{LogKey: key})
	a.answer = func(*approval.Request) approval.Answer { return approval.Answer{Kind: approval.AllowSession} }
	ap := approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
		return approval.Answer{Kind: approval.AllowSession}, nil
	})
	bg, err := New(a.g.engine, a.store, ap, Options{LogKey: key, Clock: a.clock.Now})
	must(t, err)
	notes := a.write(t, filepath.Join(a.home, "notes.txt"), "todo\n")
	read := func() *engine.Request { return a.req("Read", map[string]any{"file_path": notes}) }
	ctx := context.Background()
	for _, g := range []*Gate{a.g, bg} {
		_, err := g.Check(ctx, read(), "t1")
		must(t, err)
	}
	af, bf := &follower{g: a.g}, &follower{g: bg}
	af.follow(t, a.store)
	bf.follow(t, a.store)
	ga, gb := a.g.Grants("s1"), bg.Grants("s1")
	if len(ga) != 1 || len(gb) != 1 || ga[0].ID != gb[0].ID {
		t.Fatalf("a holds %+v, b holds %+v: want the same one approval", ga, gb)
	}
	must(t, a.g.Revoke(ctx, ga[0].ID))
	bf.follow(t, a.store)
	if d, err := bg.Check(ctx, read(), "t1"); err != nil || d.Reason == engine.ReasonPriorApproval {
		t.Fatalf("after revoking what a lists, b allows by %s (%v)", d.Grant, err)
	}
}

// TestDelegatedLeaseNeedsItsParent: a delegated lease is taken up only
// while the lease it came from is held, and a gate reading the revocation
// of a lease ends the leases delegated from it, even without their own
// revocation events.
func TestDelegatedLeaseNeedsItsParent(t *testing.T) {
	a, key, notes := sharedFixture(t)
	ctx := context.Background()
	parent, err := a.g.GrantLease(ctx, LeaseSpec{Session: "s1", Agent: "main", Path: notes, Capability: CapRead, TTL: time.Hour})
	must(t, err)
	_, err = a.g.Delegate(ctx, parent.ID, "helper", "", 0)
	must(t, err)
	var events []eventlog.Event
	for e, err := range a.store.Query(ctx, eventlog.Filter{Types: []eventlog.Type{eventlog.TypeLeaseGranted}}) {
		must(t, err)
		events = append(events, e)
	}
	orphan := newFollower(t, a, key)
	if _, err := orphan.g.Adopt(events[1]); err == nil || !strings.Contains(err.Error(), "not held here") {
		t.Fatalf("the delegated lease without its parent: %v", err)
	}
	b := newFollower(t, a, key)
	b.follow(t, a.store)
	if got := b.g.Grants("s1"); len(got) != 2 {
		t.Fatalf("parent and delegated lease: %+v", got)
	}
	_, err = b.g.Adopt(eventlog.Event{ID: 1 << 40, Session: "s1", Type: eventlog.TypeLeaseRevoked, Payload: []byte(`{"id":"` + parent.ID + `"}`)})
	must(t, err)
	if got := b.g.Grants("s1"); len(got) != 0 {
		t.Errorf("the parent was revoked; still held: %+v", got)
	}
}

// TestRevokedApprovalOfACallRacingAnother: two gates approve the same call,
// b a second later; the person revokes b's approval on b before b has read
// a's. Whatever order they read the log in, neither gate holds an approval
// of the call afterwards: a revocation ends every approval of the call
// granted no later, on every gate, and across restarts (EndedGrants).
func TestRevokedApprovalOfACallRacingAnother(t *testing.T) {
	key := []byte("k")
	a := newFixture(t, Options{LogKey: key})
	a.answer = func(*approval.Request) approval.Answer { return approval.Answer{Kind: approval.AllowSession} }
	bAnswer := approval.AllowSession
	ap := approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
		return approval.Answer{Kind: bAnswer}, nil
	})
	bg, err := New(a.g.engine, a.store, ap, Options{LogKey: key, Clock: a.clock.Now})
	must(t, err)
	notes := a.write(t, filepath.Join(a.home, "notes.txt"), "todo\n")
	read := func() *engine.Request { return a.req("Read", map[string]any{"file_path": notes}) }
	ctx := context.Background()
	_, err = a.g.Check(ctx, read(), "t1")
	must(t, err)
	a.clock.Advance(time.Second)
	_, err = bg.Check(ctx, read(), "t1")
	must(t, err)
	gb := bg.Grants("s1")
	if len(gb) != 1 {
		t.Fatalf("b holds %+v", gb)
	}
	must(t, bg.Revoke(ctx, gb[0].ID))
	af, bf := &follower{g: a.g}, &follower{g: bg}
	af.follow(t, a.store)
	bf.follow(t, a.store)
	// From here on, questions are denied: a check must not make a new
	// approval.
	a.answer = func(*approval.Request) approval.Answer { return approval.Answer{Kind: approval.Deny} }
	bAnswer = approval.Deny
	for name, g := range map[string]*Gate{"a": a.g, "b": bg} {
		if got := g.Grants("s1"); len(got) != 0 {
			t.Errorf("%s holds %+v after the call's approval was revoked", name, got)
		}
		if d, err := g.Check(ctx, read(), "t2"); err == nil && d.Reason == engine.ReasonPriorApproval {
			t.Errorf("%s allows the revoked call by %s", name, d.Grant)
		}
	}
	// A gate started afresh with b's ended state, reading the whole log,
	// agrees.
	ended, _ := bg.EndedGrants()
	if len(ended.Calls) != 1 {
		t.Fatalf("ended calls on b: %+v, want the revoked call", ended.Calls)
	}
	fresh := newFollower(t, a, key)
	fresh.g.RestoreEnded(ended)
	fresh.follow(t, a.store)
	if got := fresh.g.Grants("s1"); len(got) != 0 {
		t.Errorf("a restarted gate holds %+v", got)
	}
}

// hookedStore runs after once, after an append has committed.
type hookedStore struct {
	eventlog.Store
	after func([]eventlog.Event)
}

func (h *hookedStore) Append(ctx context.Context, s string, d ...eventlog.Draft) ([]eventlog.Event, error) {
	evs, err := h.Store.Append(ctx, s, d...)
	if f := h.after; f != nil && err == nil {
		h.after = nil
		f(evs)
	}
	return evs, err
}

// TestLeaseRevokedAsItIsGranted: the follower takes a new lease up from
// the log and a revocation ends it before GrantLease has stored it;
// GrantLease does not put it back.
func TestLeaseRevokedAsItIsGranted(t *testing.T) {
	key := []byte("k")
	a := newFixture(t, Options{LogKey: key})
	hook := &hookedStore{Store: a.store}
	g, err := New(a.g.engine, hook, nil, Options{LogKey: key, Clock: a.clock.Now})
	must(t, err)
	notes := a.write(t, filepath.Join(a.home, "notes.txt"), "todo\n")
	ctx := context.Background()
	hook.after = func(evs []eventlog.Event) {
		if _, err := g.Adopt(evs[0]); err != nil {
			t.Error(err)
		}
		for _, gr := range g.Grants("s1") {
			must(t, g.Revoke(ctx, gr.ID))
		}
	}
	if _, err := g.GrantLease(ctx, LeaseSpec{Session: "s1", Path: notes, Capability: CapRead, TTL: time.Hour}); err == nil {
		t.Error("GrantLease of a lease revoked meanwhile succeeded")
	}
	if got := g.Grants("s1"); len(got) != 0 {
		t.Errorf("the revoked lease is held: %+v", got)
	}
}

// TestHandOver: when the classifier leaves a call to a person, a second
// question, asked of the user and signed, is recorded before the person is
// asked; not when a hook answers (headless), nor when the caller went
// away while the classifier thought.
func TestHandOver(t *testing.T) {
	key := []byte("k")
	for _, tc := range []struct {
		name      string
		headless  bool
		cancel    bool
		wantAsked []Actor
		want      engine.Reason
	}{
		{"to a person", false, false, []Actor{ActorClassifier, ActorUser}, engine.ReasonUserApproved},
		{"headless: to a hook", true, false, []Actor{ActorClassifier}, engine.ReasonUserApproved},
		{"cancelled while the classifier thinks", false, true, []Actor{ActorClassifier}, engine.ReasonApprovalCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			classifier := approval.ClassifierFunc(func(context.Context, *approval.Request) (approval.Verdict, error) {
				if tc.cancel {
					cancel()
				}
				return approval.Verdict{Decision: "ask"}, nil
			})
			fx := newFixture(t, Options{LogKey: key, Classifier: classifier, Headless: tc.headless})
			var recorded []byte
			fx.beforeAnswered = func(r *approval.Request) { recorded = r.Recorded }
			d, err := fx.g.Check(ctx, fx.req("Bash", map[string]any{"command": "make build"}), "t1")
			if err != nil && !tc.cancel {
				t.Fatal(err)
			}
			if d.Reason != tc.want {
				t.Fatalf("decision %s (%s), want %s", d.Reason, d.Message, tc.want)
			}
			var asked []Actor
			var last eventlog.Event
			for e, err := range fx.store.Query(context.Background(), eventlog.Filter{Types: []eventlog.Type{eventlog.TypePermissionRequested}}) {
				must(t, err)
				var p PermissionRequested
				must(t, json.Unmarshal(e.Payload, &p))
				asked = append(asked, p.AskedOf)
				last = e
			}
			if fmt.Sprint(asked) != fmt.Sprint(tc.wantAsked) {
				t.Fatalf("questions asked of %v, want %v", asked, tc.wantAsked)
			}
			if len(asked) == 2 {
				if _, err := fx.g.VerifyQuestion(last.Session, last.Payload); err != nil {
					t.Fatalf("the handed-over question does not verify: %v", err)
				}
				if string(recorded) != string(last.Payload) {
					t.Fatalf("the person's request carries %s, the log %s", recorded, last.Payload)
				}
			}
		})
	}
}

// TestEndedMerge: merging what another server wrote keeps the later of
// each and drops what could no longer be adopted anyway.
func TestEndedMerge(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := func(d time.Duration) time.Time { return now.Add(d) }
	mine := Ended{
		Grants: map[string]time.Time{"ls_a": h(time.Hour)},
		Calls:  map[string]RevokedCall{"k1": {Granted: h(-time.Hour), ID: "sa_1", Until: h(11 * time.Hour)}},
	}
	theirs := Ended{
		Grants: map[string]time.Time{"ls_a": h(2 * time.Hour), "ls_b": h(time.Minute), "ls_old": h(-time.Minute)},
		Calls: map[string]RevokedCall{
			"k1": {Granted: h(-2 * time.Hour), ID: "sa_0", Until: h(10 * time.Hour)},
			"k2": {Granted: h(-time.Hour), ID: "sa_2", Until: h(11 * time.Hour)},
			"k3": {Granted: h(-13 * time.Hour), ID: "sa_3", Until: h(-time.Hour)},
		},
	}
	got := mine.Merge(theirs, now)
	if got.Grants["ls_a"] != h(2*time.Hour) || got.Grants["ls_b"] != h(time.Minute) || len(got.Grants) != 2 {
		t.Errorf("grants %v", got.Grants)
	}
	if got.Calls["k1"].ID != "sa_1" || got.Calls["k2"].ID != "sa_2" || len(got.Calls) != 2 {
		t.Errorf("calls %v", got.Calls)
	}
	if empty := (Ended{}).Merge(theirs, now); len(empty.Grants) != 2 {
		t.Errorf("merged into nothing: %v", empty.Grants)
	}
}
