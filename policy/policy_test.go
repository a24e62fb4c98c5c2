package policy

import (
	"strings"
	"testing"
)

func TestParseRuleErrors(t *testing.T) {
	tests := []struct {
		rule string
		want string // "line:col: message" fragment
	}{
		{"", "1:1: empty rule"},
		{"Bash(git status", "1:16: expected ')'"},
		{"Bash(ls) extra", "1:9: unexpected \" extra\" after ')'"},
		{"Bash)", "1:5: unexpected ')'"},
		{"(ls)", "1:1: expected a tool name"},
		{"Teleport(x)", `1:1: unknown tool "Teleport"`},
		{"Ba$h", `1:3: unexpected "$" in tool name`},
		{"Bash()", "1:6: empty specifier"},
		{"Bash(git status; rm -rf /)", "1:6: a shell rule matches one simple command"},
		{"Bash(echo $HOME)", "1:6: a shell rule must be literal words"},
		{"Bash(echo > x)", "1:6: a shell rule cannot contain redirections"},
		{"Bash(sudo rm)", "1:6: a shell rule names the program that runs"},
		{"Bash(xargs -0 rm)", "1:6: a shell rule names the program that runs"},
		{"Bash(* foo)", "1:6: the program name cannot contain '*'"},
		{"Read(~bob/x)", "1:6: ~user paths are not supported"},
		{"Read(src/[a)", "1:6: invalid glob"},
		{"Read(/a/../b)", "1:6: '..' is not allowed"},
		{"WebFetch(example.com)", "1:10: expected domain:HOST"},
		{"WebFetch(domain:a.com/x)", "1:17: a host pattern is a name"},
		{"mcp__gh__x(repo)", "1:12: expected key:pattern"},
		{"WebSearch(domain:)", "1:18: expected a host name"},
	}
	for _, tc := range tests {
		_, err := ParseRule(tc.rule, Allow, Position{})
		if err == nil {
			t.Errorf("ParseRule(%q): want error containing %q", tc.rule, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRule(%q) = %q, want it to contain %q", tc.rule, err, tc.want)
		}
	}
}

func TestParseRuleForms(t *testing.T) {
	tests := []struct {
		rule string
		tool Tool
		kind SpecKind
	}{
		{"Bash", ToolShell, SpecNone},
		{"run_shell_command(git status)", ToolShell, SpecCommand},
		{"shell.exec(npm test:*)", ToolShell, SpecCommand},
		{"Read(.env)", ToolRead, SpecPath},
		{"read_file(//etc/hosts)", ToolRead, SpecPath},
		{"MultiEdit(src/**)", ToolEdit, SpecPath},
		{"replace", ToolEdit, SpecNone},
		{"apply_patch(src/**)", ToolPatch, SpecPath},
		{"Glob", ToolList, SpecNone},
		{"search_file_content", ToolSearch, SpecNone},
		{"web_fetch(domain:*.example.com)", ToolFetch, SpecDomain},
		{"mcp__github", ToolMCP, SpecNone},
		{"mcp__github__*", ToolMCP, SpecNone},
		{"mcp__*", ToolMCP, SpecNone},
		{"mcp__github__create_issue(repo:myorg/*, title:\"a, b\")", ToolMCP, SpecArgs},
		{"  Bash(ls)  ", ToolShell, SpecCommand},
	}
	for _, tc := range tests {
		r, err := ParseRule(tc.rule, Deny, Position{})
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tc.rule, err)
			continue
		}
		if r.Tool != tc.tool || r.Kind != tc.kind {
			t.Errorf("ParseRule(%q) = tool %s kind %d, want %s %d", tc.rule, r.Tool, r.Kind, tc.tool, tc.kind)
		}
	}
}

func mustRule(t *testing.T, s string) *Rule {
	t.Helper()
	r, err := ParseRule(s, Allow, Position{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMatchCommand(t *testing.T) {
	ctx := &MatchContext{Root: "/w/p", Home: "/home/u"}
	tests := []struct {
		rule         string
		name         string
		args         []string
		dyn          []bool
		conservative bool
		want         bool
	}{
		{"Bash(rm -rf:*)", "rm", []string{"-fr", "x"}, nil, true, true},
		{"Bash(rm -rf:*)", "rm", []string{"-r", "-f", "x"}, nil, true, true},
		{"Bash(rm -rf:*)", "rm", []string{"--recursive", "--force", "x"}, nil, true, true},
		{"Bash(rm -rf:*)", "rm", []string{"-r", "x"}, nil, true, false},
		{"Bash(rm -rf:*)", "rm", []string{"-r", "$F", "x"}, []bool{false, true, false}, true, true},
		{"Bash(rm -rf:*)", "rm", []string{"-r", "$F", "x"}, []bool{false, true, false}, false, false},
		{"Bash(git status:*)", "git", []string{"status"}, nil, false, true},
		{"Bash(git status:*)", "git", []string{"statusx"}, nil, false, false},
		{"Bash(git status:*)", "git", []string{"$S"}, []bool{true}, false, false},
		{"Bash(git status:*)", "git", []string{"$S"}, []bool{true}, true, true},
		{"Bash(git push:*)", "git", []string{"-C", "/x", "push"}, nil, false, true}, // still a push; the engine judges /x as a path
		{"Bash(npm test)", "npm", []string{"test"}, nil, false, true},
		{"Bash(npm test)", "npm", []string{"test", "x"}, nil, false, false},
		{"Bash(npm test)", "npm", []string{"test", "$X"}, []bool{false, true}, false, false},
		{"Bash(git * main)", "git", []string{"merge", "main"}, nil, false, true},
		{"Bash(git * main)", "git", []string{"$X", "main"}, []bool{true, false}, false, true},
		{"Bash(git * main)", "git", []string{"merge", "$X"}, []bool{false, true}, false, false},
		{"Bash(sed:*)", "./sed", nil, nil, false, false},
		{"Bash(./build.sh)", "./build.sh", nil, nil, false, false}, // unknown dir
		{"Bash(*)", "anything", nil, nil, false, true},
		{"Bash(git commit -m:*)", "git", []string{"commit", "-m", "msg"}, nil, false, true},
		{"Bash(curl --output=x:*)", "curl", []string{"-o=x", "u"}, nil, false, true},
		{"Bash(find -delete:*)", "find", []string{".", "-ls", "-type", "d", "-name", "e"}, nil, true, false},
	}
	for _, tc := range tests {
		r := mustRule(t, tc.rule)
		v := &CommandView{Name: tc.name, Args: tc.args, Dynamic: tc.dyn}
		if v.Dynamic == nil {
			v.Dynamic = make([]bool, len(tc.args))
		}
		if got := r.MatchCommand(v, ctx, tc.conservative); got != tc.want {
			t.Errorf("%s vs %s %v (conservative=%v) = %v, want %v", tc.rule, tc.name, tc.args, tc.conservative, got, tc.want)
		}
	}
}

func TestMatchPath(t *testing.T) {
	ctx := &MatchContext{Root: "/w/project", Home: "/home/u"}
	tests := []struct {
		rule, path   string
		conservative bool
		want         bool
	}{
		{"Read(.env)", "/w/project/.env", false, true},
		{"Read(.env)", "/w/project/sub/.env", false, true},
		{"Read(.env)", "/elsewhere/.env", true, true},
		{"Read(.env)", "/elsewhere/.env", false, false},
		{"Read(*.pem)", "/w/project/certs/a.pem", false, true},
		{"Read(src/**)", "/w/project/src/a/b.go", false, true},
		{"Read(src/**)", "/w/project/src", false, true},
		{"Read(src/*)", "/w/project/src/a/b.go", false, false}, // * stays within src
		{"Read(src/*)", "/w/project/src/a/b.go", true, true},   // a deny or ask covers what is below src/a
		{"Read(src/*.go)", "/w/project/src/a/b.go", false, false},
		{"Read(/w/project/**)", "/w/project-old/x", false, false},
		{"Read(//w/project/**)", "/w/project/x", false, true},
		{"Read(~/.aws/config)", "/home/u/.aws/config", false, true},
		{"Read(~/.aws/config)", "/home/u/.aws/credentials", false, false},
		{"Read(~)", "/home/u/x", false, true},
		{"Read(secrets)", "/w/project/secrets/key", false, true},
		{"Read(./docs)", "/w/project/docs/a.md", false, true},
		{"Read(./docs)", "/w/project/sub/docs/a.md", false, false},
		{"Read(src/{a,b}.go)", "/w/project/src/b.go", false, true},
	}
	for _, tc := range tests {
		r := mustRule(t, tc.rule)
		if got := r.MatchPath("read", tc.path, ctx, tc.conservative); got != tc.want {
			t.Errorf("%s vs %s (conservative=%v) = %v, want %v", tc.rule, tc.path, tc.conservative, got, tc.want)
		}
	}
	if mustRule(t, "Edit(src/**)").MatchPath("read", "/w/project/src/x", ctx, true) {
		t.Error("an Edit rule must not govern reads")
	}
	if !mustRule(t, "Write(src/**)").MatchPath("write", "/w/project/src/x", ctx, false) {
		t.Error("a Write rule governs every write")
	}
}

func TestMatchHostAndMCP(t *testing.T) {
	for _, tc := range []struct {
		rule, host string
		want       bool
	}{
		{"WebFetch(domain:example.com)", "example.com", true},
		{"WebFetch(domain:example.com)", "EXAMPLE.com.", true},
		{"WebFetch(domain:example.com)", "evil-example.com", false},
		{"WebFetch(domain:*.example.com)", "a.example.com", true},
		{"WebFetch(domain:*.example.com)", "example.com", false},
		{"WebFetch(domain:*.example.com)", "a.example.com.evil.io", false},
		{"WebFetch(domain:[::1])", "::1", true},
	} {
		if got := mustRule(t, tc.rule).MatchHost(tc.host); got != tc.want {
			t.Errorf("%s vs %s = %v, want %v", tc.rule, tc.host, got, tc.want)
		}
	}
	r := mustRule(t, "mcp__github__create_issue(repo:myorg/*, labels:bug)")
	in := map[string]any{"repo": "myorg/app", "labels": []any{"bug"}}
	if !r.MatchMCP("mcp__github__create_issue", in, false) {
		t.Error("argument rule should match")
	}
	in["labels"] = []any{"bug", "urgent"}
	if r.MatchMCP("mcp__github__create_issue", in, false) {
		t.Error("allow matching needs every array element to match")
	}
	if !r.MatchMCP("mcp__github__create_issue", in, true) {
		t.Error("deny matching needs any array element to match")
	}
	if r.MatchMCP("mcp__github__create_issue", map[string]any{"repo": "myorg/a/b", "labels": "bug"}, false) {
		t.Error("* must not cross /")
	}
	if r.MatchMCP("mcp__gitlab__create_issue", map[string]any{"repo": "myorg/a", "labels": "bug"}, true) {
		t.Error("server name must match")
	}
}

func TestParseFile(t *testing.T) {
	src := `# project policy
mode = "acceptEdits"
sandbox = "workspace-write"
network = true
writable_roots = ["/tmp/cache"]

[permissions]
allow = [
  "Bash(npm test)",
  "Read(src/**)",
]
deny = ["Read(.env)"]
`
	f, err := ParseFile("p.toml", []byte(src), LayerProject)
	if err != nil {
		t.Fatal(err)
	}
	if *f.Mode != ModeAcceptEdits || *f.Sandbox != SandboxWorkspaceWrite || !*f.Network || f.WritableRoots[0] != "/tmp/cache" {
		t.Fatalf("settings not read: %+v", f)
	}
	want := map[string]string{"Read(.env)": "p.toml:12:10", "Bash(npm test)": "p.toml:9:4", "Read(src/**)": "p.toml:10:4"}
	for _, r := range f.Rules {
		if got := r.Pos.String(); got != want[r.Text] {
			t.Errorf("rule %s at %s, want %s", r.Text, got, want[r.Text])
		}
	}
}

func TestParseFileTests(t *testing.T) {
	src := `[permissions]
allow = ["Bash(npm test)"]

[[test]]
tool = "Bash"
input = { command = "npm test" }
expect = "allow"

[[test]]
tool = "Read"
input = { file_path = ".env" }
cwd = "src"
expect = "deny"
reason = "credential_access"
`
	f, err := ParseFile("p.toml", []byte(src), LayerProject)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tests) != 2 || f.Tests[0].Pos.Line != 4 || f.Tests[1].Pos.Line != 9 || f.Tests[1].Expect != Deny || f.Tests[1].Cwd != "src" {
		t.Fatalf("tests: %+v", f.Tests)
	}
	_, err = ParseFile("p.toml", []byte("\n[[test]]\ntool = \"Bash\"\nexpect = \"maybe\"\n"), LayerProject)
	if err == nil || !strings.Contains(err.Error(), "p.toml:2:1: test 1: expect must be allow, ask or deny") {
		t.Fatalf("got %v", err)
	}
}

func TestParseFileErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"mode = \"yolo\"\n", `p.toml:1:1: unknown mode "yolo"`},
		{"\n\nsandbox = \"open\"\n", `p.toml:3:1: unknown sandbox "open"`},
		{"modes = \"default\"\n", `p.toml:1:1: unknown key "modes"`},
		{"[permissions]\nallow = [\"Bash(ls\"]\n", "p.toml:2:18: expected ')'"},
		{"[permissions]\ndeny = [\n  \"Read(.env)\",\n  \"Nope\",\n]\n", `p.toml:4:4: unknown tool "Nope"`},
		{"mode = \n", "p.toml:1:"},
		{"network = \"yes\"\n", "p.toml:1:"},
		{"[managed]\ndisable_bypass_mode = true\n", "p.toml:1:1: a [managed] table is only honoured"},
		{"writable_roots = [\"rel/dir\"]\n", `p.toml:1:19: writable root "rel/dir" must be absolute`},
		{"[permissions]\nallow = [1]\n", "p.toml:2:"},
	}
	for _, tc := range tests {
		_, err := ParseFile("p.toml", []byte(tc.src), LayerProject)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFile(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestMerge(t *testing.T) {
	parse := func(layer Layer, src string) *File {
		f, err := ParseFile(layer.String()+".toml", []byte(src), layer)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	managed := parse(LayerManaged, "sandbox = \"read-only\"\n[managed]\ndisable_bypass_mode = true\nallow_managed_rules_only = true\n[permissions]\nallow = [\"Read\"]\n")
	project := parse(LayerProject, "sandbox = \"danger-full-access\"\nmode = \"bypassPermissions\"\napproval = \"always\"\n[permissions]\nallow = [\"Bash\"]\ndeny = [\"Bash(rm:*)\"]\n")
	user := parse(LayerUser, "approval = \"never\"\nmode = \"acceptEdits\"\n")
	s, err := Merge(user, project, managed)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sandbox != SandboxReadOnly {
		t.Errorf("managed sandbox must win, got %s", s.Sandbox)
	}
	if s.Approval != ApprovalAlways {
		t.Errorf("project approval beats user, got %s", s.Approval)
	}
	// Bypass from the project is disabled, and acceptEdits from the user
	// would let edits through without the managed allow rules: both are
	// ignored, which leaves the default.
	if s.Mode != ModeDefault || s.ModeSet {
		t.Errorf("locked modes must be ignored, leaving the default; got %s (set %v)", s.Mode, s.ModeSet)
	}
	notes := strings.Join(s.Notes, "|")
	for _, want := range []string{
		"mode bypassPermissions from project.toml:2 ignored: bypassPermissions is disabled by the managed policy",
		"mode acceptEdits from user.toml:2 ignored: the managed policy allows only its own allow rules",
		"approval never from user.toml:1 ignored",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q: %v", want, s.Notes)
		}
	}
	if len(s.Notes) != 3 {
		t.Errorf("notes: %v", s.Notes)
	}
	if len(s.Ignored) != 1 || s.Ignored[0].Rule.Text != "Bash" {
		t.Errorf("ignored: %+v", s.Ignored)
	}
	var order []string
	for _, r := range s.Rules {
		order = append(order, r.Effect.String()+":"+r.Text)
	}
	if got := strings.Join(order, " "); got != "deny:Bash(rm:*) allow:Read" {
		t.Errorf("rule order %s", got)
	}
	cliMode := ModeBypass
	if _, err := Merge(managed, &File{Layer: LayerCLI, Mode: &cliMode}); err == nil {
		t.Error("a CLI bypass under a managed lock must be an error")
	}
	if _, err := Merge(project, parse(LayerProject, "")); err == nil {
		t.Error("two project layers must be an error")
	}
}

func TestLint(t *testing.T) {
	f, err := ParseFile("p.toml", []byte(`[permissions]
deny = ["Bash(git push:*)", "Read"]
ask = ["Bash(git push --force:*)"]
allow = ["Bash(git push origin main)", "Read(src/**)", "Read(~/.ssh/**)", "Bash(npm test)", "Bash(npm test)", "Bash(git status)"]
`), LayerProject)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Merge(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fd := range Lint(s) {
		got = append(got, fd.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"p.toml:3:9: ask rule Bash(git push --force:*) is shadowed: deny rule Bash(git push:*)",
		"p.toml:4:11: allow rule Bash(git push origin main) is shadowed",
		"allow rule Read(~/.ssh/**) sweeps a credential location",
		"allow rule Bash(npm test) duplicates the rule at p.toml:4",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint output lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "git status") {
		t.Errorf("Bash(git status) is reachable:\n%s", all)
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(git status:*)", "Read(src/**)", "WebFetch(domain:*.a.com)",
		"mcp__a__b(k:v, x:\"y,z\")", "Bash(rm -rf:*)", "Bash(git * main)", "Read(//abs)", "Edit(~/x)", "Bash(()", "((", "Bash(a)b)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s, Deny, Position{File: "f", Line: 1, Column: 1})
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Pos.Line != 1 || e.Pos.Column < 1 || e.Pos.File != "f" {
				t.Fatalf("ParseRule(%q): error %v (%T) without its position", s, err, err)
			}
			return
		}
		// A parsed rule must be usable by every matcher without panicking.
		ctx := &MatchContext{Root: "/w", Home: "/h"}
		r.MatchCommand(&CommandView{Name: "rm", Args: []string{"-rf", "/"}, Dynamic: []bool{false, false}}, ctx, true)
		r.MatchPath("read", "/w/.env", ctx, true)
		r.MatchPath("write", "/w/a/b", ctx, false)
		r.MatchHost("example.com")
		r.MatchMCP("mcp__a__b", map[string]any{"k": "v"}, false)
		r.Explicit()
		if r.Text == "" || r.Tool == "" {
			t.Fatalf("ParseRule(%q) gave an empty rule", s)
		}
	})
}

func FuzzParseFile(f *testing.F) {
	for _, s := range []string{"mode = \"default\"\n[permissions]\nallow = [\"Bash(ls)\"]\n", "[managed]\n", "network = true\nwritable_roots = [\"/x\"]\n", "mode = \"bypassPermissions\"\nsandbox = \"danger-full-access\"\napproval = \"never\"\ntrusted_mcp_servers = [\"a\"]\n", "= \n", "[permissions]\ndeny=[\"Read(.env)\",]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		file, err := ParseFile("f.toml", []byte(s), LayerProject)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if _, err := Merge(file); err != nil {
			t.Fatalf("a parsed file must merge: %v", err)
		}
		file.Distrust()
		set, err := Merge(file)
		if err != nil {
			t.Fatalf("a distrusted file must merge: %v", err)
		}
		for _, r := range set.Rules {
			if r.Effect == Allow {
				t.Fatalf("an untrusted file's allow rule %s counts", r.Text)
			}
		}
		if set.Mode == ModeBypass || set.Mode == ModeAcceptEdits || set.Sandbox == SandboxFullAccess || set.Approval == ApprovalNever || set.Network || len(set.WritableRoots) > 0 || len(set.TrustedMCPServers) > 0 {
			t.Fatalf("an untrusted file loosened a setting: %s", set)
		}
	})
}

func TestWrapperRules(t *testing.T) {
	deny, err := ParseRule("Bash(sudo:*)", Deny, Position{})
	if err != nil {
		t.Fatal(err)
	}
	v := &CommandView{Name: "rm", Args: []string{"-rf", "/"}, Dynamic: []bool{false, false}, Wrappers: []string{"sudo"}}
	if !deny.MatchCommand(v, &MatchContext{}, true) {
		t.Error("Bash(sudo:*) must deny what runs through sudo")
	}
	allow, _ := ParseRule("Bash(xargs:*)", Allow, Position{})
	if allow.MatchCommand(v, &MatchContext{}, false) || allow.MatchCommand(&CommandView{Name: "rm", Wrappers: []string{"xargs"}}, &MatchContext{}, false) {
		t.Error("a wrapper rule never allows")
	}
	if deny.MatchCommand(&CommandView{Name: "sudo"}, &MatchContext{}, true) {
		t.Error("a wrapper rule matches through the wrapper, not a command named like it")
	}
}

func TestLocks(t *testing.T) {
	free := &Set{Layers: map[string]Layer{"sandbox": LayerProject}, From: map[string]string{}}
	locked := &Set{DisableBypass: true, ManagedRulesOnly: true, NetworkLocked: true,
		Layers: map[string]Layer{"mode": LayerManaged, "network": LayerCLI},
		From:   map[string]string{"mode": "/etc/toolgate/managed.toml:3", "network": "cli"}}
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"free mode", free.SettingLock("mode"), ""},
		{"free sandbox from a file", free.SettingLock("sandbox"), ""},
		{"free bypass", free.ModeLock(ModeBypass), ""},
		{"free never", free.ApprovalLock(ApprovalNever), ""},
		{"free network", free.NetworkLock(true), ""},
		{"managed mode", locked.SettingLock("mode"), "it is set by /etc/toolgate/managed.toml:3"},
		{"cli network", locked.SettingLock("network"), "it is set by cli"},
		{"sandbox unset", locked.SettingLock("sandbox"), ""},
		{"bypass", locked.ModeLock(ModeBypass), "bypassPermissions is disabled by the managed policy"},
		{"acceptEdits", locked.ModeLock(ModeAcceptEdits), "the managed policy allows only its own allow rules"},
		{"plan", locked.ModeLock(ModePlan), ""},
		{"never", locked.ApprovalLock(ApprovalNever), "the managed policy allows only its own allow rules"},
		{"always", locked.ApprovalLock(ApprovalAlways), ""},
		{"network on", locked.NetworkLock(true), "the managed policy turns the network off"},
		{"network off", locked.NetworkLock(false), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
