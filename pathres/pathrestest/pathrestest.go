// Package pathrestest checks the promise of [pathres.Cache] from outside
// its internals: every change completed before a decision begins is seen
// by that decision, even while changes keep running. Both the cache's own
// tests and the engine's (which decide whole requests through it) use it.
package pathrestest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Race runs changes in the background while checks run.
type Race struct {
	// Pause: after change i the changes rest for (i mod 7) pauses, so
	// that checks see quiet moments of different lengths.
	Pause time.Duration
	// For is how long the checks run at least. They go on after it until
	// every state has been judged Min times, for at most 30 s more.
	For time.Duration
	// States is how many states the changes go round (change i leaves
	// state i mod States); Min is how many judged checks each needs.
	States, Min int
}

// Run runs change(1), change(2), … in the background while check(done)
// runs again and again, with done the number of the last change
// completed before it began. check returns an error when what it saw is
// not what change done leaves. A check counts only when no change began
// before it returned (a change running during a check lets either answer
// stand), and then an error fails t. t fails too if a state was judged
// fewer than Min times, as the race would then test nothing.
func (r Race) Run(t testing.TB, change func(i int64) error, check func(done int64) error) {
	t.Helper()
	var started, completed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			started.Store(i)
			if err := change(i); err != nil {
				t.Errorf("change %d: %v", i, err)
				return
			}
			completed.Store(i)
			time.Sleep(time.Duration(i%7) * r.Pause)
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()
	states := max(r.States, 1)
	judged := make([]int, states)
	enough := func() bool {
		for _, n := range judged {
			if n < r.Min {
				return false
			}
		}
		return true
	}
	begin := time.Now()
	for time.Since(begin) < r.For || !enough() {
		if time.Since(begin) > r.For+30*time.Second || t.Failed() {
			break
		}
		done := completed.Load()
		err := check(done)
		if started.Load() != done {
			continue
		}
		if err != nil {
			t.Fatalf("after change %d: %v", done, err)
		}
		judged[done%int64(states)]++
	}
	if !t.Failed() && !enough() {
		t.Fatalf("too few checks without a change running: %v, want %d each", judged, r.Min)
	}
	t.Logf("checks judged without a change running, by state: %v", judged)
}
