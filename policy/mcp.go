package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// mcpPattern matches MCP tool names: mcp__server (every tool of the
// server), mcp__server__* or mcp__server__get_* (a glob on the tool), and
// mcp__* (every MCP tool).
type mcpPattern struct {
	server string // a glob; "*" for every server
	tool   string // a glob; "" or "*" for every tool
}

func parseMCPName(name string) (mcpPattern, error) {
	if name == "mcp__*" {
		return mcpPattern{server: "*", tool: "*"}, nil
	}
	server, tool := SplitMCPName(name)
	if server == "" {
		return mcpPattern{}, fmt.Errorf("expected an MCP server name after mcp__")
	}
	if tool == "" {
		tool = "*"
	}
	if !doublestar.ValidatePattern(server) || !doublestar.ValidatePattern(tool) {
		return mcpPattern{}, fmt.Errorf("invalid MCP name pattern %q", name)
	}
	return mcpPattern{server: server, tool: tool}, nil
}

func (p mcpPattern) match(server, tool string, conservative bool) bool {
	ps, pt := p.server, p.tool
	if conservative {
		// Deny and ask rules match names regardless of case.
		ps, pt, server, tool = strings.ToLower(ps), strings.ToLower(pt), strings.ToLower(server), strings.ToLower(tool)
	}
	ok1, _ := doublestar.Match(ps, server)
	ok2, _ := doublestar.Match(pt, tool)
	return ok1 && ok2
}

// argPattern is one key:glob of an MCP argument rule. The key may be a
// dotted path into nested objects.
type argPattern struct {
	key  []string
	glob string
}

func parseArgPatterns(spec string) ([]argPattern, error) {
	var out []argPattern
	off := 0
	for _, part := range splitTopLevel(spec) {
		k, v, ok := strings.Cut(part, ":")
		key := strings.TrimSpace(k)
		if !ok || key == "" {
			return nil, &specError{off, fmt.Sprintf("expected key:pattern, e.g. repo:myorg/*, got %q", strings.TrimSpace(part))}
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if !doublestar.ValidatePattern(v) {
			return nil, &specError{off, fmt.Sprintf("invalid pattern %q for %s", v, key)}
		}
		out = append(out, argPattern{key: strings.Split(key, "."), glob: v})
		off += len(part) + 1
	}
	return out, nil
}

// splitTopLevel splits on commas outside double quotes.
func splitTopLevel(s string) []string {
	var parts []string
	inQ, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			inQ = !inQ
		case ',':
			if !inQ {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// matchArgs reports whether every pattern matches the call's arguments.
// A missing key never matches. Strings are matched as they are; other
// values as their JSON text. For an array, conservative matching (deny and
// ask) needs any element to match, otherwise every element must.
func matchArgs(pats []argPattern, input map[string]any, conservative bool) bool {
	for _, p := range pats {
		vs := lookup(input, p.key)
		if len(vs) == 0 {
			return false
		}
		// Through arrays of objects a key names several values: deny and
		// ask rules need one to match, allow rules all.
		hit := !conservative
		for _, v := range vs {
			m := matchValue(p.glob, v, conservative)
			if conservative && m {
				hit = true
			}
			if !conservative && !m {
				hit = false
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

// lookup returns the values a dotted key names, descending into arrays.
func lookup(cur any, key []string) []any {
	if len(key) == 0 {
		return []any{cur}
	}
	switch x := cur.(type) {
	case map[string]any:
		v, ok := x[key[0]]
		if !ok {
			return nil
		}
		return lookup(v, key[1:])
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, lookup(e, key)...)
		}
		return out
	}
	return nil
}

func matchValue(glob string, v any, conservative bool) bool {
	switch x := v.(type) {
	case string:
		if conservative {
			// Deny and ask rules match regardless of case: services such
			// as GitHub treat names case-insensitively.
			glob, x = strings.ToLower(glob), strings.ToLower(x)
		}
		ok, _ := doublestar.Match(glob, x)
		return ok
	case []any:
		if len(x) == 0 {
			return false
		}
		for _, e := range x {
			m := matchValue(glob, e, conservative)
			if conservative && m {
				return true
			}
			if !conservative && !m {
				return false
			}
		}
		return !conservative
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return false
		}
		ok, _ := doublestar.Match(glob, string(b))
		return ok
	}
}
