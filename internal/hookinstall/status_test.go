package hookinstall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInstalled reads back what Install and Uninstall wrote, and settings
// written by hand.
func TestInstalled(t *testing.T) {
	for _, c := range Clients {
		t.Run(string(c), func(t *testing.T) {
			o, p := opts(t, c)
			st, err := Installed(o)
			if err != nil {
				t.Fatal(err)
			}
			if st.Exists || st.Installed() || st.Path != p || len(st.Missing) != len(specs[c].events) {
				t.Fatalf("before install: %+v", st)
			}
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			st, err = Installed(o)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Exists || !st.Installed() || len(st.Missing) != 0 {
				t.Fatalf("after install: %+v", st)
			}
			for _, ev := range specs[c].events {
				if got := st.Commands[ev.name]; !slices.Equal(got, []string{entryFor(o, ev).Hooks[0].Command}) {
					t.Errorf("%s: commands %q", ev.name, got)
				}
			}
			// A program not named toolgate is toolgate's only when named.
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			other := o
			other.Command = "/elsewhere/tg"
			if _, err := Install(other); err != nil {
				t.Fatal(err)
			}
			unnamed := o
			unnamed.Command = ""
			if st, err = Installed(unnamed); err != nil || len(st.Commands) != 0 {
				t.Fatalf("a hook running /elsewhere/tg counted as toolgate's: %+v, %v", st, err)
			}
			if st, err = Installed(other); err != nil || !st.Installed() {
				t.Fatalf("the hook of the named command was not found: %+v, %v", st, err)
			}
		})
	}
}

func TestInstalledPartialAndBroken(t *testing.T) {
	o, p := opts(t, ClaudeCode)
	write(t, p, `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/bin/toolgate hook claude-code"}]}]}}`, 0o644)
	st, err := Installed(o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Installed() || !slices.Equal(st.Missing, []string{"PostToolUse"}) || !strings.Contains(st.String(), "PostToolUse") {
		t.Fatalf("half an install: %+v (%s)", st, st)
	}
	write(t, p, "{\n  \"hooks\": [,]\n}\n", 0o644)
	if _, err := Installed(o); err == nil || !strings.Contains(err.Error(), p+":2:") {
		t.Fatalf("a broken file: %v", err)
	}

	// Codex's hooks.json without [features] hooks = true runs nothing.
	co, cp := opts(t, Codex)
	if _, err := Install(co); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(filepath.Dir(cp), "config.toml"), "[features]\nhooks = false\n", 0o600)
	st, err = Installed(co)
	if err != nil {
		t.Fatal(err)
	}
	if st.Installed() || st.CodexHooks || len(st.Missing) != 0 || !strings.Contains(st.String(), "hooks = true") {
		t.Fatalf("codex with hooks off: %+v (%s)", st, st)
	}
}

// TestProgram: the program comes out of each command install writes,
// guarded or plain, and out of no other command.
func TestProgram(t *testing.T) {
	for _, c := range []Client{ClaudeCode, Gemini, Codex} {
		for _, prog := range []string{"/opt/tool gate/bin/toolgate", "/opt/it's/toolgate", "/a hook b/toolgate", "toolgate"} {
			o := Options{Client: c, Command: prog}
			for _, ev := range specs[c].events {
				if got, ok := Program(entryFor(o, ev).Hooks[0].Command); got != prog || !ok {
					t.Errorf("%s %s: %q %v, want %q", c, ev.name, got, ok, prog)
				}
			}
		}
	}
	for _, cmd := range []string{"'/unterminated/toolgate hook codex", "$HOME/toolgate hook codex", "toolgate", "a b hook codex", ""} {
		if got, ok := Program(cmd); ok {
			t.Errorf("Program(%q) = %q, want none", cmd, got)
		}
	}
}

// OtherHooks names the project's own before-tool hooks and none of
// toolgate's, guarded or plain.
func TestOtherHooks(t *testing.T) {
	for _, c := range []Client{Gemini, Codex, ClaudeCode} {
		t.Run(string(c), func(t *testing.T) {
			o := Options{Client: c, Scope: Project, ProjectDir: t.TempDir(), Command: bin}
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			if others, err := OtherHooks(o); err != nil || len(others) != 0 {
				t.Fatalf("toolgate's own hooks read as others: %v %v", others, err)
			}
			p, _ := SettingsPath(o)
			event := specs[c].events[0].name
			src := strings.Replace(read(t, p), `"hooks": [`, `"hooks": [{"type": "command", "command": "./mine.sh"}, `, 1)
			write(t, p, src, 0o644)
			others, err := OtherHooks(o)
			if err != nil || len(others) != 1 || others[0] != (OtherHook{Path: p, Event: event, Command: "./mine.sh"}) {
				t.Errorf("OtherHooks = %v, %v; want ./mine.sh under %s", others, err, event)
			}
			// An entry with its hooks twice (the client reads the last) is
			// named, not skipped.
			write(t, p, `{"hooks": {"`+event+`": [{"matcher": "*", "hooks": [], "hooks": [{"type": "command", "command": "./mine.sh"}]}]}}`, 0o644)
			others, err = OtherHooks(o)
			if err != nil || len(others) != 1 || !strings.Contains(others[0].Command, `key "hooks" appears twice`) {
				t.Errorf("OtherHooks = %v, %v; want the entry with hooks twice", others, err)
			}
		})
	}
}

// A hook in a project's settings is toolgate's only when it runs the
// toolgate asked about (or one linked to it): a program of the
// repository's own that is named toolgate, or one found on PATH, which the
// project's settings can set for hooks, is another hook,
// and does not make toolgate installed there.
func TestOtherHooksProgramNamedToolgate(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "bin", "toolgate")
	write(t, self, "#!/bin/sh\n", 0o755)
	link := filepath.Join(dir, "link", "toolgate")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	codex := guardFor(Codex, "PreToolUse")
	for _, tt := range []struct {
		cmd   string
		other bool
	}{
		{self + " hook codex", false},
		{link + " hook codex", false},
		{codex.command(self, 600), false},
		{"toolgate hook codex", true},
		{codex.command("toolgate", 600), true},
		{"./bin/toolgate hook codex", true},
		{"bin/toolgate hook codex", true},
		{`"$CLAUDE_PROJECT_DIR"/toolgate hook codex`, true},
		{"/proc/self/cwd/toolgate hook codex", true},
		{"/opt/elsewhere/toolgate hook codex", true},
		{codex.command("./bin/toolgate", 600), true},
		{codex.command("/proc/self/cwd/toolgate", 600), true},
	} {
		o := Options{Client: Codex, Scope: Project, ProjectDir: t.TempDir(), Command: self}
		p, _ := SettingsPath(o)
		hooks, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
			map[string]any{"matcher": ".*", "hooks": []any{map[string]any{"type": "command", "command": tt.cmd}}},
		}}})
		write(t, p, string(hooks), 0o644)
		others, err := OtherHooks(o)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(others) == 1 && others[0].Command == tt.cmd; got != tt.other || (!tt.other && len(others) != 0) {
			t.Errorf("%q: OtherHooks = %v, want it listed: %v", tt.cmd, others, tt.other)
		}
		st, err := Installed(o)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(st.Commands["PreToolUse"], tt.cmd); got == tt.other {
			t.Errorf("%q: Installed reads %v as toolgate's hooks, want it among them: %v", tt.cmd, st.Commands, !tt.other)
		}
	}
}
