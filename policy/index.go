package policy

import (
	"strings"
)

// Index narrows the rules of a Set to those that could match a call, so a
// decision does not test every rule of a large policy. Candidates are
// returned in policy order; every rule that could match is among them.
type Index struct {
	eff   [3]effIndex
	order map[*Rule]int
}

type effIndex struct {
	bare       []*Rule             // bare rules of every tool
	shellName  map[string][]*Rule  // shell rules by program name
	shellOther []*Rule             // Bash(*) and rules naming a program by path
	pathLit    map[pathKey][]*Rule // path rules by family, anchor and first literal segment
	pathWild   map[string][]*Rule  // path rules whose first segment has a wildcard, by family
	hosts      []*Rule
	mcp        []*Rule
}

func buildIndex(rules []*Rule) *Index {
	x := &Index{order: make(map[*Rule]int, len(rules))}
	for i := range x.eff {
		x.eff[i] = effIndex{shellName: map[string][]*Rule{}, pathLit: map[pathKey][]*Rule{}, pathWild: map[string][]*Rule{}}
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
				e.shellName[r.cmd.name] = append(e.shellName[r.cmd.name], r)
			}
		case SpecPath:
			fam := r.Tool.PathFamily()
			seg, lit := firstSegment(r.path)
			if lit {
				k := pathKey{fam, r.path.anchor, seg}
				e.pathLit[k] = append(e.pathLit[k], r)
			} else {
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

// pathKey files a path rule under its family, anchor and first literal
// path segment.
type pathKey struct {
	family string
	anchor pathAnchor
	seg    string
}

// firstSegment returns the pattern's first path segment below its anchor,
// and whether it is a literal (no glob characters). A pattern for the
// anchor itself ("/", "~") has no literal segment.
func firstSegment(p *pathPattern) (string, bool) {
	g := strings.TrimPrefix(p.glob, "/")
	if g == "" {
		return "", false
	}
	seg, _, _ := strings.Cut(g, "/")
	if p.anchor == anchorAnywhere {
		seg = g // a slash-free pattern is one name
	}
	return seg, !strings.ContainsAny(seg, `*?[{\`)
}

// Bare returns the bare rules of effect eff.
func (x *Index) Bare(eff Decision) []*Rule { return x.eff[eff].bare }

// Shell returns the shell rules of effect eff that could match a command
// named name.
func (x *Index) Shell(eff Decision, name string) [][]*Rule {
	e := &x.eff[eff]
	return [][]*Rule{e.shellName[name], e.shellOther}
}

// EachPath calls fn for every path rule of effect eff and family ("read"
// or "write") that could match the absolute path abs, in no set order.
func (x *Index) EachPath(eff Decision, family, abs string, ctx *MatchContext, fn func(*Rule)) {
	e := &x.eff[eff]
	for _, r := range e.pathWild[family] {
		fn(r)
	}
	if abs == "" || len(e.pathLit) == 0 {
		return
	}
	lookup := func(a pathAnchor, seg string) {
		for _, r := range e.pathLit[pathKey{family, a, seg}] {
			fn(r)
		}
	}
	under := func(a pathAnchor, base string) {
		if base == "" || base == "/" && a != anchorAbs {
			return
		}
		rel := abs
		if base != "/" {
			var ok bool
			if rel, ok = strings.CutPrefix(abs, base); !ok || !strings.HasPrefix(rel, "/") {
				return
			}
		}
		rel = rel[1:]
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			rel = rel[:i]
		}
		lookup(a, rel)
	}
	under(anchorAbs, "/")
	under(anchorHome, ctx.Home)
	under(anchorRoot, ctx.Root)
	for rest := abs; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg != "" {
			lookup(anchorAnywhere, seg)
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
