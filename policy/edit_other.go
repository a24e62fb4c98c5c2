//go:build !unix

package policy

import (
	"io/fs"
	"os"
	"sync"
)

// editMu serializes AddRule within the process where flock is missing.
var editMu sync.Mutex

// lockDir serializes the writers of this process only.
func lockDir(string) (func(), error) {
	editMu.Lock()
	return editMu.Unlock, nil
}

// syncDir is a no-op where directories cannot be synced.
func syncDir(string) error { return nil }

// keepOwner is a no-op where files have no Unix owner.
func keepOwner(*os.File, fs.FileInfo) {}
