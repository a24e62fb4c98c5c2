package shell

import (
	"strings"

	"github.com/toolgate/toolgate/risk"
)

// optSpec names the risk spec of a wrapper program, whose options are
// parsed in getopt style. Options that the spec does not list make the
// parse uncertain, so that an unknown option can never hide the program
// that is run.
type optSpec struct {
	prog string
	// hostVal are short options whose value is attached or is the next
	// word when that does not start with '-' (sudo -h).
	hostVal string
}

// spec returns the wrapper's entry in the table of program knowledge.
func (sp *optSpec) spec() *risk.Spec {
	s := risk.Lookup(sp.prog)
	if s == nil {
		panic("shell: no spec for wrapper " + sp.prog) // TestWrapperSpecs checks every wrapper
	}
	return s
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

// kindOf says how an option of the table takes its value.
func kindOf(o *risk.Option) int {
	switch {
	case o == nil:
		return optUnknown
	case o.Value == risk.ValNone:
		return optFlag
	case o.Optional:
		return optOptVal
	}
	return optVal
}

// matchLong finds a long option by its name or an unambiguous prefix.
func (sp *optSpec) matchLong(name string) (string, int) {
	if name == "" {
		return "", optUnknown
	}
	full, o := sp.spec().MatchLong(name)
	return full, kindOf(o)
}

// short reports how the short option ch takes its value.
func (sp *optSpec) short(ch byte) int {
	if strings.IndexByte(sp.hostVal, ch) >= 0 {
		return optUnknown // read by parseOpts itself
	}
	return kindOf(sp.spec().Short(ch))
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
		if sp.spec().Numeric && isDigits(s[1:]) {
			// -10: a number, the value of no named option.
			opts = append(opts, opt{val: warg{val: s[1:], pos: w.pos}, hasVal: true})
			i++
			continue
		}
	cluster:
		for j := 1; j < len(s); j++ {
			ch := s[j]
			switch {
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
			}
			switch sp.short(ch) {
			case optVal:
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
			case optOptVal:
				opts = append(opts, opt{name: s[j : j+1], val: warg{val: s[j+1:], pos: w.pos}, hasVal: j+1 < len(s)})
				break cluster
			case optFlag:
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

// The wrappers whose options the analysis reads, each by its entry in
// the table of program knowledge (risk/specs_wrappers.go).
var (
	sudoSpec     = optSpec{prog: "sudo", hostVal: "h"}
	doasSpec     = optSpec{prog: "doas"}
	timeoutSpec  = optSpec{prog: "timeout"}
	niceSpec     = optSpec{prog: "nice"}
	ioniceSpec   = optSpec{prog: "ionice"}
	nohupSpec    = optSpec{prog: "nohup"}
	timeSpec     = optSpec{prog: "time"}
	commandSpec  = optSpec{prog: "command"}
	builtinSpec  = optSpec{prog: "builtin"}
	execSpec     = optSpec{prog: "exec"}
	stdbufSpec   = optSpec{prog: "stdbuf"}
	chrtSpec     = optSpec{prog: "chrt"}
	tasksetSpec  = optSpec{prog: "taskset"}
	setsidSpec   = optSpec{prog: "setsid"}
	unbufferSpec = optSpec{prog: "unbuffer"}
	xargsSpec    = optSpec{prog: "xargs"}
	watchSpec    = optSpec{prog: "watch"}
	suSpec       = optSpec{prog: "su"}
	envSpec      = optSpec{prog: "env"}
	mapfileSpec  = optSpec{prog: "mapfile"}
	cdSpec       = optSpec{prog: "cd"}
	pushdSpec    = optSpec{prog: "pushd"}
)
