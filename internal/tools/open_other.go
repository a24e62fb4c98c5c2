//go:build !linux

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/pathres"
)

// openWithin opens p, a path resolved inside root, for reading, and
// returns it only when p still resolves inside root. Without /proc the
// check and the open are two steps, so a swap between them is not caught.
func openWithin(root, p string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if !pathres.Within(root, real) {
		return nil, fmt.Errorf("%s now leads outside the workspace %s (to %s): not read", p, root, real)
	}
	return os.Open(real)
}

// mkdirExact creates dir and its missing parents. Without /proc a link
// swapped in on the way is not caught.
func mkdirExact(dir string) error { return os.MkdirAll(dir, 0o755) }

// replaceFile writes data to p atomically or, with write false, removes
// it. Without /proc a link swapped in on the way is not caught.
func replaceFile(p string, write bool, data []byte, perm os.FileMode) error {
	if !write {
		err := os.Remove(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return writeAtomic(p, data, perm)
}

// openExact opens p for reading, refusing a link in its place. Without
// /proc a directory on the way swapped for a link is not caught.
func openExact(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return os.Open(p)
}
