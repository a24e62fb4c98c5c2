package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/toolgate/toolgate/pathres"
	"golang.org/x/sys/unix"
)

// openWithin opens p, a path resolved inside root, for reading, and
// returns it only when the file it opened lies inside root: a file or
// directory of the workspace swapped for a link to one outside after p was
// resolved is refused, whatever the link leads to. It does not wait on a
// named pipe; the caller checks that the file is regular.
func openWithin(root, p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !pathres.Within(root, real) {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: cannot tell where it was opened, so it is not read: %w", p, err)
		}
		return nil, fmt.Errorf("%s now leads outside the workspace %s (to %s): not read", p, root, real)
	}
	return f, nil
}

// openDirExact opens dir, a path resolved without links, and returns its
// descriptor only when the directory opened is still at dir: a directory
// on the way swapped for a link since dir was resolved is refused.
func openDirExact(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || real != dir {
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("%s: cannot tell where it was opened, so nothing is written: %w", dir, err)
		}
		return -1, fmt.Errorf("%s now leads through a symbolic link to %s", dir, real)
	}
	return fd, nil
}

// mkdirExact creates dir, a path resolved without links, and its missing
// parents, each inside its parent as opened by [openDirExact]: a directory
// on the way swapped for a link since dir was resolved is refused, and no
// directory is made where the link leads.
func mkdirExact(dir string) error {
	var missing []string
	cur := dir
	for {
		fi, err := os.Lstat(cur)
		if err == nil {
			if !fi.IsDir() {
				return &os.PathError{Op: "mkdir", Path: cur, Err: unix.ENOTDIR}
			}
			break
		}
		parent := filepath.Dir(cur)
		if !errors.Is(err, fs.ErrNotExist) || parent == cur {
			return err
		}
		missing = append(missing, filepath.Base(cur))
		cur = parent
	}
	if len(missing) == 0 {
		return nil
	}
	fd, err := openDirExact(cur)
	if err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		cur = filepath.Join(cur, missing[i])
		if err := unix.Mkdirat(fd, missing[i], 0o755); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return &os.PathError{Op: "mkdir", Path: cur, Err: err}
		}
		next, err := unix.Openat(fd, missing[i], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			return &os.PathError{Op: "open", Path: cur, Err: err}
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}

// replaceFile writes data to p, a path resolved without links, through a
// temporary file in its directory renamed over it, or with write false
// removes p; both relative to the directory opened by [openDirExact], so
// that nothing lands where a link swapped in on the way leads.
func replaceFile(p string, write bool, data []byte, perm os.FileMode) error {
	dir, base := filepath.Dir(p), filepath.Base(p)
	dfd, err := openDirExact(dir)
	if err != nil {
		if !write && errors.Is(err, unix.ENOENT) {
			return nil // nothing to remove
		}
		return err
	}
	defer unix.Close(dfd)
	if !write {
		if err := unix.Unlinkat(dfd, base, 0); err != nil && err != unix.ENOENT {
			return &os.PathError{Op: "remove", Path: p, Err: err}
		}
		return nil
	}
	var tmp string
	var fd int
	for i := 0; ; i++ {
		tmp = fmt.Sprintf(".%s.tmp%d-%d", base, os.Getpid(), rand.Uint32())
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != unix.EEXIST || i > 100 {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return &os.PathError{Op: "rename", Path: p, Err: err}
	}
	ok = true
	return nil
}

// openExact opens p, a path resolved without links, for reading, and
// returns it only when the file opened is still at p: a link in its place
// (ELOOP, reported as not a regular file) or a directory on the way
// swapped for a link is refused. It does not wait on a named pipe.
func openExact(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || real != p {
		unix.Close(fd)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot tell where it was opened, so it is not read: %w", p, err)
		}
		return nil, fmt.Errorf("%s now leads through a symbolic link to %s", p, real)
	}
	return os.NewFile(uintptr(fd), p), nil
}
