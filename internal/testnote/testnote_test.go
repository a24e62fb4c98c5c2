package testnote

import (
	"strings"
	"testing"
)

// TestSkipSaysOnce: a suite's first skip says its line, later skips of the
// same suite do not, another suite says its own, and each test is skipped
// with the line.
func TestSkipSaysOnce(t *testing.T) {
	var lines []string
	say = func(line string) { lines = append(lines, line) }
	defer func() { say = sayTTY }()
	var after int
	for _, suite := range []string{"demo", "demo", "other", "demo"} {
		t.Run(suite, func(t *testing.T) {
			Skip(t, suite, "the thing is missing", "go test ./x")
			after++ // never reached: Skip stops the test
		})
	}
	if after != 0 {
		t.Fatalf("%d tests went on after Skip", after)
	}
	want := "SKIP demo: the thing is missing (run it: go test ./x)\nSKIP other: the thing is missing (run it: go test ./x)"
	if got := strings.Join(lines, "\n"); got != want {
		t.Fatalf("said:\n%s\nwant:\n%s", got, want)
	}
}
