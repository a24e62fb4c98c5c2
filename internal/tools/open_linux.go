package tools

import (
	"fmt"
	"os"
	"strconv"

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
	if err != nil || !within(root, real) {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: cannot tell where it was opened, so it is not read: %w", p, err)
		}
		return nil, fmt.Errorf("%s now leads outside the workspace %s (to %s): not read", p, root, real)
	}
	return f, nil
}
