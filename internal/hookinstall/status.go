package hookinstall

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Status is what a client's settings file says about toolgate's hooks,
// as [Installed] reads it.
type Status struct {
	// Path is the settings file read.
	Path string
	// Exists reports whether the file exists.
	Exists bool
	// Commands maps each hook event install writes (PreToolUse,
	// PostToolUse; BeforeTool, AfterTool for Gemini CLI) to the toolgate
	// hook commands found under it, in file order; an event with none
	// is absent.
	Commands map[string][]string
	// Missing lists the events install writes that hold no toolgate hook,
	// in install's order.
	Missing []string
	// CodexConfig is Codex's config.toml beside the hooks file, and
	// CodexHooks whether it sets [features] hooks = true, without which
	// Codex runs no hook; both are empty for the other clients.
	CodexConfig string
	CodexHooks  bool
}

// Installed reports whether all of toolgate's hooks for o's client are in
// the settings file (and, for Codex, hooks are turned on).
func (s *Status) Installed() bool {
	return len(s.Missing) == 0 && (s.CodexConfig == "" || s.CodexHooks)
}

// Installed reads the settings file o names and reports which of
// toolgate's hook entries it holds: the entries of any binary named
// toolgate count, and those running o.Command when it is set; in a
// project's settings only those [runsThisToolgate] accepts. It changes
// nothing. A file that does not parse is an error naming file, line and
// column.
func Installed(o Options) (*Status, error) {
	path, err := SettingsPath(o)
	if err != nil {
		return nil, err
	}
	s := specs[o.Client]
	st := &Status{Path: path, Commands: map[string][]string{}}
	src, _, exists, err := readFile(path)
	if err != nil {
		return nil, err
	}
	st.Exists = exists
	for _, ev := range s.events {
		if !exists || isSpace(src) {
			st.Missing = append(st.Missing, ev.name)
			continue
		}
		d, err := locate(path, src, s.strict, ev.name)
		if err != nil {
			return nil, err
		}
		if d.arr != nil {
			for _, e := range d.arr.elems {
				for _, c := range toolgateCommands(e, o) {
					// A repository writes its project's settings, so
					// there only this toolgate is toolgate.
					if o.Scope != Project || runsThisToolgate(c, o) {
						st.Commands[ev.name] = append(st.Commands[ev.name], c)
					}
				}
			}
		}
		if len(st.Commands[ev.name]) == 0 {
			delete(st.Commands, ev.name)
			st.Missing = append(st.Missing, ev.name)
		}
	}
	if o.Client == Codex {
		st.CodexConfig = filepath.Join(filepath.Dir(path), "config.toml")
		cfg, _, ok, err := readFile(st.CodexConfig)
		if err != nil {
			return nil, err
		}
		if ok {
			v, _, err := codexHooksSetting(st.CodexConfig, cfg)
			if err != nil {
				return nil, err
			}
			st.CodexHooks = v == true
		}
	}
	return st, nil
}

// toolgateCommands returns the toolgate hook commands for o's client in a
// matcher entry.
func toolgateCommands(e *node, o Options) []string {
	hooks, _ := entryHooks(e)
	var out []string
	for _, h := range hooks {
		if c, ok := commandOf(h); ok && isToolgateCommand(c, o) {
			out = append(out, c)
		}
	}
	return out
}

// entryHooks returns the hooks of a matcher entry: none when it is not an
// object with a hooks array, an error when it has the key twice.
func entryHooks(e *node) ([]*node, error) {
	if e.kind != '{' {
		return nil, nil
	}
	hs, _, err := e.get("hooks")
	if err != nil || hs == nil || hs.kind != '[' {
		return nil, err
	}
	return hs.elems, nil
}

// commandOf returns a hook's command, if it is an object with one string
// command.
func commandOf(h *node) (string, bool) {
	if h.kind != '{' {
		return "", false
	}
	c, _, err := h.get("command")
	if err != nil || c == nil || c.kind != '"' {
		return "", false
	}
	return c.str, true
}

// String summarizes the status in a few words.
func (s *Status) String() string {
	switch {
	case !s.Exists:
		return fmt.Sprintf("%s does not exist", s.Path)
	case s.Installed():
		return fmt.Sprintf("installed in %s", s.Path)
	case len(s.Commands) == 0:
		return fmt.Sprintf("not in %s", s.Path)
	case len(s.Missing) > 0:
		return fmt.Sprintf("%s lacks toolgate's %v hook", s.Path, s.Missing)
	}
	return fmt.Sprintf("%s does not set [features] hooks = true", s.CodexConfig)
}

// Program returns the program a hook command of install's form runs:
// the toolgate a guard runs, or PROGRAM of `PROGRAM hook CLIENT`, plain or
// single-quoted as install quotes it; false for any other command.
func Program(cmd string) (string, bool) {
	if _, prog, _, ok := parseGuarded(cmd); ok {
		return prog, true
	}
	i := strings.LastIndex(cmd, " hook ")
	if i < 0 {
		return "", false
	}
	return unquoteProgram(cmd[:i])
}

// OtherHook is a hook in a client's settings that is not toolgate's and
// runs where toolgate's does.
type OtherHook struct {
	// Path is the settings file, Event the hook event it is under.
	Path, Event string
	// Command is the hook's command, or its type when it has none.
	Command string
}

// otherHookEvents are the events whose other hooks can undo toolgate's
// answer: they run with it before the tool, and the client takes a
// changed input or an allow from them (Claude Code's PermissionRequest
// hooks answer the question toolgate's ask puts to the person).
var otherHookEvents = map[Client][]string{
	ClaudeCode: {"PreToolUse", "PermissionRequest"},
	Gemini:     {"BeforeTool"},
	Codex:      {"PreToolUse"},
}

// OtherHooks returns the hooks of o's settings (for Claude Code also its
// settings.local.json beside them) that are not toolgate's and run before
// the tool: next to toolgate's, they can hand the client another input
// than the one toolgate allowed (and wrapped in its sandbox), or allow
// what it asked a person about. A repository that ships such hooks in its
// project settings can so take its calls out of toolgate's hands. A file
// that does not parse is an error naming file, line and column.
func OtherHooks(o Options) ([]OtherHook, error) {
	path, err := SettingsPath(o)
	if err != nil {
		return nil, err
	}
	s := specs[o.Client]
	paths := []string{path}
	if o.Client == ClaudeCode {
		paths = append(paths, filepath.Join(filepath.Dir(path), "settings.local.json"))
	}
	var out []OtherHook
	for _, p := range paths {
		src, _, exists, err := readFile(p)
		if err != nil {
			return nil, err
		}
		if !exists || isSpace(src) {
			continue
		}
		for _, event := range otherHookEvents[o.Client] {
			d, err := locate(p, src, s.strict, event)
			if err != nil {
				return nil, err
			}
			if d.arr == nil {
				continue
			}
			for _, e := range d.arr.elems {
				for _, cmd := range otherCommandsIn(e, o) {
					out = append(out, OtherHook{Path: p, Event: event, Command: cmd})
				}
			}
		}
	}
	return out, nil
}

// otherCommandsIn returns the commands of a matcher entry's hooks that are
// not toolgate's ([runsThisToolgate]; what a hook is for one without a
// command).
func otherCommandsIn(e *node, o Options) []string {
	if e.kind != '{' {
		return []string{"an entry that is not an object"}
	}
	hooks, err := entryHooks(e)
	if err != nil {
		return []string{"an entry whose hooks cannot be read: " + err.Error()}
	}
	var out []string
	for _, h := range hooks {
		c, ok := commandOf(h)
		switch {
		case h.kind != '{':
			out = append(out, "a hook that is not an object")
		case ok:
			if !runsThisToolgate(c, o) {
				out = append(out, c)
			}
		default:
			what := "a hook without a command"
			if typ, _, _ := h.get("type"); typ != nil && typ.kind == '"' {
				what = "a hook of type " + typ.str
			}
			out = append(out, what)
		}
	}
	return out
}

// runsThisToolgate reports whether a hook command in a project's settings
// is toolgate's hook for o's client run by o.Command (or the same file by
// another path). A repository chooses its settings' commands and the
// environment its client gives hooks (PATH too), and can ship a program
// of its own named toolgate (./bin/toolgate, "$CLAUDE_PROJECT_DIR"/toolgate,
// /proc/self/cwd/toolgate, or toolgate found on a PATH it sets), so the
// name alone, which install and uninstall go by, does not make a hook
// toolgate's here.
func runsThisToolgate(cmd string, o Options) bool {
	if !isToolgateCommand(cmd, o) {
		return false
	}
	prog, ok := Program(cmd)
	if !ok {
		return false
	}
	if prog == o.Command {
		return true
	}
	if !filepath.IsAbs(prog) || o.Command == "" {
		return false
	}
	a, errA := os.Stat(prog)
	b, errB := os.Stat(o.Command)
	return errA == nil && errB == nil && os.SameFile(a, b)
}
