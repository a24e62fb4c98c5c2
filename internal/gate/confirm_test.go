package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/engine"
)

// TestConfirmTarget: the word that confirms a destructive call names what
// is lost, and is never a word shorter than three characters or a glob
// that the agent chose. "$P" stands for the project's real path.
func TestConfirmTarget(t *testing.T) {
	project, home := realDir(t), realDir(t)
	for _, d := range []string{".git", "src", "dist", "y", "ab", "build/out"} {
		must(t, os.MkdirAll(filepath.Join(project, d), 0o755))
	}
	eng, _ := engineAndStore(t, nil, project, home)
	for _, tc := range []struct {
		command, want string
	}{
		{"rm -rf y src dist .git", ".git and 3 more"},
		{"rm -rf .git y", ".git and 1 more"},
		{"rm -rf dist", "dist"},
		{"rm -rf y", "$P/y"},
		{"rm -rf ./y", "$P/y"},
		{"rm -rf y ab", "$P/y and 1 more"},
		{"rm -rf build/out dist", "dist and 1 more"}, // nearer the root
		{"rm -rf src; rm -rf dist", "src and 1 more"},
		{"rm -rf src src", "src"},
		{"find . -delete", "$P"},
		{"git reset --hard", "git reset"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			_, call := eng.Decide(context.Background(), &engine.Request{
				Tool: "Bash", Input: map[string]any{"command": tc.command}, Cwd: project, Session: "s1",
			}, nil)
			got := confirmTarget(call, tc.command, nil)
			if want := strings.ReplaceAll(tc.want, "$P", project); got != want {
				t.Fatalf("confirmTarget(%q) = %q, want %q", tc.command, got, want)
			}
		})
	}
	// A glob: whatever it expands to, the word is no glob and names a
	// path the call deletes, with the count of the others.
	_, call := eng.Decide(context.Background(), &engine.Request{
		Tool: "Bash", Input: map[string]any{"command": "rm -rf *"}, Cwd: project, Session: "s1",
	}, nil)
	got := confirmTarget(call, "rm -rf *", nil)
	if !confirmable(got) || !strings.HasPrefix(got, project+"/") || !strings.Contains(got, " more") {
		t.Fatalf("confirmTarget(rm -rf *) = %q", got)
	}
	if got := confirmTarget(nil, "x", nil); got != "" {
		t.Fatalf("confirmTarget of a one-letter argument = %q, want none (\"yes\")", got)
	}
}
