//go:build unix

package userhook

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own and makes the end of
// its context kill the whole group, so no child of the hook outlives it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
