package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestProjectDirLink checks the root a call is judged against when the
// client names its project directory (Request.Project) and the cwd leads
// out of it through a link the agent made: the root is looked up from the
// project directory, so the directory the link leads to (here a repository
// of its own) is outside the workspace and acceptEdits does not cover a
// write there; so is a directory outside the project named directly. A cwd
// whose real path stays in the project, a client started in the home
// directory, and a call without a project directory keep the root found
// from the cwd.
func TestProjectDirLink(t *testing.T) {
	w := newWorld(t)
	repo := filepath.Join(w.dir, "outside", "repo")
	must(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	must(t, os.Symlink(repo, filepath.Join(w.project, "x")))
	must(t, os.Symlink("/", filepath.Join(w.project, "slash")))
	must(t, os.Symlink(w.project, filepath.Join(w.dir, "plink")))
	e := w.engine(t, layers{})
	p := func(rel string) string { return w.project + "/" + rel }
	plink := filepath.Join(w.dir, "plink")
	write := map[string]any{"file_path": "pwned.txt", "content": "x"}
	cases := []struct {
		name, cwd, project string
		tool               string
		input              map[string]any
		want               policy.Decision
		reason             Reason
		root               string
	}{
		{"write through a link into another repository", p("x"), w.project, "Write", write, policy.Deny, ReasonSandbox, w.project},
		{"shell write through a link into another repository", p("x"), w.project, "Bash", sh("touch pwned.txt"), policy.Deny, ReasonSandbox, w.project},
		{"a link to a directory without a repository", p("out"), w.project, "Write", write, policy.Deny, ReasonSandbox, w.project},
		{"a link to /", p("slash"), w.project, "Bash", sh("touch pwned.txt"), policy.Deny, ReasonSandbox, w.project},
		{"a .. after the link", p("x/.."), w.project, "Bash", sh("touch pwned.txt"), policy.Deny, ReasonSandbox, w.project},
		{"the project directory itself named through a link", plink + "/x", plink, "Write", write, policy.Deny, ReasonSandbox, w.project},
		{"a link that stays in the project", p("inner"), w.project, "Write", write, policy.Allow, ReasonModeAcceptEdits, w.project},
		{"a plain subdirectory", p("src"), w.project, "Bash", sh("touch new.go"), policy.Allow, ReasonModeAcceptEdits, w.project},
		{"the project directory", w.project, w.project, "Write", write, policy.Allow, ReasonModeAcceptEdits, w.project},
		{"a project directory named through a link", plink + "/src", plink, "Write", write, policy.Allow, ReasonModeAcceptEdits, w.project},
		// A cwd outside the project named directly leaves it as well.
		{"a cwd elsewhere, not through the project", repo, w.project, "Write", write, policy.Deny, ReasonSandbox, w.project},
		{"a project directory above which the cwd is not", p("x"), filepath.Join(w.dir, "project-old"), "Write", write, policy.Deny, ReasonSandbox, filepath.Join(w.dir, "project-old")},
		// Unchanged: the root is found from the cwd.
		{"no project directory", p("x"), "", "Write", write, policy.Allow, ReasonModeAcceptEdits, repo},
		{"a client started in the home directory", repo, w.home, "Write", write, policy.Allow, ReasonModeAcceptEdits, repo},
		// What cannot be judged denies.
		{"a relative project directory", p("x"), "project", "Write", write, policy.Deny, ReasonInvalidRequest, ""},
		{"a project directory with a NUL", p("x"), w.project + "\x00", "Write", write, policy.Deny, ReasonInvalidRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := &Request{Tool: tc.tool, Input: tc.input, Cwd: tc.cwd, Project: tc.project, Mode: string(policy.ModeAcceptEdits)}
			d := e.Explain(context.Background(), req)
			if d.Decision != tc.want || (tc.reason != "" && d.Reason != tc.reason) {
				t.Fatalf("got %s (%s: %s), want %s (%s)%s", d.Decision, d.Reason, d.Message, tc.want, tc.reason, traceOf(d))
			}
			if tc.root != "" && (d.Trace == nil || d.Trace.Root != tc.root) {
				t.Fatalf("judged against the root %q, want %q", d.Trace.Root, tc.root)
			}
		})
	}
}

// TestFindRootFrom checks the root [FindRootFrom] gives the server's
// session binding: the one a check is judged against.
func TestFindRootFrom(t *testing.T) {
	w := newWorld(t)
	repo := filepath.Join(w.dir, "outside", "repo")
	must(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	must(t, os.Symlink(repo, filepath.Join(w.project, "x")))
	for _, tc := range []struct {
		cwd, project, root string
		err                bool
	}{
		{w.project + "/x", w.project, w.project, false},
		{w.project + "/x", "", repo, false},
		// Named directly, another repository is no less outside the
		// client's project.
		{repo, w.project, w.project, false},
		{repo + "/sub", w.project + "/src", w.project, false},
		// A client started in the home directory has no project to stay in.
		{repo, w.home, repo, false},
		{repo, "/", repo, false},
		{w.project + "/src", w.project, w.project, false},
		{w.project + "/x", "rel", "", true},
	} {
		root, _, err := FindRootFrom(tc.cwd, tc.project, w.home)
		if (err != nil) != tc.err || root != tc.root {
			t.Errorf("FindRootFrom(%q, %q) = %q, %v; want %q (error %v)", tc.cwd, tc.project, root, err, tc.root, tc.err)
		}
	}
}
