//go:build linux

package policy

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openNoWait opens path for reading without waiting for a writer, should
// it be a FIFO (which the caller then refuses as not a regular file).
func openNoWait(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// statPath stats path, following symbolic links as reading it does.
func statPath(path string) stamp {
	var st syscall.Stat_t
	for {
		err := syscall.Stat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return errStamp(err)
		}
		return sysStamp(&st)
	}
}

// lstatPath stats path itself, not what a symbolic link there leads to.
func lstatPath(path string) stamp {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return errStamp(err)
		}
		return sysStamp(&st)
	}
}

func errStamp(err error) stamp {
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{}
	}
	return stamp{err: err.Error()}
}

func sysStamp(st *syscall.Stat_t) stamp {
	return stamp{
		exists: true, dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR, dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mode: fs.FileMode(st.Mode),
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}
}

// stampOf is the stamp of what f.Stat returned.
func stampOf(fi fs.FileInfo) stamp {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return sysStamp(st)
	}
	return stamp{exists: true, dir: fi.IsDir(), size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}
}
