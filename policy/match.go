package policy

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolgate/toolgate/pathres"
)

// AppliesToTool reports whether a bare rule (one without a specifier)
// covers a call of tool t. A bare rule of a path family covers every tool of
// the family (a bare Read covers Read, LS, Glob and Grep calls); a bare MCP
// rule covers the tools its name pattern matches. Rules with a specifier
// report false: they match on what the call touches, through the other
// methods.
func (r *Rule) AppliesToTool(t Tool, mcpName string) bool {
	if r.Kind != SpecNone {
		return false
	}
	return r.sameTool(t, mcpName)
}

func (r *Rule) sameTool(t Tool, mcpName string) bool {
	switch {
	case r.Tool == ToolMCP:
		if t != ToolMCP {
			return false
		}
		server, tool := SplitMCPName(mcpName)
		return r.mcp.match(server, tool, r.Effect != Allow)
	case r.Tool.PathFamily() != "":
		return r.Tool.PathFamily() == t.PathFamily()
	default:
		return r.Tool == t
	}
}

// MatchCommand reports whether a shell rule matches one simple command.
// Bare shell rules match every command. With conservative set (deny and ask
// rules) a word whose value is unknown may match anything; without it
// (allow rules) it matches only a trailing wildcard, and a command whose
// program is unknown matches only a bare rule or Bash(*).
func (r *Rule) MatchCommand(c *CommandView, ctx *MatchContext, conservative bool) bool {
	if r.Tool != ToolShell {
		return false
	}
	if r.Kind == SpecNone {
		return true
	}
	return r.cmd.match(c, ctx, conservative)
}

// MatchPath reports whether a path rule of the given capability family
// ("read" or "write") matches the absolute path abs. With conservative set,
// slash-free patterns match a name at any depth anywhere (so Read(.env)
// denies every .env); otherwise only below the project root.
func (r *Rule) MatchPath(family, abs string, ctx *MatchContext, conservative bool) bool {
	if r.Kind != SpecPath || r.Tool.PathFamily() != family {
		return false
	}
	return r.path.match(abs, ctx, conservative)
}

// MatchHost reports whether a domain rule matches host.
func (r *Rule) MatchHost(host string) bool {
	return r.Kind == SpecDomain && matchHost(r.domain, host)
}

// MatchMCP reports whether an MCP rule matches a call of mcpName with the
// given arguments. Rules without argument patterns match on the name alone.
func (r *Rule) MatchMCP(mcpName string, input map[string]any, conservative bool) bool {
	if r.Tool != ToolMCP || !r.sameTool(ToolMCP, mcpName) {
		return false
	}
	if r.Kind == SpecArgs {
		return matchArgs(r.args, input, conservative)
	}
	return true
}

// Explicit reports whether the rule names specific paths or hosts rather
// than a whole tool, a whole command or a ** tree. Only explicit allow rules
// unlock credential paths and private network targets.
func (r *Rule) Explicit() bool {
	switch r.Kind {
	case SpecPath:
		return r.path.explicit()
	case SpecDomain:
		return r.domain != "*" && r.domain[0] != '*'
	}
	return false
}

// CommandWords returns the literal words (program first) of a shell rule
// without wildcards, or nil. The engine uses them to tell whether an allow
// rule itself names a destructive form such as rm -rf.
func (r *Rule) CommandWords() []string {
	if r.Kind != SpecCommand || r.cmd == nil || r.cmd.any || r.cmd.isGlob {
		return nil
	}
	return append([]string{r.cmd.name}, r.cmd.words...)
}

// IsExactCommand reports whether a shell rule names one exact command line,
// with no wildcard.
func (r *Rule) IsExactCommand() bool {
	return r.Kind == SpecCommand && r.cmd != nil && !r.cmd.any && !r.cmd.prefix && !r.cmd.isGlob
}

// MatchBelow reports whether an anchored path rule may match something
// inside the directory abs, or abs itself with a wildcard below it: a read
// of the whole tree at abs reads it. The tree's own path is matched segment
// by segment against the pattern's leading segments, so that a deny
// Read(**/vault/**) or Read(src/*/keys/**) meets a recursive read of any
// directory the pattern can continue below (config, src/app), not only of
// the directory its literal part names. Patterns without an anchor (a name
// at any depth) are not considered.
func (r *Rule) MatchBelow(abs string, ctx *MatchContext) bool {
	if r.Kind != SpecPath || r.path.anchor == anchorAnywhere {
		return false
	}
	base, ok := r.path.base(ctx)
	if !ok {
		return false
	}
	glob := strings.TrimPrefix(r.path.glob, "/")
	if pathres.Within(abs, base) && abs != pathres.Clean(base) {
		// The tree holds the pattern's base, and so what it names.
		return true
	}
	if !pathres.Within(base, abs) {
		return false
	}
	if glob == "" {
		return false // "/" or "~": the tree is matched as a path
	}
	segs := strings.Split(glob, "/")
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return false
	}
	n := 0 // the pattern's segments the tree's path has matched
	if rel != "." {
		for _, t := range strings.Split(filepath.ToSlash(rel), "/") {
			if n == len(segs) {
				// The pattern ends above the tree: whether it matches
				// the tree itself is the path match's to say.
				return false
			}
			if segs[n] == "**" {
				return true // any depth below may match the rest
			}
			ok, err := doublestar.Match(segs[n], t)
			if err != nil {
				// A segment that is no pattern alone is part of one
				// that spans segments ({a,b/c}): it may match below.
				return true
			}
			if !ok {
				return false
			}
			n++
		}
	}
	// What lies below the tree can match the segments left.
	return n < len(segs)
}
