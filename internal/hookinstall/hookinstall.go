// Package hookinstall writes toolgate's hook entries into the settings files
// of AI agent clients (Claude Code, Gemini CLI, Codex) and removes them
// again, and translates Claude Code's permission settings into a toolgate
// policy file.
//
// Edits are made on the file's text: every other key keeps its place and
// spelling, comments in Gemini's JSONC survive, installing twice changes
// nothing, and uninstalling after an install gives back the file's bytes
// (or removes the file when install created it). A file that does not parse
// is an error naming file, line and column, and is left unchanged.
package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/hook"
)

// Client names an agent client whose settings can carry toolgate's hooks.
type Client = hook.Client

// The supported clients: those whose hooks toolgate answers.
const (
	ClaudeCode = hook.ClaudeCode
	Gemini     = hook.Gemini
	Codex      = hook.Codex
)

// Clients lists the supported clients in the order the CLI shows them.
var Clients = hook.Clients

// Scope says whose settings file is edited.
type Scope int

// The scopes.
const (
	// User edits the settings in the person's home directory
	// (~/.claude, ~/.gemini, $CODEX_HOME or ~/.codex).
	User Scope = iota
	// Project edits the settings inside the project directory.
	Project
)

// Options says what to install and where.
type Options struct {
	Client Client
	Scope  Scope
	// Home is the home directory (for the user scope).
	Home string
	// CodexHome is $CODEX_HOME; empty means Home/.codex.
	CodexHome string
	// ProjectDir is the project root (for the project scope).
	ProjectDir string
	// Command is the hook command's program, e.g. the absolute path of
	// the toolgate binary. The hook arguments ("hook claude-code") are
	// appended to it.
	Command string
}

// Change is one file an install or uninstall touched (or would have).
type Change struct {
	Path string
	// Action is "created", "updated", "removed" or "unchanged".
	Action string
}

// Result reports the files touched and what the person must still do.
type Result struct {
	Changes []Change
	// Notes are things the person must do or know, one sentence each.
	Notes []string
}

// hookEvent is one event key and the timeout its entry carries.
type hookEvent struct {
	name    string
	timeout int
}

type clientSpec struct {
	settings string // file name inside the settings directory
	matcher  string
	events   []hookEvent   // the before-tool event, then the after-tool one
	unit     time.Duration // of the timeouts
	strict   bool          // strict JSON (no comments)
}

var specs = map[Client]clientSpec{
	// Claude Code's timeouts are in seconds; a PreToolUse hook may wait
	// for a person to answer, so it gets ten minutes, and a hook that
	// fails blocks the call.
	ClaudeCode: {settings: "settings.json", matcher: "*", strict: true, unit: time.Second,
		events: []hookEvent{{"PreToolUse", 600}, {"PostToolUse", 60}}},
	// Gemini CLI's timeouts are in milliseconds.
	Gemini: {settings: "settings.json", matcher: ".*", unit: time.Millisecond,
		events: []hookEvent{{"BeforeTool", 600000}, {"AfterTool", 60000}}},
	Codex: {settings: "hooks.json", matcher: ".*", strict: true, unit: time.Second,
		events: []hookEvent{{"PreToolUse", 600}, {"PostToolUse", 60}}},
}

// Budget returns how long the hook entry install writes for client's
// phase lets toolgate's hook run before it is stopped: the guard's
// deadline where the entry has a guard, else the entry's timeout; 0 for
// a client it does not know. (An entry whose timeout was changed by hand
// is not seen here.)
func Budget(c Client, p hook.Phase) time.Duration {
	s, ok := specs[c]
	if !ok || p < 0 || int(p) >= len(s.events) {
		return 0
	}
	ev := s.events[p]
	if g := guardFor(c, ev.name); g != nil {
		return time.Duration(g.seconds(ev.timeout)) * time.Second
	}
	return time.Duration(ev.timeout) * s.unit
}

// hookCmd is one entry of an event's hooks list. Field order is the order
// written.
type hookCmd struct {
	Type      string `json:"type"`
	Command   string `json:"command"`
	Timeout   int    `json:"timeout"`
	OnFailure string `json:"onFailure,omitempty"`
}

type matcherEntry struct {
	Matcher string    `json:"matcher"`
	Hooks   []hookCmd `json:"hooks"`
}

// SettingsPath returns the settings file the hooks go into.
func SettingsPath(o Options) (string, error) {
	dir, err := settingsDir(o)
	if err != nil {
		return "", err
	}
	s, ok := specs[o.Client]
	if !ok {
		return "", fmt.Errorf("unknown client %q: expected claude-code, gemini or codex", o.Client)
	}
	return filepath.Join(dir, s.settings), nil
}

func settingsDir(o Options) (string, error) {
	sub := map[Client]string{ClaudeCode: ".claude", Gemini: ".gemini", Codex: ".codex"}[o.Client]
	if sub == "" {
		return "", fmt.Errorf("unknown client %q: expected claude-code, gemini or codex", o.Client)
	}
	if o.Scope == Project {
		if o.ProjectDir == "" {
			return "", errors.New("no project directory")
		}
		return filepath.Join(o.ProjectDir, sub), nil
	}
	if o.Client == Codex && o.CodexHome != "" {
		return o.CodexHome, nil
	}
	if o.Home == "" {
		return "", errors.New("no home directory: set HOME")
	}
	return filepath.Join(o.Home, sub), nil
}

// HookCommand returns the command line written into the settings.
func HookCommand(o Options) string {
	return shellQuote(o.Command) + " hook " + string(o.Client)
}

// shellQuote quotes a program path for the shell the clients run hook
// commands with, when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@%=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func entryFor(o Options, ev hookEvent) matcherEntry {
	s := specs[o.Client]
	h := hookCmd{Type: "command", Command: HookCommand(o), Timeout: ev.timeout}
	if g := guardFor(o.Client, ev.name); g != nil {
		h.Command = g.command(o.Command, ev.timeout)
	}
	if o.Client == ClaudeCode && ev.name == "PreToolUse" {
		h.OnFailure = "block"
	}
	return matcherEntry{Matcher: s.matcher, Hooks: []hookCmd{h}}
}

// Install writes toolgate's hook entries into the client's settings file
// (and, for Codex, turns on [features] hooks in config.toml). Entries
// already present are left alone, so a second install changes nothing.
func Install(o Options) (*Result, error) {
	if o.Command == "" {
		return nil, errors.New("no hook command")
	}
	path, err := SettingsPath(o)
	if err != nil {
		return nil, err
	}
	s := specs[o.Client]
	res := &Result{}
	src, mode, exists, err := readFile(path)
	if err != nil {
		return nil, err
	}
	out := src
	if !exists || len(bytes.TrimSpace(src)) == 0 {
		out = []byte("{}\n")
	}
	for _, ev := range s.events {
		out, err = installEvent(path, out, s.strict, ev.name, entryFor(o, ev), o)
		if err != nil {
			return nil, err
		}
	}
	if err := checkResult(path, out, s.strict); err != nil {
		return nil, err
	}
	if o.Client == Codex {
		// Check config.toml before writing anything.
		if _, _, _, err := planCodexHooks(filepath.Join(filepath.Dir(path), "config.toml")); err != nil {
			return nil, err
		}
	}
	ch, err := writeIfChanged(path, src, out, exists, mode)
	if err != nil {
		return nil, err
	}
	res.Changes = append(res.Changes, ch)
	if o.Client == Codex {
		cfg := filepath.Join(filepath.Dir(path), "config.toml")
		ch, err := enableCodexHooks(cfg)
		if err != nil {
			return nil, err
		}
		res.Changes = append(res.Changes, ch)
	}
	res.Notes = append(otherCommands(path, out, s.strict, o), installNotes(o, path)...)
	return res, nil
}

// otherCommands reports toolgate hooks that were already there and run a
// different command from the one asked for.
func otherCommands(path string, src []byte, strict bool, o Options) []string {
	var notes []string
	seen := map[string]bool{}
	for _, ev := range specs[o.Client].events {
		d, err := locate(path, src, strict, ev.name)
		if err != nil || d.arr == nil {
			continue
		}
		want := entryFor(o, ev).Hooks[0].Command
		for _, e := range d.arr.elems {
			for _, c := range toolgateCommands(e, o) {
				if c != want && !seen[c] {
					seen[c] = true
					notes = append(notes, fmt.Sprintf("%s already runs %q; to run %q instead, uninstall and install again", path, c, want))
				}
			}
		}
	}
	return notes
}

func installNotes(o Options, path string) []string {
	switch o.Client {
	case ClaudeCode:
		n := []string{"Restart Claude Code (or open /hooks) so it reads the new hooks; check them with /hooks."}
		if o.Scope == Project {
			n = append(n, "Commit "+filepath.Join(".claude", "settings.json")+" only if everyone working on the project has toolgate at "+o.Command+"; otherwise use --user.")
		}
		return n
	case Gemini:
		return []string{"Restart Gemini CLI so it reads the new hooks; /hooks lists them."}
	case Codex:
		return []string{
			"Codex runs a hook only after you review and trust it: start codex and approve the toolgate hook when asked (until then Codex skips it silently, and calls are not gated).",
			"Restart Codex so it reads " + path + ".",
		}
	}
	return nil
}

// Uninstall removes the hook entries Install wrote. Entries another tool
// wrote, and toolgate hooks sharing an entry with other hooks, are kept
// (the latter reported in Notes).
func Uninstall(o Options) (*Result, error) {
	path, err := SettingsPath(o)
	if err != nil {
		return nil, err
	}
	s := specs[o.Client]
	res := &Result{}
	src, mode, exists, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		res.Changes = append(res.Changes, Change{Path: path, Action: "unchanged"})
		return res, nil
	}
	out := src
	// In the reverse order of Install, so each step undoes one of its.
	for i := len(s.events) - 1; i >= 0; i-- {
		ev := s.events[i]
		var notes []string
		out, notes, err = uninstallEvent(path, out, s.strict, ev.name, o)
		if err != nil {
			return nil, err
		}
		res.Notes = append(res.Notes, notes...)
	}
	remove := false
	if !bytes.Equal(out, src) {
		if err := checkResult(path, out, s.strict); err != nil {
			return nil, err
		}
		// What install leaves of a file it created.
		remove = string(out) == "{}\n"
	}
	var ch Change
	if remove {
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		ch = Change{Path: path, Action: "removed"}
	} else if ch, err = writeIfChanged(path, src, out, true, mode); err != nil {
		return nil, err
	}
	res.Changes = append(res.Changes, ch)
	if o.Client == Codex {
		left, err := hasAnyHooks(path)
		if err != nil {
			return nil, err
		}
		if !left {
			cfg := filepath.Join(filepath.Dir(path), "config.toml")
			ch, err := disableCodexHooks(cfg)
			if err != nil {
				return nil, err
			}
			res.Changes = append(res.Changes, ch)
		}
	}
	return res, nil
}

// hasAnyHooks reports whether a Codex hooks.json still holds any hook.
func hasAnyHooks(path string) (bool, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	root, err := parseJSON(path, src, false)
	if err != nil {
		return false, err
	}
	if root.kind != '{' {
		return true, nil
	}
	h, _, err := root.get("hooks")
	if err != nil || h == nil {
		return err != nil, nil
	}
	return h.kind != '{' || len(h.members) > 0, nil
}

func readFile(path string) (src []byte, mode os.FileMode, exists bool, err error) {
	src, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, false, err
	}
	return src, fi.Mode().Perm(), true, nil
}

// checkResult parses the edited text again, so a bug in the editor cannot
// write a file the client would reject.
func checkResult(path string, out []byte, strict bool) error {
	if _, err := parseJSON(path, out, !strict); err != nil {
		return fmt.Errorf("internal error: the edited %s would not parse (%v); nothing was written", path, err)
	}
	if strict && !json.Valid(out) {
		return fmt.Errorf("internal error: the edited %s is not valid JSON; nothing was written", path)
	}
	return nil
}

func writeIfChanged(path string, old, out []byte, exists bool, mode os.FileMode) (Change, error) {
	if exists && bytes.Equal(old, out) {
		return Change{Path: path, Action: "unchanged"}, nil
	}
	action := "updated"
	if !exists {
		action = "created"
		mode = 0o644
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return Change{}, err
		}
	}
	if err := writeAtomic(path, out, mode); err != nil {
		return Change{}, err
	}
	return Change{Path: path, Action: action}, nil
}

// writeAtomic replaces path's content through a temporary file in the same
// directory and a rename, keeping mode. A symbolic link is followed: its
// target is replaced, the link kept.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func isSpace(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
