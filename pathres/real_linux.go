package pathres

import (
	"strconv"
	"strings"
	"syscall"
)

// oPath is Linux's O_PATH (the same value on every architecture Go
// supports there); the syscall package does not export it.
const oPath = 0x200000

// kernelReal asks the kernel for the real path of an existing file: it
// opens the path (following every link) without reading it and reads back
// the name the kernel holds for the open file. Three system calls,
// whatever the depth of the path. It reports false when that is not
// possible (the path is missing, /proc is not mounted, the file was
// removed meanwhile), and the caller then walks the path itself.
func kernelReal(abs string) (string, bool) {
	fd, err := syscall.Open(abs, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer syscall.Close(fd)
	var buf [4096]byte
	n, err := syscall.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n <= 0 || n >= len(buf) {
		return "", false
	}
	p := string(buf[:n])
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		return "", false
	}
	return p, true
}
