//go:build amd64 || arm64

package stage

import (
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in every sandbox: what Landlock does not
// govern and a confined program has no business doing. archDeniedSyscalls
// adds those only some architectures have.
var deniedSyscalls = []uint32{
	// other processes' memory and open files
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
	// the mount table, old and new API, and namespaces
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_SETNS, unix.SYS_OPEN_BY_HANDLE_AT,
	// the kernel
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_KEXEC_LOAD,
	unix.SYS_KEXEC_FILE_LOAD, unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_REBOOT, unix.SYS_SWAPON,
	unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME,
	// the kernel keyring, shared beyond the sandbox
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	// io_uring performs socket and file operations this filter cannot see
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
}

// namespaceFlags are the clone flags that create namespaces. CLONE_NEWTIME
// shares its bit with the exit signal of clone(2), so only unshare tests it.
const namespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWPID |
	unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWCGROUP

// Actions of the filter.
const (
	actAllow  = unix.SECCOMP_RET_ALLOW
	actEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	actENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// A rule gives system call nr its action when every test holds (always,
// without tests). The filter tries the rules in order; the first that
// matches decides, and a call no rule matches is allowed.
type rule struct {
	nr     uint32
	tests  []argTest
	action uint32
}

// An argTest tests argument arg (0–5) of a call.
type argTest struct {
	arg int
	op  argOp
	val uint64
}

type argOp int

const (
	// argEq holds when the whole 64-bit argument is val: both halves
	// are compared.
	argEq argOp = iota
	// argNe holds when the 64-bit argument is not val, in either half.
	argNe
	// lowEq holds when the low 32 bits are val, whatever the high ones:
	// for an argument the kernel truncates to 32 bits.
	lowEq
	// lowAnyBit holds when a bit of val is set in the low 32 bits.
	lowAnyBit
)

// seccompRules returns the policy for a program; network says whether it
// may use the network.
//
// Where the kernel reads an argument as 32 bits (an int, or an unsigned
// long it truncates), the tests on its low half alone see what the kernel
// sees. Where a rule allows a value by equality, it compares both halves,
// so that a value with high bits set is refused rather than taken for the
// allowed one.
func seccompRules(network bool) []rule {
	var rules []rule
	for _, nr := range slices.Concat(deniedSyscalls, archDeniedSyscalls) {
		rules = append(rules, rule{nr: nr, action: actEPERM})
	}
	rules = append(rules,
		// clone(2) keeps the low 32 bits of its flags (the kernel's
		// lower_32_bits in kernel_clone_args), where every namespace flag is.
		rule{nr: unix.SYS_CLONE, tests: []argTest{{0, lowAnyBit, namespaceFlags}}, action: actEPERM},
		// unshare(2) fails with EINVAL on any flag it does not know, so a
		// call with high bits set does nothing.
		rule{nr: unix.SYS_UNSHARE, tests: []argTest{{0, lowAnyBit, namespaceFlags | unix.CLONE_NEWTIME}}, action: actEPERM},
		// Typing into the terminal: what TIOCSTI pushes is read by the
		// caller's shell after the program ends, outside every sandbox.
		// The kernel reads an ioctl request as a 32-bit number, so a
		// filter that also compared the high bits would let a request
		// with them set pass.
		rule{nr: unix.SYS_IOCTL, tests: []argTest{{1, lowEq, unix.TIOCSTI}}, action: actEPERM},
		rule{nr: unix.SYS_IOCTL, tests: []argTest{{1, lowEq, unix.TIOCLINUX}}, action: actEPERM},
	)
	if !network {
		// Landlock and the network namespace hold TCP; what they do not
		// hold is refused here: every family but IPv4, IPv6 and netlink
		// (AF_UNIX among them, see the package documentation), and on
		// IPv4 and IPv6 every type but stream (bits 1–3 of the type are
		// clear only for SOCK_STREAM) and every protocol but TCP
		// (Multipath TCP and SCTP pass Landlock's TCP rules).
		//
		// The kernel reads the three as ints. The family and the protocol
		// are allowed by equality on all 64 bits, so a value with high
		// bits set is refused; the type is tested on its low 32 bits, as
		// the kernel reads it.
		rules = append(rules, rule{nr: unix.SYS_SOCKET, tests: []argTest{
			{0, argNe, unix.AF_INET}, {0, argNe, unix.AF_INET6}, {0, argNe, unix.AF_NETLINK}}, action: actEPERM})
		for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
			rules = append(rules,
				rule{nr: unix.SYS_SOCKET, tests: []argTest{{0, argEq, fam}, {1, lowAnyBit, 0xe}}, action: actEPERM},
				rule{nr: unix.SYS_SOCKET, tests: []argTest{{0, argEq, fam}, {2, argNe, 0}, {2, argNe, unix.IPPROTO_TCP}}, action: actEPERM},
			)
		}
	}
	// clone3 passes its flags in memory a filter cannot read; ENOSYS makes
	// the C library fall back to clone(2), which is checked.
	return append(rules, rule{nr: unix.SYS_CLONE3, action: actENOSYS})
}

// seccompProgram assembles the filter: a call made through another
// architecture's interface than this one's fails with ENOSYS (on x86-64,
// int 0x80 enters the i386 table and x32 calls carry a flag in their
// number; the rules, written with this architecture's numbers, would let
// them through unexamined, and with them the 32-bit socket, io_uring,
// unshare and ptrace), then the rules decide.
func seccompProgram(network bool) ([]unix.SockFilter, error) {
	return filterProgram(seccompRules(network))
}

// filterProgram assembles the filter of rules for this architecture. Each
// rule is a block whose jumps stay within it: the call number, the tests,
// the action, then, where the tests loaded arguments, the call number
// loaded again for the next rule. No jump spans more than one rule,
// however many rules there are.
func filterProgram(rules []rule) ([]unix.SockFilter, error) {
	var p program
	native := p.label()
	p.load(offArch)
	p.jumpEq(auditArch, native, next)
	p.ret(actENOSYS)
	p.place(native)
	p.load(offNr)
	if foreignNr != 0 {
		own := p.label()
		p.jumpGE(foreignNr, next, own)
		p.ret(actENOSYS)
		p.place(own)
	}
	for _, r := range rules {
		end := p.label()
		p.jumpEq(r.nr, next, end)
		for _, t := range r.tests {
			if err := p.test(t, end); err != nil {
				return nil, fmt.Errorf("system call %d: %w", r.nr, err)
			}
		}
		p.ret(r.action)
		p.place(end)
		if len(r.tests) > 0 {
			p.load(offNr)
		}
	}
	p.ret(actAllow)
	return p.assemble()
}

// test appends the instructions of t: they fall through when it holds
// and go to fail when not.
func (p *program) test(t argTest, fail label) error {
	if t.arg < 0 || t.arg > 5 {
		return fmt.Errorf("argument %d: 0 to 5 are accepted", t.arg)
	}
	lo, hi := uint32(t.val), uint32(t.val>>32)
	switch t.op {
	case argEq:
		p.load(argHigh(t.arg))
		p.jumpEq(hi, next, fail)
		p.load(argLow(t.arg))
		p.jumpEq(lo, next, fail)
	case argNe:
		holds := p.label()
		p.load(argHigh(t.arg))
		p.jumpEq(hi, next, holds)
		p.load(argLow(t.arg))
		p.jumpEq(lo, fail, next)
		p.place(holds)
	case lowEq, lowAnyBit:
		if hi != 0 {
			return fmt.Errorf("argument %d: value %#x tested on the low 32 bits has high bits", t.arg, t.val)
		}
		p.load(argLow(t.arg))
		if t.op == lowEq {
			p.jumpEq(lo, next, fail)
		} else {
			p.jumpSet(lo, next, fail)
		}
	default:
		return fmt.Errorf("argument %d: unknown test %d", t.arg, t.op)
	}
	return nil
}

// loadSeccomp installs the filter on the calling thread, which then execs.
func loadSeccomp(network bool) error {
	prog, err := seccompProgram(network)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("loading the filter: %w", errno)
	}
	return nil
}
