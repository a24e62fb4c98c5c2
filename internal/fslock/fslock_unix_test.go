//go:build unix

package fslock

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirMissing(t *testing.T) {
	if _, err := Dir(t.TempDir() + "/missing"); err == nil {
		t.Fatal("locking a missing directory succeeded")
	}
}

// TestTryFile: a second open of a locked file does not get the lock, and
// gets it once the first is closed.
func TestTryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	first, second := open(), open()
	for _, step := range []struct {
		f    *os.File
		want bool
	}{{first, true}, {second, false}} {
		if got, err := TryFile(step.f); err != nil || got != step.want {
			t.Fatalf("TryFile = %v, %v; want %v", got, err, step.want)
		}
	}
	first.Close()
	if got, err := TryFile(second); err != nil || !got {
		t.Fatalf("after the holder closed: TryFile = %v, %v; want true", got, err)
	}
}
