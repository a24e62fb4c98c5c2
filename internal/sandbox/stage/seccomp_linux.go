package stage

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in every sandbox: what Landlock does not
// govern and a confined program has no business doing.
var deniedSyscalls = []string{
	// other processes' memory and open files
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	// the mount table, old and new API, and namespaces
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
	"fspick", "mount_setattr", "setns", "open_by_handle_at",
	// the kernel
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "bpf",
	"perf_event_open", "reboot", "swapon", "swapoff", "acct", "iopl", "ioperm",
	"settimeofday", "clock_settime", "clock_adjtime",
	// the kernel keyring, shared beyond the sandbox
	"keyctl", "add_key", "request_key",
	// io_uring performs socket and file operations this filter cannot see
	"io_uring_setup", "io_uring_enter", "io_uring_register",
}

// namespaceFlags are the clone flags that create namespaces. CLONE_NEWTIME
// shares its bit with the exit signal of clone(2), so only unshare tests it.
const namespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWCGROUP

// seccompPolicy returns the filter for a program; network says whether it
// may use the network.
func seccompPolicy(network bool) seccomp.Policy {
	eq := func(arg uint32, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: arg, Operation: seccomp.Equal, Value: v}
	}
	ne := func(arg uint32, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: arg, Operation: seccomp.NotEqual, Value: v}
	}
	bits := func(arg uint32, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: v}
	}
	cond := []seccomp.NameWithConditions{
		{Name: "clone", Conditions: seccomp.ArgumentConditions{bits(0, namespaceFlags)}},
		{Name: "unshare", Conditions: seccomp.ArgumentConditions{bits(0, namespaceFlags|unix.CLONE_NEWTIME)}},
		// Typing into the terminal: what TIOCSTI pushes is read by the
		// caller's shell after the program ends, outside every sandbox.
		{Name: "ioctl", Conditions: ioctlRequest(1, unix.TIOCSTI)},
		{Name: "ioctl", Conditions: ioctlRequest(1, unix.TIOCLINUX)},
	}
	if !network {
		// Landlock and the network namespace hold TCP; what they do not
		// hold is refused here: every family but IPv4, IPv6 and netlink
		// (AF_UNIX among them, see the package documentation), and on
		// IPv4 and IPv6 every type but stream (bits 1–3 of the type are
		// clear only for SOCK_STREAM) and every protocol but TCP
		// (Multipath TCP and SCTP pass Landlock's TCP rules).
		cond = append(cond, seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{
			ne(0, unix.AF_INET), ne(0, unix.AF_INET6), ne(0, unix.AF_NETLINK)}})
		for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
			cond = append(cond,
				seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{eq(0, fam), bits(1, 0xe)}},
				seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{eq(0, fam), ne(2, 0), ne(2, unix.IPPROTO_TCP)}},
			)
		}
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: deniedSyscalls, NamesWithCondtions: cond},
			// clone3 passes its flags in memory a filter cannot read; ENOSYS
			// makes the C library fall back to clone(2), which is checked.
			{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
		},
	}
}

// ioctlRequest matches argument arg when its low 32 bits are req: the
// kernel reads an ioctl request as a 32-bit number, so a filter that also
// compared the high bits would let a request with them set pass.
func ioctlRequest(arg uint32, req uint32) seccomp.ArgumentConditions {
	c := seccomp.ArgumentConditions{{Argument: arg, Operation: seccomp.BitsNotSet, Value: uint64(^req)}}
	for b := uint32(1); b != 0; b <<= 1 {
		if req&b != 0 {
			c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(b)})
		}
	}
	return c
}

// loadSeccomp installs the filters on the calling thread, which then execs.
func loadSeccomp(network bool) error {
	if err := loadNativeOnly(); err != nil {
		return err
	}
	return seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Policy: seccompPolicy(network)})
}

// loadNativeOnly installs a filter that refuses, with ENOSYS, every system
// call made through another architecture's interface than this one's (on
// x86-64, int 0x80 enters the i386 table). The policy filter lets such
// calls through unexamined, and with them the 32-bit socket, io_uring,
// unshare and ptrace the policy refuses.
func loadNativeOnly() error {
	info, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	const archOffset = 4 // struct seccomp_data: int nr; __u32 arch; …
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: archOffset},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: uint32(info.ID)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("architecture filter: %w", errno)
	}
	return nil
}
