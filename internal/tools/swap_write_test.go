package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteSwappedForLink: a write's path was resolved inside the
// workspace; before the file is written (or removed), another process of
// the agent swaps a directory on the way for a link to one outside. The
// write or removal fails and nothing outside changes.
func TestWriteSwappedForLink(t *testing.T) {
	for _, write := range []bool{true, false} {
		e := newEnv(t)
		outside := t.TempDir()
		must(t, os.WriteFile(filepath.Join(outside, "f.txt"), []byte("precious\n"), 0o644))
		p := e.file(t, "d/f.txt", "mine\n") // resolved while d was a directory
		must(t, os.RemoveAll(filepath.Join(e.ws, "d")))
		must(t, os.Symlink(outside, filepath.Join(e.ws, "d")))
		if err := applyOne(p, write, []byte("written\n"), 0o644); err == nil {
			t.Errorf("write=%v: applyOne through a link succeeded", write)
		}
		if b, err := os.ReadFile(filepath.Join(outside, "f.txt")); err != nil || string(b) != "precious\n" {
			t.Errorf("write=%v: the file outside = %q, %v", write, b, err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Errorf("write=%v: outside holds %d entries, want 1", write, len(ents))
		}
	}
}

// TestWriteNewDirSwappedForLink: a write to a file in a directory that
// does not exist yet was resolved inside the workspace; before it is
// written, a directory on the way is swapped for a link to one outside.
// The write fails and no directory is made outside.
func TestWriteNewDirSwappedForLink(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(e.ws, "d"), 0o755))
	p := filepath.Join(e.ws, "d", "new", "deeper", "f.txt") // resolved while d was a directory
	must(t, os.Remove(filepath.Join(e.ws, "d")))
	must(t, os.Symlink(outside, filepath.Join(e.ws, "d")))
	if err := applyOne(p, true, []byte("written\n"), 0o644); err == nil {
		t.Error("applyOne through a link succeeded")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("outside holds %d entries, want none: a directory was made through the link", len(ents))
	}
	// without the swap the directories are made and the file written
	must(t, os.Remove(filepath.Join(e.ws, "d")))
	must(t, os.MkdirAll(filepath.Join(e.ws, "d"), 0o755))
	must(t, applyOne(p, true, []byte("written\n"), 0o644))
	if got, ok := e.read(t, "d/new/deeper/f.txt"); !ok || got != "written\n" {
		t.Errorf("d/new/deeper/f.txt = %q, %v", got, ok)
	}
}

// TestReadPriorSwappedForLink: what a write, patch or rollback reads
// before it changes a file comes from the path resolved, not from where a
// directory swapped for a link since then leads.
func TestReadPriorSwappedForLink(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "f.txt"), []byte("OUTSIDE-SECRET\n"), 0o644))
	p := e.file(t, "d/f.txt", "mine\n")
	must(t, os.RemoveAll(filepath.Join(e.ws, "d")))
	must(t, os.Symlink(outside, filepath.Join(e.ws, "d")))
	pr, err := readPrior(p)
	if err == nil || strings.Contains(string(pr.data), "SECRET") {
		t.Errorf("readPrior through a link: %q, %v; want an error", pr.data, err)
	}
}
