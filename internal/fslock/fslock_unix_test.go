//go:build unix

package fslock

import "testing"

func TestDirMissing(t *testing.T) {
	if _, err := Dir(t.TempDir() + "/missing"); err == nil {
		t.Fatal("locking a missing directory succeeded")
	}
}
