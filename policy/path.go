package policy

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolgate/toolgate/pathres"
)

// MatchContext is what matching needs to know about where a call is made.
type MatchContext struct {
	// Root is the project root (workspace), absolute and real.
	Root string
	// Home is the user's home directory, absolute.
	Home string
}

// pathAnchor says what a path pattern is relative to.
type pathAnchor uint8

const (
	anchorAnywhere pathAnchor = iota // no slash: a name at any depth
	anchorRoot                       // relative to the project root
	anchorHome                       // ~/...
	anchorAbs                        // /...
)

// pathPattern is a glob as written: * and ? within a segment, ** across
// segments, [...] a class, {a,b} alternatives. A pattern without wildcards
// also matches everything below the file or directory it names; see
// [pathPattern.match] for what deny and ask rules match besides.
type pathPattern struct {
	anchor pathAnchor
	glob   string // relative to the anchor; for anchorAbs it starts with "/"
}

func parsePathPattern(spec string) (*pathPattern, error) {
	s := strings.TrimSpace(spec)
	p := &pathPattern{}
	switch {
	case strings.HasPrefix(s, "//"):
		// The Claude Code spelling of an absolute path.
		p.anchor, p.glob = anchorAbs, "/"+strings.TrimLeft(s, "/")
	case strings.HasPrefix(s, "/"):
		p.anchor, p.glob = anchorAbs, s
	case s == "~" || strings.HasPrefix(s, "~/"):
		p.anchor, p.glob = anchorHome, strings.TrimPrefix(strings.TrimPrefix(s, "~"), "/")
	case strings.HasPrefix(s, "~"):
		return nil, &specError{0, "~user paths are not supported: write the absolute path"}
	default:
		rel := strings.TrimPrefix(s, "./")
		if strings.Contains(strings.TrimSuffix(rel, "/"), "/") || strings.HasPrefix(s, "./") {
			p.anchor = anchorRoot
		}
		p.glob = rel
	}
	p.glob = strings.TrimSuffix(p.glob, "/")
	if p.anchor == anchorAbs && p.glob == "" {
		p.glob = "/"
	}
	if p.glob == "" && p.anchor != anchorHome {
		return nil, &specError{0, "empty path pattern"}
	}
	if p.glob != "" && p.glob != "/" && !doublestar.ValidatePattern(p.glob) {
		return nil, &specError{0, "invalid glob " + p.glob + ": check its [ ] and { } brackets"}
	}
	if p.anchor != anchorAnywhere {
		// Only the anchored forms may climb with ..; reject it so a pattern
		// always means what it looks like.
		for _, seg := range strings.Split(p.glob, "/") {
			if seg == ".." {
				return nil, &specError{0, "'..' is not allowed in a path pattern: write the path it leads to"}
			}
		}
	}
	return p, nil
}

// base returns the directory an anchored pattern is relative to.
func (p *pathPattern) base(ctx *MatchContext) (string, bool) {
	switch p.anchor {
	case anchorAbs:
		return "/", true
	case anchorHome:
		return ctx.Home, ctx.Home != ""
	default:
		return ctx.Root, ctx.Root != ""
	}
}

// match reports whether the absolute path abs matches the pattern as
// written: "*" stays within one path segment, "**" crosses segments, and
// only a pattern without wildcards — one naming a file or a directory,
// such as /dir or /dir/ — covers what lies below what it names. So
// Write(/dir/*) matches /dir/a but not /dir/a/b, and Write(/dir/**) both.
//
// With conservative set (deny and ask rules), a narrower reading would
// loosen the rule, so two readings are widened: a slash-free pattern
// matches a name at any depth of any path, not only below the project root
// (Read(.env) denies every .env), and whatever lies below a directory the
// pattern matches is matched too, as gitignore ignores the contents of an
// ignored directory (a deny Read(/secrets/*) also denies
// /secrets/sub/key, since /secrets/sub matches).
func (p *pathPattern) match(abs string, ctx *MatchContext, conservative bool) bool {
	if abs == "" {
		return false
	}
	literal := !hasGlobMeta(p.glob)
	if p.anchor == anchorAnywhere {
		if !conservative {
			if ctx.Root == "" || !pathres.Within(ctx.Root, abs) {
				return false
			}
			rel, _ := filepath.Rel(ctx.Root, abs)
			abs = rel
		}
		segs := strings.Split(filepath.ToSlash(abs), "/")
		for i := len(segs) - 1; i >= 0; i-- {
			if seg := segs[i]; seg != "" && seg != "." {
				if ok, _ := doublestar.Match(p.glob, seg); ok {
					return true
				}
			}
			// Only a name without wildcards, or a deny or ask rule, covers
			// what lies below the directory it matches.
			if !literal && !conservative {
				return false
			}
		}
		return false
	}
	base, ok := p.base(ctx)
	if !ok || !pathres.Within(base, abs) {
		return false
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	glob := strings.TrimPrefix(p.glob, "/")
	if glob == "" {
		// "/" or "~": everything below the base.
		return true
	}
	if rel == "." {
		return false
	}
	if ok, _ := doublestar.Match(glob, rel); ok {
		return true
	}
	if literal {
		return strings.HasPrefix(rel, glob+"/")
	}
	if !conservative {
		return false
	}
	// A directory above the path matching the pattern.
	for cur := rel; ; {
		i := strings.LastIndexByte(cur, '/')
		if i < 0 {
			return false
		}
		cur = cur[:i]
		if ok, _ := doublestar.Match(glob, cur); ok {
			return true
		}
	}
}

// hasGlobMeta reports whether a pattern holds a wildcard, a class, an
// alternative or an escape.
func hasGlobMeta(glob string) bool { return strings.ContainsAny(glob, "*?[{\\") }

// explicit reports whether the pattern names files rather than sweeping
// trees. A wildcard may only stand in the last segment and only beside a
// literal name part (id_*, *.pem); "**", a bare root, and segments such as
// "*" or ".*" — which match whole directories, and so everything below
// them — do not count. Only explicit rules unlock credential paths.
func (p *pathPattern) explicit() bool {
	if strings.Contains(p.glob, "**") || p.glob == "/" || p.glob == "" || p.anchor == anchorAnywhere && strings.ContainsAny(p.glob, "*?[{") {
		return false
	}
	segs := strings.Split(strings.TrimPrefix(p.glob, "/"), "/")
	for i, seg := range segs {
		if !strings.ContainsAny(seg, "*?[{") {
			continue
		}
		if i != len(segs)-1 || strings.Trim(seg, "*?.[]{},") == "" {
			return false
		}
	}
	return true
}
