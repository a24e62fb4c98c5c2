package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadSwappedForLink: while read and search run, another process
// of the agent keeps swapping a workspace file (and a directory) for a link
// to a secret outside. Whatever they open must lie in the workspace: the
// secret never shows in their output or errors.
func TestReadSwappedForLink(t *testing.T) {
	const secret = "OUTSIDE-SECRET-91c2"
	for _, tc := range []struct {
		name, tool string
		input      map[string]any
		dir        bool // swap the directory d rather than the file a.txt
	}{
		{"read", "Read", map[string]any{"file_path": "a.txt"}, false},
		{"search", "Grep", map[string]any{"pattern": "SECRET"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			outside := t.TempDir()
			must(t, os.WriteFile(filepath.Join(outside, "a.txt"), []byte(secret+"\n"), 0o644))
			e.file(t, "a.txt", "harmless\n")
			e.file(t, "d/a.txt", "harmless\n")
			name := "a.txt"
			if tc.dir {
				name = "d"
			}
			real, link := filepath.Join(e.ws, name), filepath.Join(e.ws, ".swap-link")
			target := filepath.Join(outside, "a.txt")
			if tc.dir {
				target = outside
			}
			must(t, os.Symlink(target, link))
			keep := filepath.Join(e.ws, ".swap-keep")
			var stop atomic.Bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				for !stop.Load() {
					// real -> keep, link -> real, and back
					_ = os.Rename(real, keep)
					_ = os.Rename(link, real)
					_ = os.Rename(real, link)
					_ = os.Rename(keep, real)
				}
			}()
			deadline := time.Now().Add(2 * time.Second)
			for n := 0; n < 3000 && time.Now().Before(deadline); n++ {
				res, _, err := e.run(tc.tool, tc.input)
				if strings.Contains(string(res.Stdout), secret) || (err != nil && strings.Contains(err.Error(), secret)) {
					stop.Store(true)
					<-done
					t.Fatalf("call %d read the file outside the workspace: %q %v", n, res.Stdout, err)
				}
			}
			stop.Store(true)
			<-done
		})
	}
}
