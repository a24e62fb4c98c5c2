//go:build !unix

package policy

import (
	"io/fs"
	"os"
)

// syncDir is a no-op where directories cannot be synced.
func syncDir(string) error { return nil }

// keepOwner is a no-op where files have no Unix owner.
func keepOwner(*os.File, fs.FileInfo) {}
