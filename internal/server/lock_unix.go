//go:build unix

package server

import (
	"errors"
	"os"
	"syscall"
)

var errNoLocks = errors.New("file locks are not supported here")

// tryLock takes an exclusive lock on f without waiting; false when
// another holds it. Closing f releases it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}
