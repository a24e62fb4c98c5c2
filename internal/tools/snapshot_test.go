package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRollback(t *testing.T) {
	e := newEnv(t)
	e.file(t, "a.txt", "one\ntwo\n")
	e.file(t, "gone.txt", "bye\n")
	must(t, os.Chmod(filepath.Join(e.ws, "a.txt"), 0o600))
	_, id, err := e.run("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** Add File: n.txt\n+new\n*** Delete File: gone.txt\n*** End Patch\n"})
	must(t, err)

	// Someone changes a.txt after the call: rollback refuses and shows
	// the difference, changing nothing.
	e.file(t, "a.txt", "one\nTWO\nmine\n")
	_, err = e.x.Snapshots().Rollback(id)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("rollback over a later change: %v, want a conflict", err)
	}
	if !strings.Contains(ce.Diff, "+mine") || !strings.Contains(ce.Diff, " TWO") {
		t.Errorf("diff does not show the later change:\n%s", ce.Diff)
	}
	if got, _ := e.read(t, "a.txt"); got != "one\nTWO\nmine\n" {
		t.Errorf("a.txt = %q: rollback changed it despite the conflict", got)
	}
	if got, ok := e.read(t, "n.txt"); !ok || got != "new\n" {
		t.Errorf("n.txt = %q, %v: rollback changed it despite the conflict", got, ok)
	}

	// Put back what the call wrote: now the rollback restores everything.
	e.file(t, "a.txt", "one\nTWO\n")
	must(t, os.Chmod(filepath.Join(e.ws, "a.txt"), 0o600))
	done, err := e.x.Snapshots().Rollback(id)
	must(t, err)
	if len(done) != 3 {
		t.Errorf("restored %v, want 3 files", done)
	}
	if got, _ := e.read(t, "a.txt"); got != "one\ntwo\n" {
		t.Errorf("a.txt = %q after rollback", got)
	}
	if fi, _ := os.Stat(filepath.Join(e.ws, "a.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("a.txt mode %v after rollback, want 0600", fi.Mode().Perm())
	}
	if got, _ := e.read(t, "gone.txt"); got != "bye\n" {
		t.Errorf("gone.txt = %q after rollback", got)
	}
	if _, ok := e.read(t, "n.txt"); ok {
		t.Error("n.txt, created by the call, still exists after rollback")
	}
	if _, err := e.x.Snapshots().Rollback(id); err == nil || !strings.Contains(err.Error(), "already rolled back") {
		t.Errorf("second rollback: %v", err)
	}
	if _, err := e.x.Snapshots().Rollback("../../etc/passwd"); err == nil || !strings.Contains(err.Error(), "not a tool call id") {
		t.Errorf("rollback of a path-like id: %v", err)
	}
}

// TestSnapshotFailureBlocksWrite: a write whose snapshot cannot be kept
// does not happen.
func TestSnapshotFailureBlocksWrite(t *testing.T) {
	for _, tool := range []struct {
		name  string
		input map[string]any
	}{
		{"Write", map[string]any{"file_path": "a.txt", "content": "new\n"}},
		{"Edit", map[string]any{"file_path": "a.txt", "old_string": "old", "new_string": "new"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\n"}},
	} {
		t.Run(tool.name, func(t *testing.T) {
			e := newEnv(t)
			e.file(t, "a.txt", "old\n")
			snaps := filepath.Join(e.state, "snapshots")
			if os.Geteuid() == 0 {
				// root writes through modes: put a file where the directory goes
				must(t, os.MkdirAll(e.state, 0o755))
				must(t, os.WriteFile(snaps, nil, 0o444))
			} else {
				must(t, os.MkdirAll(snaps, 0o500))
			}
			_, _, err := e.run(tool.name, tool.input)
			if err == nil || !strings.Contains(err.Error(), "snapshot") {
				t.Fatalf("error = %v, want a snapshot failure", err)
			}
			if got, _ := e.read(t, "a.txt"); got != "old\n" {
				t.Errorf("a.txt = %q: written although its snapshot failed", got)
			}
		})
	}
}

// TestRollbackThroughSwappedDirectory: after the call, the agent replaces
// a directory of the workspace with a link to one outside that holds a
// file with what the call wrote. Rollback must not write through the link.
func TestRollbackThroughSwappedDirectory(t *testing.T) {
	for _, tc := range []struct {
		name, before string // before: what the file held before the call ("" = absent)
	}{
		{"restore overwrites", "evil\n"},
		{"restore removes", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			outside := t.TempDir()
			must(t, os.WriteFile(filepath.Join(outside, "x.txt"), []byte("precious\n"), 0o644))
			must(t, os.MkdirAll(filepath.Join(e.ws, "sub"), 0o755))
			if tc.before != "" {
				e.file(t, "sub/x.txt", tc.before)
			}
			_, id, err := e.run("Write", map[string]any{"file_path": "sub/x.txt", "content": "precious\n"})
			must(t, err)
			must(t, os.RemoveAll(filepath.Join(e.ws, "sub")))
			must(t, os.Symlink(outside, filepath.Join(e.ws, "sub")))
			if _, err := e.x.Snapshots().Rollback(id); err == nil {
				t.Error("rollback through a directory swapped for a link succeeded")
			}
			if b, err := os.ReadFile(filepath.Join(outside, "x.txt")); err != nil || string(b) != "precious\n" {
				t.Errorf("file outside the workspace = %q, %v: rollback wrote through the link", b, err)
			}
		})
	}
}
