package policy

import (
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Index narrows the rules of a Set to those that could match a call, so a
// decision does not test every rule of a large policy. Candidates are
// returned in policy order; every rule that could match is among them.
type Index struct {
	eff   [3]effIndex
	order map[*Rule]int
}

type effIndex struct {
	bare       []*Rule               // bare rules of every tool
	shellName  map[string][]*Rule    // shell rules by program name that name no operand, or a wildcard
	shellAll   map[string][]*Rule    // shell rules by program name, whatever their operands
	shellSub   map[[2]string][]*Rule // shell rules by program name and first operand
	shellOther []*Rule               // Bash(*) and rules naming a program by path
	pathLit    map[pathKey][]*Rule   // path rules by family, anchor and leading literal segments
	pathDeep   map[pathKey][]*Rule   // **/NAME/… rules by family and NAME
	pathWild   map[string][]*Rule    // other path rules, by family
	hosts      []*Rule
	mcp        []*Rule
}

func buildIndex(rules []*Rule) *Index {
	x := &Index{order: make(map[*Rule]int, len(rules))}
	for i := range x.eff {
		x.eff[i] = effIndex{shellName: map[string][]*Rule{}, shellAll: map[string][]*Rule{}, shellSub: map[[2]string][]*Rule{},
			pathLit: map[pathKey][]*Rule{}, pathDeep: map[pathKey][]*Rule{}, pathWild: map[string][]*Rule{}}
	}
	for i, r := range rules {
		x.order[r] = i
		e := &x.eff[r.Effect]
		switch r.Kind {
		case SpecNone:
			e.bare = append(e.bare, r)
			if r.Tool == ToolMCP {
				e.mcp = append(e.mcp, r)
			}
		case SpecCommand:
			if r.cmd.any || r.cmd.wrapper != "" || strings.Contains(r.cmd.name, "/") {
				e.shellOther = append(e.shellOther, r)
			} else {
				name := r.cmd.name
				e.shellAll[name] = append(e.shellAll[name], r)
				if !r.cmd.isGlob && len(r.cmd.ops) > 0 {
					// It can only match a command whose first operand
					// is its own (see commandPattern.match).
					k := [2]string{name, r.cmd.ops[0]}
					e.shellSub[k] = append(e.shellSub[k], r)
				} else {
					e.shellName[name] = append(e.shellName[name], r)
				}
			}
		case SpecPath:
			fam := r.Tool.PathFamily()
			switch key, kind := pathIndexKey(r.path); kind {
			case keyPrefix:
				k := pathKey{fam, r.path.anchor, key}
				e.pathLit[k] = append(e.pathLit[k], r)
			case keyDeep:
				k := pathKey{family: fam, seg: key}
				e.pathDeep[k] = append(e.pathDeep[k], r)
			default:
				e.pathWild[fam] = append(e.pathWild[fam], r)
			}
		case SpecDomain:
			e.hosts = append(e.hosts, r)
		case SpecArgs:
			e.mcp = append(e.mcp, r)
		}
	}
	return x
}

// pathKey files a path rule under its family, anchor and key (see
// pathIndexKey).
type pathKey struct {
	family string
	anchor pathAnchor
	seg    string
}

// How a path rule is filed.
const (
	keyNone   = iota // among the rules tried for every path
	keyPrefix        // by its leading literal segments below its anchor
	keyDeep          // by NAME, for a pattern **/NAME/…
)

// pathIndexKey returns how a path pattern is filed and under what key:
//
//   - a slash-free name without wildcards: by the name, looked up for
//     every segment of a path (it matches a name at any depth);
//   - an anchored pattern whose first segments are literal: by those
//     segments (src/pkg for src/pkg/*.go), looked up for every leading
//     run of a path's segments below the anchor, since everything it
//     matches, and everything below what it matches, starts with them;
//   - **/NAME/… with NAME literal: by NAME, looked up for every segment of
//     a path, since everything it matches holds a segment NAME;
//   - anything else (a leading wildcard, the anchor itself) is tried for
//     every path.
func pathIndexKey(p *pathPattern) (string, int) {
	g := strings.TrimPrefix(p.glob, "/")
	if g == "" {
		return "", keyNone
	}
	if p.anchor == anchorAnywhere {
		if !indexable(g) {
			return "", keyNone
		}
		return g, keyPrefix
	}
	end := 0 // the end of the leading literal segments in g
	for rest := g; ; {
		seg, after, more := strings.Cut(rest, "/")
		if seg == "" || !indexable(seg) {
			break
		}
		end += len(seg)
		if !more {
			break
		}
		end++
		rest = after
	}
	if key := strings.TrimSuffix(g[:end], "/"); key != "" {
		return key, keyPrefix
	}
	if rest, ok := strings.CutPrefix(g, "**/"); ok {
		if seg, _, _ := strings.Cut(rest, "/"); seg != "" && indexable(seg) {
			return seg, keyDeep
		}
	}
	return "", keyNone
}

// Bare returns the bare rules of effect eff.
func (x *Index) Bare(eff Decision) []*Rule { return x.eff[eff].bare }

// Shell returns the shell rules of effect eff that could match the
// command c, in up to three lists. Rules are filed by program name and,
// when they name operands, by the first: a command whose words are all
// known gets only the rules of its own first operand, so a thousand rules
// on one program cost what a few do.
func (x *Index) Shell(eff Decision, c *CommandView) [3][]*Rule {
	e := &x.eff[eff]
	if !slices.Contains(c.Dynamic, true) {
		if op, ok := c.firstOperand(); ok {
			return [3][]*Rule{e.shellName[c.Name], e.shellSub[[2]string{c.Name, op}], e.shellOther}
		}
		// No operand: no rule naming one matches.
		return [3][]*Rule{e.shellName[c.Name], nil, e.shellOther}
	}
	return [3][]*Rule{e.shellAll[c.Name], nil, e.shellOther}
}

// indexable reports whether a pattern segment matches only the same bytes,
// so that it can be looked up: no wildcard, and no character that the
// matcher, reading text as UTF-8, finds equal to other bytes (an invalid
// byte and U+FFFD all read as U+FFFD).
func indexable(seg string) bool {
	return !hasGlobMeta(seg) && utf8.ValidString(seg) && !strings.ContainsRune(seg, utf8.RuneError)
}

// EachPath calls fn for every path rule of effect eff and family ("read"
// or "write") that could match the absolute path abs, in no set order; a
// rule may be called more than once. It costs a map lookup or two per
// segment of abs, whatever the number of rules.
func (x *Index) EachPath(eff Decision, family, abs string, ctx *MatchContext, fn func(*Rule)) {
	e := &x.eff[eff]
	for _, r := range e.pathWild[family] {
		fn(r)
	}
	if abs == "" || len(e.pathLit) == 0 && len(e.pathDeep) == 0 {
		return
	}
	abs = filepath.Clean(abs) // as matching reads it
	lookup := func(m map[pathKey][]*Rule, a pathAnchor, key string) {
		for _, r := range m[pathKey{family, a, key}] {
			fn(r)
		}
	}
	under := func(a pathAnchor, base string) {
		if base == "" {
			return
		}
		rel, ok := strings.CutPrefix(abs, base)
		switch {
		case !ok:
			return
		case base == "/":
		case rel == "" || rel[0] != '/':
			return
		default:
			rel = rel[1:]
		}
		for i := 0; i < len(rel); i++ {
			if rel[i] == '/' {
				lookup(e.pathLit, a, rel[:i])
			}
		}
		if rel != "" {
			lookup(e.pathLit, a, rel)
		}
	}
	under(anchorAbs, "/")
	under(anchorHome, ctx.Home)
	under(anchorRoot, ctx.Root)
	for rest := abs; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg != "" {
			lookup(e.pathLit, anchorAnywhere, seg)
			lookup(e.pathDeep, anchorAnywhere, seg)
		}
	}
}

// Hosts returns the domain rules of effect eff.
func (x *Index) Hosts(eff Decision) []*Rule { return x.eff[eff].hosts }

// MCP returns the MCP rules of effect eff, bare and with arguments.
func (x *Index) MCP(eff Decision) []*Rule { return x.eff[eff].mcp }

// Order is the rule's position in the Set: of two matching rules the one
// with the lower order is reported.
func (x *Index) Order(r *Rule) int { return x.order[r] }

// Earlier returns whichever of a and b comes first in policy order; a nil
// rule is none, so Earlier(nil, r) is r.
func (x *Index) Earlier(a, b *Rule) *Rule {
	if a == nil || b != nil && x.order[b] < x.order[a] {
		return b
	}
	return a
}

// FirstCommand returns the first shell rule of effect eff, in policy
// order, that matches the command c, or nil; conservative is as in
// Rule.MatchCommand.
func (x *Index) FirstCommand(eff Decision, c *CommandView, ctx *MatchContext, conservative bool) *Rule {
	var best *Rule
	for _, rs := range x.Shell(eff, c) {
		for _, r := range rs {
			if r.MatchCommand(c, ctx, conservative) {
				best = x.Earlier(best, r)
			}
		}
	}
	return best
}

// FirstPath returns the first path rule of effect eff and family, in
// policy order, that matches the absolute path abs, or nil; conservative
// is as in Rule.MatchPath.
func (x *Index) FirstPath(eff Decision, family, abs string, ctx *MatchContext, conservative bool) *Rule {
	var best *Rule
	x.EachPath(eff, family, abs, ctx, func(r *Rule) {
		if r.MatchPath(family, abs, ctx, conservative) {
			best = x.Earlier(best, r)
		}
	})
	return best
}

// PathRules returns every path rule of effect eff and family.
func (x *Index) PathRules(eff Decision, family string) []*Rule {
	var out []*Rule
	e := &x.eff[eff]
	out = append(out, e.pathWild[family]...)
	for k, rs := range e.pathLit {
		if k.family == family {
			out = append(out, rs...)
		}
	}
	return out
}
