package gate

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity is the device, inode and change time of a file: a write,
// a rename over it or a change of mode changes it.
func fileIdentity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d.%d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}
