package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func runHookCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	parent := &cobra.Command{Use: "hook", SilenceUsage: true, SilenceErrors: true}
	parent.AddCommand(hookInstallCmds()...)
	var out bytes.Buffer
	parent.SetOut(&out)
	parent.SetErr(&out)
	parent.SetArgs(args)
	err := parent.Execute()
	return out.String(), err
}

func TestHookInstallCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", filepath.Join(home, "codexhome"))
	proj := t.TempDir()
	orig := "{\n  \"model\": \"opus\"\n}\n"
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()

	out, err := runHookCmd(t, "install", "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), `"command": "`+exe+` hook claude-code"`) || !strings.Contains(out, "updated "+settings) {
		t.Errorf("install: %s\n%s", out, b)
	}
	if _, err := runHookCmd(t, "uninstall", "claude-code", "--user"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(settings); string(b) != orig {
		t.Errorf("uninstall left\n%s", b)
	}

	out, err = runHookCmd(t, "install", "codex", "--project", "--dir", proj, "--command", "/usr/bin/toolgate")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(proj, ".codex", "hooks.json")); err != nil || !strings.Contains(string(b), `"/usr/bin/toolgate hook codex"`) {
		t.Errorf("codex hooks.json: %v\n%s", err, b)
	}
	if !strings.Contains(out, "trust") {
		t.Errorf("no trust note: %s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "codexhome")); err == nil {
		t.Errorf("--project wrote to CODEX_HOME")
	}

	if _, err := runHookCmd(t, "install", "cursor"); err == nil || !strings.Contains(err.Error(), "unknown client") {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := runHookCmd(t, "install", "gemini", "--user", "--project"); err == nil {
		t.Errorf("--user --project accepted")
	}
	bad := filepath.Join(home, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("{\n  \"a\": \n}\n"), 0o644)
	if _, err := runHookCmd(t, "install", "gemini"); err == nil || !strings.Contains(err.Error(), bad+":3:1") {
		t.Errorf("malformed: %v", err)
	}
}
