package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

// TestLargeBatches appends batches larger than one INSERT statement holds
// (64 rows) and commits that touch more sessions than one statement of
// chain heads holds, and checks what the store returned against what it
// stored: ids and sequence numbers match the rows, sequence numbers run
// without gaps, and the chains and heads verify.
func TestLargeBatches(t *testing.T) {
	ctx := context.Background()
	key := []byte("key")
	for _, tc := range []struct {
		name              string
		sessions, appends int // concurrent appenders, one session each
		drafts            int // events per append
	}{
		{"one append of 150 events", 1, 1, 150},
		{"130 sessions of one event at once", 130, 3, 1},
		{"70 sessions of 65 events at once", 70, 2, 65},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlite.Open(filepath.Join(t.TempDir(), "events.db"), &sqlite.Options{ChainKey: key})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var mu sync.Mutex
			returned := map[int64]eventlog.Event{}
			var wg sync.WaitGroup
			for i := range tc.sessions {
				wg.Go(func() {
					session := fmt.Sprintf("s%d", i)
					drafts := make([]eventlog.Draft, tc.drafts)
					for j := range drafts {
						drafts[j] = eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: []byte(fmt.Sprintf(`{"decision":"allow","n":%d}`, j))}
					}
					for range tc.appends {
						evs, err := s.Append(ctx, session, drafts...)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						for _, e := range evs {
							returned[e.ID] = e
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			want := tc.sessions * tc.appends * tc.drafts
			if len(returned) != want {
				t.Fatalf("Append returned %d distinct ids, want %d", len(returned), want)
			}
			lastSeq := map[string]int64{}
			n := 0
			for e, err := range s.Query(ctx, eventlog.Filter{}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				r, ok := returned[e.ID]
				if !ok || r.Session != e.Session || r.Seq != e.Seq || string(r.Payload) != string(e.Payload) {
					t.Fatalf("stored event id %d is %s/%d %s; Append returned %+v for that id", e.ID, e.Session, e.Seq, e.Payload, r)
				}
				if e.Seq != lastSeq[e.Session]+1 {
					t.Fatalf("session %s: seq %d follows %d", e.Session, e.Seq, lastSeq[e.Session])
				}
				lastSeq[e.Session] = e.Seq
			}
			if n != want {
				t.Errorf("the log holds %d events, want %d", n, want)
			}
			rep, err := eventlog.Verify(ctx, s, key, "")
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Errorf("the chains do not verify: %v", rep.Problems)
			}
			heads, err := s.ChainHeads(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(heads) != tc.sessions {
				t.Errorf("%d chain heads, want %d", len(heads), tc.sessions)
			}
			for session, h := range heads {
				if h.Seq != lastSeq[session] {
					t.Errorf("the head of %s is at seq %d, its last event at %d", session, h.Seq, lastSeq[session])
				}
			}
		})
	}
}
