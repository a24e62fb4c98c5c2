package engine

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// scalingRules makes n rules all of one distribution, none matching the
// scaling requests, plus the allow rules those requests need:
//
//   - "program": every rule on git, over n subcommands and flags;
//   - "directory": every rule under src/, over n directories;
//   - "name": every rule a **/name pattern, over n names.
func scalingRules(tb testing.TB, dist string, n int) *policy.Set {
	tb.Helper()
	var allow, ask, deny []string
	for i := range n {
		switch dist {
		case "program":
			switch i % 3 {
			case 0:
				deny = append(deny, fmt.Sprintf("Bash(git sub%d --flag%d:*)", i, i))
			case 1:
				ask = append(ask, fmt.Sprintf("Bash(git sub%d)", i))
			case 2:
				allow = append(allow, fmt.Sprintf("Bash(git sub%d -n %d)", i, i))
			}
		case "directory":
			switch i % 3 {
			case 0:
				deny = append(deny, fmt.Sprintf("Read(src/secret%d/**)", i))
			case 1:
				ask = append(ask, fmt.Sprintf("Edit(src/dir%d/*.go)", i))
			case 2:
				allow = append(allow, fmt.Sprintf("Read(src/pkg%d/file%d.go)", i, i))
			}
		case "name":
			switch i % 3 {
			case 0:
				deny = append(deny, fmt.Sprintf("Read(**/secret%d)", i))
			case 1:
				ask = append(ask, fmt.Sprintf("Edit(**/name%d.go)", i))
			case 2:
				allow = append(allow, fmt.Sprintf("Read(**/doc%d.md)", i))
			}
		}
	}
	allow = append(allow, "Bash(git status:*)", "Read(src/**)")
	f, err := policy.ParseRules(policy.LayerProject, allow, ask, deny)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := policy.Merge(f)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// scalingRequests are the calls timed against each rule count: a Read
// and a one-command shell line, both allowed by a rule.
var scalingRequests = []struct {
	name string
	req  Request
}{
	{"Read", Request{Tool: "Read", Input: map[string]any{"file_path": "src/main.go"}}},
	{"Bash", Request{Tool: "Bash", Input: map[string]any{"command": "git status --short"}}},
}

// benchScaling times Check on req with n rules of dist loaded.
func benchScaling(b *testing.B, dist string, n int, req Request) {
	w := newWorld(b)
	e, err := New(Options{Policy: Fixed(scalingRules(b, dist, n)), Home: w.home})
	if err != nil {
		b.Fatal(err)
	}
	req.Cwd = w.project
	ctx := context.Background()
	if d := e.Check(ctx, &req); d.Decision != policy.Allow {
		b.Fatalf("%s with %d %s rules: got %s %s", req.Tool, n, dist, d.Decision, d.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Check(ctx, &req)
	}
}

// BenchmarkRuleScaling times a Read and a shell decision with 10 and
// 10,000 rules of each distribution loaded; TestRuleScaling prints their
// ratios.
func BenchmarkRuleScaling(b *testing.B) {
	for _, dist := range []string{"program", "directory", "name"} {
		for _, n := range []int{10, 10000} {
			for _, r := range scalingRequests {
				b.Run(fmt.Sprintf("%s/%d/%s", dist, n, r.name), func(b *testing.B) {
					benchScaling(b, dist, n, r.req)
				})
			}
		}
	}
}

// TestRuleScaling measures, in one run, each distribution's decisions
// with 10 and with 10,000 rules loaded and prints the ratio; it fails when
// a ratio passes 3 (the goal is 2; the margin is for a noisy machine). It
// runs with TOOLGATE_SCALING=1:
//
//	TOOLGATE_SCALING=1 go test ./internal/engine -run TestRuleScaling -v
func TestRuleScaling(t *testing.T) {
	if os.Getenv("TOOLGATE_SCALING") != "1" {
		t.Skip("timing test: run it with TOOLGATE_SCALING=1 go test ./internal/engine -run TestRuleScaling -v")
	}
	for _, dist := range []string{"program", "directory", "name"} {
		for _, r := range scalingRequests {
			var ns [2]float64
			var allocs [2]int64
			for i, n := range []int{10, 10000} {
				res := testing.Benchmark(func(b *testing.B) { benchScaling(b, dist, n, r.req) })
				ns[i], allocs[i] = float64(res.NsPerOp()), res.AllocsPerOp()
			}
			ratio := ns[1] / ns[0]
			t.Logf("%-9s %-4s 10 rules %8.0f ns/op %4d allocs; 10,000 rules %8.0f ns/op %4d allocs; ratio %.2f",
				dist, r.name, ns[0], allocs[0], ns[1], allocs[1], ratio)
			if ratio > 3 {
				t.Errorf("%s %s: 10,000 rules cost %.1f times what 10 cost", dist, r.name, ratio)
			}
		}
	}
}
