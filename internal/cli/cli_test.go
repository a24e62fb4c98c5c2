package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden explain outputs in testdata/explain")

// workspace lays out a txtar archive's files under a fresh directory:
// every file but request.json, links and explain. "links" lists
// "path -> target" symbolic links. It returns the directory.
func workspace(t *testing.T, ar *txtar.Archive) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"project/.git", "home"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range ar.Files {
		switch f.Name {
		case "request.json", "explain", "args":
			continue
		case "links":
			for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				l, target, _ := strings.Cut(line, " -> ")
				target = strings.ReplaceAll(target, "$WORK", dir)
				if err := os.Symlink(target, filepath.Join(dir, l)); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.ReplaceAll(f.Data, []byte("$WORK"), []byte(dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func file(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// run runs the CLI with HOME and the policy locations inside dir.
func run(t *testing.T, dir string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "home/.config"))
	t.Setenv("TOOLGATE_MANAGED_POLICY", filepath.Join(dir, "managed.toml"))
	var out, errb bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// versions finds the policy versions in an explanation.
var versions = regexp.MustCompile(`(?m)^(version   |file      .* )[0-9a-f]{12}$`)

func TestExplainGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/explain/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := workspace(t, ar)
			req := strings.ReplaceAll(string(file(ar, "request.json")), "$WORK", dir)
			args := append([]string{"explain"}, strings.Fields(string(file(ar, "args")))...)
			out, stderr, code := run(t, dir, req, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// A file's version hashes its content, which holds dir.
			got := versions.ReplaceAllString(strings.ReplaceAll(out, dir, "$WORK"), "${1}<version>")
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "explain" {
						ar.Files[i].Data = []byte(got)
					}
				}
				if file(ar, "explain") == nil {
					ar.Files = append(ar.Files, txtar.File{Name: "explain", Data: []byte(got)})
				}
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := string(file(ar, "explain")); got != want {
				t.Errorf("explain output differs from %s (run go test ./internal/cli -run TestExplainGolden -update):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	cwd := filepath.Join(dir, "project")
	req := func(tool, cmd string) string {
		b, _ := json.Marshal(map[string]any{"tool": tool, "input": map[string]any{"command": cmd}, "cwd": cwd})
		return string(b)
	}
	out, _, code := run(t, dir, req("Bash", "git status && rm -rf /"), "check", "--allow", "Bash(git status:*)")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("output is not one JSON decision: %q", out)
	}
	if d["decision"] != "deny" || d["reason"] != "sandbox_rejected" || d["risk"] != "destructive" {
		t.Fatalf("got %v", d)
	}
	out, _, _ = run(t, dir, req("Bash", "rm -fr dist"), "check", "--deny", "Bash(rm -rf:*)", "--sandbox", "danger-full-access")
	if !strings.Contains(out, `"rule":"Bash(rm -rf:*)"`) || !strings.Contains(out, `"rule_origin":"cli"`) {
		t.Fatalf("CLI deny rule not reported: %s", out)
	}
	out, _, _ = run(t, dir, req("Bash", "make"), "check", "--mode", "dontAsk")
	if !strings.Contains(out, `"decision":"deny"`) {
		t.Fatalf("--mode dontAsk: %s", out)
	}
	for _, bad := range []struct{ stdin, want string }{
		{`{"tool":"Bash"`, "invalid request"},
		{`{"tool":"Bash","input":{},"cwd":"/","bogus":true}`, `unknown field "bogus"`},
	} {
		out, stderr, code := run(t, dir, bad.stdin, "check")
		if code != 2 || out != "" || !strings.Contains(stderr, bad.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("bad input %q: exit %d, stdout %q, stderr %q", bad.stdin, code, out, stderr)
		}
	}
	for _, args := range [][]string{{"check", "--mode", "yolo"}, {"check", "--allow", "Bash("}, {"check", "--sandbox", "x"}} {
		if _, _, code := run(t, dir, req("Bash", "ls"), args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "managed.toml"), []byte("[managed]\ndisable_bypass_mode = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = run(t, dir, req("Bash", "make"), "check", "--mode", "bypassPermissions")
	if !strings.Contains(out, "bypassPermissions is disabled by the managed policy") {
		t.Fatalf("CLI bypass under a managed lock must be refused: %s", out)
	}
}

func TestCheckBatch(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	cwd := filepath.Join(dir, "project")
	lines := []string{
		`{"tool":"Read","input":{"file_path":"README.md"},"cwd":"` + cwd + `"}`,
		`not json`,
		``,
		`{"tool":"Teleport","input":{},"cwd":"` + cwd + `"}`,
		`{"tool":"Bash","input":{"command":"cat .env"},"cwd":"` + cwd + `"}`,
	}
	out, stderr, code := run(t, dir, strings.Join(lines, "\n")+"\n", "check", "--batch")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"read_only", "invalid_request", "invalid_request", "unknown_tool", "credential_access"}
	if len(got) != len(want) {
		t.Fatalf("%d output lines for %d inputs:\n%s", len(got), len(want), out)
	}
	for i, line := range got {
		var d struct{ Decision, Reason, Message string }
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if d.Reason != want[i] {
			t.Errorf("line %d: reason %s, want %s (%s)", i+1, d.Reason, want[i], d.Message)
		}
	}
}

func TestPolicyLint(t *testing.T) {
	dir := workspace(t, &txtar.Archive{Files: []txtar.File{{Name: "project/.toolgate/policy.toml", Data: []byte(`[permissions]
deny = ["Bash(git push:*)"]
allow = ["Bash(git push origin main)"]
`)}}})
	t.Chdir(filepath.Join(dir, "project"))
	out, _, code := run(t, dir, "", "policy", "lint")
	if code != 1 || !strings.Contains(out, "policy.toml:3:11: allow rule Bash(git push origin main) is unreachable: the project "+filepath.Join(dir, "project")+" is not in trusted_projects") {
		t.Fatalf("untrusted project: exit %d:\n%s", code, out)
	}
	// A FILE argument at a project's .toolgate/policy.toml is judged as
	// that project's.
	projectFile := filepath.Join(dir, "project/.toolgate/policy.toml")
	out, _, code = run(t, dir, "", "policy", "lint", projectFile)
	if code != 1 || !strings.Contains(out, "allow rule Bash(git push origin main) is unreachable: the project "+filepath.Join(dir, "project")+" is not in trusted_projects") {
		t.Fatalf("untrusted project file: exit %d:\n%s", code, out)
	}
	trustProject(t, dir)
	out, _, code = run(t, dir, "", "policy", "lint", projectFile)
	if code != 1 || !strings.Contains(out, "is shadowed") || strings.Contains(out, "trusted_projects") {
		t.Fatalf("trusted project file: exit %d:\n%s", code, out)
	}
	out, stderr, code := run(t, dir, "", "policy", "lint")
	if code != 1 || !strings.Contains(out, "policy.toml:3:11: allow rule Bash(git push origin main) is shadowed") || strings.Contains(out, "trusted_projects") ||
		!strings.HasSuffix(out, "1 finding(s) in 2 file(s)\n") || stderr != "" {
		t.Fatalf("trusted project: exit %d:\n%s--- stderr:\n%s", code, out, stderr)
	}
	// lint decides nothing: the flags of a decision are not its own.
	if _, stderr, code := run(t, dir, "", "policy", "lint", "--mode", "plan"); code != 2 || !strings.Contains(stderr, "unknown flag: --mode") || !strings.Contains(stderr, "toolgate policy lint --help") {
		t.Fatalf("lint --mode: exit %d %s", code, stderr)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[permissions]\nallow = [\"Bash(ls\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, dir, "", "policy", "lint", bad)
	if code != 1 || !strings.Contains(stderr, "bad.toml:2:18: expected ')'") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Hook entries: an unknown event, a bad matcher, a missing command
	// are errors at their line; a hook whose program is missing is a
	// finding.
	for _, tt := range []struct{ src, want string }{
		{"mode = \"default\"\n[[hooks]]\nevent = \"BeforeTool\"\ncommand = \"x\"\n", "bad.toml:3:1: unknown hook event \"BeforeTool\""},
		{"[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash|Shell2\"\ncommand = \"x\"\n", "bad.toml:3:1: hook matcher \"Bash|Shell2\": unknown tool \"Shell2\""},
		{"[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\n", "bad.toml:1:1: command hook has no command"},
	} {
		if err := os.WriteFile(bad, []byte(tt.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := run(t, dir, "", "policy", "lint", bad); code != 1 || !strings.Contains(stderr, tt.want) {
			t.Fatalf("exit %d: %s, want %q", code, stderr, tt.want)
		}
	}
	missing := filepath.Join(dir, "hooks.toml")
	if err := os.WriteFile(missing, []byte("[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"/no/such/hook.sh --strict\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := run(t, dir, "", "policy", "lint", missing); code != 1 || !strings.Contains(out, "hooks.toml:1:1: PreToolUse hook at "+missing+":1 (command \"/no/such/hook.sh --strict\") runs /no/such/hook.sh, which does not exist") {
		t.Fatalf("missing hook program: exit %d: %s", code, out)
	}
	good := filepath.Join(dir, "good.toml")
	if err := os.WriteFile(good, []byte("[permissions]\nallow = [\"Bash(ls)\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := run(t, dir, "", "policy", "lint", good); code != 0 || !strings.HasPrefix(out, "ok:") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
}

func TestPolicyTest(t *testing.T) {
	dir := workspace(t, &txtar.Archive{Files: []txtar.File{{Name: "project/.toolgate/policy.toml", Data: []byte(`[permissions]
allow = ["Bash(npm test)"]

[[test]]
tool = "Bash"
input = { command = "npm test" }
expect = "allow"

[[test]]
tool = "Bash"
input = { command = "npm test && rm -rf /" }
expect = "allow"

[[test]]
tool = "Read"
input = { file_path = ".env" }
expect = "deny"
reason = "credential_access"
`)}}})
	t.Chdir(filepath.Join(dir, "project"))
	// Untrusted, the project's allow rule does not count.
	out, stderr, code := run(t, dir, "", "policy", "test")
	if code != 1 || !strings.Contains(out, "policy.toml:4:1: FAIL Bash: got ask (execute_effect") || !strings.Contains(out, "2 of 3 policy tests failed") || stderr != "" {
		t.Fatalf("untrusted: exit %d:\n%s%s", code, out, stderr)
	}
	trustProject(t, dir)
	out, stderr, code = run(t, dir, "", "policy", "test")
	if code != 1 || !strings.Contains(out, "policy.toml:9:1: FAIL Bash: got deny (sandbox_rejected") || !strings.Contains(out, "1 of 3 policy tests failed") || stderr != "" {
		t.Fatalf("trusted: exit %d:\n%s%s", code, out, stderr)
	}
}

// trustProject writes a user policy that trusts dir/project.
func trustProject(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "home/.config/toolgate/policy.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("trusted_projects = [\""+filepath.Join(dir, "project")+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
