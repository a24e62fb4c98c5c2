// Package claudeimport translates the permission settings of a Claude Code
// settings.json (permissions.allow, ask, deny, additionalDirectories and
// defaultMode) into a toolgate policy file.
//
// Every rule written is checked with [policy.ParseRule] and the whole file
// with [policy.ParseFile]; what cannot be translated is left out and
// reported, never guessed at.
package claudeimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// Options says how to read the settings file.
type Options struct {
	// Source is how the file is named in the comments of the output, such
	// as ".claude/settings.json" or "~/.claude/settings.json".
	Source string
	// ProjectDir is the directory Claude Code reads the settings' relative
	// paths against: the project root for a project's settings. Relative
	// additionalDirectories are resolved against it; empty leaves them
	// untranslated.
	ProjectDir string
}

// Skipped is one setting that was not translated, and why.
type Skipped struct {
	Where  string // e.g. "permissions.allow[3]"
	Value  string
	Reason string
}

func (s Skipped) String() string {
	if s.Value == "" {
		return s.Where + ": " + s.Reason
	}
	return fmt.Sprintf("%s %q: %s", s.Where, s.Value, s.Reason)
}

// Result is the policy file's text and what was left out.
type Result struct {
	Policy  []byte
	Skipped []Skipped
	// Notes tell where a translation reads differently from Claude Code.
	Notes []Skipped
}

type settings struct {
	Permissions *struct {
		Allow                 []json.RawMessage `json:"allow"`
		Ask                   []json.RawMessage `json:"ask"`
		Deny                  []json.RawMessage `json:"deny"`
		AdditionalDirectories []json.RawMessage `json:"additionalDirectories"`
		DefaultMode           json.RawMessage   `json:"defaultMode"`
	} `json:"permissions"`
}

// knownPermissionKeys are the permissions keys Convert reads or reports.
var knownPermissionKeys = map[string]bool{"allow": true, "ask": true, "deny": true, "additionalDirectories": true, "defaultMode": true}

// Modes Claude Code and toolgate share.
var modes = map[string]bool{"default": true, "acceptEdits": true, "plan": true, "dontAsk": true, "bypassPermissions": true}

// Convert translates src, the content of a Claude Code settings file named
// filename. A file that is not JSON, or whose permissions have the wrong
// shape, is an error naming file, line and column.
func Convert(filename string, src []byte, o Options) (*Result, error) {
	var s settings
	if err := json.Unmarshal(src, &s); err != nil {
		return nil, jsonError(filename, src, err)
	}
	if o.Source == "" {
		o.Source = filename
	}
	res := &Result{}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# toolgate policy translated from the Claude Code settings %s\n", comment(o.Source))
	b.WriteString("# by `toolgate policy import claude-code`. Review it before use: toolgate\n")
	b.WriteString("# also applies Read and Edit rules to the files shell commands read and write.\n")
	if s.Permissions == nil {
		b.WriteString("\n# The settings have no permissions.\n")
		res.Policy = b.Bytes()
		return res, nil
	}
	var raw struct {
		Permissions map[string]json.RawMessage `json:"permissions"`
	}
	_ = json.Unmarshal(src, &raw)
	for _, k := range sortedKeys(raw.Permissions) {
		if !knownPermissionKeys[k] {
			reason := "not a permission toolgate has"
			if k == "disableBypassPermissionsMode" {
				reason = "toolgate's equivalent, [managed] disable_bypass_mode, belongs in the managed policy file only"
			}
			res.Skipped = append(res.Skipped, Skipped{Where: "permissions." + k, Reason: reason})
		}
	}
	from := func(where string) string { return "# from " + comment(o.Source) + " " + where }

	p := s.Permissions
	wroteTop := false
	if len(p.DefaultMode) > 0 {
		var m string
		if err := json.Unmarshal(p.DefaultMode, &m); err != nil {
			res.Skipped = append(res.Skipped, Skipped{Where: "permissions.defaultMode", Value: string(p.DefaultMode), Reason: "not a string"})
		} else if !modes[m] {
			res.Skipped = append(res.Skipped, Skipped{Where: "permissions.defaultMode", Value: m, Reason: "toolgate has no such mode (it has default, acceptEdits, plan, dontAsk, bypassPermissions and strict)"})
		} else {
			b.WriteString("\n")
			wroteTop = true
			fmt.Fprintf(&b, "mode = %s  %s\n", quote(m), from("permissions.defaultMode"))
		}
	}
	var roots []string
	for i, r := range p.AdditionalDirectories {
		where := fmt.Sprintf("permissions.additionalDirectories[%d]", i)
		var d string
		if err := json.Unmarshal(r, &d); err != nil {
			res.Skipped = append(res.Skipped, Skipped{Where: where, Value: string(r), Reason: "not a string"})
			continue
		}
		abs := d
		switch {
		case strings.HasPrefix(d, "~/") || filepath.IsAbs(d):
		case o.ProjectDir != "":
			abs = filepath.Join(o.ProjectDir, d)
		default:
			res.Skipped = append(res.Skipped, Skipped{Where: where, Value: d, Reason: "a relative directory, and the project it is relative to is unknown"})
			continue
		}
		abs = strings.TrimSuffix(abs, "/")
		if abs == "" {
			abs = "/"
		}
		line := fmt.Sprintf("  %s,  %s", quote(abs), from(where))
		if abs != d {
			line += " (" + comment(d) + ")"
		}
		// writable_roots has its own checks (no "/" or the home directory).
		if _, err := policy.ParseFile("check.toml", []byte("writable_roots = ["+quote(abs)+"]\n"), policy.LayerUser); err != nil {
			res.Skipped = append(res.Skipped, Skipped{Where: where, Value: d, Reason: stripPos(err)})
			continue
		}
		roots = append(roots, line)
	}
	if len(roots) > 0 {
		if !wroteTop {
			b.WriteString("\n")
		}
		b.WriteString("# Claude Code's additional working directories; toolgate lets the sandbox\n# write there (reads and edits still follow the rules below).\n")
		b.WriteString("writable_roots = [\n" + strings.Join(roots, "\n") + "\n]\n")
	}

	lists := []struct {
		key    string
		effect policy.Decision
		items  []json.RawMessage
	}{{"allow", policy.Allow, p.Allow}, {"ask", policy.Ask, p.Ask}, {"deny", policy.Deny, p.Deny}}
	var sect bytes.Buffer
	for _, l := range lists {
		var lines []string
		for i, r := range l.items {
			where := fmt.Sprintf("permissions.%s[%d]", l.key, i)
			var text string
			if err := json.Unmarshal(r, &text); err != nil {
				res.Skipped = append(res.Skipped, Skipped{Where: where, Value: string(r), Reason: "not a string"})
				continue
			}
			rule, note, why := Rule(text)
			if why != "" {
				res.Skipped = append(res.Skipped, Skipped{Where: where, Value: text, Reason: why})
				continue
			}
			if _, err := policy.ParseRule(rule, l.effect, policy.Position{}); err != nil {
				res.Skipped = append(res.Skipped, Skipped{Where: where, Value: text, Reason: "toolgate does not accept it: " + stripPos(err)})
				continue
			}
			c := from(where)
			if rule != text {
				c += " (" + comment(text) + ")"
			}
			if note != "" {
				res.Notes = append(res.Notes, Skipped{Where: where, Value: text, Reason: note})
			}
			lines = append(lines, "  "+quote(rule)+",  "+c)
		}
		if len(lines) > 0 {
			fmt.Fprintf(&sect, "%s = [\n%s\n]\n", l.key, strings.Join(lines, "\n"))
		}
	}
	if sect.Len() > 0 {
		b.WriteString("\n[permissions]\n")
		b.Write(sect.Bytes())
	}
	if _, err := policy.ParseFile("imported.toml", b.Bytes(), policy.LayerUser); err != nil {
		return nil, fmt.Errorf("internal error: the translated policy does not parse: %v", err)
	}
	res.Policy = b.Bytes()
	return res, nil
}

// Rule translates one Claude Code permission rule into toolgate's syntax.
// It returns the rule, a note when toolgate reads it differently from
// Claude Code, or why it cannot be translated.
func Rule(text string) (rule, note, why string) {
	name, spec, hasSpec := text, "", false
	if i := strings.IndexByte(text, '('); i >= 0 && strings.HasSuffix(text, ")") {
		name, spec, hasSpec = text[:i], text[i+1:len(text)-1], true
	}
	switch name {
	case "Task", "Agent", "Skill", "SlashCommand", "TodoWrite", "ExitPlanMode", "NotebookRead", "BashOutput", "KillShell", "KillBash":
		return "", "", "toolgate does not gate the " + name + " tool"
	case "NotebookEdit":
		return "", "", "toolgate does not gate notebook edits"
	}
	if !hasSpec {
		return text, "", ""
	}
	switch name {
	case "Read", "Edit", "Write", "MultiEdit", "Glob", "Grep", "LS":
		p, n := path(spec)
		if name == "Write" || name == "MultiEdit" {
			if n != "" {
				n += "; "
			}
			n += "Claude Code reads path rules only on Read and Edit; toolgate applies this " + name + " rule as written"
		}
		return name + "(" + p + ")", n, ""
	}
	return text, "", ""
}

// path translates a Claude Code path specifier: "//abs" is absolute, and
// "/p" is relative to the project, which toolgate writes "./p".
func path(spec string) (string, string) {
	switch {
	case strings.HasPrefix(spec, "//"):
		return spec[1:], ""
	case strings.HasPrefix(spec, "/"):
		return "." + spec, "a leading / is the project root in Claude Code, ./ in toolgate"
	}
	return spec, ""
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// comment makes s safe inside a one-line TOML comment.
func comment(s string) string {
	q := quote(s)
	q = q[1 : len(q)-1]
	return strings.ReplaceAll(q, `\"`, `"`)
}

func stripPos(err error) string {
	if pe, ok := err.(*policy.Error); ok {
		return pe.Msg
	}
	return err.Error()
}

func jsonError(filename string, src []byte, err error) error {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
		err = fmt.Errorf("%s must be %s, not %s", strings.TrimPrefix(e.Field, "."), goTypeName(e.Type.Kind().String()), e.Value)
	}
	if off < 0 {
		return fmt.Errorf("%s: %v", filename, err)
	}
	line, col := 1, 1
	// The offset is just past the offending byte (or value).
	for _, c := range src[:max(0, min(int(off)-1, len(src)))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("%s:%d:%d: %v", filename, line, col, err)
}

func goTypeName(k string) string {
	switch k {
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a " + k
}

func sortedKeys(m map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(m))
}
