package engine

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/policy"
)

// mib is the size of the large requests: one mebibyte.
const mib = 1 << 20

// repeatTo repeats unit until the text is at least n bytes long, between
// prefix and suffix.
func repeatTo(prefix, unit, suffix string, n int) string {
	var b strings.Builder
	b.Grow(n + len(prefix) + len(suffix) + len(unit))
	b.WriteString(prefix)
	for b.Len() < n-len(suffix) {
		b.WriteString(unit)
	}
	b.WriteString(suffix)
	return b.String()
}

// nestTo wraps core in open…close pairs until the text is about n bytes.
func nestTo(open, core, close string, n int) string {
	k := (n - len(core)) / (len(open) + len(close))
	return strings.Repeat(open, k) + core + strings.Repeat(close, k)
}

// largeLines are command lines of about n bytes in the shapes that cost an
// analysis the most: many commands, deep nesting, large bodies and large
// expansions. too says whether the line must be refused as too complex;
// at one mebibyte every line is.
func largeLines(mib int) []struct {
	name string
	line string
	too  bool
} {
	return []struct {
		name string
		line string
		too  bool
	}{
		{"chained commands", repeatTo("", "ls src; ", "ls", mib), true},
		{"and-chained commands", repeatTo("", "git status && ", "true", mib), true},
		{"pipeline", repeatTo("", "cat README.md | ", "wc -l", mib), true},
		{"nested command substitutions", nestTo("echo $(", "id", ")", mib), true},
		{"nested backquotes in strings", nestTo(`eval "`, "id", `"`, mib), true},
		{"nested subshells", nestTo("(", "ls", ")", mib), true},
		{"nested loops", nestTo("while :; do ", "ls", "; done", mib), true},
		{"nested ifs", nestTo("if true; then ", "ls", "; fi", mib), true},
		{"nested arithmetic", "echo " + nestTo("$((", "1", "))", mib), true},
		{"huge heredoc", repeatTo("cat <<'EOF'\n", "hello world\n", "EOF\n", mib), false},
		{"huge unquoted heredoc", repeatTo("cat <<EOF\n", "line $HOME\n", "EOF\n", mib), false},
		{"giant arithmetic", repeatTo("echo $((1", "+1", "))", mib), false},
		{"giant brace expansion", repeatTo("echo ", "{a,b}", "", mib), false},
		{"long brace words", "echo {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}" + strings.Repeat("x", mib-64), false},
		{"many assignments", repeatTo("", "x=1; ", "echo $x", mib), true},
		{"long argument list", repeatTo("echo", " word", "", mib), false},
		{"nested eval strings", nestTo("eval ", "id", "", mib), true},
		{"nested case patterns", nestTo("case x in x) (", "ls", ");; esac", mib), false},
		{"nested arithmetic words", "(( " + nestTo("a[", "1", "]", mib) + " ))", true},
		{"many arithmetic variables", repeatTo("i=0; ", "(( i = i + 1 )); ", "echo $i", mib), true},
	}
}

// TestLargeLinesBounded checks that a one-mebibyte command line of any
// shape is refused within 100 ms as a deny with reason too_complex, and
// that a line of the same shape just within the size limit is decided or
// refused within 100 ms too, never allowed when it is too complex.
func TestLargeLinesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("measures large requests")
	}
	w := newWorld(t)
	e, err := New(Options{Policy: Fixed(&policy.Set{}), Home: w.home})
	must(t, err)
	for _, size := range []int{mib, 60 << 10} {
		for _, tc := range largeLines(size) {
			t.Run(fmt.Sprintf("%s/%dKiB", tc.name, size>>10), func(t *testing.T) {
				checkBounded(t, e, w, tc.line, tc.too || size == mib)
			})
		}
	}
}

// checkBounded checks one large line: see TestLargeLinesBounded.
func checkBounded(t *testing.T, e *Engine, w *world, line string, too bool) {
	t.Helper()
	req := &Request{Tool: "Bash", Input: map[string]any{"command": line}, Cwd: w.project}
	// The best of three runs, each measured as the lesser of the time on
	// the clock and the processor time the process used: on a busy machine
	// the clock also counts the time others had the processor.
	best := time.Duration(1 << 62)
	var d *Decision
	for range 3 {
		start, cpu := time.Now(), cpuTime()
		d = e.Check(context.Background(), req)
		best = min(best, time.Since(start), cpuTime()-cpu)
	}
	t.Logf("%d bytes: %s %s in %v", len(line), d.Decision, d.Reason, best)
	if best > 100*time.Millisecond && !raceEnabled {
		// The race detector slows the analysis several times over; the
		// bound holds for the binary people run.
		t.Errorf("took %v, want under 100ms", best)
	}
	if too && (d.Decision != policy.Deny || d.Reason != ReasonTooComplex) {
		t.Errorf("got %s %s (%s), want deny too_complex", d.Decision, d.Reason, d.Message)
	}
	if d.Reason == ReasonTooComplex && d.Decision != policy.Deny {
		t.Errorf("too_complex with decision %s, want deny", d.Decision)
	}
}

// cpuTime returns the processor time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCheck1MiB measures Check on each one-mebibyte shape, all of
// which are refused.
func BenchmarkCheck1MiB(b *testing.B) { benchLarge(b, mib) }

// BenchmarkCheck60KiB measures Check on each shape just within the size
// limit, where the analysis runs until it decides or spends its budget.
func BenchmarkCheck60KiB(b *testing.B) { benchLarge(b, 60<<10) }

func benchLarge(b *testing.B, size int) {
	w := newWorld(b)
	e, err := New(Options{Policy: Fixed(&policy.Set{}), Home: w.home})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range largeLines(size) {
		b.Run(strings.ReplaceAll(tc.name, " ", "-"), func(b *testing.B) {
			req := &Request{Tool: "Bash", Input: map[string]any{"command": tc.line}, Cwd: w.project}
			b.SetBytes(int64(len(tc.line)))
			for b.Loop() {
				e.Check(context.Background(), req)
			}
		})
	}
}

// TestCancelledAnalysisDenies checks that a request whose context ends
// before its command is analyzed is denied, not judged on half an
// analysis.
func TestCancelledAnalysisDenies(t *testing.T) {
	w := newWorld(t)
	e, err := New(Options{Policy: Fixed(&policy.Set{}), Home: w.home})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := &Request{Tool: "Bash", Input: map[string]any{"command": strings.Repeat("ls src; ", 1000)}, Cwd: w.project}
	d := e.Check(ctx, req)
	if d.Decision != policy.Deny || d.Reason != ReasonApprovalCancelled {
		t.Fatalf("got %s %s (%s), want deny %s", d.Decision, d.Reason, d.Message, ReasonApprovalCancelled)
	}
	// The same request with a live context is allowed: it only reads.
	if d := e.Check(context.Background(), req); d.Decision != policy.Allow {
		t.Fatalf("live context: got %s %s (%s), want allow", d.Decision, d.Reason, d.Message)
	}
}
