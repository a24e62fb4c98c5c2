package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/shell"
)

// commandPattern is a parsed shell specifier.
//
// Exact and prefix patterns are matched with flags understood, not as text:
// the words after the program are split into flags and operands, short flag
// clusters are split (-rf is -r -f), and well-known long spellings map to
// their short forms (rm --recursive is rm -r). A prefix pattern matches when
// the command's operands start with the pattern's operands and the command
// has every flag the pattern has; an exact pattern needs both to be equal.
// To allow, an exact pattern needs more: every flag in the same place
// relative to the operands, and a command run directly, not through a
// wrapper; and no allow pattern matches a command run through sudo, doas
// or su.
// Patterns with a * elsewhere are matched as a wildcard over the command's
// words joined by spaces.
type commandPattern struct {
	any    bool
	prefix bool
	name   string
	words  []string // literal words after the program
	flags  []string // canonical flags of words, sorted
	ops    []string // operands of words
	layout []string // flagLayout of words: where each flag stands
	glob   string   // for wildcard patterns: the words after the program
	isGlob bool
	// wrapper is set for a rule naming only a wrapper (Bash(sudo:*)): it
	// matches every command run through that wrapper, for deny and ask.
	wrapper string
}

func parseCommandPattern(spec string) (*commandPattern, error) {
	s := strings.TrimSpace(spec)
	if s == "*" {
		return &commandPattern{any: true}, nil
	}
	p := &commandPattern{}
	switch {
	case strings.HasSuffix(s, ":*"):
		p.prefix, s = true, strings.TrimSpace(s[:len(s)-2])
	case strings.HasSuffix(s, " *"):
		p.prefix, s = true, strings.TrimSpace(s[:len(s)-2])
	case strings.HasSuffix(s, "*") && strings.Count(s, "*") == 1:
		// "rm -rf*": a prefix that ends inside a word; matched on the words
		// before it, flags understood, which is what such a rule is for.
		p.prefix, s = true, strings.TrimSpace(s[:len(s)-1])
	}
	if s == "" {
		return nil, &specError{0, "expected a command before the wildcard"}
	}
	if strings.Contains(s, "*") {
		// A wildcard in the middle: the program must still be a literal word.
		first, rest, _ := strings.Cut(s, " ")
		if strings.Contains(first, "*") {
			return nil, &specError{0, "the program name cannot contain '*': name the program, e.g. Bash(git * main)"}
		}
		name, err := patternProgram(first)
		if err != nil {
			return nil, err
		}
		p.name, p.isGlob, p.glob = name, true, strings.TrimSpace(rest)
		if p.prefix {
			p.glob += "*"
		}
		return p, nil
	}
	if shell.IsWrapper(s) {
		p.wrapper, p.name = s, s
		return p, nil
	}
	res, err := shell.Analyze(s, nil)
	if err != nil {
		return nil, &specError{0, "not a valid command: " + err.Error()}
	}
	if len(res.Commands) != 1 {
		return nil, &specError{0, "a shell rule matches one simple command; write one rule per command instead of chaining them"}
	}
	c := res.Commands[0]
	if len(c.Wrappers) > 0 {
		return nil, &specError{0, "a shell rule names the program that runs; drop the wrapper " + strings.Join(c.Wrappers, " ") + " (a rule naming only the wrapper, such as Bash(sudo:*), denies or asks for everything run through it)"}
	}
	if c.NameDynamic || slices.Contains(c.ArgDynamic, true) || len(res.Problems) > 0 {
		return nil, &specError{0, "a shell rule must be literal words: no $variables or $(...) substitutions"}
	}
	if len(c.Redirects) > 0 {
		return nil, &specError{0, "a shell rule cannot contain redirections; file writes are governed by Edit and Write rules"}
	}
	if c.Via != "" || len(c.Assigns) > 0 {
		return nil, &specError{0, "a shell rule must be a plain command"}
	}
	p.name = c.Name
	p.words = c.Args
	p.flags, p.ops = splitFlags(c.Name, c.Args, nil)
	p.layout = flagLayout(c.Name, c.Args)
	return p, nil
}

func patternProgram(word string) (string, error) {
	res, err := shell.Analyze(word, nil)
	if err != nil || len(res.Commands) != 1 || res.Commands[0].NameDynamic {
		return "", &specError{0, "the program name must be a literal word"}
	}
	return res.Commands[0].Name, nil
}

// CommandView is a simple command as rule matching sees it.
type CommandView struct {
	// Name is the program, named as shell.Command names it.
	Name string
	// Dir is the working directory the command runs in ("" if unknown);
	// it resolves program names that are relative paths.
	Dir string
	// Args are the words after the program.
	Args []string
	// Dynamic marks the words of Args whose value is not known statically.
	Dynamic []bool
	// NameDynamic is set when the program itself is not known statically.
	NameDynamic bool
	// Wrappers are the wrappers the command runs through (sudo, xargs…).
	Wrappers []string

	words *viewWords // set by Prepare
}

// viewWords is a command's words as rules read them, split once.
type viewWords struct {
	flags, ops []string // splitFlags with the view's Dynamic
	layout     []string // flagLayout
	joined     string   // Args joined by spaces
}

// Prepare splits the command's words into flags, operands and their
// layout once, so that matching it against many rules does not split them
// again for each. Call it after the fields are set and before the view is
// shared; changing Name or Args afterwards needs another Prepare. Matching
// an unprepared view gives the same answers, only slower.
func (c *CommandView) Prepare() {
	f, o := splitFlags(c.Name, c.Args, c.Dynamic)
	c.words = &viewWords{flags: f, ops: o, layout: flagLayout(c.Name, c.Args), joined: strings.Join(c.Args, " ")}
}

// split returns the command's flags and operands.
func (c *CommandView) split() (flags, ops []string) {
	if c.words != nil {
		return c.words.flags, c.words.ops
	}
	return splitFlags(c.Name, c.Args, c.Dynamic)
}

// layout returns the command's flag layout.
func (c *CommandView) layout() []string {
	if c.words != nil {
		return c.words.layout
	}
	return flagLayout(c.Name, c.Args)
}

// firstOperand returns the command's first operand as rules read it, and
// false when it has none.
func (c *CommandView) firstOperand() (string, bool) {
	_, ops := c.split()
	if len(ops) == 0 {
		return "", false
	}
	return ops[0], true
}

// matchCommand reports whether the pattern matches c. With conservative
// set (deny and ask rules), a word whose value is not known counts as
// possibly matching anything; without it (allow rules), an unknown word
// matches only a trailing wildcard.
func (p *commandPattern) match(c *CommandView, ctx *MatchContext, conservative bool) bool {
	if p.any {
		return true
	}
	if p.wrapper != "" {
		// A wrapper rule matches what runs through the wrapper; it only
		// ever denies or asks: allowing sudo would allow anything.
		return conservative && slices.Contains(c.Wrappers, p.wrapper)
	}
	if c.NameDynamic || !sameProgram(p.name, c.Name, c.Dir, ctx) {
		return false
	}
	if !conservative && raisesPrivileges(c.Wrappers) {
		// A rule names the program, not the user it runs as: what runs
		// through sudo is not what the rule was written for.
		return false
	}
	if p.isGlob {
		if c.words != nil && !slices.Contains(c.Dynamic, true) {
			return wildcard(p.glob, c.words.joined)
		}
		return globMatchWords(p.glob, c.Args, c.Dynamic, conservative)
	}
	flags, ops := c.split()
	dynamic := slices.Contains(c.Dynamic, true)
	if !p.prefix {
		if dynamic {
			return conservative && staticPrefixAgrees(p.ops, c.Args, c.Dynamic)
		}
		if !conservative {
			// To allow, an exact rule matches that one command line: run
			// directly, not through a wrapper that adds to or changes it
			// (xargs, env, timeout), and with every flag where the rule
			// has it, since a flag moved across an operand may mean
			// something else (docker run --privileged IMAGE is not docker
			// run IMAGE CMD --privileged).
			return len(c.Wrappers) == 0 && slices.Equal(p.layout, c.layout())
		}
		return slices.Equal(p.ops, ops) && slices.Equal(p.flags, flags)
	}
	// Prefix: operands must start with the pattern's operands.
	if len(ops) < len(p.ops) || !slices.Equal(ops[:len(p.ops)], p.ops) {
		if !(conservative && dynamic && staticPrefixAgrees(p.ops, c.Args, c.Dynamic)) {
			return false
		}
	}
	for _, f := range p.flags {
		if !hasFlag(flags, f) && !(conservative && dynamic) {
			return false
		}
	}
	return true
}

// sameUserWrappers are the wrappers known to run the command as the user
// who runs them.
var sameUserWrappers = map[string]bool{
	"env": true, "timeout": true, "nice": true, "ionice": true, "nohup": true, "time": true, "command": true,
	"builtin": true, "exec": true, "stdbuf": true, "xargs": true, "watch": true, "chrt": true, "taskset": true,
	"setsid": true, "unbuffer": true, "busybox": true,
}

// raisesPrivileges reports whether a command runs through a wrapper that
// may run it as another user (sudo, doas, su): any wrapper not known to
// keep the user.
func raisesPrivileges(wrappers []string) bool {
	for _, w := range wrappers {
		if !sameUserWrappers[w] {
			return true
		}
	}
	return false
}

// staticPrefixAgrees reports whether the operands written before the first
// unknown word agree with the pattern's operands: an unknown word could then
// supply the rest.
func staticPrefixAgrees(want, args []string, dyn []bool) bool {
	var ops []string
	for i, a := range args {
		if i < len(dyn) && dyn[i] {
			break
		}
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			ops = append(ops, a)
		}
	}
	n := min(len(ops), len(want))
	return slices.Equal(ops[:n], want[:n])
}

func hasFlag(flags []string, want string) bool {
	name, _, hasVal := strings.Cut(want, "=")
	for _, f := range flags {
		if f == want {
			return true
		}
		if !hasVal {
			if fn, _, _ := strings.Cut(f, "="); fn == name {
				return true
			}
		}
	}
	return false
}

// sameProgram compares program names. A bare name matches only the same
// bare name; a name with a slash is a path, compared after resolving a
// relative pattern against the project root and a relative command name
// against the command's directory.
func sameProgram(pattern, name, dir string, ctx *MatchContext) bool {
	if pattern == name && !strings.Contains(name, "/") {
		return true
	}
	if !strings.Contains(pattern, "/") || !strings.Contains(name, "/") {
		return false
	}
	pa, na := pattern, name
	if !filepath.IsAbs(pa) {
		if ctx == nil || ctx.Root == "" {
			return false
		}
		pa = filepath.Join(ctx.Root, pa)
	}
	if !filepath.IsAbs(na) {
		if dir == "" {
			return false
		}
		na = filepath.Join(dir, na)
	}
	return filepath.Clean(pa) == filepath.Clean(na)
}

// globMatchWords matches a wildcard pattern against the words joined by
// single spaces; * matches any run of characters, spaces included.
func globMatchWords(glob string, args []string, dyn []bool, conservative bool) bool {
	if slices.Contains(dyn, true) && conservative {
		// An unknown word may turn out to be any word of the pattern (or
		// nothing): try each.
		cands := append(strings.Fields(strings.ReplaceAll(glob, "*", " ")), "")
		var try func(i int, parts []string) bool
		try = func(i int, parts []string) bool {
			if i == len(args) {
				return wildcard(glob, strings.Join(parts, " "))
			}
			if !dyn[i] {
				return try(i+1, append(parts, args[i]))
			}
			for _, c := range cands {
				if try(i+1, append(slices.Clone(parts), c)) {
					return true
				}
			}
			return false
		}
		if n := strings.Count(strings.Join(boolWords(dyn), ""), "1"); n <= 3 {
			return try(0, nil)
		}
		return true
	}
	if slices.Contains(dyn, true) && !conservative {
		// An unknown word may only fall inside a wildcard: replace it by a
		// character no literal pattern text can match.
		parts := make([]string, len(args))
		for i, a := range args {
			if dyn[i] {
				parts[i] = "\x00"
			} else {
				parts[i] = a
			}
		}
		return wildcard(glob, strings.Join(parts, " "))
	}
	return wildcard(glob, strings.Join(args, " "))
}

// wildcard matches s against pattern where * is any run of characters.
func wildcard(pattern, s string) bool {
	// Iterative matching with backtracking to the last star.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && pattern[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(pattern) && pattern[pi] == s[si] && s[si] != 0:
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}

func boolWords(b []bool) []string {
	out := make([]string, len(b))
	for i, v := range b {
		if v {
			out[i] = "1"
		}
	}
	return out
}

// CoversFlags reports whether a shell rule names every flag the command
// uses: an allow rule for a destructive command must name the destructive
// form itself, so Bash(rm -f:*) does not cover rm -rf.
func (r *Rule) CoversFlags(c *CommandView) bool {
	if r.Kind != SpecCommand || r.cmd == nil || r.cmd.any || r.cmd.isGlob {
		return false
	}
	flags, _ := c.split()
	for _, f := range flags {
		if !hasFlag(r.cmd.flags, f) {
			return false
		}
	}
	return true
}
