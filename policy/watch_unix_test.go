//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadFIFO: a FIFO where a policy file belongs is refused at once,
// not waited on.
func TestLoadFIFO(t *testing.T) {
	root := t.TempDir()
	must(t, os.Mkdir(filepath.Join(root, ".toolgate"), 0o755))
	if err := syscall.Mkfifo(filepath.Join(root, LocalFile), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := LoadSet(Locations{Project: root}, "")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loading waits on a FIFO")
	}
}
