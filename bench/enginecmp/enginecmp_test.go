package enginecmp

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// engines builds every engine for n rules.
func engines(tb testing.TB, n int) map[string]Engine {
	tb.Helper()
	rules := Rules(n)
	if len(rules) != n {
		tb.Fatalf("Rules(%d) made %d rules", n, len(rules))
	}
	out := map[string]Engine{}
	for _, e := range Engines {
		eng, err := e.New(rules)
		if err != nil {
			tb.Fatalf("%s with %d rules: %v", e.Name, n, err)
		}
		out[e.Name] = eng
	}
	return out
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
				decide, err := es[e.Name].Prepare(r)
				if err != nil {
					t.Fatalf("%s, %d rules, %s: %v", e.Name, n, r.Name, err)
				}
				got, err := decide()
				if err != nil {
					t.Fatalf("%s, %d rules, %s: %v", e.Name, n, r.Name, err)
				}
				if got != r.Want {
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
		rules := append(append([]Rule{}, all[:n-c.drop]...), all[n-c.drop+1:]...)
		var r *Request
		for i := range Requests {
			if Requests[i].Name == c.request {
				r = &Requests[i]
			}
		}
		for _, e := range Engines {
			eng, err := e.New(rules)
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			decide, err := eng.Prepare(r)
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			if got, err := decide(); err != nil || got != c.want {
				t.Errorf("%s without rule %v: %s got %s (%v), want %s", e.Name, all[n-c.drop], c.request, got, err, c.want)
			}
		}
	}
}

// TestDenyWinsInEveryEngine adds, first of all, an allow rule that covers
// the denied read; every engine must still deny it.
func TestDenyWinsInEveryEngine(t *testing.T) {
	rules := append([]Rule{{Allow, Read, Glob, "secrets/prod"}}, Rules(10)...)
	r := &Requests[1]
	if r.Name != "read-deny" {
		t.Fatalf("Requests[1] is %s", r.Name)
	}
	for _, e := range Engines {
		eng, err := e.New(rules)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		decide, err := eng.Prepare(r)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if got, err := decide(); err != nil || got != Deny {
			t.Errorf("%s: got %s (%v), want deny", e.Name, got, err)
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

// TestReport measures, in one run, every engine on every request at
// every size and prints ns/op, allocs/op and each engine's time as a
// multiple of toolgate's. It runs with TOOLGATE_ENGINECMP=1:
//
//	TOOLGATE_ENGINECMP=1 go test -run TestReport -v ./enginecmp
func TestReport(t *testing.T) {
	if os.Getenv("TOOLGATE_ENGINECMP") != "1" {
		t.Skip("timing report: run it with TOOLGATE_ENGINECMP=1 go test -run TestReport -v ./enginecmp")
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%-6s %-14s", "rules", "request")
	for _, e := range Engines {
		fmt.Fprintf(&out, " %14s", e.Name+" ns(allocs)")
	}
	for _, e := range Engines[1:] {
		fmt.Fprintf(&out, " %10s", e.Name+"/tg")
	}
	out.WriteString("\n")
	for _, n := range Sizes {
		es := engines(t, n)
		for i := range Requests {
			r := &Requests[i]
			ns := map[string]float64{}
			fmt.Fprintf(&out, "%-6d %-14s", n, r.Name)
			for _, e := range Engines {
				res := testing.Benchmark(func(b *testing.B) { benchDecide(b, es[e.Name], r) })
				if res.N == 0 {
					t.Fatalf("%s %d %s: the benchmark failed", e.Name, n, r.Name)
				}
				ns[e.Name] = float64(res.T.Nanoseconds()) / float64(res.N)
				fmt.Fprintf(&out, " %14s", fmt.Sprintf("%.0f(%d)", ns[e.Name], res.AllocsPerOp()))
			}
			for _, e := range Engines[1:] {
				fmt.Fprintf(&out, " %9.1fx", ns[e.Name]/ns["toolgate"])
			}
			out.WriteString("\n")
		}
	}
	t.Log(out.String())
}
