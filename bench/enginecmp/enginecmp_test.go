package enginecmp

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// engines builds every engine for n rules.
func engines(tb testing.TB, n int) map[string]Engine {
	tb.Helper()
	rules := Rules(n)
	if len(rules) != n {
		tb.Fatalf("Rules(%d) made %d rules", n, len(rules))
	}
	return build(tb, rules)
}

// build builds every engine from the rules.
func build(tb testing.TB, rules []Rule) map[string]Engine {
	tb.Helper()
	out := map[string]Engine{}
	for _, e := range Engines {
		eng, err := e.New(rules)
		if err != nil {
			tb.Fatalf("%s with %d rules: %v", e.Name, len(rules), err)
		}
		out[e.Name] = eng
	}
	return out
}

// decideOnce asks the named engine the request once; an engine that fails
// to prepare or to evaluate it fails the test.
func decideOnce(tb testing.TB, es map[string]Engine, name string, r *Request) Outcome {
	tb.Helper()
	decide, err := es[name].Prepare(r)
	if err == nil {
		var got Outcome
		if got, err = decide(); err == nil {
			return got
		}
	}
	tb.Fatalf("%s, %s: %v", name, r.Name, err)
	return ""
}

// TestSameDecisions asks every engine every request at every size and
// requires each to give the expected outcome, so the engines answer the
// same question. The rules that decide come last, so an engine that stops
// early would have to skip them to differ.
func TestSameDecisions(t *testing.T) {
	for _, n := range Sizes {
		es := engines(t, n)
		for i := range Requests {
			r := &Requests[i]
			for _, e := range Engines {
				if got := decideOnce(t, es, e.Name, r); got != r.Want {
					t.Errorf("%s, %d rules, %s: got %s, want %s", e.Name, n, r.Name, got, r.Want)
				}
			}
		}
	}
}

// TestDecidingRuleDecides removes each deciding rule in turn and requires
// every engine to change its answer to the request that rule decides: the
// outcome comes from the last rules, not from a default or an earlier
// rule.
func TestDecidingRuleDecides(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		drop    int // index from the end of Rules(n)
		request string
		want    Outcome
	}{
		{3, "shell-allow", NoMatch},
		{2, "read-deny", NoMatch},
		{1, "edit-allow", NoMatch},
	} {
		all := Rules(n)
		es := build(t, append(append([]Rule{}, all[:n-c.drop]...), all[n-c.drop+1:]...))
		r := &Requests[slices.IndexFunc(Requests, func(r Request) bool { return r.Name == c.request })]
		for _, e := range Engines {
			if got := decideOnce(t, es, e.Name, r); got != c.want {
				t.Errorf("%s without rule %v: %s got %s, want %s", e.Name, all[n-c.drop], c.request, got, c.want)
			}
		}
	}
}

// TestDenyWinsInEveryEngine adds, first of all, an allow rule that covers
// the denied read; every engine must still deny it.
func TestDenyWinsInEveryEngine(t *testing.T) {
	es := build(t, append([]Rule{{Allow, Read, Glob, "secrets/prod"}}, Rules(10)...))
	r := &Requests[1]
	if r.Name != "read-deny" {
		t.Fatalf("Requests[1] is %s", r.Name)
	}
	for _, e := range Engines {
		if got := decideOnce(t, es, e.Name, r); got != Deny {
			t.Errorf("%s: got %s, want deny", e.Name, got)
		}
	}
}

// benchDecide times one engine answering one request with n rules.
func benchDecide(b *testing.B, eng Engine, r *Request) {
	decide, err := eng.Prepare(r)
	if err != nil {
		b.Fatal(err)
	}
	if got, err := decide(); err != nil || got != r.Want {
		b.Fatalf("%s: got %s (%v), want %s", r.Name, got, err, r.Want)
	}
	b.ReportAllocs()
	for b.Loop() {
		decide()
	}
}

// BenchmarkEngines times every engine on every request at every size:
//
//	go test -run '^$' -bench Engines -benchmem ./enginecmp
func BenchmarkEngines(b *testing.B) {
	for _, n := range Sizes {
		es := engines(b, n)
		for i := range Requests {
			r := &Requests[i]
			for _, e := range Engines {
				b.Run(fmt.Sprintf("%d/%s/%s", n, r.Name, e.Name), func(b *testing.B) {
					benchDecide(b, es[e.Name], r)
				})
			}
		}
	}
}

// rounds is how many times TestReport times each engine on a request,
// the engines in turn, so that each round's engines share the machine's
// load of the moment.
const rounds = 7

// slice is about how long one engine is timed in one round.
const slice = 30 * time.Millisecond

// cpuNow returns the CPU time, user and system, that the process has
// used so far. Timed in CPU time, a slice during which the shared machine
// ran others is not counted against the engine of the moment; the
// garbage collector's work on other threads is.
func cpuNow(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeDecide returns the mean CPU time of k decisions.
func timeDecide(tb testing.TB, decide Decide, k int) float64 {
	start := cpuNow(tb)
	for range k {
		decide()
	}
	return float64((cpuNow(tb) - start).Nanoseconds()) / float64(k)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestReport measures, in one run, every engine on every request at
// every size and prints the median CPU ns per decision over rounds,
// allocs/op, and each engine's time as a multiple of toolgate's: the
// median over the rounds of that round's ratio. The engines take turns
// within each round (about 30 ms of CPU each, at least one decision), so
// that a busy moment of a shared machine weighs on all of them alike. It runs with TOOLGATE_ENGINECMP=1:
//
//	TOOLGATE_ENGINECMP=1 go test -run TestReport -v ./enginecmp
func TestReport(t *testing.T) {
	if os.Getenv("TOOLGATE_ENGINECMP") != "1" {
		t.Skip("timing report: run it with TOOLGATE_ENGINECMP=1 go test -run TestReport -v ./enginecmp")
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%-6s %-14s", "rules", "request")
	for _, e := range Engines {
		fmt.Fprintf(&out, " %16s", e.Name+" ns(allocs)")
	}
	for _, e := range Engines[1:] {
		fmt.Fprintf(&out, " %11s", e.Name+"/tg")
	}
	out.WriteString("\n")
	for _, n := range Sizes {
		es := engines(t, n)
		for i := range Requests {
			r := &Requests[i]
			decide := map[string]Decide{}
			k := map[string]int{}
			ns := map[string][]float64{}
			allocs := map[string]float64{}
			for _, e := range Engines {
				d, err := es[e.Name].Prepare(r)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := d(); err != nil || got != r.Want {
					t.Fatalf("%s %d %s: got %s (%v), want %s", e.Name, n, r.Name, got, err, r.Want)
				}
				decide[e.Name] = d
				k[e.Name] = 1
				for timeDecide(t, d, k[e.Name])*float64(k[e.Name]) < float64(slice)/4 {
					k[e.Name] *= 4
				}
				allocs[e.Name] = testing.AllocsPerRun(min(k[e.Name], 100), func() { d() })
			}
			ratios := map[string][]float64{}
			for range rounds {
				for _, e := range Engines {
					ns[e.Name] = append(ns[e.Name], timeDecide(t, decide[e.Name], k[e.Name]))
				}
				tg := ns["toolgate"][len(ns["toolgate"])-1]
				for _, e := range Engines[1:] {
					ratios[e.Name] = append(ratios[e.Name], ns[e.Name][len(ns[e.Name])-1]/tg)
				}
			}
			fmt.Fprintf(&out, "%-6d %-14s", n, r.Name)
			for _, e := range Engines {
				fmt.Fprintf(&out, " %16s", fmt.Sprintf("%.0f(%.0f)", median(ns[e.Name]), allocs[e.Name]))
			}
			for _, e := range Engines[1:] {
				fmt.Fprintf(&out, " %10.1fx", median(ratios[e.Name]))
			}
			out.WriteString("\n")
		}
	}
	t.Log(out.String())
}
