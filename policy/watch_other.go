//go:build !linux

package policy

import (
	"errors"
	"io/fs"
	"os"
)

// Without a change time or an inode number, a stamp is the size, mode and
// modification time; a file whose modification time was set back to what
// it was is caught only within the racy window.

func openNoWait(path string) (*os.File, error) { return os.Open(path) }

func statPath(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return errStamp(err)
	}
	return stampOf(fi)
}

func lstatPath(path string) stamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return errStamp(err)
	}
	return stampOf(fi)
}

func errStamp(err error) stamp {
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{}
	}
	return stamp{err: err.Error()}
}

func stampOf(fi fs.FileInfo) stamp {
	t := fi.ModTime().UnixNano()
	return stamp{exists: true, dir: fi.IsDir(), size: fi.Size(), mode: fi.Mode(), mtime: t, ctime: t}
}
