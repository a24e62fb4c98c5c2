package hookinstall

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Gemini CLI and Codex run the tool when their hook gives no usable
// answer, and neither has a setting that turns this around:
//
//   - Codex lets the tool run when its PreToolUse hook exits with a code
//     other than 0 or 2, is killed, cannot be started, outlives its
//     timeout, or exits 0 with output that is not an allow or a deny (an
//     "ask" too).
//   - Gemini CLI takes a hook killed by a signal or one past its timeout
//     (killed, its output ignored) as an allow, and reads text that is not
//     JSON with exit status 0 as an allow too. Whatever the exit status,
//     the JSON decides: a BeforeTool "ask" waits forever in a headless
//     run, and an "allow" with exit 2 runs the tool.
//
// So the command install writes for each of those hook events runs
// toolgate under a small sh program, the guard, that passes toolgate's
// answer on only when it is one toolgate gives for that event (its
// status and the shape of its JSON, see [guards]), kills toolgate when it
// runs past a deadline shorter than the entry's timeout, and otherwise
// refuses the call itself in the client's way, with exit 2.
//
// The command is `/bin/sh -c 'PROGRAM' TOOLGATE '"'`. The toolgate binary
// is the program's $0, so its path needs no quoting inside it; the
// program holds no single quote or backslash, so any shell the client
// runs the command with (Codex uses the person's login shell, fish
// included) passes it to sh unchanged. The double quote the JSON
// patterns need comes in as $1 for the same reason.
//
// The hook's stdin is kept as fd 3 for toolgate, which runs in the
// background (where sh would give it /dev/null) next to a watchdog that
// kills it at the deadline and is itself stopped, with its sleep, when
// toolgate ends first. Output of more than one line is never passed on.

// guard is how the command written for one client's hook event guards
// toolgate's answer.
type guard struct {
	client Client
	event  string
	// pass lists the answers passed on as they are, as "STATUS:OUTPUT"
	// patterns of toolgate's exit status and standard output (without
	// its final newline), in which * stands for any text.
	pass []string
	// denyJSON is the deny the guard writes to standard output when the
	// client reads its decision there, with %s for the reason; empty
	// when the client takes exit 2 with the reason on standard error.
	denyJSON string
	// seconds is the deadline the guard gives toolgate under an entry
	// timeout (in the client's unit).
	seconds func(timeout int) int
	// posixOnly says the client runs hooks without a POSIX shell on
	// Windows, where the plain command is written instead.
	posixOnly bool
}

// guards holds the guarded events. Each pass list is what toolgate's hook
// answers that event ([hook.Answer], [hook.Fail], [hook.AfterAnswer]),
// narrowed to what the client does not run the tool on.
var guards = []guard{
	{
		// An allow or a deny with exit 0, or a deny with exit 2
		// (toolgate's failure, whose reason it writes to stderr, which
		// is what Codex reads then).
		client: Codex, event: "PreToolUse",
		pass: []string{
			`0:{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",*}}`,
			`0:{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",*}}`,
			`2:{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",*}}`,
		},
		seconds: codexGuardSeconds,
	},
	{
		// An allow or a deny with exit 0, a deny with exit 2 (toolgate's
		// failure): never an ask, nor an allow with exit 2.
		client: Gemini, event: "BeforeTool",
		pass: []string{
			`0:{"decision":"allow",*}`,
			`0:{"decision":"deny",*}`,
			`2:{"decision":"deny",*}`,
		},
		denyJSON: `{"decision":"deny","reason":"%s"}`, seconds: geminiGuardSeconds, posixOnly: true,
	},
	{
		// Nothing to add, a warning for the model, or a deny with exit
		// 2 (toolgate could not record the output).
		client: Gemini, event: "AfterTool",
		pass: []string{
			`0:{}`,
			`0:{"hookSpecificOutput":{"additionalContext":"*"}}`,
			`2:{"decision":"deny",*}`,
		},
		denyJSON: `{"decision":"deny","reason":"%s"}`, seconds: geminiGuardSeconds, posixOnly: true,
	},
}

// guardFor returns the guard of a client's hook event, nil when its
// command runs toolgate plainly.
func guardFor(c Client, event string) *guard {
	for i := range guards {
		g := &guards[i]
		if g.client == c && g.event == event {
			if g.posixOnly && runtime.GOOS == "windows" {
				return nil
			}
			return g
		}
	}
	return nil
}

// codexGuardMargin is how long before Codex's timeout (in seconds) the
// guard stops toolgate, so that its deny reaches Codex in time.
const codexGuardMargin = 10

func codexGuardSeconds(timeout int) int { return max(timeout-codexGuardMargin, 1) }

// geminiGuardSeconds is how long the guard lets the hook run under a
// Gemini CLI timeout of timeoutMs: five seconds less, or half of a
// timeout under ten seconds, and at least one second.
func geminiGuardSeconds(timeoutMs int) int {
	s := timeoutMs / 1000
	if s >= 10 {
		return s - 5
	}
	return max(1, timeoutMs/2000)
}

// guardReason is why the guard refuses a call; %d is its deadline.
const guardReason = `toolgate: the hook gave no answer (status $c: it crashed, was killed, was not found, ran past its %ds or printed something else), so the call is denied`

// script returns the guard's sh program with a deadline of seconds.
func (g *guard) script(seconds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `exec 3<&0; o=$("$0" hook %s <&3 3<&- & p=$!; (sleep %d & s=$!; trap "kill $s; exit" TERM; wait $s; kill -9 $p) >/dev/null 2>&1 <&- 3<&- & w=$!; wait $p; c=$?; kill $w 2>/dev/null; exit $c); c=$?; exec 3<&-; `, g.client, seconds)
	b.WriteString(`q=$1; n=$(echo; echo x); n=${n%x}; case "$c:$o" in *"$n"*) ;; `)
	for i, p := range g.pass {
		if i > 0 {
			b.WriteString("|")
		}
		b.WriteString(shPattern(p))
	}
	b.WriteString(`) printf %s "$o"; exit $c;; esac; `)
	reason := fmt.Sprintf(guardReason, seconds)
	if g.denyJSON != "" {
		fmt.Fprintf(&b, `printf %%s %s; exit 2`, shWord(fmt.Sprintf(g.denyJSON, reason)))
	} else {
		fmt.Fprintf(&b, `echo %s >&2; exit 2`, shWord(reason))
	}
	return b.String()
}

// shWord returns s as one double-quoted sh word in the guard, its double
// quotes read from $q; s holds no backslash, backquote or single quote,
// and a $ only where it is to expand.
func shWord(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `${q}`) + `"`
}

// shPattern returns a pass pattern as a sh case pattern: its text quoted
// with [shWord], its * left to match.
func shPattern(p string) string {
	parts := strings.Split(p, "*")
	for i, s := range parts {
		if s != "" {
			parts[i] = shWord(s)
		}
	}
	return strings.Join(parts, "*")
}

// command returns the command of a hook entry whose timeout is timeout
// that runs the toolgate program prog under the guard.
func (g *guard) command(prog string, timeout int) string {
	return g.commandSeconds(prog, g.seconds(timeout))
}

func (g *guard) commandSeconds(prog string, seconds int) string {
	return "/bin/sh -c '" + g.script(seconds) + "' " + shellQuote(prog) + ` '"'`
}

// guardPatterns match each guard's commands, of any deadline and
// program; the groups are the deadline and the program as the shell
// reads it.
var guardPatterns = sync.OnceValue(func() []*regexp.Regexp {
	const mark = "987654321"
	res := make([]*regexp.Regexp, len(guards))
	for i := range guards {
		q := regexp.QuoteMeta("/bin/sh -c '" + guards[i].script(987654321) + "' ")
		q = strings.Replace(q, mark, "([0-9]+)", 1)
		q = strings.ReplaceAll(q, mark, "[0-9]+")
		res[i] = regexp.MustCompile("^" + q + `(.+) '"'$`)
	}
	return res
})

// parseGuarded returns the guard of a command [guard.command] wrote, the
// toolgate program it runs (unquoted) and its deadline in seconds.
func parseGuarded(cmd string) (g *guard, prog string, seconds int, ok bool) {
	for i, re := range guardPatterns() {
		m := re.FindStringSubmatch(cmd)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, "", 0, false
		}
		prog, ok := unquoteProgram(m[2])
		// Only the very command install would write counts.
		if !ok || guards[i].commandSeconds(prog, n) != cmd {
			return nil, "", 0, false
		}
		return &guards[i], prog, n, true
	}
	return nil, "", 0, false
}

// unquoteProgram reads a program path as [shellQuote] writes it.
func unquoteProgram(s string) (string, bool) {
	if strings.HasPrefix(s, "'") {
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return "", false
		}
		in := s[1 : len(s)-1]
		if strings.Contains(strings.ReplaceAll(in, `'\''`, ""), "'") {
			return "", false
		}
		return strings.ReplaceAll(in, `'\''`, "'"), true
	}
	if s == "" || strings.ContainsAny(s, " \t'\"\\$`;&|<>()") {
		return "", false
	}
	return s, true
}
