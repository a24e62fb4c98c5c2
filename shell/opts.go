package shell

import "strings"

// optSpec describes the options of a wrapper program in getopt style.
// Options that are not described make the parse uncertain, so that an
// unknown option can never hide the program that is run.
type optSpec struct {
	flags  string // short options without a value
	val    string // short options with a value, attached or in the next word
	optVal string // short options with an optional value, attached only
	// hostVal are short options whose value is attached or is the next
	// word when that does not start with '-' (sudo -h).
	hostVal string
	long    []string // long options without a value
	longVal []string // long options with a value, after = or in the next word
	longOpt []string // long options with an optional value, after = only
	numeric bool     // -N is a value, as in nice -10
}

const (
	optUnknown = iota
	optFlag
	optVal
	optOptVal
)

// opt is one parsed option, with its value if it takes one.
type opt struct {
	name   string
	val    warg
	hasVal bool
}

// matchLong finds a long option by its name or an unambiguous prefix.
func (sp *optSpec) matchLong(name string) (string, int) {
	if name == "" {
		return "", optUnknown
	}
	found, kind, matches := "", optUnknown, 0
	for _, g := range [...]struct {
		list []string
		kind int
	}{{sp.long, optFlag}, {sp.longVal, optVal}, {sp.longOpt, optOptVal}} {
		for _, l := range g.list {
			if l == name {
				return l, g.kind
			}
			if strings.HasPrefix(l, name) {
				found, kind = l, g.kind
				matches++
			}
		}
	}
	if matches != 1 {
		return "", optUnknown
	}
	return found, kind
}

// parseOpts reads the options at the start of words. It returns them, the
// index of the first operand, and the first word whose role cannot be
// decided statically, if any. A missing option value makes n len(words):
// the program then fails without running anything.
func parseOpts(words []warg, sp *optSpec) (opts []opt, n int, bad *warg) {
	i := 0
	for i < len(words) {
		w := &words[i]
		if w.dyn && !w.split && !w.glob && w.prefix != "" && w.prefix[0] != '-' {
			// One word that cannot be an option: an operand.
			return opts, i, nil
		}
		if w.dyn || w.glob {
			return opts, i, w
		}
		s := w.val
		if s == "--" {
			return opts, i + 1, nil
		}
		if len(s) < 2 || s[0] != '-' {
			return opts, i, nil
		}
		if s[1] == '-' {
			name, val, hasEq := strings.Cut(s[2:], "=")
			full, kind := sp.matchLong(name)
			switch kind {
			case optUnknown:
				return opts, i, w
			case optFlag:
				if hasEq {
					return opts, i, w
				}
				opts = append(opts, opt{name: full})
			case optVal:
				if hasEq {
					opts = append(opts, opt{name: full, val: warg{val: val, pos: w.pos}, hasVal: true})
					break
				}
				if i+1 >= len(words) {
					return opts, len(words), nil
				}
				i++
				vw := &words[i]
				if vw.split || vw.glob {
					return opts, i, vw
				}
				opts = append(opts, opt{name: full, val: *vw, hasVal: true})
			case optOptVal:
				opts = append(opts, opt{name: full, val: warg{val: val, pos: w.pos}, hasVal: hasEq})
			}
			i++
			continue
		}
		if sp.numeric && isDigits(s[1:]) {
			opts = append(opts, opt{name: "n", val: warg{val: s[1:], pos: w.pos}, hasVal: true})
			i++
			continue
		}
	cluster:
		for j := 1; j < len(s); j++ {
			ch := s[j]
			switch {
			case strings.IndexByte(sp.val, ch) >= 0:
				if j+1 < len(s) {
					opts = append(opts, opt{name: s[j : j+1], val: warg{val: s[j+1:], pos: w.pos}, hasVal: true})
					break cluster
				}
				if i+1 >= len(words) {
					return opts, len(words), nil
				}
				i++
				vw := &words[i]
				if vw.split || vw.glob {
					return opts, i, vw
				}
				opts = append(opts, opt{name: s[j : j+1], val: *vw, hasVal: true})
				break cluster
			case strings.IndexByte(sp.hostVal, ch) >= 0:
				if j+1 < len(s) {
					opts = append(opts, opt{name: s[j : j+1], val: warg{val: s[j+1:], pos: w.pos}, hasVal: true})
					break cluster
				}
				if i+1 < len(words) {
					vw := &words[i+1]
					if vw.dyn || vw.glob {
						return opts, i + 1, vw
					}
					if !strings.HasPrefix(vw.val, "-") {
						i++
						opts = append(opts, opt{name: s[j : j+1], val: *vw, hasVal: true})
						break cluster
					}
				}
				opts = append(opts, opt{name: s[j : j+1]})
				break cluster
			case strings.IndexByte(sp.optVal, ch) >= 0:
				opts = append(opts, opt{name: s[j : j+1], val: warg{val: s[j+1:], pos: w.pos}, hasVal: j+1 < len(s)})
				break cluster
			case strings.IndexByte(sp.flags, ch) >= 0:
				opts = append(opts, opt{name: s[j : j+1]})
			default:
				return opts, i, w
			}
		}
		i++
	}
	return opts, i, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func hasOpt(opts []opt, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

var (
	sudoSpec = optSpec{
		flags:   "AbBEeHiKklnNPSsVv",
		val:     "aCcDgpRrTtUu",
		hostVal: "h",
		long:    []string{"askpass", "background", "bell", "edit", "help", "login", "list", "non-interactive", "preserve-groups", "remove-timestamp", "reset-timestamp", "set-home", "shell", "stdin", "validate", "version"},
		longVal: []string{"auth-type", "chdir", "chroot", "close-from", "command-timeout", "group", "host", "login-class", "other-user", "prompt", "role", "type", "user"},
		longOpt: []string{"preserve-env"},
	}
	doasSpec    = optSpec{flags: "Lns", val: "aCu"}
	timeoutSpec = optSpec{
		flags:   "v",
		val:     "sk",
		long:    []string{"foreground", "preserve-status", "verbose", "help", "version"},
		longVal: []string{"signal", "kill-after"},
	}
	niceSpec   = optSpec{val: "n", numeric: true, long: []string{"help", "version"}, longVal: []string{"adjustment"}}
	ioniceSpec = optSpec{
		flags:   "t",
		val:     "cnpPu",
		long:    []string{"ignore", "help", "version"},
		longVal: []string{"class", "classdata", "pid", "pgid", "uid"},
	}
	nohupSpec = optSpec{long: []string{"help", "version"}}
	timeSpec  = optSpec{
		flags:   "pvaq",
		val:     "fo",
		long:    []string{"append", "verbose", "quiet", "portability", "help", "version"},
		longVal: []string{"format", "output"},
	}
	commandSpec = optSpec{flags: "pvV"}
	builtinSpec = optSpec{}
	execSpec    = optSpec{flags: "cl", val: "a"}
	stdbufSpec  = optSpec{val: "ioe", long: []string{"help", "version"}, longVal: []string{"input", "output", "error"}}
	chrtSpec    = optSpec{
		flags:   "abdefiomprRv",
		val:     "TPD",
		long:    []string{"all-tasks", "batch", "deadline", "ext", "fifo", "idle", "other", "rr", "reset-on-fork", "max", "pid", "verbose", "help", "version"},
		longVal: []string{"sched-runtime", "sched-period", "sched-deadline"},
	}
	tasksetSpec  = optSpec{flags: "acp", long: []string{"all-tasks", "cpu-list", "pid", "help", "version"}}
	setsidSpec   = optSpec{flags: "cfw", long: []string{"ctty", "fork", "wait", "help", "version"}}
	unbufferSpec = optSpec{flags: "p"}
	xargsSpec    = optSpec{
		flags:   "0oprtx",
		val:     "aEdILnPs",
		optVal:  "eil",
		long:    []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits", "help", "version"},
		longVal: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		longOpt: []string{"eof", "replace", "max-lines"},
	}
	watchSpec = optSpec{
		flags:   "bcCegprtwx",
		val:     "nq",
		optVal:  "d",
		long:    []string{"beep", "color", "no-color", "errexit", "chgexit", "precise", "no-rerun", "no-title", "no-wrap", "exec", "help", "version"},
		longVal: []string{"interval", "equexit"},
		longOpt: []string{"differences"},
	}
	suSpec = optSpec{
		flags:   "flmpP",
		val:     "cgGsw",
		long:    []string{"fast", "login", "preserve-environment", "pty", "help", "version"},
		longVal: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"},
	}
	envSpec = optSpec{
		flags:   "i0v",
		val:     "uCSaP",
		long:    []string{"ignore-environment", "null", "debug", "list-signal-handling", "help", "version"},
		longVal: []string{"unset", "chdir", "split-string", "argv0"},
		longOpt: []string{"block-signal", "default-signal", "ignore-signal"},
	}
	mapfileSpec = optSpec{flags: "t", val: "dnOsucC"}
	cdSpec      = optSpec{flags: "LPe@"}
)
