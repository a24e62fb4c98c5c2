package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const bin = "/opt/tg/bin/toolgate"

func opts(t *testing.T, c Client) (Options, string) {
	t.Helper()
	home := t.TempDir()
	o := Options{Client: c, Scope: User, Home: home, Command: bin}
	p, err := SettingsPath(o)
	if err != nil {
		t.Fatal(err)
	}
	return o, p
}

func write(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// settingsCases are settings files install must edit without disturbing.
var settingsCases = []struct {
	name   string
	client Client
	src    string // "" means no file
}{
	{"claude no file", ClaudeCode, ""},
	{"claude empty object", ClaudeCode, "{}\n"}, // removed again: the same as no file
	{"claude unusual key order", ClaudeCode, `{
    "model": "opus",
    "permissions": {"deny": ["Read(.env)"], "allow": ["Bash(npm test)"]},
    "env": {"Z": "1", "A": "2"},
    "apiKeyHelper": "/bin/key"
}
`},
	{"claude other hooks kept", ClaudeCode, `{
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "/usr/local/bin/lint-bash"}
        ]
      }
    ]
  },
  "zeta": 1,
  "alpha": [1, 2, 3]
}
`},
	{"claude tabs no trailing newline", ClaudeCode, "{\n\t\"b\": true,\n\t\"hooks\": {},\n\t\"a\": null\n}"},
	{"claude one line", ClaudeCode, `{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"x"}]}],"PostToolUse":[],"Stop":[]},"k":"\u00e9\/"}`},
	{"gemini jsonc comments", Gemini, `// Gemini settings
{
  /* the theme */
  "theme": "Dracula", // trailing comment
  "hooks": {
    // before every tool
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "audit.sh", "timeout": 5000}]}, // audit
    ],
  },
  "mcpServers": {},
}
`},
	{"gemini hooks object only comments", Gemini, "{\n  \"hooks\": {\n    // nothing yet\n  }\n}\n"},
	{"codex existing hooks", Codex, `{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]
  }
}
`},
	{"codex no file", Codex, ""},
	{"gemini crlf", Gemini, "{\r\n  \"a\": 1, // one\r\n  \"hooks\": {\r\n    \"AfterTool\": []\r\n  }\r\n}\r\n"},
}

func TestInstallUninstallRoundTrip(t *testing.T) {
	for _, tc := range settingsCases {
		t.Run(tc.name, func(t *testing.T) {
			o, p := opts(t, tc.client)
			if tc.src != "" {
				write(t, p, tc.src, 0o640)
			}
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			once := read(t, p)
			checkInstalled(t, o, p, once, tc.src)
			if fi, _ := os.Stat(p); tc.src != "" && fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
			}
			res, err := Install(o)
			if err != nil {
				t.Fatal(err)
			}
			if twice := read(t, p); twice != once {
				t.Errorf("second install changed the file:\n%s\nthen\n%s", once, twice)
			}
			for _, c := range res.Changes {
				if c.Action != "unchanged" {
					t.Errorf("second install: %s %s", c.Action, c.Path)
				}
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			if tc.src == "" || tc.src == "{}\n" {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("uninstall left %s (install created it): %v", p, err)
				}
			} else if got := read(t, p); got != tc.src {
				t.Errorf("uninstall did not restore the file:\n--- got\n%s\n--- want\n%s", got, tc.src)
			}
			if tc.client == Codex {
				cfg := filepath.Join(filepath.Dir(p), "config.toml")
				if _, err := os.Stat(cfg); tc.src == "" && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("uninstall left %s: %v", cfg, err)
				}
			}
		})
	}
}

// checkInstalled parses the installed file and checks the entries and that
// every key of the original is still there, in its order.
func checkInstalled(t *testing.T, o Options, p, got, orig string) {
	t.Helper()
	s := specs[o.Client]
	root, err := parseJSON(p, []byte(got), !s.strict)
	if err != nil {
		t.Fatalf("installed file does not parse: %v\n%s", err, got)
	}
	if s.strict && !json.Valid([]byte(got)) {
		t.Fatalf("installed file is not JSON:\n%s", got)
	}
	hooks, _, _ := root.get("hooks")
	if hooks == nil {
		t.Fatalf("no hooks:\n%s", got)
	}
	for _, ev := range s.events {
		arr, _, _ := hooks.get(ev.name)
		if arr == nil || len(arr.elems) == 0 {
			t.Fatalf("no %s:\n%s", ev.name, got)
		}
		last := arr.elems[len(arr.elems)-1]
		var e matcherEntry
		if err := json.Unmarshal([]byte(got[last.start:last.end]), &e); err != nil {
			t.Fatal(err)
		}
		want := entryFor(o, ev)
		if e.Matcher != want.Matcher || len(e.Hooks) != 1 || e.Hooks[0] != want.Hooks[0] {
			t.Errorf("%s entry %+v, want %+v", ev.name, e, want)
		}
	}
	if orig == "" {
		return
	}
	// The original's keys keep their order, and its comments survive.
	o0, err := parseJSON(p, []byte(orig), true)
	if err != nil {
		t.Fatal(err)
	}
	if k, want := keys(root, "hooks"), keys(o0, "hooks"); k != want {
		t.Errorf("top-level keys %s, want %s", k, want)
	}
	if h0, _, _ := o0.get("hooks"); h0 != nil {
		extra := map[string]bool{}
		for _, ev := range s.events {
			extra[ev.name] = true
		}
		var drop []string
		for _, ev := range s.events {
			if a, _, _ := h0.get(ev.name); a == nil {
				drop = append(drop, ev.name)
			}
		}
		if k, want := keys(hooks, drop...), keys(h0); k != want {
			t.Errorf("hooks keys %s, want %s", k, want)
		}
	}
	if strings.Contains(orig, "\r\n") && strings.Count(got, "\n") != strings.Count(got, "\r\n") {
		t.Errorf("line endings mixed:\n%q", got)
	}
	for _, c := range comments.FindAllString(orig, -1) {
		if !strings.Contains(got, c) {
			t.Errorf("comment %q lost:\n%s", c, got)
		}
	}
}

var comments = regexp.MustCompile(`//[^\n]*|/\*[^*]*\*/`)

// keys lists an object's keys, leaving out skip.
func keys(n *node, skip ...string) string {
	var k []string
	for _, m := range n.members {
		if !slices.Contains(skip, m.key) {
			k = append(k, m.key)
		}
	}
	return strings.Join(k, ",")
}

func TestInstallEntries(t *testing.T) {
	o, p := opts(t, ClaudeCode)
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(read(t, p)), &doc); err != nil {
		t.Fatal(err)
	}
	pre := doc.Hooks["PreToolUse"][0]
	h := pre["hooks"].([]any)[0].(map[string]any)
	if pre["matcher"] != "*" || h["command"] != bin+" hook claude-code" || h["timeout"] != 600.0 || h["onFailure"] != "block" || h["type"] != "command" {
		t.Errorf("PreToolUse entry %v", pre)
	}
	if len(doc.Hooks["PostToolUse"]) != 1 {
		t.Errorf("PostToolUse %v", doc.Hooks["PostToolUse"])
	}

	og, pg := opts(t, Gemini)
	if _, err := Install(og); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(read(t, pg)), &doc); err != nil {
		t.Fatal(err)
	}
	h = doc.Hooks["BeforeTool"][0]["hooks"].([]any)[0].(map[string]any)
	if doc.Hooks["BeforeTool"][0]["matcher"] != ".*" || h["timeout"] != 600000.0 || h["command"] != guardFor(Gemini, "BeforeTool").command(bin, 600000) || len(doc.Hooks["AfterTool"]) != 1 {
		t.Errorf("gemini hooks %v", doc.Hooks)
	}
}

func TestInstallQuotesCommand(t *testing.T) {
	o, p := opts(t, ClaudeCode)
	o.Command = "/home/a b/it's/toolgate"
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, p), `"command": "'/home/a b/it'\\''s/toolgate' hook claude-code"`) {
		t.Errorf("command not quoted:\n%s", read(t, p))
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("uninstall left the file")
	}
}

func TestInstallMalformed(t *testing.T) {
	cases := []struct {
		name   string
		client Client
		src    string
		want   string
	}{
		{"claude comment", ClaudeCode, "{\n  // no\n  \"a\": 1\n}\n", "settings.json:2:3: comments are not allowed"},
		{"claude trailing comma", ClaudeCode, "{\n  \"a\": 1,\n}\n", "settings.json:2:9: trailing comma"},
		{"missing comma", Gemini, "{\n  \"a\": 1\n  \"b\": 2\n}\n", "settings.json:3:3: expected ',' or '}'"},
		{"unterminated", Gemini, "{\n  \"a\": \"x\n", "settings.json:2:10: newline inside a string"},
		{"hooks not object", ClaudeCode, "{\"hooks\": []}", "settings.json:1:11: \"hooks\" must be an object"},
		{"event not array", Gemini, "{\"hooks\": {\"BeforeTool\": {}}}", "settings.json:1:26: \"hooks.BeforeTool\" must be an array"},
		{"duplicate hooks", ClaudeCode, "{\"hooks\": {}, \"hooks\": {}}", "key \"hooks\" appears twice"},
		{"top level array", ClaudeCode, "[]", "must be a JSON object"},
		{"garbage after", ClaudeCode, "{} {}", "settings.json:1:4: unexpected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, p := opts(t, tc.client)
			write(t, p, tc.src, 0o644)
			_, err := Install(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %v, want one naming %s and %q", err, p, tc.want)
			}
			if got := read(t, p); got != tc.src {
				t.Errorf("file changed: %q", got)
			}
			_, err = Uninstall(o)
			if err == nil {
				t.Errorf("uninstall: no error")
			}
			if got := read(t, p); got != tc.src {
				t.Errorf("uninstall changed the file: %q", got)
			}
		})
	}
}

func TestUninstallKeepsSharedEntry(t *testing.T) {
	o, p := opts(t, ClaudeCode)
	src := `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "toolgate hook claude-code"}, {"type": "command", "command": "mine"}]}]}}`
	write(t, p, src, 0o644)
	res, err := Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if read(t, p) != src || len(res.Notes) == 0 {
		t.Errorf("shared entry touched or not reported: %q %v", read(t, p), res.Notes)
	}
	// An entry of another toolgate binary counts as installed.
	res, err = Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], `already runs "toolgate hook claude-code"`) {
		t.Errorf("notes %v", res.Notes)
	}
	if !strings.Contains(read(t, p), `"PostToolUse"`) || strings.Count(read(t, p), "hook claude-code") != 2 {
		t.Errorf("install:\n%s", read(t, p))
	}
}

func TestInstallFollowsSymlink(t *testing.T) {
	o, p := opts(t, ClaudeCode)
	real := filepath.Join(o.Home, "dotfiles", "claude.json")
	write(t, real, "{}\n", 0o600)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, p); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v", err)
	}
	if !strings.Contains(read(t, real), "PreToolUse") {
		t.Errorf("target not edited")
	}
}

func TestCodexConfig(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"no features", "# my config\nmodel = \"o3\"\n\n[mcp_servers.x]\ncommand = \"x\"\n",
			"# my config\nmodel = \"o3\"\n\n[mcp_servers.x]\ncommand = \"x\"\n\n[features]\nhooks = true\n"},
		{"features table", "model = \"o3\"\n[features]  # flags\nweb_search = true\n[other]\na = 1\n",
			"model = \"o3\"\n[features]  # flags\nhooks = true\nweb_search = true\n[other]\na = 1\n"},
		{"already on", "[features]\nweb_search = true\nhooks = true\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, p := opts(t, Codex)
			cfg := filepath.Join(filepath.Dir(p), "config.toml")
			write(t, cfg, tc.src, 0o600)
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.src
			}
			if got := read(t, cfg); got != want {
				t.Errorf("config.toml:\n%s\nwant\n%s", got, want)
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			if got := read(t, cfg); got != tc.src {
				t.Errorf("after uninstall:\n%s\nwant\n%s", got, tc.src)
			}
		})
	}
	t.Run("hooks off refuses before writing", func(t *testing.T) {
		o, p := opts(t, Codex)
		cfg := filepath.Join(filepath.Dir(p), "config.toml")
		write(t, cfg, "[features]\nhooks = false\n", 0o600)
		if _, err := Install(o); err == nil || !strings.Contains(err.Error(), "features.hooks = false") {
			t.Errorf("err %v", err)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("hooks.json written: %v", err)
		}
	})
	t.Run("malformed toml", func(t *testing.T) {
		o, p := opts(t, Codex)
		cfg := filepath.Join(filepath.Dir(p), "config.toml")
		write(t, cfg, "a = 1\nb = = 2\n", 0o600)
		if _, err := Install(o); err == nil || !strings.Contains(err.Error(), cfg+":2:") {
			t.Errorf("err %v", err)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("hooks.json written: %v", err)
		}
	})
}

func TestProjectScope(t *testing.T) {
	dir := t.TempDir()
	for _, c := range Clients {
		o := Options{Client: c, Scope: Project, ProjectDir: dir, Home: "/nonexistent", Command: bin}
		if _, err := Install(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".claude/settings.json", ".gemini/settings.json", ".codex/hooks.json", ".codex/config.toml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if !bytes.Contains([]byte(read(t, filepath.Join(dir, ".codex/hooks.json"))), []byte(`"PreToolUse"`)) {
		t.Error("codex hooks.json")
	}
}

func TestCommentStaysOnItsLine(t *testing.T) {
	o, p := opts(t, Gemini)
	src := "{\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\"matcher\": \"x\", \"hooks\": []}, // audit\n    ]\n  }\n}\n"
	write(t, p, src, 0o644)
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); !strings.Contains(got, "{\"matcher\": \"x\", \"hooks\": []}, // audit\n      {\n        \"matcher\": \".*\"") {
		t.Errorf("comment moved:\n%s", got)
	}
	if _, err := Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != src {
		t.Errorf("uninstall:\n%s", got)
	}
}
