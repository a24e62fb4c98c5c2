// Package storetest is the conformance suite of [eventlog.Store]: every
// implementation runs [Run] in its tests, so all stores keep the same
// promises about sequence numbers, filters, subscriptions, durability
// across reopening, cancellation and bad input.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolgate/toolgate/internal/eventlog"
)

// NewStore opens the store under test. Called the first time for a test t,
// it returns a store over fresh, empty storage; called again for the same
// t after that store was closed, it must reopen the same storage (for a
// file-backed store, the same file), which is how Run checks that closing
// and reopening keeps everything. Run closes the stores it opens.
type NewStore func(t *testing.T) eventlog.Store

// Run runs the conformance suite against the stores newStore opens.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, NewStore)
	}{
		{"SeqStartsAtOne", testSeqStartsAtOne},
		{"ConcurrentSameSession", testConcurrentSameSession},
		{"ConcurrentAcrossSessions", testConcurrentAcrossSessions},
		{"IDsInCommitOrder", testIDsInCommitOrder},
		{"ConcurrentIDs", testConcurrentIDs},
		{"QueryFilters", testQueryFilters},
		{"QueryStopsEarly", testQueryStopsEarly},
		{"Subscribe", testSubscribe},
		{"SubscribeAllSessions", testSubscribeAllSessions},
		{"SubscribeReplayAfterSeq", testSubscribeReplayAfterSeq},
		{"SubscribeReplayAfterID", testSubscribeReplayAfterID},
		{"SubscribeResumeUnderLoad", testSubscribeResumeUnderLoad},
		{"SlowSubscriberLosesNothing", testSlowSubscriber},
		{"SubscribeEndsOnClose", testSubscribeEndsOnClose},
		{"Reopen", testReopen},
		{"CloseDuringAppends", testCloseDuringAppends},
		{"ContextCancelled", testContextCancelled},
		{"ContextCancelledMidAppend", testContextCancelledMidAppend},
		{"BadInput", testBadInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore) })
	}
}

// open opens a store and closes it when the test ends.
func open(t *testing.T, newStore NewStore) eventlog.Store {
	t.Helper()
	s := newStore(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func draft(typ eventlog.Type, payload string) eventlog.Draft {
	return eventlog.Draft{Type: typ, Payload: json.RawMessage(payload)}
}

func mustAppend(t *testing.T, s eventlog.Store, session string, ds ...eventlog.Draft) []eventlog.Event {
	t.Helper()
	evs, err := s.Append(context.Background(), session, ds...)
	if err != nil {
		t.Fatalf("Append(%q, %d events): %v", session, len(ds), err)
	}
	if len(evs) != len(ds) {
		t.Fatalf("Append(%q, %d events) returned %d events", session, len(ds), len(evs))
	}
	return evs
}

func collect(seq iter.Seq2[eventlog.Event, error]) ([]eventlog.Event, error) {
	var evs []eventlog.Event
	for e, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, e)
	}
	return evs, nil
}

func mustQuery(t *testing.T, s eventlog.Store, f eventlog.Filter) []eventlog.Event {
	t.Helper()
	evs, err := collect(s.Query(context.Background(), f))
	if err != nil {
		t.Fatalf("Query(%+v): %v", f, err)
	}
	return evs
}

// checkGapless fails unless evs, the events of one session in Query order,
// are numbered 1, 2, … len(evs).
func checkGapless(t *testing.T, session string, evs []eventlog.Event) {
	t.Helper()
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.Session != session {
			t.Fatalf("session %q: event %d has session %q seq %d, want seq %d: not gapless", session, i, e.Session, e.Seq, i+1)
		}
	}
}

func testSeqStartsAtOne(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	before := time.Now().Add(-time.Second)
	evs := mustAppend(t, s, "s1",
		eventlog.Draft{Turn: "t1", Type: eventlog.TypeSessionStarted},
		draft(eventlog.TypeTurnStarted, `{"n": 1}`),
		draft(eventlog.TypeUserMessage, `{"text":"run the tests"}`))
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.Session != "s1" {
			t.Errorf("event %d: seq %d session %q, want seq %d session s1", i, e.Seq, e.Session, i+1)
		}
		if e.Time.Before(before) || e.Time.Location() != time.UTC {
			t.Errorf("event %d: time %v, want a UTC time after %v", i, e.Time, before)
		}
	}
	if string(evs[0].Payload) != "{}" {
		t.Errorf("empty payload stored as %q, want {}", evs[0].Payload)
	}
	if got := mustAppend(t, s, "s1", draft(eventlog.TypeTurnCompleted, ""))[0].Seq; got != 4 {
		t.Errorf("second Append got seq %d, want 4", got)
	}
	if got := mustAppend(t, s, "s2", draft(eventlog.TypeSessionStarted, ""))[0].Seq; got != 1 {
		t.Errorf("another session's first seq is %d, want 1", got)
	}
	if evs, err := s.Append(context.Background(), "s1"); err != nil || len(evs) != 0 {
		t.Errorf("Append with no events = %v, %v; want nothing and no error", evs, err)
	}

	stored := mustQuery(t, s, eventlog.Filter{Session: "s1"})
	checkGapless(t, "s1", stored)
	if diff := cmp.Diff(evs, stored[:3]); diff != "" {
		t.Errorf("Query differs from what Append returned (-append +query):\n%s", diff)
	}
	if stored[0].Turn != "t1" {
		t.Errorf("turn = %q, want t1", stored[0].Turn)
	}
}

func testConcurrentSameSession(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	const writers, calls = 8, 40
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			last := int64(0)
			for i := range calls {
				n := 1 + (w+i)%3 // calls of 1 to 3 events
				ds := make([]eventlog.Draft, n)
				for j := range ds {
					ds[j] = draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"writer":%d,"call":%d,"i":%d}`, w, i, j))
				}
				evs, err := s.Append(context.Background(), "shared", ds...)
				if err != nil {
					errs <- err
					return
				}
				for j, e := range evs {
					if j > 0 && e.Seq != evs[j-1].Seq+1 {
						errs <- fmt.Errorf("one call's events got seqs %d then %d: not consecutive", evs[j-1].Seq, e.Seq)
						return
					}
					if e.Seq <= last {
						errs <- fmt.Errorf("writer %d got seq %d after %d: not increasing", w, e.Seq, last)
						return
					}
					last = e.Seq
					mu.Lock()
					if seen[e.Seq] {
						errs <- fmt.Errorf("seq %d handed out twice", e.Seq)
					}
					seen[e.Seq] = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	stored := mustQuery(t, s, eventlog.Filter{Session: "shared"})
	if len(stored) != len(seen) {
		t.Fatalf("stored %d events, Append acknowledged %d", len(stored), len(seen))
	}
	checkGapless(t, "shared", stored)
	verifyChains(t, s)
}

func testConcurrentAcrossSessions(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	const writers, calls, sessions = 8, 40, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	counts := make([][sessions]int, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range calls {
				sess := (w + i) % sessions
				if _, err := s.Append(context.Background(), fmt.Sprintf("sess-%d", sess),
					draft(eventlog.TypeToolCompleted, fmt.Sprintf(`{"tool":"shell","writer":%d}`, w))); err != nil {
					errs <- err
					return
				}
				counts[w][sess]++
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for sess := range sessions {
		want := 0
		for w := range writers {
			want += counts[w][sess]
		}
		total += want
		name := fmt.Sprintf("sess-%d", sess)
		stored := mustQuery(t, s, eventlog.Filter{Session: name})
		if len(stored) != want {
			t.Errorf("session %s: %d events stored, want %d", name, len(stored), want)
		}
		checkGapless(t, name, stored)
	}
	if all := mustQuery(t, s, eventlog.Filter{}); len(all) != total {
		t.Errorf("Query(all) = %d events, want %d", len(all), total)
	}
	verifyChains(t, s)
}

// checkIDOrder fails unless evs, in Query order, have IDs that are
// positive and strictly increasing.
func checkIDOrder(t *testing.T, what string, evs []eventlog.Event) {
	t.Helper()
	for i, e := range evs {
		if e.ID <= 0 {
			t.Fatalf("%s: event %d (session %q seq %d) has ID %d, want a positive ID", what, i, e.Session, e.Seq, e.ID)
		}
		if i > 0 && e.ID <= evs[i-1].ID {
			t.Fatalf("%s: event %d (session %q seq %d) has ID %d after ID %d: IDs are not increasing", what, i, e.Session, e.Seq, e.ID, evs[i-1].ID)
		}
	}
}

func testIDsInCommitOrder(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	var appended []eventlog.Event
	for i := range 6 {
		ds := make([]eventlog.Draft, 1+i%3)
		for j := range ds {
			ds[j] = draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"i":%d,"j":%d}`, i, j))
		}
		appended = append(appended, mustAppend(t, s, fmt.Sprintf("s%d", i%2), ds...)...)
	}
	checkIDOrder(t, "Append, one call after another", appended)
	all := mustQuery(t, s, eventlog.Filter{})
	if diff := cmp.Diff(appended, all); diff != "" {
		t.Errorf("Query(all) is not the appended events in ID order (-appended +query):\n%s", diff)
	}
	for _, session := range []string{"s0", "s1"} {
		checkIDOrder(t, "Query of session "+session+" (by seq)", mustQuery(t, s, eventlog.Filter{Session: session}))
	}
}

// testConcurrentIDs appends from many goroutines to a few sessions and
// checks that IDs are unique, that each Append gets IDs above those of
// every Append that returned before it was called, and that Query orders
// by ID, which within a session agrees with Seq.
func testConcurrentIDs(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	const writers, calls, sessions = 8, 30, 3
	var mu sync.Mutex
	acked := int64(0) // the highest ID of an Append that has returned; guarded by mu
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range calls {
				mu.Lock()
				before := acked
				mu.Unlock()
				evs, err := s.Append(context.Background(), fmt.Sprintf("sess-%d", (w+i)%sessions),
					draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"writer":%d,"call":%d}`, w, i)),
					draft(eventlog.TypeToolCompleted, fmt.Sprintf(`{"writer":%d,"call":%d}`, w, i)))
				if err != nil {
					errs <- err
					return
				}
				if evs[0].ID <= before || evs[1].ID <= evs[0].ID {
					errs <- fmt.Errorf("writer %d call %d got IDs %d, %d, but an Append that returned before the call already had ID %d",
						w, i, evs[0].ID, evs[1].ID, before)
					return
				}
				mu.Lock()
				acked = max(acked, evs[1].ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all := mustQuery(t, s, eventlog.Filter{})
	if len(all) != 2*writers*calls {
		t.Fatalf("Query(all) = %d events, want %d", len(all), 2*writers*calls)
	}
	checkIDOrder(t, "Query(all)", all)
	for sess := range sessions {
		name := fmt.Sprintf("sess-%d", sess)
		stored := mustQuery(t, s, eventlog.Filter{Session: name})
		checkGapless(t, name, stored)
		checkIDOrder(t, "Query of session "+name+" (by seq)", stored)
	}
}

// fixture appends a varied log, one event per call so that commit order is
// the order of the returned slice, and returns what was stored.
func fixture(t *testing.T, s eventlog.Store) []eventlog.Event {
	t.Helper()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	type row struct {
		session string
		typ     eventlog.Type
		payload string
	}
	rows := []row{
		{"alpha", eventlog.TypeSessionStarted, `{}`},
		{"alpha", eventlog.TypeToolCallRequested, `{"tool":"shell","input":{"command":"npm test"}}`},
		{"beta", eventlog.TypeSessionStarted, ``},
		{"alpha", eventlog.TypePermissionResolved, `{"decision":"allow","tool":"shell","reason":"rule_allow"}`},
		{"beta", eventlog.TypeToolCallRequested, `{"tool":"read"}`},
		{"beta", eventlog.TypePermissionResolved, `{"decision":"deny","tool":"read","reason":"credential_access"}`},
		{"alpha", eventlog.TypeToolStarted, `{"tool":"shell"}`},
		{"alpha", eventlog.TypePermissionResolved, `{"decision":"ask","tool":"mcp__github__create_issue"}`},
		{"beta", eventlog.TypePermissionResolved, `{"decision":"deny","tool":"shell","nested":{"decision":"allow"}}`},
		{"alpha", eventlog.TypePermissionResolved, `{"decision":7,"tool":["shell"]}`},
		{"beta", eventlog.TypeInjectionSuspected, `{"tool":"fetch"}`},
		{"alpha", eventlog.TypeToolCompleted, `{"tool":"shell","stdout_bytes":120}`},
	}
	var out []eventlog.Event
	for i, r := range rows {
		d := draft(r.typ, r.payload)
		d.Time = base.Add(time.Duration(i) * time.Minute)
		d.Turn = fmt.Sprintf("turn-%d", i/4)
		out = append(out, mustAppend(t, s, r.session, d)...)
	}
	return out
}

func testQueryFilters(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	all := fixture(t, s)
	base := all[0].Time
	filters := []eventlog.Filter{
		{},
		{Session: "alpha"},
		{Session: "beta"},
		{Session: "nobody"},
		{Types: []eventlog.Type{eventlog.TypePermissionResolved}},
		{Types: []eventlog.Type{eventlog.TypeSessionStarted, eventlog.TypeInjectionSuspected}},
		{Decisions: []string{"deny"}},
		{Decisions: []string{"allow", "ask"}},
		{Decisions: []string{"7"}},
		{Tools: []string{"shell"}},
		{Tools: []string{"read", "fetch"}},
		{Tools: []string{"shell"}, Decisions: []string{"deny"}},
		{Session: "alpha", Tools: []string{"shell"}, Types: []eventlog.Type{eventlog.TypeToolStarted, eventlog.TypeToolCompleted}},
		{Since: base.Add(3 * time.Minute)},
		{Until: base.Add(3 * time.Minute)},
		{Since: base.Add(2 * time.Minute), Until: base.Add(5 * time.Minute)},
		{Since: base.Add(time.Hour)},
		{Session: "alpha", AfterSeq: 3},
		{Session: "alpha", AfterSeq: 3, Limit: 2},
		{AfterID: all[4].ID},
		{AfterID: all[4].ID, Session: "beta"},
		{AfterID: all[2].ID, Session: "alpha", AfterSeq: 5},
		{AfterID: all[3].ID, Types: []eventlog.Type{eventlog.TypePermissionResolved}, Limit: 2},
		{AfterID: all[len(all)-1].ID},
		{AfterID: eventlog.ReplayAll},
		{AfterID: eventlog.ReplayAll, Session: "beta", Limit: 1},
		{Limit: 5},
		{Types: []eventlog.Type{eventlog.TypePermissionResolved}, Limit: 2},
	}
	for _, f := range filters {
		var want []eventlog.Event
		for _, e := range all {
			if f.Match(e) && (f.Limit == 0 || len(want) < f.Limit) {
				want = append(want, e)
			}
		}
		got := mustQuery(t, s, f)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Query(%+v) (-want +got):\n%s", f, diff)
		}
	}
	// A spot check that Match itself means what the suite thinks it means.
	if n := len(mustQuery(t, s, eventlog.Filter{Decisions: []string{"deny"}})); n != 2 {
		t.Errorf("Query(decision deny) = %d events, want 2", n)
	}
}

func testQueryStopsEarly(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	for range 5 {
		mustAppend(t, s, "s", draft(eventlog.TypeToolStarted, ""), draft(eventlog.TypeToolCompleted, ""))
	}
	n := 0
	for _, err := range s.Query(context.Background(), eventlog.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	// The store must still append and query after an abandoned iteration.
	mustAppend(t, s, "s", draft(eventlog.TypeTurnCompleted, ""))
	checkGapless(t, "s", mustQuery(t, s, eventlog.Filter{Session: "s"}))
}

func withTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testSubscribe(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	mustAppend(t, s, "s", draft(eventlog.TypeSessionStarted, "")) // before the subscription: not seen
	const n = 60
	sub := s.Subscribe(withTimeout(t), eventlog.Filter{Session: "s", Limit: n})
	appended := make(chan []eventlog.Event, 1)
	go func() {
		var evs []eventlog.Event
		for i := 0; len(evs) < n; i++ {
			_, err := s.Append(context.Background(), "other", draft(eventlog.TypeToolStarted, "")) // filtered out
			if err != nil {
				t.Error(err)
				break
			}
			two, err := s.Append(context.Background(), "s",
				draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"i":%d}`, i)),
				draft(eventlog.TypeToolCompleted, fmt.Sprintf(`{"i":%d}`, i)))
			if err != nil {
				t.Error(err)
				break
			}
			evs = append(evs, two...)
		}
		appended <- evs
	}()
	got, err := collect(sub)
	if err != nil {
		t.Fatalf("Subscribe: %v after %d events", err, len(got))
	}
	want := <-appended
	if len(want) > n {
		want = want[:n]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Subscribe (-appended +received):\n%s", diff)
	}
}

func testSubscribeAllSessions(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	const perSession = 30
	sub := s.Subscribe(withTimeout(t), eventlog.Filter{Types: []eventlog.Type{eventlog.TypeToolStarted}, Limit: 2 * perSession})
	var wg sync.WaitGroup
	for _, sess := range []string{"x", "y"} {
		wg.Go(func() {
			for range perSession {
				if _, err := s.Append(context.Background(), sess,
					draft(eventlog.TypeToolStarted, ""), draft(eventlog.TypeToolCompleted, "")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	got, err := collect(sub)
	wg.Wait()
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	last := map[string]int64{}
	for _, e := range got {
		if e.Type != eventlog.TypeToolStarted {
			t.Errorf("received type %s, the filter wants only %s", e.Type, eventlog.TypeToolStarted)
		}
		want := int64(1)
		if last[e.Session] != 0 {
			want = last[e.Session] + 2
		}
		if e.Seq != want {
			t.Errorf("session %s: received seq %d after %d, want every other seq in order", e.Session, e.Seq, last[e.Session])
		}
		last[e.Session] = e.Seq
	}
	if len(got) != 2*perSession {
		t.Errorf("received %d events, want %d", len(got), 2*perSession)
	}
}

func testSubscribeReplayAfterSeq(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	for range 10 {
		mustAppend(t, s, "s", draft(eventlog.TypeToolStarted, ""))
	}
	// Query first, then follow from the last seq seen: nothing is missed.
	seen := mustQuery(t, s, eventlog.Filter{Session: "s", Limit: 4})
	sub := s.Subscribe(withTimeout(t), eventlog.Filter{Session: "s", AfterSeq: seen[len(seen)-1].Seq, Limit: 10})
	mustAppend(t, s, "s", draft(eventlog.TypeToolCompleted, ""), draft(eventlog.TypeToolCompleted, ""), draft(eventlog.TypeToolCompleted, ""), draft(eventlog.TypeToolCompleted, ""))
	got, err := collect(sub)
	if err != nil {
		t.Fatal(err)
	}
	checkGapless(t, "s", append(seen, got...))
}

func testSubscribeReplayAfterID(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	var stored []eventlog.Event
	for i := range 10 {
		stored = append(stored, mustAppend(t, s, fmt.Sprintf("s%d", i%3), draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"i":%d}`, i)))...)
	}
	cases := []struct {
		name   string
		filter eventlog.Filter
	}{
		{"after an ID, all sessions", eventlog.Filter{AfterID: stored[3].ID}},
		{"after the last ID", eventlog.Filter{AfterID: stored[9].ID}},
		{"after an ID, one session", eventlog.Filter{AfterID: stored[3].ID, Session: "s1"}},
		{"after an ID and a seq", eventlog.Filter{AfterID: stored[1].ID, Session: "s2", AfterSeq: 2}},
		{"ReplayAll", eventlog.Filter{AfterID: eventlog.ReplayAll}},
		{"ReplayAll, one type", eventlog.Filter{AfterID: eventlog.ReplayAll, Types: []eventlog.Type{eventlog.TypeToolCompleted}}},
	}
	for i, c := range cases {
		var want []eventlog.Event
		for _, e := range stored {
			if c.filter.Match(e) {
				want = append(want, e)
			}
		}
		f := c.filter
		f.Limit = len(want) + 1
		sub := s.Subscribe(withTimeout(t), f)
		// An event appended after Subscribe was called, which the filter
		// selects: it must follow the stored ones.
		session := c.filter.Session
		if session == "" {
			session = "s1"
		}
		live := mustAppend(t, s, session, draft(eventlog.TypeToolCompleted, fmt.Sprintf(`{"case":%d}`, i)))[0]
		if !c.filter.Match(live) {
			t.Fatalf("%s: the filter %+v does not select the live event %+v", c.name, c.filter, live)
		}
		want = append(want, live)
		stored = append(stored, live)
		got, err := collect(sub)
		if err != nil {
			t.Fatalf("%s: Subscribe(%+v): %v", c.name, f, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: Subscribe(%+v) (-want +got):\n%s", c.name, f, diff)
		}
	}
}

// testSubscribeResumeUnderLoad is an SSE client that reconnects all the
// time: readers with different filters subscribe, take a few events, drop
// the subscription and resume from the last ID they saw, while writers
// append to several sessions. Each must receive exactly what Query finds
// at the end, in the same order.
func testSubscribeResumeUnderLoad(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	const writers, calls, sessions = 4, 50, 3
	// A history from before any reader started.
	history := 0
	for i := range 5 {
		mustAppend(t, s, fmt.Sprintf("w-%d", i%sessions), draft(eventlog.TypeSessionStarted, ""))
		history++
	}
	// What each writer appends: call i of writer w goes to session
	// w-((w+i)%sessions), with a tool.completed after the tool.started
	// on odd calls.
	plan := func(w, i int) (string, []eventlog.Draft) {
		ds := []eventlog.Draft{draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))}
		if i%2 == 1 {
			ds = append(ds, draft(eventlog.TypeToolCompleted, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)))
		}
		return fmt.Sprintf("w-%d", (w+i)%sessions), ds
	}
	filters := []eventlog.Filter{
		{},
		{Types: []eventlog.Type{eventlog.TypeToolCompleted}},
		{Session: "w-1"},
	}
	// How many events each filter selects once everything is written.
	want := make([]int, len(filters))
	for k, f := range filters {
		for i := range history {
			if f.Match(eventlog.Event{Session: fmt.Sprintf("w-%d", i%sessions), Type: eventlog.TypeSessionStarted, ID: 1, Seq: 1}) {
				want[k]++
			}
		}
		for w := range writers {
			for i := range calls {
				session, ds := plan(w, i)
				for _, d := range ds {
					if f.Match(eventlog.Event{Session: session, Type: d.Type, ID: 1, Seq: 1}) {
						want[k]++
					}
				}
			}
		}
	}

	ctx := withTimeout(t)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range calls {
				session, ds := plan(w, i)
				if _, err := s.Append(context.Background(), session, ds...); err != nil {
					t.Errorf("writer %d: Append: %v", w, err)
					return
				}
			}
		})
	}
	got := make([][]eventlog.Event, len(filters))
	for k, f := range filters {
		wg.Go(func() {
			after := eventlog.ReplayAll
			for reconnect := 0; len(got[k]) < want[k]; reconnect++ {
				sub := f
				sub.AfterID = after
				sub.Limit = min(1+reconnect%7, want[k]-len(got[k]))
				evs, err := collect(s.Subscribe(ctx, sub))
				if err != nil {
					t.Errorf("filter %+v: Subscribe(%+v): %v", f, sub, err)
					return
				}
				if ctx.Err() != nil {
					t.Errorf("filter %+v: received %d events of %d, then waited for more until the test's timeout: events were missed",
						f, len(got[k])+len(evs), want[k])
					return
				}
				got[k] = append(got[k], evs...)
				after = got[k][len(got[k])-1].ID
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for k, f := range filters {
		stored := mustQuery(t, s, f)
		if len(stored) != want[k] {
			t.Errorf("Query(%+v) = %d events, want %d", f, len(stored), want[k])
		}
		if diff := cmp.Diff(stored, got[k]); diff != "" {
			t.Errorf("filter %+v: resumed subscriptions differ from Query (-query +subscriptions):\n%s", f, diff)
		}
	}
}

func testSlowSubscriber(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	const n = 2000
	sub := s.Subscribe(withTimeout(t), eventlog.Filter{Session: "s", Limit: n})
	// Append everything before the subscriber reads anything: appends must
	// not wait for it, and it must still receive every event.
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i += 50 {
			ds := make([]eventlog.Draft, 50)
			for j := range ds {
				ds[j] = draft(eventlog.TypeToolStarted, "")
			}
			if _, err := s.Append(context.Background(), "s", ds...); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("appends did not finish while a subscriber was not reading: a slow subscriber blocks writers")
	}
	got, err := collect(sub)
	if err != nil {
		t.Fatal(err)
	}
	checkGapless(t, "s", got)
	if len(got) != n {
		t.Fatalf("slow subscriber received %d events, want %d", len(got), n)
	}
}

func testSubscribeEndsOnClose(t *testing.T, newStore NewStore) {
	s := newStore(t)
	sub := s.Subscribe(withTimeout(t), eventlog.Filter{})
	result := make(chan error, 1)
	go func() {
		_, err := collect(sub)
		result <- err
	}()
	mustAppend(t, s, "s", draft(eventlog.TypeSessionStarted, ""))
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-result:
		if !errors.Is(err, eventlog.ErrClosed) {
			t.Errorf("subscription ended with %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("subscription did not end when the store was closed")
	}
}

func testReopen(t *testing.T, newStore NewStore) {
	s := newStore(t)
	written := fixture(t, s)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Append(context.Background(), "alpha", draft(eventlog.TypeToolStarted, "")); !errors.Is(err, eventlog.ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := collect(s.Query(context.Background(), eventlog.Filter{})); !errors.Is(err, eventlog.ErrClosed) {
		t.Errorf("Query after Close: %v, want ErrClosed", err)
	}

	s = open(t, newStore)
	if diff := cmp.Diff(written, mustQuery(t, s, eventlog.Filter{})); diff != "" {
		t.Fatalf("after reopening (-written +stored):\n%s", diff)
	}
	alpha := mustQuery(t, s, eventlog.Filter{Session: "alpha"})
	next := mustAppend(t, s, "alpha", draft(eventlog.TypeTurnCompleted, ""))[0]
	if next.Seq != alpha[len(alpha)-1].Seq+1 {
		t.Errorf("after reopening, the next seq is %d, want %d", next.Seq, alpha[len(alpha)-1].Seq+1)
	}
	if last := written[len(written)-1].ID; next.ID <= last {
		t.Errorf("after reopening, a new event got ID %d, not above the last ID before closing, %d", next.ID, last)
	}
}

func testCloseDuringAppends(t *testing.T, newStore NewStore) {
	s := newStore(t)
	var mu sync.Mutex
	acked := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				_, err := s.Append(context.Background(), "s", draft(eventlog.TypeToolStarted, ""))
				if errors.Is(err, eventlog.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s = open(t, newStore)
	stored := mustQuery(t, s, eventlog.Filter{Session: "s"})
	checkGapless(t, "s", stored)
	if len(stored) != acked {
		t.Errorf("%d events stored, %d acknowledged before Close: every accepted append must be committed and acknowledged", len(stored), acked)
	}
}

func testContextCancelled(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if evs, err := s.Append(ctx, "s", draft(eventlog.TypeToolStarted, "")); !errors.Is(err, context.Canceled) || evs != nil {
		t.Errorf("Append with a cancelled context = %v, %v; want context.Canceled", evs, err)
	}
	if got := mustQuery(t, s, eventlog.Filter{}); len(got) != 0 {
		t.Errorf("a cancelled Append wrote %d events", len(got))
	}
	mustAppend(t, s, "s", draft(eventlog.TypeToolStarted, ""))
	if _, err := collect(s.Query(ctx, eventlog.Filter{})); !errors.Is(err, context.Canceled) {
		t.Errorf("Query with a cancelled context: %v, want context.Canceled", err)
	}

	// A subscription ends, without an error, when its context does.
	subCtx, subCancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		_, err := collect(s.Subscribe(subCtx, eventlog.Filter{}))
		result <- err
	}()
	time.Sleep(20 * time.Millisecond)
	subCancel()
	select {
	case err := <-result:
		if err != nil {
			t.Errorf("a cancelled subscription ended with %v, want no error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("subscription did not end when its context was cancelled")
	}
}

// testContextCancelledMidAppend cancels appends at arbitrary moments: each
// must either succeed with its events stored or fail with nothing stored,
// and the session must stay gapless.
func testContextCancelledMidAppend(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	type result struct {
		evs []eventlog.Event
		err error
	}
	results := make(chan result, 400)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration((w*50+i)%7)*100*time.Microsecond)
				evs, err := s.Append(ctx, "s",
					draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)),
					draft(eventlog.TypeToolCompleted, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)))
				cancel()
				results <- result{evs, err}
			}
		})
	}
	wg.Wait()
	close(results)
	acked := map[int64]string{}
	cancelled := 0
	for r := range results {
		switch {
		case r.err == nil:
			for _, e := range r.evs {
				acked[e.Seq] = string(e.Payload)
			}
		case errors.Is(r.err, context.DeadlineExceeded):
			cancelled++
			if r.evs != nil {
				t.Errorf("a cancelled Append returned events %v", r.evs)
			}
		default:
			t.Fatalf("Append: %v", r.err)
		}
	}
	stored := mustQuery(t, s, eventlog.Filter{Session: "s"})
	checkGapless(t, "s", stored)
	if len(stored) != len(acked) {
		t.Fatalf("%d events stored, %d acknowledged (%d appends cancelled): a cancelled append wrote events or an acknowledged one is missing",
			len(stored), len(acked), cancelled)
	}
	for _, e := range stored {
		if acked[e.Seq] != string(e.Payload) {
			t.Errorf("seq %d: stored payload %s, acknowledged %s", e.Seq, e.Payload, acked[e.Seq])
		}
	}
	t.Logf("%d appends acknowledged, %d cancelled", len(acked)/2, cancelled)
}

func testBadInput(t *testing.T, newStore NewStore) {
	s := open(t, newStore)
	ok := draft(eventlog.TypeToolStarted, `{"tool":"shell"}`)
	cases := []struct {
		name    string
		session string
		events  []eventlog.Draft
	}{
		{"empty session", "", []eventlog.Draft{ok}},
		{"empty type", "s", []eventlog.Draft{{Payload: json.RawMessage(`{}`)}}},
		{"second of three has an empty type", "s", []eventlog.Draft{ok, {}, ok}},
		{"type with a space", "s", []eventlog.Draft{draft("tool started", "")}},
		{"payload is an array", "s", []eventlog.Draft{draft(eventlog.TypeToolStarted, `[1, 2]`)}},
		{"payload is not JSON", "s", []eventlog.Draft{ok, draft(eventlog.TypeToolStarted, `{"tool":`)}},
		{"session with a newline", "s\n", []eventlog.Draft{ok}},
		{"time out of range", "s", []eventlog.Draft{{Type: eventlog.TypeToolStarted, Time: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	}
	for _, c := range cases {
		evs, err := s.Append(context.Background(), c.session, c.events...)
		if !errors.Is(err, eventlog.ErrInvalid) || evs != nil {
			t.Errorf("%s: Append = %v, %v; want an error wrapping ErrInvalid", c.name, evs, err)
		}
	}
	if got := mustQuery(t, s, eventlog.Filter{}); len(got) != 0 {
		t.Fatalf("bad input wrote %d events: %v", len(got), got)
	}
	if e := mustAppend(t, s, "s", ok)[0]; e.Seq != 1 {
		t.Errorf("first good append after bad ones got seq %d, want 1: bad input used up sequence numbers", e.Seq)
	}
	if !slices.Contains(eventlog.Types(), eventlog.TypePermissionResolved) {
		t.Error("Types() lacks permission.resolved")
	}
}
