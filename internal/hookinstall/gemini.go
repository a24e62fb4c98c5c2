package hookinstall

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"sync"
)

// Gemini CLI runs the tool when its hook gives no usable answer: a hook
// killed by a signal, one past its timeout (killed, its output ignored),
// and one that prints text that is not JSON with exit status 0 all count
// as an allow, and it has no setting that turns this around. So the
// command toolgate installs for Gemini CLI runs the hook under a shell
// guard that makes each of those a deny: a watchdog kills the hook a few
// seconds before Gemini CLI's timeout, and unless the hook exits 0 or 2
// with a JSON object on its standard output, the guard prints a deny and
// exits 2.
//
// The guard is POSIX sh (Gemini CLI runs hook commands with bash -c). On
// Windows, where Gemini CLI uses PowerShell, the plain command is written.
const geminiGuard = `exec 3<&0; o=$( { %s <&3 3<&- & p=$!; { sleep %d & s=$!; trap 'kill $s; exit' TERM; wait $s; kill -9 $p; } >/dev/null 2>&1 3<&- & w=$!; wait $p; c=$?; kill $w 2>/dev/null; exit $c; } ); c=$?; ` +
	`case $c:$o in 0:{*|2:{*) printf '%%s\n' "$o"; exit $c;; esac; ` +
	`printf '{"decision":"deny","reason":"toolgate: the hook gave no answer (exit status %%s), so the call is denied"}\n' "$c"; exit 2`

// geminiGuardRE matches a guarded command, capturing the plain command and
// the watchdog's seconds.
var geminiGuardRE = sync.OnceValue(func() *regexp.Regexp {
	q := regexp.QuoteMeta(fmt.Sprintf(geminiGuard, "\x00", 1))
	q = regexp.MustCompile(`\x00`).ReplaceAllLiteralString(q, `(.+?)`)
	q = regexp.MustCompile(`sleep 1 `).ReplaceAllLiteralString(q, `sleep ([0-9]+) `)
	return regexp.MustCompile(`^` + q + `$`)
})

// geminiCommand returns the command written for a Gemini CLI hook entry
// whose timeout is timeoutMs: plain under the guard, with the watchdog
// firing before the timeout.
func geminiCommand(plain string, timeoutMs int) string {
	if runtime.GOOS == "windows" {
		return plain
	}
	return fmt.Sprintf(geminiGuard, plain, guardSeconds(timeoutMs))
}

// guardSeconds is how long the guard lets the hook run under a timeout of
// timeoutMs: five seconds less, or half of a timeout under ten seconds,
// and at least one second.
func guardSeconds(timeoutMs int) int {
	s := timeoutMs / 1000
	if s >= 10 {
		return s - 5
	}
	return max(1, timeoutMs/2000)
}

// geminiPlain returns the plain command inside a guarded one and the
// guard's seconds.
func geminiPlain(cmd string) (plain string, seconds int, ok bool) {
	m := geminiGuardRE().FindStringSubmatch(cmd)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0, false
	}
	return m[1], n, true
}
