package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

func TestPolicyImportClaude(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, "home"))
	proj := filepath.Join(dir, "proj")
	settings := filepath.Join(proj, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"permissions": {"allow": ["Bash(npm test)", "Task"], "deny": ["Read(/secrets/**)"], "additionalDirectories": ["../lib"]}}`), 0o644)
	t.Chdir(proj)

	run := func(args ...string) (string, string, error) {
		c := policyCmd()
		var out, errb bytes.Buffer
		c.SetOut(&out)
		c.SetErr(&errb)
		c.SetArgs(args)
		c.SilenceUsage, c.SilenceErrors = true, true
		err := c.Execute()
		return out.String(), errb.String(), err
	}
	out, stderr, err := run("import", "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	f, err := policy.ParseFile("p.toml", []byte(out), policy.LayerUser)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(f.Rules) != 2 || !strings.Contains(out, "# from .claude/settings.json permissions.deny[0]") || !strings.Contains(out, `"`+filepath.Join(dir, "lib")+`"`) {
		t.Errorf("policy:\n%s", out)
	}
	if !strings.Contains(stderr, `not translated: permissions.allow[1] "Task"`) {
		t.Errorf("stderr: %s", stderr)
	}

	dst := filepath.Join(dir, "policy.toml")
	os.WriteFile(dst, []byte("keep"), 0o644)
	if _, _, err := run("import", "claude-code", settings, "--output", dst); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("overwrote without --force: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "keep" {
		t.Errorf("file changed: %q", b)
	}
	if _, _, err := run("import", "claude-code", settings, "--output", dst, "--force"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); !strings.Contains(string(b), "# from "+settings+" permissions.allow[0]") {
		t.Errorf("--output wrote\n%s", b)
	}

	// A deny rule left out makes the policy looser: it is still written,
	// and the command fails.
	os.WriteFile(settings, []byte(`{"permissions": {"allow": ["Bash(npm test)"], "deny": ["Task"]}}`), 0o644)
	out, stderr, err = run("import", "claude-code")
	if err == nil || !strings.Contains(err.Error(), "1 deny or ask rule(s) could not be translated") || !strings.Contains(out, "npm test") || !strings.Contains(stderr, `permissions.deny[0] "Task"`) {
		t.Errorf("an untranslated deny rule: err %v\nout %s\nstderr %s", err, out, stderr)
	}

	os.WriteFile(settings, []byte("{\n  \"permissions\": {\n"), 0o644)
	if _, _, err := run("import", "claude-code"); err == nil || !strings.Contains(err.Error(), ".claude/settings.json:") {
		t.Errorf("malformed: %v", err)
	}
}
