// Package testnote lets a test suite that cannot run here say so on the
// screen. `go test ./...` shows nothing of a package that passed, so a
// suite whose every test skipped (no browser, no database, no agent
// client) would print the same "ok" as one that ran; Skip prints one line
// for the suite where a person sees it as well as skipping the test.
package testnote

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

var (
	mu   sync.Mutex
	said = map[string]bool{}
)

// Skip skips t with reason, and the first time a suite skips in this
// process it prints one line naming the suite, the reason and the command
// that runs it: to the terminal the tests were started from when there is
// one (the go command hides a passing package's output), else to standard
// error, which `go test -v` and a failing run show.
func Skip(t testing.TB, suite, reason, run string) {
	t.Helper()
	line := fmt.Sprintf("SKIP %s: %s (run it: %s)", suite, reason, run)
	mu.Lock()
	first := !said[suite]
	said[suite] = true
	mu.Unlock()
	if first {
		say(line)
	}
	t.Skip(line)
}

// say shows a line to the person running the tests.
var say = sayTTY

// sayTTY writes line to the controlling terminal, or to standard error.
func sayTTY(line string) {
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprintln(tty, line)
		tty.Close()
		return
	}
	fmt.Fprintln(os.Stderr, line)
}
