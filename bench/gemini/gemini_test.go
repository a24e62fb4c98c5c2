package gemini

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
)

// newEngine makes the project of the cases in a temporary directory and
// toolgate's engine with its rules.
func newEngine(tb testing.TB) (*Project, *engine.Engine) {
	tb.Helper()
	p, err := NewProject(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	e, err := p.Engine()
	if err != nil {
		tb.Fatal(err)
	}
	return p, e
}

// TestDecisions requires toolgate to allow every case, as Gemini CLI does
// (compare.sh shows both sides' decisions): a call denied or asked would
// time a different path through the engine than an allowed one takes.
func TestDecisions(t *testing.T) {
	p, e := newEngine(t)
	for _, c := range Cases {
		d := e.Check(context.Background(), p.Request(c))
		t.Logf("%-10s %s: %s", c.Name, d.Decision, d.Message)
		if d.Decision.String() != "allow" {
			t.Errorf("%v: got %s, want allow", c, d.Decision)
		}
	}
	if d := e.Check(context.Background(), p.Request(Case{Name: "env", Tool: "read_file", Path: ".env"})); d.Decision.String() != "deny" {
		t.Errorf("read of .env: got %s, want deny", d.Decision)
	}
}

// BenchmarkToolgate times toolgate's engine end to end on each case, real
// paths resolved; run it with -cpu 1 for the time of one core.
func BenchmarkToolgate(b *testing.B) {
	p, e := newEngine(b)
	ctx := context.Background()
	for _, c := range Cases {
		b.Run(c.Name, func(b *testing.B) {
			req := p.Request(c)
			b.ReportAllocs()
			for b.Loop() {
				e.Check(ctx, req)
			}
		})
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// TestCPU measures the CPU time (user and system, from getrusage, on one
// core: GOMAXPROCS=1, so the garbage collector's share is counted on the
// same core) per decision of each case over GEMINI_CMP_ITER decisions
// (default 10,000) after as many to warm up, and prints one line per case:
//
//	case NAME cpu_ns DECISION
//
// compare.sh reads these lines. It runs with GEMINI_CMP=1.
func TestCPU(t *testing.T) {
	if os.Getenv("GEMINI_CMP") != "1" {
		t.Skip("timing test: run it through compare.sh, or with GEMINI_CMP=1")
	}
	iter := 10000
	if s := os.Getenv("GEMINI_CMP_ITER"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("GEMINI_CMP_ITER=%q: want a positive whole number", s)
		}
		iter = n
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p, e := newEngine(t)
	ctx := context.Background()
	for _, c := range Cases {
		req := p.Request(c)
		want := e.Check(ctx, req).Decision
		// Every decision, warm-up and timed, is checked against the first.
		decide := func() {
			for i := range iter {
				if got := e.Check(ctx, req).Decision; got != want {
					t.Fatalf("%v: decision %s after %d calls, was %s", c, got, i+1, want)
				}
			}
		}
		decide()
		runtime.GC()
		start, err := cpuTime()
		if err != nil {
			t.Fatal(err)
		}
		decide()
		end, err := cpuTime()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("case %s %d %s\n", c.Name, (end-start).Nanoseconds()/int64(iter), want)
	}
}
