package policy

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// HookEvent names the moment of a tool call at which a user hook runs.
type HookEvent string

// The hook events.
const (
	// HookPreToolUse runs before a call the policy does not deny: the hook
	// may deny it, make it ask, allow a call that would ask (never one
	// that must ask, see [Hook]) or change its input.
	HookPreToolUse HookEvent = "PreToolUse"
	// HookPermissionRequest runs when the gate would ask a person: the
	// hook may answer deny, or allow what a hook may allow; no answer
	// leaves the question to the person.
	HookPermissionRequest HookEvent = "PermissionRequest"
	// HookPostToolUse runs after a call ran; it cannot undo it, only be
	// recorded and give the agent feedback.
	HookPostToolUse HookEvent = "PostToolUse"
)

// HookEvents lists the hook events.
func HookEvents() []HookEvent {
	return []HookEvent{HookPreToolUse, HookPermissionRequest, HookPostToolUse}
}

// The kinds of hooks.
const (
	// HookCommand runs a program through /bin/sh -c.
	HookCommand = "command"
	// HookHTTP posts to a URL.
	HookHTTP = "http"
)

// DefaultHookTimeout is a hook's time limit when its entry sets none.
const DefaultHookTimeout = 60 * time.Second

// MaxHookTimeout is the longest time limit a hook entry may set.
const MaxHookTimeout = 10 * time.Minute

// Hook is one [[hooks]] entry of a policy file: a program or a URL that is
// told of matching tool calls and may answer. A hook can make a decision
// stricter but never looser than the policy's hard answers: a deny (a deny
// rule, the sandbox, a credential), and an ask that must go to a person (an
// ask rule, a protected path, a destructive effect, what cannot be judged,
// approval = "always") stand whatever it says. Hooks run programs, so a
// project's committed policy defines them only when the user trusts the
// project ([File.Distrust] drops them otherwise).
type Hook struct {
	Event HookEvent
	// Matcher is the tool pattern as written: tool names or aliases
	// separated by |, MCP name patterns (mcp__fs__*), or "" / "*" for
	// every tool.
	Matcher string
	// Type is [HookCommand] or [HookHTTP].
	Type string
	// Command is the shell command of a command hook.
	Command string
	// URL is where an http hook posts.
	URL string
	// Timeout is the time limit of one run.
	Timeout time.Duration
	// Layer and Pos say where the hook was written.
	Layer Layer
	Pos   Position
	// NoAllow, when not "", says why the hook's allow answers do not
	// count (a managed lock); its deny and ask answers still do.
	NoAllow string

	match []*Rule // nil: every tool
}

// Origin returns "file:line" of the hook's entry, or its layer name.
func (h *Hook) Origin() string {
	if h.Pos.File != "" {
		if h.Pos.Line > 0 {
			return fmt.Sprintf("%s:%d", h.Pos.File, h.Pos.Line)
		}
		return h.Pos.File
	}
	return h.Layer.String()
}

// Target is what the hook runs: its command, or its URL.
func (h *Hook) Target() string {
	if h.Type == HookHTTP {
		return h.URL
	}
	return h.Command
}

// String names the hook for a person: its event, where it was written and
// what it runs, e.g. `PreToolUse hook at policy.toml:12 (command "./check.sh")`.
func (h *Hook) String() string {
	return fmt.Sprintf("%s hook at %s (%s %q)", h.Event, h.Origin(), h.Type, h.Target())
}

// Matches reports whether the hook is told of a call of the tool named
// tool, as the agent spells it. Names match as bare rules do: an alias
// matches every alias of its tool, a path tool its whole family (Read also
// covers LS, Glob and Grep), and MCP patterns match regardless of case. An
// unknown tool matches only an every-tool matcher.
func (h *Hook) Matches(tool string) bool {
	if h.match == nil {
		return true
	}
	t, ok := Canonical(tool)
	if !ok {
		return false
	}
	for _, r := range h.match {
		if r.AppliesToTool(t, tool) {
			return true
		}
	}
	return false
}

// ParseHookMatcher parses a hook's tool matcher: "" or "*" (every tool),
// or tool names separated by "|" ("Bash", "Edit|Write", "mcp__fs__*").
// Each name is a bare rule: no specifier. A nil result matches every tool.
// pos locates the matcher in its file for errors, which are [*Error]s.
func ParseHookMatcher(s string, pos Position) ([]*Rule, error) {
	if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "*" {
		return nil, nil
	}
	var out []*Rule
	for _, alt := range strings.Split(s, "|") {
		name := strings.TrimSpace(alt)
		if name == "" {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("hook matcher %q has an empty alternative: write tool names separated by |, such as \"Edit|Write\"", s)}
		}
		if name == "*" {
			return nil, nil
		}
		// Ask: conservative matching, MCP names regardless of case.
		r, err := ParseRule(name, Ask, Position{})
		if err != nil {
			msg := err.Error()
			if e, ok := err.(*Error); ok {
				msg = e.Msg
			}
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("hook matcher %q: %s", s, msg)}
		}
		if r.Kind != SpecNone {
			return nil, &Error{Pos: pos, Msg: fmt.Sprintf("hook matcher %q: %q has a specifier; a matcher names tools only (Bash, Edit|Write, mcp__fs__*)", s, name)}
		}
		out = append(out, r)
	}
	return out, nil
}

// hookDoc is the TOML schema of one [[hooks]] entry.
type hookDoc struct {
	Event   string `toml:"event"`
	Matcher string `toml:"matcher"`
	Type    string `toml:"type"`
	Command string `toml:"command"`
	URL     string `toml:"url"`
	Timeout any    `toml:"timeout"`
}

// parseHook checks one [[hooks]] entry. at locates a key of the entry.
func parseHook(doc hookDoc, layer Layer, at func(key string) Position) (*Hook, error) {
	h := &Hook{Event: HookEvent(doc.Event), Matcher: doc.Matcher, Type: doc.Type, Command: doc.Command, URL: doc.URL, Layer: layer, Pos: at("")}
	bad := func(key, format string, args ...any) error {
		return &Error{Pos: at(key), Msg: fmt.Sprintf(format, args...)}
	}
	switch h.Event {
	case HookPreToolUse, HookPermissionRequest, HookPostToolUse:
	case "":
		return nil, bad("", "hook has no event: set event = \"PreToolUse\", \"PermissionRequest\" or \"PostToolUse\"")
	default:
		return nil, bad("event", "unknown hook event %q: expected PreToolUse, PermissionRequest or PostToolUse", doc.Event)
	}
	var err error
	if h.match, err = ParseHookMatcher(doc.Matcher, at("matcher")); err != nil {
		return nil, err
	}
	if h.Type == "" {
		h.Type = HookCommand
		if doc.URL != "" && doc.Command == "" {
			h.Type = HookHTTP
		}
	}
	switch h.Type {
	case HookCommand:
		if strings.TrimSpace(doc.Command) == "" {
			return nil, bad("", "command hook has no command: set command = \"/path/to/script\"")
		}
		if doc.URL != "" {
			return nil, bad("url", "a command hook takes no url")
		}
		if strings.ContainsRune(doc.Command, 0) || !utf8.ValidString(doc.Command) {
			return nil, bad("command", "hook command holds a NUL byte or invalid UTF-8")
		}
	case HookHTTP:
		if doc.Command != "" {
			return nil, bad("command", "an http hook takes no command")
		}
		if doc.URL == "" {
			return nil, bad("", "http hook has no url: set url = \"http://127.0.0.1:8080/hook\"")
		}
		u, perr := url.Parse(doc.URL)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, bad("url", "hook url %q must be an absolute http:// or https:// URL", doc.URL)
		}
	default:
		return nil, bad("type", "unknown hook type %q: expected \"command\" or \"http\"", doc.Type)
	}
	h.Timeout = DefaultHookTimeout
	switch v := doc.Timeout.(type) {
	case nil:
	case int64:
		if v <= 0 || time.Duration(v) > MaxHookTimeout/time.Second {
			return nil, bad("timeout", "hook timeout %d must be between 1 and %d seconds", v, int(MaxHookTimeout/time.Second))
		}
		h.Timeout = time.Duration(v) * time.Second
	case string:
		d, perr := time.ParseDuration(v)
		if perr != nil || d <= 0 || d > MaxHookTimeout {
			return nil, bad("timeout", "hook timeout %q must be a duration such as \"5s\" or \"500ms\", above 0 and at most %s", v, MaxHookTimeout)
		}
		h.Timeout = d
	default:
		return nil, bad("timeout", "hook timeout must be a number of seconds or a duration string such as \"500ms\", got %v", v)
	}
	return h, nil
}

// programs returns protected-path patterns for the files a command hook
// names: its program and the scripts it hands one. A word that is an
// absolute or ~/ path protects that file. A relative path holding a "/"
// (./check.sh, hooks/check.py, ../bin/x) runs from the call's working
// directory, which the agent chooses and may write: it protects a file of
// that name under every directory (**/check.sh, **/hooks/check.py,
// **/bin/x), so that an agent cannot write the script the hook would run.
// Other words (a program found through PATH, a bare file name, words with
// $ or `) give none.
func (h *Hook) programs() []*Rule {
	if h.Type != HookCommand {
		return nil
	}
	var out []*Rule
	for _, w := range strings.Fields(h.Command) {
		w = strings.Trim(w, `"'`)
		if strings.ContainsAny(w, "$`") || w == "" {
			continue
		}
		pattern := ""
		switch {
		case strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~/"):
			pattern = globEscape(w)
		case strings.Contains(w, "/") && !strings.HasPrefix(w, "-") && !strings.Contains(w, "://"):
			// Keep what follows the last "." or ".." step: the part of
			// the path that names the file below some directory.
			parts := strings.Split(w, "/")
			i := len(parts)
			for i > 0 && parts[i-1] != "." && parts[i-1] != ".." {
				i--
			}
			var rest []string
			for _, p := range parts[i:] {
				if p != "" {
					rest = append(rest, p)
				}
			}
			if len(rest) == 0 {
				continue
			}
			pattern = "**/" + globEscape(strings.Join(rest, "/"))
		default:
			continue
		}
		r, err := ParseRule("Read("+pattern+")", Deny, h.Pos)
		if err != nil {
			continue
		}
		r.Layer = h.Layer
		out = append(out, r)
	}
	return out
}

// globEscape escapes the characters a path pattern reads as a glob.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]{}\()`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
