// Package sandbox runs a program under the operating system's confinement,
// so that what the analysis misjudged still cannot write outside its roots,
// read a masked credential or reach the network when network is off.
//
// On Linux a program is confined by four mechanisms, each reported on its
// own in a [Report]:
//
//   - Landlock for the file system: reads are allowed broadly (all of / but
//     /dev, where only the harmless devices and terminals are open, so that
//     a root program cannot read a raw disk); writes only under the
//     workspace, the writable roots and a private temporary directory
//     (TMPDIR, removed afterwards; in read-only mode the only writable
//     directory), plus /dev/null and the terminal. A root program keeps
//     only the capabilities a build needs in its own files (CAP_CHOWN,
//     CAP_DAC_OVERRIDE, CAP_FOWNER, …) and loses every other, those that
//     reach around these rules (CAP_SYS_ADMIN, CAP_SYS_RAWIO,
//     CAP_SYS_PTRACE, …) among them; a program that is not root keeps
//     none.
//   - The network when it is off: Landlock TCP rules (ABI 4 and later: no
//     bind, no connect), or where the kernel has none, a new network
//     namespace that holds only loopback; seccomp refuses the sockets
//     that Landlock does not govern (UDP and raw on IPv4/IPv6, Multipath
//     TCP, SCTP, packet sockets, AF_UNIX — see below).
//   - A private mount namespace (inside a user namespace when the caller is
//     not root) in which every credential file is covered by an empty
//     read-only file and every credential directory by an empty read-only
//     tmpfs: the home directory's credential locations as the engine
//     classes them ([risk.HomeCredentialPaths]), files in the workspace
//     whose name marks a credential (.env, .env.local, id_rsa, *.pem, …;
//     [risk.IsCredentialName]) and the caller's extra paths.
//   - seccomp for what Landlock does not cover: ptrace, process memory
//     access and taking other processes' file descriptors, mount and the new mount API, new user namespaces and setns,
//     kernel modules, kexec, bpf, perf events, the kernel keyring,
//     io_uring (whose socket operations would pass the socket filter),
//     reboot, swap and clock setting, and typing into the terminal
//     (TIOCSTI, TIOCLINUX), which the caller's shell would read once the
//     program ends.
//
// AF_UNIX: with the network off, creating AF_UNIX sockets is refused
// (socket(2); socketpair(2) stays allowed, so a program's own processes
// still talk over socket pairs). A path socket such as
// /var/run/docker.sock, $SSH_AUTH_SOCK or a desktop bus reaches a process
// outside the sandbox that acts with that process's rights, which is a
// way out of every other confinement; Landlock does not govern connecting
// to path sockets before ABI 9. With the network on, AF_UNIX is allowed.
//
// The program runs in its own process group; when it exits, is cancelled
// or times out, whatever is left of the group is killed (and with
// [Cmd.KillEscapees], the processes that left the group).
//
// The set-up happens in a stage: Command re-executes the running binary
// through /proc/self/exe, with flags that create the namespaces; the stage
// (package [github.com/toolgate/toolgate/internal/sandbox/stage], which
// every binary linking this package contains) mounts the masks, confines
// its own thread and execs the program, which inherits every restriction.
//
// Where a mechanism is refused (no Landlock, user namespaces disabled,
// seccomp unavailable), the run continues with the rest and the Report
// says exactly which protection is missing; the caller decides how
// strictly to judge. Errors setting up a mechanism that is available stop
// the run: nothing runs half-confined by accident.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Mode is what the program may write.
type Mode string

// The modes.
const (
	// ReadOnly allows no writes except to /dev/null, the terminal and the
	// private temporary directory.
	ReadOnly Mode = "read-only"
	// WorkspaceWrite allows writes under the workspace, the writable roots
	// and the private temporary directory.
	WorkspaceWrite Mode = "workspace-write"
)

// ParseMode returns the Mode named s, or an error naming the valid modes.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ReadOnly, WorkspaceWrite:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q: use %q or %q", s, ReadOnly, WorkspaceWrite)
}

// ErrPolicy is wrapped by the errors Start returns for a policy that cannot
// be run as given: an unknown mode, a missing workspace or writable root.
var ErrPolicy = errors.New("invalid sandbox policy")

// Policy is what a confined program may do.
type Policy struct {
	// Mode is ReadOnly or WorkspaceWrite; empty means WorkspaceWrite.
	Mode Mode
	// Network allows the network; when false, TCP bind and connect, UDP,
	// raw and AF_UNIX sockets are refused.
	Network bool
	// Workspace is the directory the program may write in WorkspaceWrite
	// mode and whose credential files are masked. It must exist.
	Workspace string
	// WritableRoots are further directories writable in WorkspaceWrite
	// mode. Each must exist.
	WritableRoots []string
	// CredentialPaths are files or directories masked in addition to the
	// home directory's and the workspace's credential files, such as
	// toolgate's state directory. Paths that do not exist are skipped.
	CredentialPaths []string
	// Home is the home directory whose credential locations are masked;
	// empty means $HOME.
	Home string
}

// Report says which mechanisms confine the program. A field that names no
// mechanism ("none", "unavailable", "off") has an entry in Missing that
// says which protection is lost.
type Report struct {
	// FS is "landlock" or "none".
	FS string `json:"fs"`
	// Net is "open" when the policy allows the network; otherwise the
	// mechanism that keeps the program off it: "landlock" (TCP rules),
	// "netns" (a network namespace, where Landlock has no TCP rules), or
	// "none".
	Net string `json:"net"`
	// Mask is "mountns" when credential paths are masked, else "unavailable".
	Mask string `json:"mask"`
	// Seccomp is "on" or "off".
	Seccomp string `json:"seccomp"`
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
	LandlockABI int `json:"landlock_abi"`
	// Masked counts the credential paths covered.
	Masked int `json:"masked"`
	// Missing holds one sentence for each protection that is missing.
	Missing []string `json:"missing,omitempty"`
}

// Complete reports whether every mechanism the policy asks for is active.
func (r Report) Complete() bool { return len(r.Missing) == 0 }

// DisableEnv names the environment variable that simulates the refusal of
// mechanisms, for tests of the fallback paths only: a comma-separated list
// of "landlock" (no Landlock at all), "landlock-net" (Landlock without
// network rules, as before ABI 4), "userns" (no namespaces: no masking, no
// network namespace) and "seccomp". It is read only in a test binary or a
// binary built with -tags toolgate_sandbox_testhooks: in toolgate as it
// is installed, an agent's environment cannot switch the sandbox off.
const DisableEnv = "TOOLGATE_SANDBOX_DISABLE"

// disabled returns the mechanisms that DisableEnv switches off.
func disabled() map[string]bool {
	m := map[string]bool{}
	if !testHooks && !testing.Testing() {
		return m
	}
	for _, f := range strings.Split(os.Getenv(DisableEnv), ",") {
		if f = strings.TrimSpace(f); f != "" {
			m[f] = true
		}
	}
	return m
}
