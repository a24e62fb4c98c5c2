package tools

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/engine"
)

// FuzzPatchPaths: a patch parses or is refused, never panics, and a
// patch patchPaths accepts touches only paths the engine decided.
func FuzzPatchPaths(f *testing.F) {
	for _, s := range []string{
		"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n-x\n+y\n*** Delete File: d.txt\n*** End Patch\n",
		"--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
		"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n\\ No newline at end of file\n",
		"*** Begin Patch\n*** Update File: ../../etc/passwd\n@@\n-root\n+x\n*** End Patch",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fps, err := parsePatch(text)
		if err != nil {
			return
		}
		if _, err := patchPaths(text); err != nil {
			return // refused: nothing is applied
		}
		// Accepted: every path the applier touches is one the engine's
		// own reading of the headers decided.
		judged := engine.PatchPaths(text)
		for _, fp := range fps {
			for _, p := range []string{fp.path, fp.moveTo} {
				if p != "" && !slices.Contains(judged, p) {
					t.Fatalf("the patch touches %q, which the engine did not decide (decided: %v)", p, judged)
				}
			}
		}
	})
}
