package policy

import (
	"sort"
	"strings"

	"github.com/toolgate/toolgate/risk"
)

// longAliases maps, per program, long option spellings (and upper-case
// short ones with the same meaning) to one canonical short flag, so that a
// rule written with one spelling matches every other.
var longAliases = map[string]map[string]string{
	"git": {
		"--force": "-f", "--all": "-a", "--message": "-m", "--delete": "-d",
		"--quiet": "-q", "--verbose": "-v", "--recursive": "-r",
	},
	"sed":  {"--in-place": "-i", "--expression": "-e"},
	"curl": {"--output": "-o", "--data": "-d", "--upload-file": "-T", "--request": "-X", "--location": "-L", "--insecure": "-k"},
	"wget": {"--output-document": "-O"},
	"npm":  {"--global": "-g", "--force": "-f"},
}

// noClusters lists programs whose single-dash options are words, not
// clusters of one-letter flags (find -name, go test -run).
var noClusters = map[string]bool{
	"find": true, "java": true, "javac": true, "go": true, "gcc": true, "g++": true, "cc": true,
	"clang": true, "clang++": true, "ffmpeg": true, "ld": true, "dd": true,
}

// splitFlags splits a command's words into canonical flags (sorted) and
// operands, in order. Words marked dynamic are left out of both. "--" ends
// the flags; "-" alone is an operand. A flag's attached value is kept as
// "--name=value"; short clusters are split unless the program takes
// single-dash words.
func splitFlags(name string, args []string, dyn []bool) (flags, ops []string) {
	scanFlags(name, args, dyn, func(flag bool, w string) {
		if flag {
			flags = append(flags, w)
		} else {
			ops = append(ops, w)
		}
	})
	sort.Strings(flags)
	return flags, ops
}

// flagLayout is the words of a command as splitFlags reads them, in their
// order, except that each run of flags between two operands is sorted: the
// same flags spelled another way or in another order within the run give
// the same layout, but a flag moved across an operand does not. What a
// flag means may depend on the operands before it (docker run --privileged
// IMAGE is not docker run IMAGE CMD --privileged), so an exact rule
// compares layouts when it allows.
func flagLayout(name string, args []string) []string {
	var out []string
	run := 0 // start of the current run of flags in out
	scanFlags(name, args, nil, func(flag bool, w string) {
		if flag {
			out = append(out, "-"+w)
			return
		}
		sort.Strings(out[run:])
		out = append(out, "+"+w)
		run = len(out)
	})
	sort.Strings(out[run:])
	return out
}

// scanFlags reads a command's words as splitFlags describes, calling emit
// for each canonical flag and each operand in the order they are written.
func scanFlags(name string, args []string, dyn []bool, emit func(flag bool, word string)) {
	alias := longAliases[name]
	if alias == nil && strings.Contains(name, "/") {
		alias = longAliases[name[strings.LastIndexByte(name, '/')+1:]]
	}
	sp := risk.Lookup(name)
	if sp == nil && strings.Contains(name, "/") {
		sp = risk.Lookup(name[strings.LastIndexByte(name, '/')+1:])
	}
	if sp != nil && sp.HasSubcommands() {
		sp = nil // options depend on the subcommand: the alias table
	}
	canon := func(f string) string {
		n, v, hasV := strings.Cut(f, "=")
		if c, _, ok := spCanonical(sp, n); ok {
			// The program's spec names every spelling of the option.
			n = c
		} else if a, ok := alias[n]; ok {
			n = a
		} else if a, ok := abbreviation(alias, n); ok {
			n = a
		}
		if hasV {
			return n + "=" + v
		}
		return n
	}
	takes := func(f string) bool { return risk.TakesValue(name, f) }
	endOfFlags := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i < len(dyn) && dyn[i] {
			continue
		}
		if !endOfFlags && strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			short := len(a) > 2 && !strings.HasPrefix(a, "--") && takes(a[:2])
			if takes(a) && i+1 < len(args) {
				v := args[i+1]
				if i+1 < len(dyn) && dyn[i+1] {
					v = "*"
				}
				emit(true, canon(a)+"="+v)
				i++
				continue
			}
			if short {
				emit(true, canon(a[:2])+"="+a[2:])
				continue
			}
		}
		switch {
		case endOfFlags || a == "-" || !strings.HasPrefix(a, "-"):
			emit(false, a)
		case a == "--":
			endOfFlags = true
		case strings.HasPrefix(a, "--"):
			emit(true, canon(a))
		case noClusters[name] || len(a) == 2 || isNumber(a[1:]):
			emit(true, canon(a))
		default:
			body, val, hasV := strings.Cut(a[1:], "=")
			for j, r := range body {
				f := "-" + string(r)
				if hasV && j == len(body)-1 {
					f += "=" + val
				}
				emit(true, canon(f))
			}
		}
	}
}

// spCanonical is sp.Canonical for a spec that may be nil.
func spCanonical(sp *risk.Spec, spelling string) (string, *risk.Option, bool) {
	if sp == nil {
		return "", nil, false
	}
	return sp.Canonical(spelling)
}

func isNumber(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// abbreviation resolves an unambiguous abbreviation of a long option
// (--rec for --recursive), as GNU getopt accepts, to its canonical flag.
func abbreviation(alias map[string]string, n string) (string, bool) {
	if !strings.HasPrefix(n, "--") || len(n) < 4 {
		return "", false
	}
	found := ""
	for long, short := range alias {
		if strings.HasPrefix(long, n) {
			if found != "" && found != short {
				return "", false
			}
			found = short
		}
	}
	return found, found != ""
}
