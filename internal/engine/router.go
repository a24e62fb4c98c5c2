package engine

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// toolMeta is what the router knows of a canonical tool. Every field
// defaults to the cautious answer: not read-only, base risk execute.
type toolMeta struct {
	readOnly bool
	base     risk.Level
	// acts, for an agent client's own tool that acts beyond the agent,
	// says what it does: a person decides it in every mode.
	acts string
	// parse checks the arguments and fills the call; an error names the
	// offending field.
	parse func(in map[string]any, c *call) error
	// why is "the TOOL tool is classed LEVEL", filled in for the tools of
	// the table.
	why string
}

// classed says how tool t, whose entry m is, is classed.
func (m toolMeta) classed(t policy.Tool) string {
	if m.why != "" {
		return m.why
	}
	return fmt.Sprintf("the %s tool is classed %s", t, m.base)
}

func init() {
	// Each tool's reason is made once.
	for t, m := range tools {
		m.why = m.classed(t)
		tools[t] = m
	}
}

// call is a request after routing: the canonical tool and the arguments
// that matter for judging it.
type call struct {
	req        *Request
	tool       policy.Tool
	meta       toolMeta
	mcpName    string
	mcpTrusted bool      // the MCP server is trusted: its annotations count
	command    string    // shell: the command line
	dir        string    // shell: a working directory given in the input
	paths      []pathArg // file tools: the paths touched
	url        *url.URL  // fetch
	recursive  bool      // search: whole trees below the paths are read
	nameGlob   string    // search: only the files whose name matches
	input      map[string]any
}

// pathArg is a path argument and the capability it is used with.
type pathArg struct {
	raw    string
	family string // "read" or "write"
	// guessed: an MCP argument that only looks like a path; it is judged
	// as a read (a credential stays a credential) but not as a write, for
	// it may be a name such as "/org/repo".
	guessed bool
}

var tools = map[policy.Tool]toolMeta{
	policy.ToolShell:     {base: risk.Execute, parse: parseShell},
	policy.ToolRead:      {readOnly: true, base: risk.Read, parse: parsePathTool("read", true, "file_path", "path", "absolute_path", "notebook_path")},
	policy.ToolList:      {readOnly: true, base: risk.Read, parse: parseList},
	policy.ToolSearch:    {readOnly: true, base: risk.Read, parse: parseSearch},
	policy.ToolWrite:     {base: risk.Write, parse: parsePathTool("write", true, "file_path", "path", "absolute_path")},
	policy.ToolEdit:      {base: risk.Write, parse: parsePathTool("write", true, "file_path", "path", "absolute_path", "notebook_path")},
	policy.ToolPatch:     {base: risk.Write, parse: parsePatch},
	policy.ToolFetch:     {readOnly: true, base: risk.Network, parse: parseFetch},
	policy.ToolWebSearch: {readOnly: true, base: risk.Network, parse: parseWebSearch},
	policy.ToolMCP:       {base: risk.Execute, parse: parseMCP},

	// The agent clients' own tools take inputs the gate does not read:
	// what they do is the tool itself.
	policy.ToolAgentState: {readOnly: true, base: risk.Read, parse: parseNothing},
	policy.ToolSchedule: {base: risk.Execute, parse: parseNothing,
		acts: "makes the agent run again later, with nobody there to watch it"},
	policy.ToolSkill: {base: risk.Execute, parse: parseNothing,
		acts: "loads a skill or command, which may run shell lines of its own that no hook sees"},
	policy.ToolPlanExit: {base: risk.Execute, parse: parseNothing,
		acts: "leaves plan mode, after which the agent may write and run programs"},
}

// parseNothing accepts any input: the tool's effect does not depend on it.
func parseNothing(map[string]any, *call) error { return nil }

// fieldError is an argument problem, naming the field.
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string { return "input." + e.field + ": " + e.msg }

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, int:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// stringField returns the first of names present in in. A present field of
// the wrong type is an error; with required set, so is a missing one.
func stringField(in map[string]any, required bool, names ...string) (string, string, error) {
	for _, n := range names {
		v, ok := in[n]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", n, &fieldError{n, "expected a string, got " + typeName(v)}
		}
		if required && strings.TrimSpace(s) == "" {
			return "", n, &fieldError{n, "must not be empty"}
		}
		if strings.ContainsRune(s, 0) {
			return "", n, &fieldError{n, "must not contain a NUL byte"}
		}
		return s, n, nil
	}
	if required {
		return "", names[0], &fieldError{names[0], "is required"}
	}
	return "", "", nil
}

// oneOf returns the single field of names present in in: two present
// fields could each be what the tool uses, so naming two is an error.
func oneOf(in map[string]any, names ...string) (string, error) {
	found := ""
	for _, n := range names {
		if _, ok := in[n]; ok {
			if found != "" {
				return "", &fieldError{n, "conflicts with " + found + ": give one of " + strings.Join(names, ", ")}
			}
			found = n
		}
	}
	return found, nil
}

func parseShell(in map[string]any, c *call) error {
	name, err := oneOf(in, "command", "cmd")
	if err != nil {
		return err
	}
	if name == "" {
		name = "command"
	}
	v, ok := in[name]
	switch x := v.(type) {
	case nil:
		if !ok {
			return &fieldError{"command", "is required"}
		}
		return &fieldError{"command", "expected a string or an array of strings, got null"}
	case string:
		if strings.TrimSpace(x) == "" {
			return &fieldError{"command", "must not be empty"}
		}
		if strings.ContainsRune(x, 0) {
			return &fieldError{"command", "must not contain a NUL byte"}
		}
		c.command = x
	case []any:
		// An argv vector (Codex): quote each word so the shell analysis
		// sees exactly these words.
		line, err := argvLine(x)
		if err != nil {
			return err
		}
		c.command = line
	default:
		return &fieldError{"command", "expected a string or an array of strings, got " + typeName(v)}
	}
	if _, err := oneOf(in, "directory", "workdir", "cwd", "dir_path"); err != nil {
		return err
	}
	dir, _, err := stringField(in, false, "directory", "workdir", "cwd", "dir_path")
	if err != nil {
		return err
	}
	c.dir = dir
	return nil
}

// argvLine returns the shell line that runs exactly the words of argv, an
// argv vector as a request gives it, each quoted as one word.
func argvLine(argv []any) (string, error) {
	if len(argv) == 0 {
		return "", &fieldError{"command", "must not be an empty array"}
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		s, ok := w.(string)
		if !ok {
			return "", &fieldError{fmt.Sprintf("command[%d]", i), "expected a string, got " + typeName(w)}
		}
		if strings.ContainsRune(s, 0) {
			return "", &fieldError{fmt.Sprintf("command[%d]", i), "must not contain a NUL byte"}
		}
		// A program named by nothing (or blanks) runs nothing anyone
		// could judge; the quoted word would read as a command.
		if i == 0 && strings.TrimSpace(s) == "" {
			return "", &fieldError{"command[0]", "must name the program to run, not be empty"}
		}
		words[i] = shellQuote(s)
	}
	return strings.Join(words, " "), nil
}

var safeWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`) })

// shellQuote quotes s as one shell word.
func shellQuote(s string) string {
	if s != "" && safeWord().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// parsePathTool reads a file tool's path. Every one of the names that is
// present is judged: a call that names two paths touches both as far as
// the gate knows.
func parsePathTool(family string, required bool, names ...string) func(map[string]any, *call) error {
	return func(in map[string]any, c *call) error {
		found := false
		for _, n := range names {
			if _, ok := in[n]; !ok {
				continue
			}
			p, _, err := stringField(in, true, n)
			if err != nil {
				return err
			}
			c.paths = append(c.paths, pathArg{raw: p, family: family})
			found = true
		}
		if !found && required {
			return &fieldError{names[0], "is required"}
		}
		return nil
	}
}

// parseList reads a listing's directory and, for a glob, the directory the
// pattern itself names: "/etc/**" or "../../**/.env" reach beyond the path.
func parseList(in map[string]any, c *call) error {
	dir, _, err := stringField(in, false, "path", "dir_path", "directory")
	if err != nil {
		return err
	}
	if dir == "" {
		dir = "."
	}
	c.paths = append(c.paths, pathArg{raw: dir, family: "read"})
	pat, _, err := stringField(in, false, "pattern", "glob")
	if err != nil {
		return err
	}
	for _, alt := range expandBraces(pat, 64) {
		if base := globBase(alt); base != "" {
			if !filepath.IsAbs(base) && !strings.HasPrefix(base, "~") {
				base = filepath.Join(dir, base)
			}
			c.paths = append(c.paths, pathArg{raw: base, family: "read"})
		}
	}
	return nil
}

// expandBraces expands {a,b} alternatives, at most limit results; past the
// limit the pattern is returned as it is (and judged from its root).
func expandBraces(pat string, limit int) []string {
	open := strings.IndexByte(pat, '{')
	if open < 0 {
		return []string{pat}
	}
	depth, close := 0, -1
	var commas []int
	for i := open; i < len(pat) && close < 0; i++ {
		switch pat[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				close = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if close < 0 {
		return []string{pat}
	}
	var out []string
	start := open + 1
	for _, end := range append(commas, close) {
		for _, rest := range expandBraces(pat[:open]+pat[start:end]+pat[close+1:], limit) {
			if len(out) >= limit {
				return []string{"/"}
			}
			out = append(out, rest)
		}
		start = end + 1
	}
	return out
}

// globBase returns the literal directory part of a glob pattern before its
// first wildcard segment: "src/**/*.go" gives "src", "/etc/*" gives "/etc",
// "*.go" gives "".
func globBase(pat string) string {
	if strings.Contains(pat, "[") {
		// A class can spell any directory ([.]. is ..): judge from the root
		// of what it could reach.
		if strings.HasPrefix(pat, "/") {
			return "/"
		}
		return ".."
	}
	var lit []string
	for _, seg := range strings.Split(pat, "/") {
		if strings.ContainsAny(seg, "*?[{") {
			break
		}
		lit = append(lit, seg)
	}
	if len(lit) == len(strings.Split(pat, "/")) {
		return pat // no wildcard: the pattern is a path
	}
	base := strings.Join(lit, "/")
	if base == "" && strings.HasPrefix(pat, "/") {
		return "/"
	}
	return base
}

func parseSearch(in map[string]any, c *call) error {
	if _, _, err := stringField(in, true, "pattern", "query", "regex"); err != nil {
		return err
	}
	p, _, err := stringField(in, false, "path", "dir_path", "directory")
	if err != nil {
		return err
	}
	if p == "" {
		p = "."
	}
	c.paths = append(c.paths, pathArg{raw: p, family: "read"})
	c.recursive = true
	// A file-name filter such as glob=".env" says which files are read.
	g, _, err := stringField(in, false, "glob", "include")
	if err != nil {
		return err
	}
	if g != "" {
		if risk.SimpleNameGlob(g) {
			c.nameGlob = g
		}
		c.paths = append(c.paths, pathArg{raw: filepath.Join(p, g), family: "read"})
		if base := globBase(g); base != "" && base != g {
			c.paths = append(c.paths, pathArg{raw: filepath.Join(p, base), family: "read"})
		}
	}
	return nil
}

// patchFile matches the file headers of an apply_patch envelope and of a
// unified diff.
var patchFile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |\+\+\+ |--- )(.+?)\s*$`)
})

// PatchPaths returns the paths a patch's file headers name, in order and
// each once, as the engine judges them: the files of "*** Add/Update/Delete
// File:" and "*** Move to:" lines, and of "---"/"+++" lines without their
// a/ or b/ prefix, /dev/null left out. Whoever applies a patch must touch
// no other path.
func PatchPaths(p string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range patchFile().FindAllStringSubmatch(p, -1) {
		name := strings.TrimSpace(m[1])
		if strings.HasPrefix(m[0], "+++ ") || strings.HasPrefix(m[0], "--- ") {
			var file bool
			if name, file = DiffName(name); !file {
				continue
			}
		} else {
			if i := strings.IndexByte(name, '\t'); i >= 0 {
				name = name[:i]
			}
			if name == "/dev/null" {
				continue
			}
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// DiffName returns the path a unified diff's "---" or "+++" header names,
// given the header's text after that marker: the text up to a tab (what
// follows is a timestamp), without an a/ or b/ prefix. It reports false
// for /dev/null, which names no file. It is how [PatchPaths] reads those
// headers, so whoever applies a diff reads them as the engine judged them.
func DiffName(header string) (string, bool) {
	name := strings.TrimSpace(header)
	if i := strings.IndexByte(name, '\t'); i >= 0 {
		name = name[:i]
	}
	if name == "/dev/null" {
		return "", false
	}
	return strings.TrimPrefix(strings.TrimPrefix(name, "a/"), "b/"), true
}

func parsePatch(in map[string]any, c *call) error {
	// Codex's hooks hand its apply_patch over as "command"; the tool
	// itself takes "input". Two of them could each be what the tool
	// applies, so naming two is an error.
	name, err := oneOf(in, "patch", "input", "diff", "command")
	if err != nil {
		return err
	}
	if name == "" {
		name = "input"
	}
	p, field, err := stringField(in, true, name)
	if err != nil {
		return err
	}
	for _, name := range PatchPaths(p) {
		c.paths = append(c.paths, pathArg{raw: name, family: "write"})
	}
	if len(c.paths) == 0 {
		return &fieldError{field, "names no file: expected '*** Update File: path' or '+++ path' headers"}
	}
	return nil
}

func parseFetch(in map[string]any, c *call) error {
	raw, field, err := stringField(in, true, "url")
	if err != nil {
		return err
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return &fieldError{field, "not a URL: " + err.Error()}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &fieldError{field, fmt.Sprintf("scheme %q is not fetched: only http and https", u.Scheme)}
	}
	if u.Hostname() == "" {
		return &fieldError{field, "has no host"}
	}
	c.url = u
	return nil
}

func parseWebSearch(in map[string]any, c *call) error {
	_, _, err := stringField(in, true, "query")
	return err
}

// mcpPathKeys are the argument names an MCP tool's paths are given in.
var mcpPathKeys = []string{"path", "paths", "file_path", "source", "destination", "file", "directory", "uri"}

// parseMCP collects the paths an MCP call's arguments name, so that they are
// judged as the built-in file tools' paths are: a string, or an array of
// strings, under one of mcpPathKeys; a uri only with the file scheme. A
// value of another type under such a key is an error.
func parseMCP(in map[string]any, c *call) error {
	for _, k := range mcpPathKeys {
		v, ok := in[k]
		if !ok {
			continue
		}
		var vals []string
		switch x := v.(type) {
		case string:
			vals = []string{x}
		case []any:
			for i, e := range x {
				s, ok := e.(string)
				if !ok {
					return &fieldError{fmt.Sprintf("%s[%d]", k, i), "expected a string, got " + typeName(e)}
				}
				vals = append(vals, s)
			}
		default:
			return &fieldError{k, "expected a string or an array of strings, got " + typeName(v)}
		}
		for _, s := range vals {
			if strings.ContainsRune(s, 0) {
				return &fieldError{k, "must not contain a NUL byte"}
			}
			if k == "uri" {
				u, err := url.Parse(s)
				if err != nil || !strings.EqualFold(u.Scheme, "file") {
					continue // not a file: the call's effect is the tool's
				}
				if u.Host != "" && u.Host != "localhost" {
					return &fieldError{k, "a file URI on another host cannot be judged: " + s}
				}
				s = u.Path
			}
			if strings.TrimSpace(s) == "" {
				return &fieldError{k, "must not be empty"}
			}
			c.paths = append(c.paths, pathArg{raw: s, family: "read"})
		}
	}
	for _, k := range sortedKeys(in) {
		if !slices.Contains(mcpPathKeys, k) {
			mcpPathLike(in[k], 0, c)
		}
	}
	return nil
}

// mcpPathLike adds as paths the strings anywhere in v, an argument under a
// name mcpPathKeys does not list, that look like paths: absolute, or
// starting with ~, ./ or ../. A server may call its path argument anything
// ("target", "dir", "options.root"); a name the list misses must not let a
// credential pass unjudged.
func mcpPathLike(v any, depth int, c *call) {
	if depth > 32 {
		return
	}
	switch x := v.(type) {
	case string:
		if looksLikePath(x) && !strings.ContainsRune(x, 0) {
			c.paths = append(c.paths, pathArg{raw: x, family: "read", guessed: true})
		}
	case []any:
		for _, e := range x {
			mcpPathLike(e, depth+1, c)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			mcpPathLike(x[k], depth+1, c)
		}
	}
}

// looksLikePath reports whether s reads as a file path rather than as text:
// a single line that is absolute or starts with ~, ./ or ../.
func looksLikePath(s string) bool {
	if strings.ContainsAny(s, "\n\r") {
		return false
	}
	return filepath.IsAbs(s) || s == "~" || strings.HasPrefix(s, "~/") ||
		s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../")
}

// sortedKeys returns m's keys in order, so that what is judged is judged
// the same way every time.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
