package policy

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/pathres"
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
	paths      [2]pathIndex          // path rules of the read and the write family
	hosts      []*Rule
	mcp        []*Rule
}

// pathIndex files the path rules of one effect and family.
type pathIndex struct {
	lit  [anchorAbs + 1]map[string][]*Rule // by anchor, then leading literal segments
	deep map[string][]*Rule                // **/NAME/… rules by NAME
	wild []*Rule                           // every other path rule
	all  []*Rule                           // every path rule, in policy order
}

// family returns the path rules of family ("read" or "write"); nil for
// any other family, which no path rule has.
func (e *effIndex) family(family string) *pathIndex {
	switch family {
	case "read":
		return &e.paths[0]
	case "write":
		return &e.paths[1]
	}
	return nil
}

func buildIndex(rules []*Rule) *Index {
	x := &Index{order: make(map[*Rule]int, len(rules))}
	for i := range x.eff {
		x.eff[i] = effIndex{shellName: map[string][]*Rule{}, shellAll: map[string][]*Rule{}, shellSub: map[[2]string][]*Rule{}}
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
			p := e.family(r.Tool.PathFamily())
			if p == nil {
				break // no path tool is without a family
			}
			p.all = append(p.all, r)
			switch key, kind := pathIndexKey(r.path); kind {
			case keyPrefix:
				m := p.lit[r.path.anchor]
				if m == nil {
					m = map[string][]*Rule{}
					p.lit[r.path.anchor] = m
				}
				m[key] = append(m[key], r)
			case keyDeep:
				if p.deep == nil {
					p.deep = map[string][]*Rule{}
				}
				p.deep[key] = append(p.deep[key], r)
			default:
				p.wild = append(p.wild, r)
			}
		case SpecDomain:
			e.hosts = append(e.hosts, r)
		case SpecArgs:
			e.mcp = append(e.mcp, r)
		}
	}
	return x
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
	p := x.eff[eff].family(family)
	if p == nil {
		return
	}
	for _, r := range p.wild {
		fn(r)
	}
	if abs == "" || len(p.all) == len(p.wild) {
		return
	}
	abs = pathres.Clean(abs) // as matching reads it
	under := func(m map[string][]*Rule, base string) {
		if len(m) == 0 || base == "" {
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
				for _, r := range m[rel[:i]] {
					fn(r)
				}
			}
		}
		if rel != "" {
			for _, r := range m[rel] {
				fn(r)
			}
		}
	}
	under(p.lit[anchorAbs], "/")
	under(p.lit[anchorHome], ctx.Home)
	under(p.lit[anchorRoot], ctx.Root)
	names, deep := p.lit[anchorAnywhere], p.deep
	if len(names) == 0 && len(deep) == 0 {
		return
	}
	for rest := abs; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg == "" {
			continue
		}
		for _, r := range names[seg] {
			fn(r)
		}
		for _, r := range deep[seg] {
			fn(r)
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

// PathRules returns every path rule of effect eff and family, in policy
// order. The caller must not modify the slice.
func (x *Index) PathRules(eff Decision, family string) []*Rule {
	if p := x.eff[eff].family(family); p != nil {
		return p.all
	}
	return nil
}
