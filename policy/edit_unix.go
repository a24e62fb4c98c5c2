//go:build unix

package policy

import (
	"io/fs"
	"os"
	"syscall"
)

// syncDir flushes a directory entry change (a rename) to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// keepOwner gives f the owner and group of the file it replaces, when the
// process may (it is root, or the group is one of its own); it is best
// effort.
func keepOwner(f *os.File, before fs.FileInfo) {
	st, ok := before.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if int(st.Uid) == os.Getuid() && int(st.Gid) == os.Getgid() {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}
