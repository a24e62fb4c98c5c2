// Package fslock serializes the read-modify-write of files in one
// directory among processes: toolgate's policy files, and the files a
// server keeps in its state directory.
package fslock

import (
	"errors"
	"os"
)

// ErrUnsupported is returned by [TryFile] where files cannot be locked.
var ErrUnsupported = errors.New("file locks are not supported here")

// Dir takes an exclusive lock on the directory dir, waiting for it, and
// returns the function that releases it. On Unix it is an advisory flock,
// which every process that writes there through Dir respects; elsewhere it
// serializes the callers of this process only.
func Dir(dir string) (func(), error) { return lockDir(dir) }

// TryFile takes an exclusive lock on the open file f without waiting:
// false when another open of the file holds it (in this process or
// another). Closing f releases the lock. On Unix it is an advisory
// flock; elsewhere it returns [ErrUnsupported].
func TryFile(f *os.File) (bool, error) { return tryFile(f) }
