package storekit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// TestCommitterRetries checks what a failed batch does to the appends in
// it: a plain failure is retried for each append alone, so only the
// append that causes it fails; a failure marked NoRetry is reported to
// every append of the batch and nothing is written again.
func TestCommitterRetries(t *testing.T) {
	errBad := errors.New("session bad cannot be written")
	errLost := errors.New("connection lost during commit")
	for _, tc := range []struct {
		name    string
		fail    error            // what a batch holding session "bad" fails with
		want    map[string]error // what Append returns per session
		written map[string]int   // events written per session
	}{
		{"plain failure", errBad, map[string]error{"good": nil, "bad": errBad}, map[string]int{"first": 1, "good": 1}},
		{"no retry", NoRetry(errLost), map[string]error{"good": errLost, "bad": errLost}, map[string]int{"first": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			written := map[string]int{}
			held, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			c := NewCommitter("test", 100, func(batch []*Request) error {
				once.Do(func() {
					// Hold the first batch so that the next appends queue
					// up and form one batch.
					close(held)
					<-release
				})
				for _, r := range batch {
					if r.Session == "bad" {
						return tc.fail
					}
				}
				mu.Lock()
				defer mu.Unlock()
				for _, r := range batch {
					written[r.Session] += len(r.Drafts)
					r.Events = make([]eventlog.Event, len(r.Drafts))
				}
				return nil
			})
			defer c.Close()
			drafts := []eventlog.Draft{{Type: eventlog.TypeToolStarted}}
			firstErr := make(chan error, 1)
			go func() {
				_, err := c.Append(context.Background(), "first", drafts)
				firstErr <- err
			}()
			<-held
			got := map[string]error{}
			var wg sync.WaitGroup
			for session := range tc.want {
				wg.Go(func() {
					_, err := c.Append(context.Background(), session, drafts)
					mu.Lock()
					got[session] = err
					mu.Unlock()
				})
			}
			for len(c.queue) < len(tc.want) {
				time.Sleep(time.Millisecond)
			}
			close(release)
			wg.Wait()
			if err := <-firstErr; err != nil {
				t.Fatalf("the first append: %v", err)
			}
			for session, want := range tc.want {
				if err := got[session]; (want == nil) != (err == nil) || !errors.Is(err, want) {
					t.Errorf("append to %s: %v, want %v", session, err, want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(written) != len(tc.written) {
				t.Errorf("written %v, want %v", written, tc.written)
			}
			for session, n := range tc.written {
				if written[session] != n {
					t.Errorf("written %v, want %v", written, tc.written)
				}
			}
		})
	}
}
