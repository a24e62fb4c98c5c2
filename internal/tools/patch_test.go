package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPatch(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		patch   string
		wantErr string
		after   map[string]string // "" with absent listing
		absent  []string
	}{
		{
			name:   "envelope add update delete move",
			files:  map[string]string{"a.txt": "one\ntwo\nthree\n", "gone.txt": "bye\n", "old.txt": "x\ny\n"},
			patch:  "*** Begin Patch\n*** Add File: new/n.txt\n+hello\n+world\n*** Update File: a.txt\n@@ one\n-two\n+TWO\n three\n*** Delete File: gone.txt\n*** Update File: old.txt\n*** Move to: moved.txt\n@@\n x\n-y\n+z\n*** End Patch\n",
			after:  map[string]string{"new/n.txt": "hello\nworld\n", "a.txt": "one\nTWO\nthree\n", "moved.txt": "x\nz\n"},
			absent: []string{"gone.txt", "old.txt"},
		},
		{
			name:  "unified diff",
			files: map[string]string{"src/m.go": "package m\n\nfunc A() {}\n\nfunc B() {}\n"},
			patch: "diff --git a/src/m.go b/src/m.go\n--- a/src/m.go\n+++ b/src/m.go\n@@ -3,3 +3,3 @@\n func A() {}\n \n-func B() {}\n+func B() { return }\n--- /dev/null\n+++ b/src/n.go\n@@ -0,0 +1,1 @@\n+package m\n",
			after: map[string]string{"src/m.go": "package m\n\nfunc A() {}\n\nfunc B() { return }\n", "src/n.go": "package m\n"},
		},
		{
			name:  "unified no newline at end",
			files: map[string]string{"a.txt": "a\nb"},
			patch: "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n",
			after: map[string]string{"a.txt": "a\nc\n"},
		},
		{
			name:    "hunk that does not apply leaves the tree unchanged",
			files:   map[string]string{"a.txt": "one\n", "b.txt": "two\n"},
			patch:   "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-three\n+THREE\n*** Add File: c.txt\n+c\n*** End Patch\n",
			wantErr: "does not apply",
			after:   map[string]string{"a.txt": "one\n", "b.txt": "two\n"},
			absent:  []string{"c.txt"},
		},
		{
			name:    "update of a missing file",
			patch:   "*** Begin Patch\n*** Add File: c.txt\n+c\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch\n",
			wantErr: "nope.txt: it does not exist",
			absent:  []string{"c.txt", "nope.txt"},
		},
		{
			name:    "add over an existing file",
			files:   map[string]string{"a.txt": "keep\n"},
			patch:   "*** Begin Patch\n*** Add File: a.txt\n+clobber\n*** End Patch\n",
			wantErr: "it exists",
			after:   map[string]string{"a.txt": "keep\n"},
		},
		{
			name:    "path outside the workspace",
			files:   map[string]string{"a.txt": "one\n"},
			patch:   "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: ../escape.txt\n+x\n*** End Patch\n",
			wantErr: "outside the workspace",
			after:   map[string]string{"a.txt": "one\n"},
		},
		{
			name:    "not a patch",
			patch:   "hello",
			wantErr: "names no file",
		},
		{
			name:    "envelope without end",
			patch:   "*** Begin Patch\n*** Add File: x\n+x\n",
			wantErr: "does not end with *** End Patch",
			absent:  []string{"x"},
		},
		{
			name:    "bad hunk line",
			files:   map[string]string{"a.txt": "one\n"},
			patch:   "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n?what\n*** End Patch\n",
			wantErr: "must start with",
			after:   map[string]string{"a.txt": "one\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for p, c := range tt.files {
				e.file(t, p, c)
			}
			_, _, err := e.run("apply_patch", map[string]any{"input": tt.patch})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("error: %v", err)
			}
			for p, want := range tt.after {
				if got, ok := e.read(t, p); !ok || got != want {
					t.Errorf("%s = %q (exists %v), want %q", p, got, ok, want)
				}
			}
			for _, p := range tt.absent {
				if _, ok := e.read(t, p); ok {
					t.Errorf("%s exists", p)
				}
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(e.ws), "escape.txt")); err == nil {
				t.Error("a file was written outside the workspace")
			}
		})
	}
}

// TestPatchPathsAgreeWithEngine: the executor touches only paths the
// engine judged; a file header the engine's reading misses is refused.
func TestPatchPathsAgreeWithEngine(t *testing.T) {
	got, err := patchPaths("*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** Delete File: c.txt\n*** End Patch\n")
	must(t, err)
	if strings.Join(got, ",") != "a.txt,b.txt,c.txt" {
		t.Errorf("paths = %v", got)
	}
	// A header with a trailing tab is read by the engine without what
	// follows the tab; the executor's name must agree.
	got, err = patchPaths("--- a/x.txt\t2024-01-01\n+++ b/x.txt\t2024-01-01\n@@ -1 +1 @@\n-a\n+b\n")
	must(t, err)
	if strings.Join(got, ",") != "x.txt" {
		t.Errorf("paths = %v", got)
	}
	// The applier reads ---/+++ headers with the engine's own reading
	// (engine.DiffName), so a space before the timestamp's tab is part of
	// the name for both.
	got, err = patchPaths("--- a/x.txt \t2024-01-01\n+++ b/x.txt \t2024-01-01\n@@ -1 +1 @@\n-a\n+b\n")
	must(t, err)
	if strings.Join(got, ",") != "x.txt " {
		t.Errorf("paths = %q", got)
	}
}

// TestApplyWriteFailureRollsBack: when a write fails half way, the files
// already written are put back and no snapshot record is left.
func TestApplyWriteFailureRollsBack(t *testing.T) {
	e := newEnv(t)
	a := e.file(t, "a.txt", "one\n")
	e.file(t, "b", "a file, so b/c.txt cannot be created")
	cc := &call{Call: &Call{ID: "tc_fail"}}
	err := e.x.apply(cc, []change{
		{path: a, shown: "a.txt", after: []byte("ONE\n"), write: true},
		{path: filepath.Join(e.ws, "b", "c.txt"), shown: "b/c.txt", after: []byte("x"), write: true},
	})
	if err == nil || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("error = %v, want a write failure with the files put back", err)
	}
	if got, _ := e.read(t, "a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q after the failed write, want it put back", got)
	}
	if _, err := e.x.Snapshots().Get("tc_fail"); err == nil {
		t.Error("a snapshot record is left for a call that changed nothing")
	}
}

// TestPatchFields: the patch is read from any one field agents name it in
// ("command" is how Codex's hooks hand it over); two fields are refused,
// since each could be the patch the tool applies.
func TestPatchFields(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"
	for _, field := range []string{"patch", "input", "diff", "command"} {
		e := newEnv(t)
		if _, _, err := e.run("apply_patch", map[string]any{field: patch}); err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		if got, ok := e.read(t, "a.txt"); !ok || got != "x\n" {
			t.Fatalf("%s: a.txt = %q (exists %t)", field, got, ok)
		}
	}
	e := newEnv(t)
	_, _, err := e.run("apply_patch", map[string]any{"input": patch, "command": "*** Begin Patch\n*** Add File: b.txt\n+y\n*** End Patch\n"})
	if err == nil || !strings.Contains(err.Error(), "conflicts") {
		t.Fatalf("two fields: %v", err)
	}
	for _, p := range []string{"a.txt", "b.txt"} {
		if _, ok := e.read(t, p); ok {
			t.Fatalf("%s was written", p)
		}
	}
}
