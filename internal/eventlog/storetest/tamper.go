package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Tables names a store's tables for [RunTamper]'s SQL.
type Tables struct {
	// Events is the table of events; its columns are id, session, seq,
	// payload, decision, prev_hash and hash.
	Events string
	// Heads is the table of each session's last event, and HeadSeq and
	// HeadHash its columns of seq and hash; its session column is
	// "session".
	Heads, HeadSeq, HeadHash string
}

// Exec runs one SQL statement, with "?" placeholders, on the database of
// the store under test, behind the store's back: it is how someone who can
// write the file or the database would change it.
type Exec func(t *testing.T, query string, args ...any)

// ChainKey is the key [RunTamper] opens stores with; newStore must pass it
// to the store as its chain key.
var ChainKey = []byte("storetest chain key")

// RunTamper edits, deletes and reorders stored rows behind the store's
// back, one way in each subtest, and checks that [eventlog.Verify] reports
// each change, with the session and seq where it shows, and nothing in
// the session left alone; and that an untouched log verifies. newStore
// must open stores with [ChainKey] that implement [eventlog.ChainReader].
func RunTamper(t *testing.T, newStore NewStore, tables Tables, exec Exec) {
	ev, heads := tables.Events, tables.Heads
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, ids map[int64]int64) // ids: seq → id in session "s"
		key    []byte
		want   []eventlog.Problem // Kind and Seq; the session is "s"
	}{
		{name: "untouched"},
		{
			name: "edit payload",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "UPDATE "+ev+` SET payload = '{"decision":"allow","tool":"shell","reason":"user_approved"}' WHERE session = 's' AND seq = 3`)
			},
			want: []eventlog.Problem{{Seq: 3, Kind: eventlog.ProblemEdited}, {Seq: 3, Kind: eventlog.ProblemIndex}},
		},
		{
			name: "edit payload and index",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "UPDATE "+ev+` SET payload = '{"decision":"allow","tool":"shell"}', decision = 'allow' WHERE session = 's' AND seq = 3`)
			},
			want: []eventlog.Problem{{Seq: 3, Kind: eventlog.ProblemEdited}},
		},
		{
			name: "edit index only",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "UPDATE "+ev+` SET decision = 'allow' WHERE session = 's' AND seq = 2`)
			},
			want: []eventlog.Problem{{Seq: 2, Kind: eventlog.ProblemIndex}},
		},
		{
			name: "delete a row",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "DELETE FROM "+ev+" WHERE session = 's' AND seq = 3")
			},
			want: []eventlog.Problem{{Seq: 3, Kind: eventlog.ProblemDeleted}, {Seq: 4, Kind: eventlog.ProblemBroken}},
		},
		{
			name: "delete and renumber",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "DELETE FROM "+ev+" WHERE session = 's' AND seq = 3")
				exec(t, "UPDATE "+ev+" SET seq = seq + 1000 WHERE session = 's' AND seq > 3")
				exec(t, "UPDATE "+ev+" SET seq = seq - 1001 WHERE session = 's' AND seq > 1000")
				exec(t, "UPDATE "+heads+" SET "+tables.HeadSeq+" = 4 WHERE session = 's'")
			},
			want: []eventlog.Problem{{Seq: 3, Kind: eventlog.ProblemEdited}, {Seq: 3, Kind: eventlog.ProblemBroken}, {Seq: 4, Kind: eventlog.ProblemEdited}},
		},
		{
			name: "delete the first row",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "DELETE FROM "+ev+" WHERE session = 's' AND seq = 1")
			},
			want: []eventlog.Problem{{Seq: 1, Kind: eventlog.ProblemDeleted}, {Seq: 2, Kind: eventlog.ProblemBroken}},
		},
		{
			name: "delete the last row",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "DELETE FROM "+ev+" WHERE session = 's' AND seq = 5")
			},
			want: []eventlog.Problem{{Seq: 5, Kind: eventlog.ProblemDeleted}},
		},
		{
			name: "reorder two rows",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "UPDATE "+ev+" SET seq = 1000 WHERE session = 's' AND seq = 2")
				exec(t, "UPDATE "+ev+" SET seq = 2 WHERE session = 's' AND seq = 3")
				exec(t, "UPDATE "+ev+" SET seq = 3 WHERE session = 's' AND seq = 1000")
			},
			want: []eventlog.Problem{
				{Seq: 2, Kind: eventlog.ProblemEdited}, {Seq: 2, Kind: eventlog.ProblemBroken},
				{Seq: 3, Kind: eventlog.ProblemEdited}, {Seq: 3, Kind: eventlog.ProblemBroken},
				{Seq: 4, Kind: eventlog.ProblemBroken},
			},
		},
		{
			name: "reorder payloads",
			tamper: func(t *testing.T, ids map[int64]int64) {
				exec(t, "UPDATE "+ev+" SET payload = (SELECT payload FROM "+ev+" WHERE id = ?) WHERE id = ?", ids[4], ids[2])
			},
			want: []eventlog.Problem{{Seq: 2, Kind: eventlog.ProblemEdited}, {Seq: 2, Kind: eventlog.ProblemIndex}},
		},
		{
			name: "remove a hash",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "UPDATE "+ev+" SET hash = NULL, prev_hash = NULL WHERE session = 's' AND seq = 4")
			},
			want: []eventlog.Problem{{Seq: 4, Kind: eventlog.ProblemUnchained}, {Seq: 5, Kind: eventlog.ProblemBroken}},
		},
		{
			name: "copy a hash from another session",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "UPDATE "+ev+" SET hash = (SELECT hash FROM "+ev+" WHERE session = 'other' AND seq = 1), payload = (SELECT payload FROM "+ev+" WHERE session = 'other' AND seq = 1) WHERE session = 's' AND seq = 1")
			},
			want: []eventlog.Problem{{Seq: 1, Kind: eventlog.ProblemEdited}, {Seq: 1, Kind: eventlog.ProblemIndex}, {Seq: 2, Kind: eventlog.ProblemBroken}},
		},
		{
			name: "replace the head",
			tamper: func(t *testing.T, _ map[int64]int64) {
				exec(t, "UPDATE "+heads+" SET "+tables.HeadHash+" = (SELECT hash FROM "+ev+" WHERE session = 's' AND seq = 4) WHERE session = 's'")
			},
			want: []eventlog.Problem{{Seq: 5, Kind: eventlog.ProblemTail}},
		},
		{
			name: "another key",
			key:  []byte("not the key"),
			want: []eventlog.Problem{
				{Seq: 1, Kind: eventlog.ProblemEdited}, {Seq: 2, Kind: eventlog.ProblemEdited}, {Seq: 3, Kind: eventlog.ProblemEdited},
				{Seq: 4, Kind: eventlog.ProblemEdited}, {Seq: 5, Kind: eventlog.ProblemEdited},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, newStore)
			cr, ok := s.(eventlog.ChainReader)
			if !ok {
				t.Fatalf("%T does not implement eventlog.ChainReader", s)
			}
			ids := map[int64]int64{}
			for i := range 5 {
				decision := []string{"allow", "deny", "ask"}[i%3]
				evs := mustAppend(t, s, "s", draft(eventlog.TypePermissionResolved, fmt.Sprintf(`{"decision":%q,"tool":"shell","toolCallId":"c%d"}`, decision, i)))
				ids[evs[0].Seq] = evs[0].ID
				mustAppend(t, s, "other", draft(eventlog.TypeToolStarted, fmt.Sprintf(`{"tool":"read","i":%d}`, i)))
			}
			if tc.tamper != nil {
				tc.tamper(t, ids)
			}
			key := ChainKey
			if tc.key != nil {
				key = tc.key
			}
			rep, err := eventlog.Verify(context.Background(), cr, key, "")
			if err != nil {
				t.Fatal(err)
			}
			var got []eventlog.Problem
			for _, p := range rep.Problems {
				if p.Session != "s" && tc.key == nil {
					t.Errorf("problem reported in a session left alone: %v", p)
					continue
				}
				if p.Session == "s" {
					got = append(got, eventlog.Problem{Seq: p.Seq, Kind: p.Kind})
				}
			}
			cmpProblems := func(a, b eventlog.Problem) int {
				if a.Seq != b.Seq {
					return int(a.Seq - b.Seq)
				}
				return strings.Compare(a.Kind, b.Kind)
			}
			slices.SortFunc(got, cmpProblems)
			want := slices.Clone(tc.want)
			slices.SortFunc(want, cmpProblems)
			if !slices.Equal(got, want) {
				t.Errorf("Verify reported %v\nwant %v\nfull report: %+v", got, want, rep.Problems)
			}
			if rep.Sessions != 2 || rep.Unchained != 0 {
				t.Errorf("Verify read %d sessions, %d unchained rows; want 2 and 0", rep.Sessions, rep.Unchained)
			}
			// One session alone reports the same.
			one, err := eventlog.Verify(context.Background(), cr, key, "s")
			if err != nil {
				t.Fatal(err)
			}
			if len(one.Problems) != len(got) {
				t.Errorf("Verify of session s alone reported %v, of all sessions %v", one.Problems, got)
			}
		})
	}
}

// verifyChains checks, when s keeps chains, that they verify under the
// key that stores of the conformance suite are opened with (none).
func verifyChains(t *testing.T, s eventlog.Store) {
	t.Helper()
	cr, ok := s.(eventlog.ChainReader)
	if !ok {
		return
	}
	rep, err := eventlog.Verify(context.Background(), cr, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Errorf("after concurrent appends the chains do not verify: %v", rep.Problems)
	}
}

// UnchainedRows are the rows a test of the migration to chains writes,
// in the schema before chains, to the table of events: session "a" with a
// denial and a user.message indexed as an allow that its payload claims,
// and session "b" with one allow. Time is in nanoseconds since 1970.
var UnchainedRows = []struct {
	Session, Type, Decision, Payload string
	Seq, Time                        int64
}{
	{"a", "permission.resolved", "deny", `{"decision":"deny","toolCallId":"c1"}`, 1, 1e18 + 1},
	{"a", "user.message", "allow", `{"decision":"allow","actor":"user","toolCallId":"c1"}`, 2, 1e18 + 2},
	{"b", "permission.resolved", "allow", `{"decision":"allow"}`, 1, 1e18 + 3},
}

// RunMigratedChains checks the store s, just migrated to chains with the
// chain key key from a log holding [UnchainedRows]: that the old rows are
// counted as unchained rather than tampered, that the user.message is no
// longer selected as a decision, that new events of session "a" chain on
// from seq 3 and verify, and that an edit of one, made with exec on the
// table of events, is found.
func RunMigratedChains(t *testing.T, s interface {
	eventlog.Store
	eventlog.ChainReader
}, key []byte, events string, exec Exec) {
	t.Helper()
	ctx := context.Background()
	for _, err := range s.Query(ctx, eventlog.Filter{Decisions: []string{"allow"}, Session: "a"}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("after migrating, the user.message is still selected as an allow")
	}
	rep, err := eventlog.Verify(ctx, s, key, "")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Unchained != 3 {
		t.Fatalf("before any new event: %d unchained, problems %v; want 3 unchained and no problem", rep.Unchained, rep.Problems)
	}
	evs, err := s.Append(ctx, "a", eventlog.Draft{Type: eventlog.TypeToolStarted}, eventlog.Draft{Type: eventlog.TypeToolCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Seq != 3 {
		t.Fatalf("the first event after migrating has seq %d, want 3", evs[0].Seq)
	}
	if rep, err = eventlog.Verify(ctx, s, key, ""); err != nil || !rep.OK() || rep.Unchained != 3 || rep.Events != 5 {
		t.Fatalf("after new events: %+v, %v; want 5 events, 3 unchained, no problem", rep, err)
	}
	exec(t, "UPDATE "+events+` SET payload = '{"x":1}' WHERE id = ?`, evs[1].ID)
	if rep, err = eventlog.Verify(ctx, s, key, ""); err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != eventlog.ProblemEdited || rep.Problems[0].Seq != 4 {
		t.Fatalf("after an edit of a new event: %+v, %v; want one edit at seq 4", rep, err)
	}
}
