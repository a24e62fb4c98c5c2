package policy

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParseHooks: [[hooks]] entries parse with their defaults, and every
// bad entry is an error at the file and line of the key (or the entry).
func TestParseHooks(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		wantErr string // "" for no error; else "file:line: substring"
		check   func(t *testing.T, h *Hook)
	}{
		{name: "command defaults", src: "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"/bin/true\"\n", check: func(t *testing.T, h *Hook) {
			if h.Type != HookCommand || h.Timeout != DefaultHookTimeout || h.Matcher != "" || h.Origin() != "f.toml:1" {
				t.Fatalf("hook = %+v", h)
			}
			if !h.Matches("Bash") || !h.Matches("mcp__x__y") || !h.Matches("NoSuchTool") {
				t.Fatal("an empty matcher must match every tool")
			}
		}},
		{name: "http with timeout", src: "[[hooks]]\nevent = \"PermissionRequest\"\nurl = \"http://127.0.0.1:9/h\"\ntimeout = \"250ms\"\n", check: func(t *testing.T, h *Hook) {
			if h.Type != HookHTTP || h.Timeout != 250*time.Millisecond {
				t.Fatalf("hook = %+v", h)
			}
		}},
		{name: "seconds timeout", src: "[[hooks]]\nevent = \"PostToolUse\"\ncommand = \"x\"\ntimeout = 5\n", check: func(t *testing.T, h *Hook) {
			if h.Timeout != 5*time.Second {
				t.Fatalf("timeout = %s", h.Timeout)
			}
		}},
		{name: "matcher", src: "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Edit|Write|mcp__fs__*\"\ncommand = \"x\"\n", check: func(t *testing.T, h *Hook) {
			for tool, want := range map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "apply_patch": true, "mcp__fs__read": true, "mcp__FS__read": true,
				"Bash": false, "Read": false, "mcp__git__log": false, "Unknown": false} {
				if got := h.Matches(tool); got != want {
					t.Errorf("Matches(%q) = %v, want %v", tool, got, want)
				}
			}
		}},
		{name: "star matcher", src: "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"*\"\ncommand = \"x\"\n", check: func(t *testing.T, h *Hook) {
			if !h.Matches("Read") {
				t.Fatal("* must match Read")
			}
		}},
		{name: "second entry's line", src: "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"x\"\n\n[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"y\"\n", check: nil},
		{name: "unknown event", src: "[[hooks]]\nevent = \"BeforeTool\"\ncommand = \"x\"\n", wantErr: "f.toml:2:1: unknown hook event \"BeforeTool\""},
		{name: "no event", src: "[[hooks]]\ncommand = \"x\"\n", wantErr: "f.toml:1:1: hook has no event"},
		{name: "bad matcher", src: "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash|Nope\"\ncommand = \"x\"\n", wantErr: "f.toml:3:1: hook matcher \"Bash|Nope\": unknown tool \"Nope\""},
		{name: "matcher with specifier", src: "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash(ls)\"\ncommand = \"x\"\n", wantErr: "f.toml:3:1: hook matcher \"Bash(ls)\": \"Bash(ls)\" has a specifier"},
		{name: "empty alternative", src: "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash||Read\"\ncommand = \"x\"\n", wantErr: "f.toml:3:1: hook matcher \"Bash||Read\" has an empty alternative"},
		{name: "missing command", src: "mode = \"default\"\n\n[[hooks]]\nevent = \"PreToolUse\"\n", wantErr: "f.toml:3:1: command hook has no command"},
		{name: "http without url", src: "[[hooks]]\nevent = \"PreToolUse\"\ntype = \"http\"\n", wantErr: "f.toml:1:1: http hook has no url"},
		{name: "bad url", src: "[[hooks]]\nevent = \"PreToolUse\"\nurl = \"file:///etc/passwd\"\n", wantErr: "f.toml:3:1: hook url \"file:///etc/passwd\" must be"},
		{name: "unknown type", src: "[[hooks]]\nevent = \"PreToolUse\"\ntype = \"prompt\"\ncommand = \"x\"\n", wantErr: "f.toml:3:1: unknown hook type \"prompt\""},
		{name: "bad timeout", src: "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"x\"\ntimeout = \"soon\"\n", wantErr: "f.toml:4:1: hook timeout \"soon\""},
		{name: "zero timeout", src: "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"x\"\ntimeout = 0\n", wantErr: "f.toml:4:1: hook timeout 0"},
		{name: "huge timeout", src: "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"x\"\ntimeout = \"11m\"\n", wantErr: "f.toml:4:1: hook timeout \"11m\""},
		{name: "unknown key", src: "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"x\"\nargs = [\"y\"]\n", wantErr: "f.toml:4:1: unknown key \"args\" in [[hooks]]"},
		{name: "command and url", src: "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"x\"\nurl = \"http://a/\"\n", wantErr: "f.toml:4:1: a command hook takes no url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFile("f.toml", []byte(tt.src), LayerUser)
			if tt.wantErr != "" {
				var pe *Error
				if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tt.wantErr)
				}
				if f != nil {
					t.Fatal("a file with a bad hook must not be returned")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Hooks) == 0 {
				t.Fatal("no hooks parsed")
			}
			if tt.check != nil {
				tt.check(t, f.Hooks[0])
			}
			if tt.name == "second entry's line" && f.Hooks[1].Origin() != "f.toml:5" {
				t.Fatalf("second hook at %s, want f.toml:5", f.Hooks[1].Origin())
			}
		})
	}
}

// TestHooksTrust: an untrusted project's hooks (and a shipped local
// file's) never reach the Set, with a note naming the file, line and
// command; the user's and a trusted project's do, highest layer first; a
// managed allow-only lock keeps lower hooks from allowing.
func TestHooksTrust(t *testing.T) {
	const hook = "[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"./%s.sh\"\n"
	parse := func(t *testing.T, name string, layer Layer, extra string) *File {
		t.Helper()
		src := strings.ReplaceAll(hook, "%s", name) + extra
		f, err := ParseFile(name+".toml", []byte(src), layer)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tests := []struct {
		name      string
		trusted   bool
		managed   string // extra for the managed file; "" for none
		want      []string
		wantNote  string
		wantNoAll bool
	}{
		{name: "untrusted project", want: []string{"./user.sh"}, wantNote: `PreToolUse hook at project.toml:1 (command "./project.sh") ignored: hooks run programs`},
		{name: "trusted project", trusted: true, want: []string{"./project.sh", "./user.sh"}},
		{name: "managed first", trusted: true, managed: "\n", want: []string{"./managed.sh", "./project.sh", "./user.sh"}},
		{name: "managed rules only", trusted: true, managed: "[managed]\nallow_managed_rules_only = true\n", want: []string{"./managed.sh", "./project.sh", "./user.sh"}, wantNoAll: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := []*File{parse(t, "user", LayerUser, ""), parse(t, "project", LayerProject, "")}
			if tt.managed != "" {
				files = append(files, parse(t, "managed", LayerManaged, tt.managed))
			}
			if !tt.trusted {
				files[1].Distrust()
			}
			s, err := Merge(files...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range s.Hooks {
				got = append(got, h.Command)
				if noAllow := h.NoAllow != ""; noAllow != (tt.wantNoAll && h.Layer != LayerManaged) {
					t.Errorf("hook %s NoAllow = %q", h, h.NoAllow)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("hooks %v, want %v", got, tt.want)
			}
			notes := strings.Join(s.Notes, "\n")
			if tt.wantNote != "" && !strings.Contains(notes, tt.wantNote) || tt.wantNote == "" && strings.Contains(notes, "hook") {
				t.Fatalf("notes %q, want %q", notes, tt.wantNote)
			}
			if tt.wantNote != "" {
				// lint shows the note too.
				found := false
				for _, f := range Lint(s) {
					found = found || strings.Contains(f.Message, tt.wantNote)
				}
				if !found {
					t.Fatal("lint does not report the ignored hook")
				}
			}
		})
	}
}

func FuzzParseHooks(f *testing.F) {
	for _, s := range []string{
		"[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash|mcp__a__*\"\ncommand = \"x\"\ntimeout = 3\n",
		"[[hooks]]\nevent = \"PermissionRequest\"\nurl = \"http://127.0.0.1:1/\"\ntimeout = \"1ms\"\n",
		"[[hooks]]\nevent = \"PostToolUse\"\ntype = \"command\"\ncommand = \"y\"\n[[hooks]]\nevent = \"x\"\n",
		"hooks = [{event = \"PreToolUse\", command = \"z\", matcher = \"*\"}]\n",
		"[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash(\"\ncommand = \"x\"\ntimeout = 1.5\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		file, err := ParseFile("f.toml", []byte(s), LayerUser)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Pos.File != "f.toml" {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			return
		}
		for _, h := range file.Hooks {
			if h.Timeout <= 0 || h.Timeout > MaxHookTimeout {
				t.Fatalf("hook %s has timeout %s", h, h.Timeout)
			}
			if h.Type == HookCommand && strings.TrimSpace(h.Command) == "" || h.Type == HookHTTP && h.URL == "" {
				t.Fatalf("hook %s runs nothing", h)
			}
			switch h.Event {
			case HookPreToolUse, HookPermissionRequest, HookPostToolUse:
			default:
				t.Fatalf("hook with event %q", h.Event)
			}
			h.Matches("Bash")
			h.Matches("mcp__a__b")
			_ = h.String()
			for _, r := range h.programs() {
				if r.Kind != SpecPath {
					t.Fatalf("hook %s protects %s, not a path", h, r.Text)
				}
			}
		}
		file.Distrust()
		if len(file.Hooks) != 0 {
			t.Fatal("Distrust left hooks")
		}
	})
}

// TestHooksShippedLocal: a local policy file that may have come with the
// project (here: the project is no git checkout of its own) cannot define
// hooks either, unless the project is trusted.
func TestHooksShippedLocal(t *testing.T) {
	root := t.TempDir()
	for _, trusted := range []bool{false, true} {
		local, err := ParseFile(root+"/"+LocalFile, []byte("[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"./run-me.sh\"\n"), LayerLocal)
		if err != nil {
			t.Fatal(err)
		}
		userSrc := ""
		if trusted {
			userSrc = "trusted_projects = [\"" + root + "\"]\n"
		}
		user, err := ParseFile("user.toml", []byte(userSrc), LayerUser)
		if err != nil {
			t.Fatal(err)
		}
		ApplyTrust([]*File{user, local}, root, "/home/u")
		s, err := Merge(user, local)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(s.Hooks) == 1; got != trusted {
			t.Fatalf("trusted=%v: hooks %v, notes %q", trusted, s.Hooks, s.Notes)
		}
		if !trusted && !strings.Contains(strings.Join(s.Notes, "\n"), "may have come with the project") {
			t.Fatalf("notes %q do not say why", s.Notes)
		}
	}
}
