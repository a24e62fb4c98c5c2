package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Finding is one problem Lint reports about a policy.
type Finding struct {
	Pos     Position
	Rule    string
	Message string
}

func (f Finding) String() string {
	if s := f.Pos.String(); s != "" {
		return s + ": " + f.Message
	}
	return f.Message
}

// Lint reports rules that can never decide anything: duplicates, rules
// shadowed by a stricter rule that always matches first, allow rules set
// aside by a managed lock or because the project is not trusted, and allow
// rules that look as if they unlocked credentials but cannot; and settings
// that a lock or a missing trust overrode.
func Lint(s *Set) []Finding {
	var out []Finding
	add := func(r *Rule, format string, args ...any) {
		out = append(out, Finding{Pos: r.Pos, Rule: r.Text, Message: fmt.Sprintf(format, args...)})
	}
	for _, ig := range s.Ignored {
		add(ig.Rule, "%s rule %s is unreachable: %s", ig.Rule.Effect, ig.Rule.Text, ig.Reason)
	}
	for _, n := range s.Notes {
		// Settings that a lock or a missing trust overrode; the note names
		// the file and line.
		out = append(out, Finding{Message: n})
	}
	for i, r := range s.Rules {
		for _, o := range s.Rules[:i] {
			if o.Effect == r.Effect && o.Tool == r.Tool && o.ToolName == r.ToolName && o.Specifier == r.Specifier {
				add(r, "%s rule %s duplicates the rule at %s", r.Effect, r.Text, o.Origin())
				break
			}
			if o.Effect > r.Effect && subsumes(o, r) {
				add(r, "%s rule %s is shadowed: %s rule %s (%s) matches every call it matches and is checked first", r.Effect, r.Text, o.Effect, o.Text, o.Origin())
				break
			}
		}
		if r.Effect == Allow && r.Kind == SpecPath && !r.Explicit() && touchesSecrets(r.path) {
			add(r, "allow rule %s sweeps a credential location with a wildcard tree; credentials are unlocked only by rules that name them (no **)", r.Text)
		}
	}
	for _, h := range s.Hooks {
		if why := hookProgramMissing(h); why != "" {
			out = append(out, Finding{Pos: h.Pos, Rule: h.Target(), Message: fmt.Sprintf("%s runs %s: every call it is told of is denied", h, why)})
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.Pos.File, b.Pos.File); c != 0 {
			return c
		}
		return a.Pos.Line - b.Pos.Line
	})
	return out
}

// subsumes reports whether rule a matches every call rule b matches, for
// the cases that can be decided from the rule text.
func subsumes(a, b *Rule) bool {
	if a.Kind == SpecNone {
		if a.Tool == ToolMCP {
			return b.Tool == ToolMCP && a.mcp.tool == "*" && (a.mcp.server == "*" || a.mcp.server == b.mcp.server)
		}
		if a.Tool.PathFamily() != "" {
			return b.Tool.PathFamily() == a.Tool.PathFamily() && b.Kind == SpecNone
		}
		return a.Tool == b.Tool
	}
	if a.Tool != b.Tool && !(a.Tool.PathFamily() != "" && a.Tool.PathFamily() == b.Tool.PathFamily()) {
		return false
	}
	switch a.Kind {
	case SpecCommand:
		if b.Kind != SpecCommand {
			return false
		}
		if a.cmd.any {
			return true
		}
		if !a.cmd.prefix || a.cmd.isGlob || b.cmd.any || b.cmd.isGlob || a.cmd.name != b.cmd.name {
			return false
		}
		if len(b.cmd.ops) < len(a.cmd.ops) || !slices.Equal(b.cmd.ops[:len(a.cmd.ops)], a.cmd.ops) {
			return false
		}
		for _, f := range a.cmd.flags {
			if !hasFlag(b.cmd.flags, f) {
				return false
			}
		}
		return true
	case SpecPath:
		return b.Kind == SpecPath && (a.path.glob == b.path.glob && a.path.anchor == b.path.anchor ||
			a.path.anchor == anchorAbs && a.path.glob == "/**" || a.path.anchor == anchorAnywhere && a.path.glob == "**")
	case SpecDomain:
		return b.Kind == SpecDomain && matchHost(a.domain, strings.TrimPrefix(b.domain, "*."))
	}
	return false
}

// touchesSecrets reports whether a path pattern reaches into a well-known
// credential directory.
func touchesSecrets(p *pathPattern) bool {
	if p.anchor == anchorHome {
		for _, d := range []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube"} {
			if strings.HasPrefix(p.glob, d) || strings.HasPrefix(p.glob, "**") || p.glob == "" {
				return true
			}
		}
	}
	return p.anchor == anchorAbs && (strings.HasPrefix(p.glob, "/etc") || p.glob == "/**")
}

// hookProgramMissing says why the program a command hook names by an
// absolute path cannot run (it does not exist, or is not an executable
// file), or "". A command that finds its program through PATH or the
// shell is not checked.
func hookProgramMissing(h *Hook) string {
	if h.Type != HookCommand {
		return ""
	}
	words := strings.Fields(h.Command)
	if len(words) == 0 || !filepath.IsAbs(words[0]) {
		return ""
	}
	fi, err := os.Stat(words[0])
	switch {
	case err != nil:
		return words[0] + ", which does not exist"
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return words[0] + ", which is not an executable file"
	}
	return ""
}
