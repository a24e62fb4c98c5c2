package policy

import (
	"fmt"
	"strings"
)

// Position is where a rule or setting was written. A zero Position means the
// rule did not come from a file (a CLI flag, a session rule, a test).
type Position struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// String formats the position as file:line:col, leaving out what is unknown.
func (p Position) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ":%d", p.Column)
		}
	}
	return b.String()
}

// IsValid reports whether the position names a file or a line.
func (p Position) IsValid() bool { return p.File != "" || p.Line > 0 }

// Error is a problem with a rule or a policy file, located at Pos. Its
// message reads "file:line:col: message".
type Error struct {
	Pos Position
	Msg string
}

func (e *Error) Error() string {
	if s := e.Pos.String(); s != "" {
		return s + ": " + e.Msg
	}
	return e.Msg
}

// SpecKind says what a rule's specifier matches.
type SpecKind uint8

// The specifier kinds.
const (
	// SpecNone: a bare tool name, matching every call of the tool.
	SpecNone SpecKind = iota
	// SpecCommand: a shell command pattern, matched against each simple
	// command of a command line.
	SpecCommand
	// SpecPath: a path glob, read as written (see the README's rule section).
	SpecPath
	// SpecDomain: a host pattern, domain:example.com or domain:*.example.com.
	SpecDomain
	// SpecArgs: MCP argument patterns, key:glob, ...
	SpecArgs
)

// Rule is one parsed permission rule, Tool or Tool(specifier), together with
// the answer it gives and where it was written.
type Rule struct {
	// Text is the rule as written.
	Text string `json:"rule"`
	// Effect is what the rule answers when it matches.
	Effect Decision `json:"effect"`
	// Tool is the canonical tool the rule names.
	Tool Tool `json:"tool"`
	// ToolName is the tool name as written, an alias or an MCP name pattern.
	ToolName string `json:"tool_name"`
	// Specifier is the text between the parentheses, "" for a bare tool.
	Specifier string `json:"specifier,omitempty"`
	// Kind says how Specifier is matched.
	Kind SpecKind `json:"-"`
	// Layer is the policy layer that holds the rule.
	Layer Layer `json:"layer"`
	// Pos is where the rule was written.
	Pos Position `json:"pos"`

	cmd    *commandPattern
	path   *pathPattern
	domain string
	mcp    mcpPattern
	args   []argPattern
}

// Origin returns "file:line" for a rule from a file, or the layer name.
func (r *Rule) Origin() string {
	if r.Pos.File != "" {
		if r.Pos.Line > 0 {
			return fmt.Sprintf("%s:%d", r.Pos.File, r.Pos.Line)
		}
		return r.Pos.File
	}
	return r.Layer.String()
}

// String returns the rule text.
func (r *Rule) String() string { return r.Text }

// ParseRule parses one rule. pos locates the first character of text and is
// used for error positions: a problem at the n-th byte of text is reported
// at pos.Column+n on pos.Line. The returned error is an [*Error].
func ParseRule(text string, effect Decision, pos Position) (*Rule, error) {
	errAt := func(off int, format string, args ...any) error {
		p := pos
		if p.Line == 0 {
			p.Line = 1
		}
		if p.Column == 0 {
			p.Column = 1
		}
		p.Column += off
		return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
	}
	trimmed := strings.TrimRight(text, " \t")
	lead := len(trimmed) - len(strings.TrimLeft(trimmed, " \t"))
	s := trimmed[lead:]
	if s == "" {
		return nil, errAt(0, "empty rule: expected a tool name such as Bash, Read or mcp__server__tool")
	}
	name, spec, hasSpec := s, "", false
	if i := strings.IndexByte(s, '('); i >= 0 {
		name = s[:i]
		if !strings.HasSuffix(s, ")") {
			if j := strings.LastIndexByte(s, ')'); j > i {
				return nil, errAt(lead+j+1, "unexpected %q after ')': a rule ends with its closing parenthesis", s[j+1:])
			}
			return nil, errAt(lead+len(s), "expected ')' to close the specifier opened at column %d", pos.Column+lead+i)
		}
		spec, hasSpec = s[i+1:len(s)-1], true
	} else if j := strings.IndexByte(s, ')'); j >= 0 {
		return nil, errAt(lead+j, "unexpected ')' with no '(' before it")
	}
	if name == "" {
		return nil, errAt(lead, "expected a tool name before '('")
	}
	if k := strings.IndexFunc(name, func(r rune) bool { return !isToolNameRune(r) }); k >= 0 {
		return nil, errAt(lead+k, "unexpected %q in tool name %q", name[k:k+1], name)
	}
	r := &Rule{Text: s, Effect: effect, ToolName: name, Pos: pos}
	if r.Pos.Column > 0 {
		r.Pos.Column += lead
	}
	if IsMCPName(name) || name == "mcp__*" {
		r.Tool = ToolMCP
		pat, err := parseMCPName(name)
		if err != nil {
			return nil, errAt(lead, "%v", err)
		}
		r.mcp = pat
	} else {
		t, ok := Canonical(name)
		if !ok {
			return nil, errAt(lead, "unknown tool %q: expected one of %s, or an MCP tool as mcp__server__tool", name, knownToolList())
		}
		r.Tool = t
	}
	if !hasSpec {
		return r, nil
	}
	specOff := lead + len(name) + 1
	if strings.TrimSpace(spec) == "" {
		return nil, errAt(specOff, "empty specifier: write %s without parentheses to match every call", name)
	}
	r.Specifier = spec
	var err error
	switch {
	case r.Tool == ToolShell:
		r.Kind = SpecCommand
		r.cmd, err = parseCommandPattern(spec)
	case r.Tool.PathFamily() != "":
		r.Kind = SpecPath
		r.path, err = parsePathPattern(spec)
	case r.Tool == ToolFetch || r.Tool == ToolWebSearch:
		r.Kind = SpecDomain
		r.domain, err = parseDomainPattern(spec)
	case r.Tool == ToolMCP:
		r.Kind = SpecArgs
		r.args, err = parseArgPatterns(spec)
	default:
		err = fmt.Errorf("%s takes no specifier", name)
	}
	if err != nil {
		if se, ok := err.(*specError); ok {
			return nil, errAt(specOff+se.off, "%s", se.msg)
		}
		return nil, errAt(specOff, "%v", err)
	}
	return r, nil
}

// specError is a specifier problem at a byte offset within the specifier.
type specError struct {
	off int
	msg string
}

func (e *specError) Error() string { return e.msg }

func isToolNameRune(r rune) bool {
	return r == '_' || r == '.' || r == '-' || r == '*' ||
		('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
}

func knownToolList() string {
	return "Bash, Read, Write, Edit, MultiEdit, LS, Glob, Grep, WebFetch, WebSearch, apply_patch (or their aliases)"
}
