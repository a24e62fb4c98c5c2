//go:build !unix

package cli

import "os"

// fileOwner is unknown where files have no uid.
func fileOwner(os.FileInfo) (int, bool) { return 0, false }
