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

// pathPattern is a gitignore-style glob: * within a segment, ** across
// segments, ? one character, [...] a class, {a,b} alternatives. A pattern
// that matches a directory also matches everything below it.
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

// match reports whether the absolute path abs matches. With anywhere set, a
// slash-free pattern matches a name at any depth of any path; otherwise it
// matches only below the project root (the safe reading for allow rules).
func (p *pathPattern) match(abs string, ctx *MatchContext, anywhere bool) bool {
	if abs == "" {
		return false
	}
	if p.anchor == anchorAnywhere {
		if !anywhere {
			if ctx.Root == "" || !pathres.Within(ctx.Root, abs) {
				return false
			}
			rel, _ := filepath.Rel(ctx.Root, abs)
			abs = rel
		}
		for _, seg := range strings.Split(filepath.ToSlash(abs), "/") {
			if seg == "" || seg == "." {
				continue
			}
			if ok, _ := doublestar.Match(p.glob, seg); ok {
				return true
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
	// The path itself, or any directory above it, matching the pattern.
	for cur := rel; ; {
		if ok, _ := doublestar.Match(glob, cur); ok {
			return true
		}
		i := strings.LastIndexByte(cur, '/')
		if i < 0 {
			return false
		}
		cur = cur[:i]
	}
}

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
