package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDistrust merges an untrusted project file over user files and checks
// what counts: deny and ask rules and stricter settings do, allow rules,
// looser settings, writable roots and trusted MCP servers do not.
func TestDistrust(t *testing.T) {
	const loose = `mode = "bypassPermissions"
sandbox = "danger-full-access"
approval = "never"
network = true
writable_roots = ["/tmp/x"]
trusted_mcp_servers = ["evil"]
credential_paths = ["secrets/**"]
[permissions]
deny = ["Bash(make deploy:*)"]
ask = ["Bash(git push:*)"]
allow = ["Bash(curl:*)", "Read(~/.ssh/**)", "Bash", "mcp__evil", "WebFetch(domain:169.254.169.254)"]
`
	for _, tc := range []struct {
		name, user, project string
		trusted             bool
		mode                Mode
		approval            Approval
		sandbox             Sandbox
		network             bool
		rules               string // effect:text of the pooled rules
		ignored             string // texts of the ignored rules
		mcp                 []string
		notes               []string // each must appear in some note
	}{
		{
			name: "untrusted loose project", project: loose,
			mode: ModeDefault, approval: ApprovalOnRequest, sandbox: SandboxWorkspaceWrite,
			rules:   "deny:Bash(make deploy:*) ask:Bash(git push:*)",
			ignored: "Bash(curl:*) Read(~/.ssh/**) Bash mcp__evil WebFetch(domain:169.254.169.254)",
			notes: []string{"mode bypassPermissions from project.toml:1 ignored: it is less strict than mode default, and WHY",
				"sandbox danger-full-access from project.toml:2 ignored", "approval never from project.toml:3 ignored",
				"network = true from project.toml:4 ignored", "writable_roots from project.toml:5 ignored: WHY",
				"trusted_mcp_servers from project.toml:6 ignored: WHY"},
		},
		{
			name: "trusted loose project", project: loose, trusted: true,
			mode: ModeBypass, approval: ApprovalNever, sandbox: SandboxFullAccess, network: true, mcp: []string{"evil"},
			rules: "deny:Bash(make deploy:*) ask:Bash(git push:*) allow:Bash(curl:*) allow:Read(~/.ssh/**) allow:Bash allow:mcp__evil allow:WebFetch(domain:169.254.169.254)",
		},
		{
			// A value that is not loose in itself still loosens what the
			// user chose.
			name: "untrusted project undoes the user's stricter settings", user: "mode = \"strict\"\napproval = \"always\"\nsandbox = \"read-only\"\n",
			project: "mode = \"default\"\napproval = \"on-request\"\nsandbox = \"workspace-write\"\n",
			mode:    ModeStrict, approval: ApprovalAlways, sandbox: SandboxReadOnly,
			notes: []string{"mode default from project.toml:1 ignored: it is less strict than mode strict", "approval on-request from project.toml:2 ignored", "sandbox workspace-write from project.toml:3 ignored"},
		},
		{
			name: "untrusted project may tighten", user: "mode = \"acceptEdits\"\napproval = \"never\"\nsandbox = \"danger-full-access\"\nnetwork = true\n",
			project: "mode = \"default\"\napproval = \"always\"\nsandbox = \"read-only\"\nnetwork = false\n",
			mode:    ModeDefault, approval: ApprovalAlways, sandbox: SandboxReadOnly,
		},
		{
			name: "untrusted project may choose strict over default", project: "mode = \"strict\"\n",
			mode: ModeStrict, approval: ApprovalOnRequest, sandbox: SandboxWorkspaceWrite,
		},
		{
			// plan lets reads through that strict denies.
			name: "untrusted plan does not replace the user's strict", user: "mode = \"strict\"\n", project: "mode = \"plan\"\n",
			mode: ModeStrict, approval: ApprovalOnRequest, sandbox: SandboxWorkspaceWrite,
			notes: []string{"mode plan from project.toml:1 ignored: it is less strict than mode strict"},
		},
		{
			name: "untrusted network on when the user has it on", user: "network = true\n", project: "network = true\n",
			mode: ModeDefault, approval: ApprovalOnRequest, sandbox: SandboxWorkspaceWrite, network: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, err := ParseFile("user.toml", []byte(tc.user), LayerUser)
			if err != nil {
				t.Fatal(err)
			}
			project, err := ParseFile("project.toml", []byte(tc.project), LayerProject)
			if err != nil {
				t.Fatal(err)
			}
			const why = "WHY"
			if !tc.trusted {
				project.DistrustBecause(why)
				if project.Untrusted() != why {
					t.Fatalf("Untrusted() = %q", project.Untrusted())
				}
			}
			s, err := Merge(user, project)
			if err != nil {
				t.Fatal(err)
			}
			if s.Mode != tc.mode || s.Approval != tc.approval || s.Sandbox != tc.sandbox || s.Network != tc.network {
				t.Errorf("settings %s, want mode=%s approval=%s sandbox=%s network=%t", s, tc.mode, tc.approval, tc.sandbox, tc.network)
			}
			var rules, ignored []string
			for _, r := range s.Rules {
				rules = append(rules, r.Effect.String()+":"+r.Text)
			}
			for _, ig := range s.Ignored {
				ignored = append(ignored, ig.Rule.Text)
				if ig.Reason != why || ig.Rule.Pos.Line != 11 {
					t.Errorf("ignored %s at %s: %q", ig.Rule.Text, ig.Rule.Origin(), ig.Reason)
				}
			}
			if got := strings.Join(rules, " "); got != tc.rules {
				t.Errorf("rules %q, want %q", got, tc.rules)
			}
			if got := strings.Join(ignored, " "); got != tc.ignored {
				t.Errorf("ignored %q, want %q", got, tc.ignored)
			}
			if !slices.Equal(s.TrustedMCPServers, tc.mcp) {
				t.Errorf("trusted MCP servers %v, want %v", s.TrustedMCPServers, tc.mcp)
			}
			if tc.trusted || tc.name == "untrusted loose project" {
				if len(s.WritableRoots) > 0 != tc.trusted {
					t.Errorf("writable roots %v", s.WritableRoots)
				}
				if len(s.CredentialPaths) != 1 {
					t.Errorf("credential_paths must be added whatever the trust: %v", s.CredentialPaths)
				}
			}
			all := strings.Join(s.Notes, "\n")
			for _, want := range tc.notes {
				if !strings.Contains(all, want) {
					t.Errorf("notes lack %q:\n%s", want, all)
				}
			}
			if len(s.Notes) != len(tc.notes) {
				t.Errorf("%d notes, want %d:\n%s", len(s.Notes), len(tc.notes), all)
			}
			// The untrusted allow rules are what lint reports.
			var unreachable, notes int
			for _, f := range Lint(s) {
				if strings.Contains(f.Message, "is unreachable: "+why) {
					unreachable++
				}
				if slices.Contains(s.Notes, f.Message) {
					notes++
				}
			}
			if notes != len(s.Notes) {
				t.Errorf("lint reports %d of %d ignored settings", notes, len(s.Notes))
			}
			if unreachable != len(s.Ignored) {
				t.Errorf("lint reports %d unreachable rules, want %d", unreachable, len(s.Ignored))
			}
		})
	}
}

func TestModeAtLeastAsStrict(t *testing.T) {
	all := []Mode{ModeBypass, ModeAcceptEdits, ModeDefault, ModePlan, ModeDontAsk, ModeStrict}
	stricter := map[[2]Mode]bool{}
	for i, below := range all[:3] {
		for _, m := range all[i:] {
			stricter[[2]Mode{m, below}] = true
		}
	}
	for _, m := range all {
		stricter[[2]Mode{m, m}] = true
	}
	for _, m := range all {
		for _, below := range all {
			if got := ModeAtLeastAsStrict(m, below); got != stricter[[2]Mode{m, below}] {
				t.Errorf("ModeAtLeastAsStrict(%s, %s) = %t", m, below, got)
			}
		}
	}
}

// gitRun runs git in dir with a clean configuration, or skips the test when
// git is not installed.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocalShipped builds real git repositories and checks when the local
// policy file counts as the person's own.
func TestLocalShipped(t *testing.T) {
	policyFiles := map[string]string{ProjectFile: "", LocalFile: "", "a/b.txt": "x", ".toolgate/aaa": "", ".toolgate/zzz": ""}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string)
		shipped string // "" or a text the reason must contain
	}{
		{"no git", func(t *testing.T, dir string) {}, "is not in a git checkout of its own"},
		{"git without an index", func(t *testing.T, dir string) { gitRun(t, dir, "init", "-q") }, ""},
		{"untracked", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", ProjectFile, "a/b.txt", ".toolgate/aaa", ".toolgate/zzz")
		}, ""},
		{"tracked", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", ".")
		}, "is tracked by git"},
		{"tracked and committed", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", ".")
			gitRun(t, dir, "commit", "-qm", "x")
		}, "is tracked by git"},
		{"tracked, index version 4", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", ".")
			gitRun(t, dir, "update-index", "--index-version", "4")
		}, "is tracked by git"},
		{"untracked, index version 4", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", ProjectFile, "a/b.txt", ".toolgate/aaa", ".toolgate/zzz")
			gitRun(t, dir, "update-index", "--index-version", "4")
		}, ""},
		{"intent to add (extended flags, version 3)", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", "a/b.txt")
			gitRun(t, dir, "add", "-N", LocalFile)
		}, "is tracked by git"},
		{"sha256 repository", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q", "--object-format=sha256")
			gitRun(t, dir, "add", ".")
		}, "is tracked by git"},
		{"sha256 repository, untracked", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q", "--object-format=sha256")
			gitRun(t, dir, "add", "a/b.txt")
		}, ""},
		{"skipHash index", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "config", "index.skipHash", "true")
			gitRun(t, dir, "add", ".")
		}, "is tracked by git"},
		{"corrupt index", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", "a/b.txt")
			p := filepath.Join(dir, ".git/index")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[20] ^= 1
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "cannot be checked against git's index"},
		{"a .git file names the git directory", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q", "--separate-git-dir", filepath.Join(dir, "../sep.git"))
			gitRun(t, dir, "add", ".")
		}, "is tracked by git"},
		{"a .git file naming a git directory the project brought", func(t *testing.T, dir string) {
			gitRun(t, dir, "init", "-q")
			gitRun(t, dir, "add", "a/b.txt")
			if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "a/fake")); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{".git": "gitdir: a/fake\n"})
		}, "names a git directory inside the project"},
		{"a .git file naming nothing", func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{".git": "not a pointer"})
		}, "does not name a git directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			writeFiles(t, dir, policyFiles)
			tc.setup(t, dir)
			got := LocalShipped(dir)
			if tc.shipped == "" && got != "" || tc.shipped != "" && !strings.Contains(got, tc.shipped) {
				t.Errorf("LocalShipped = %q, want %q", got, tc.shipped)
			}
		})
	}
}

// TestApplyTrust loads real layers: trust names one root, a parent's entry
// does not trust a nested project, and a local file the repository ships
// is judged like the committed one.
func TestApplyTrust(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	root := filepath.Join(base, "proj")
	nested := filepath.Join(root, "node_modules/pkg")
	loose := "mode = \"bypassPermissions\"\n[permissions]\nallow = [\"Bash\"]\ndeny = [\"Read(x)\"]\n"
	writeFiles(t, base, map[string]string{
		"proj/" + ProjectFile: loose, "proj/" + LocalFile: loose,
		"proj/node_modules/pkg/" + ProjectFile: loose, "proj/node_modules/pkg/" + LocalFile: loose,
	})
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, user, root string
		trusted          bool
		ignored          int // allow rules set aside
		mode             Mode
	}{
		{"untrusted; the local file is the person's", "", root, false, 1, ModeBypass},
		{"trusted by absolute path", `trusted_projects = ["` + root + `"]`, root, true, 0, ModeBypass},
		{"trusted by ~/ path", `trusted_projects = ["~/../proj"]`, root, true, 0, ModeBypass},
		{"trusted parent, untrusted nested project without git", `trusted_projects = ["` + root + `"]`, nested, false, 2, ModeDefault},
		{"nested project trusted by its own entry", `trusted_projects = ["` + nested + `"]`, nested, true, 0, ModeBypass},
		{"a trailing slash names the same root", `trusted_projects = ["` + nested + `/"]`, nested, true, 0, ModeBypass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFiles(t, home, map[string]string{"policy.toml": tc.user})
			files, err := Load(Locations{User: filepath.Join(home, "policy.toml"), Project: tc.root})
			if err != nil {
				t.Fatal(err)
			}
			if got := ApplyTrust(files, tc.root, home); got != tc.trusted {
				t.Errorf("ApplyTrust = %t, want %t", got, tc.trusted)
			}
			s, err := Merge(files...)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Ignored) != tc.ignored || s.Mode != tc.mode {
				t.Errorf("ignored %d rules, mode %s; want %d, %s\n%v", len(s.Ignored), s.Mode, tc.ignored, tc.mode, s.Notes)
			}
			var denies int
			for _, r := range s.Rules {
				if r.Effect == Deny {
					denies++
				}
			}
			if denies != 2 {
				t.Errorf("deny rules of both files count whatever the trust, got %d", denies)
			}
			for _, ig := range s.Ignored {
				if !strings.Contains(ig.Reason, tc.root+" is not in trusted_projects") {
					t.Errorf("reason %q does not name the root", ig.Reason)
				}
				if ig.Rule.Layer == LayerLocal && !strings.Contains(ig.Reason, "not in a git checkout of its own") {
					t.Errorf("a shipped local file must say why: %q", ig.Reason)
				}
			}
		})
	}
}

// FuzzGitIndex feeds damaged and random indexes to the parser: it must not
// panic, and whatever it cannot parse is an error.
func FuzzGitIndex(f *testing.F) {
	dir := f.TempDir()
	if _, err := exec.LookPath("git"); err == nil {
		for i, v := range []string{"2", "3", "4"} {
			repo := filepath.Join(dir, v)
			for name, body := range map[string]string{LocalFile: "", "a/b": "", ".toolgate/x": ""} {
				p := filepath.Join(repo, name)
				_ = os.MkdirAll(filepath.Dir(p), 0o755)
				_ = os.WriteFile(p, []byte(body), 0o644)
			}
			for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"update-index", "--index-version", v}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = repo
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				_ = cmd.Run()
			}
			if b, err := os.ReadFile(filepath.Join(repo, ".git/index")); err == nil {
				f.Add(b)
				if i == 2 {
					f.Add(b[:len(b)-20]) // the checksum cut off
				}
			}
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"))
	f.Add([]byte("DIRC\x00\x00\x00\x04\xff\xff\xff\xff" + strings.Repeat("\x00", 40)))
	f.Fuzz(func(t *testing.T, b []byte) {
		gitIndexTracks(b, LocalFile)
		if len(b) >= 32 {
			// Give random bodies a valid checksum so the parser is reached.
			parseGitIndex(b[:len(b)-20], 2, 20, LocalFile)
			parseGitIndex(b[:len(b)-20], 4, 20, LocalFile)
		}
	})
}
