//go:build amd64 || arm64

package stage

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data, the input of a seccomp filter.
type seccompData struct {
	nr, arch uint32
	args     [6]uint64
}

func (d seccompData) String() string {
	return fmt.Sprintf("nr %d arch %#x args %#x", d.nr, d.arch, d.args)
}

// call is a call of nr through this architecture's interface.
func call(nr uint32, args ...uint64) seccompData {
	d := seccompData{nr: nr, arch: auditArch}
	copy(d.args[:], args)
	return d
}

// runFilter runs prog over d as the kernel runs a seccomp filter and
// returns its action. It accepts only what the kernel's checker accepts of
// what the builder emits: aligned 32-bit loads within seccomp_data, jumps
// that stay in the program, constant returns.
func runFilter(prog []unix.SockFilter, d seccompData) (uint32, error) {
	var buf [sizeData]byte
	binary.LittleEndian.PutUint32(buf[offNr:], d.nr)
	binary.LittleEndian.PutUint32(buf[offArch:], d.arch)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(buf[offArgs+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		var cond bool
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if in.K%4 != 0 || in.K+4 > sizeData {
				return 0, fmt.Errorf("instruction %d loads offset %d", pc, in.K)
			}
			acc = binary.LittleEndian.Uint32(buf[in.K:])
			continue
		case unix.BPF_RET | unix.BPF_K:
			return in.K, nil
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			cond = acc == in.K
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			cond = acc >= in.K
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			cond = acc&in.K != 0
		default:
			return 0, fmt.Errorf("instruction %d: opcode %#x", pc, in.Code)
		}
		if cond {
			pc += int(in.Jt)
		} else {
			pc += int(in.Jf)
		}
	}
	return 0, fmt.Errorf("ran past the end of %d instructions", len(prog))
}

// policyAction is the policy written out in Go, apart from the filter's
// rules, to compare the filter with.
func policyAction(d seccompData, network bool) uint32 {
	lo := func(i int) uint32 { return uint32(d.args[i]) }
	switch {
	case d.arch != auditArch, foreignNr != 0 && d.nr >= foreignNr:
		return actENOSYS
	case slices.Contains(wantDenied(), d.nr):
		return actEPERM
	}
	switch d.nr {
	case unix.SYS_CLONE:
		if lo(0)&namespaceFlags != 0 {
			return actEPERM
		}
	case unix.SYS_UNSHARE:
		if lo(0)&(namespaceFlags|unix.CLONE_NEWTIME) != 0 {
			return actEPERM
		}
	case unix.SYS_IOCTL:
		if lo(1) == unix.TIOCSTI || lo(1) == unix.TIOCLINUX {
			return actEPERM
		}
	case unix.SYS_SOCKET:
		if network {
			break
		}
		switch d.args[0] {
		case unix.AF_NETLINK:
		case unix.AF_INET, unix.AF_INET6:
			if lo(1)&0xe != 0 || d.args[2] != 0 && d.args[2] != unix.IPPROTO_TCP {
				return actEPERM
			}
		default:
			return actEPERM
		}
	case unix.SYS_CLONE3:
		return actENOSYS
	}
	return actAllow
}

// wantDenied lists the calls refused outright, apart from deniedSyscalls.
func wantDenied() []uint32 {
	return append([]uint32{
		unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
		unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
		unix.SYS_SETNS, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE,
		unix.SYS_DELETE_MODULE, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_BPF,
		unix.SYS_PERF_EVENT_OPEN, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT,
		unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_KEYCTL,
		unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER,
		unix.SYS_IO_URING_REGISTER,
	}, archDeniedSyscalls...)
}

func mustProgram(t testing.TB, network bool) []unix.SockFilter {
	t.Helper()
	prog, err := seccompProgram(network)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// TestSeccompProgram runs the filter over calls at each rule's boundary,
// the halves of 64-bit arguments among them.
func TestSeccompProgram(t *testing.T) {
	const high = 1 << 32
	type tc struct {
		name    string
		network bool
		d       seccompData
		want    uint32
	}
	cases := []tc{
		{"read", false, call(unix.SYS_READ, 0, 0, 4096), actAllow},
		{"execve", false, call(unix.SYS_EXECVE), actAllow},
		{"openat", true, call(unix.SYS_OPENAT, 0, 0, unix.O_RDONLY), actAllow},
		{"i386 interface", false, seccompData{nr: 1, arch: unix.AUDIT_ARCH_I386}, actENOSYS},
		{"i386 socket", false, seccompData{nr: 359, arch: unix.AUDIT_ARCH_I386, args: [6]uint64{unix.AF_UNIX, 1}}, actENOSYS},
		{"32-bit Arm interface", true, seccompData{nr: 0, arch: unix.AUDIT_ARCH_ARM}, actENOSYS},
		{"read through the other 64-bit architecture", false, seccompData{nr: unix.SYS_READ, arch: unix.AUDIT_ARCH_X86_64 ^ unix.AUDIT_ARCH_AARCH64 ^ auditArch}, actENOSYS},
		{"clone3", true, call(unix.SYS_CLONE3), actENOSYS},

		{"clone fork", false, call(unix.SYS_CLONE, uint64(unix.SIGCHLD)), actAllow},
		{"clone thread", false, call(unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_FS|unix.CLONE_FILES|unix.CLONE_SIGHAND|unix.CLONE_THREAD|unix.CLONE_SYSVSEM|unix.CLONE_SETTLS|unix.CLONE_PARENT_SETTID|unix.CLONE_CHILD_CLEARTID), actAllow},
		// The kernel keeps clone's low 32 bits: high bits do nothing.
		{"clone high bits", false, call(unix.SYS_CLONE, 0xffffffff<<32|uint64(unix.SIGCHLD)), actAllow},
		// CLONE_NEWTIME is clone's exit signal field.
		{"clone exit signal 0x80", false, call(unix.SYS_CLONE, unix.CLONE_NEWTIME), actAllow},
		{"clone namespace, high bits set", false, call(unix.SYS_CLONE, high|unix.CLONE_NEWUSER), actEPERM},
		{"unshare files", false, call(unix.SYS_UNSHARE, unix.CLONE_FILES|unix.CLONE_FS), actAllow},
		{"unshare nothing", false, call(unix.SYS_UNSHARE, 0), actAllow},
		{"unshare time", false, call(unix.SYS_UNSHARE, unix.CLONE_NEWTIME), actEPERM},
		{"unshare high bits", false, call(unix.SYS_UNSHARE, high), actAllow},

		{"ioctl TIOCSTI", true, call(unix.SYS_IOCTL, 0, unix.TIOCSTI), actEPERM},
		{"ioctl TIOCSTI high bit", true, call(unix.SYS_IOCTL, 0, high|unix.TIOCSTI), actEPERM},
		{"ioctl TIOCSTI high bits", true, call(unix.SYS_IOCTL, 0, 0xffffffff<<32|unix.TIOCSTI), actEPERM},
		{"ioctl TIOCLINUX", true, call(unix.SYS_IOCTL, 3, unix.TIOCLINUX), actEPERM},
		{"ioctl TIOCLINUX high bits", false, call(unix.SYS_IOCTL, 3, 0x80000000<<32|unix.TIOCLINUX), actEPERM},
		{"ioctl TIOCSTI one bit off", true, call(unix.SYS_IOCTL, 0, unix.TIOCSTI^1), actAllow},
		{"ioctl TIOCSTI with another bit", true, call(unix.SYS_IOCTL, 0, unix.TIOCSTI|0x100000), actAllow},
		{"ioctl TIOCSTI as the fd", true, call(unix.SYS_IOCTL, unix.TIOCSTI, unix.TIOCGWINSZ), actAllow},
		{"ioctl TIOCGWINSZ", false, call(unix.SYS_IOCTL, 0, unix.TIOCGWINSZ), actAllow},

		{"socket unix, network", true, call(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM), actAllow},
		{"socket udp, network", true, call(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM), actAllow},
		{"socket unix", false, call(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM), actEPERM},
		{"socket packet", false, call(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW), actEPERM},
		{"socket vsock", false, call(unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM), actEPERM},
		{"socket netlink", false, call(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE), actAllow},
		{"socket netlink high bits", false, call(unix.SYS_SOCKET, high|unix.AF_NETLINK, unix.SOCK_RAW), actEPERM},
	}
	for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
		f := fmt.Sprintf("socket %d ", fam)
		cases = append(cases,
			tc{f + "tcp", false, call(unix.SYS_SOCKET, fam, unix.SOCK_STREAM), actAllow},
			tc{f + "tcp protocol", false, call(unix.SYS_SOCKET, fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.IPPROTO_TCP), actAllow},
			// The kernel reads the type as an int.
			tc{f + "type high bits", false, call(unix.SYS_SOCKET, fam, 0xffffffff<<32|unix.SOCK_STREAM), actAllow},
			tc{f + "family high bit", false, call(unix.SYS_SOCKET, high|fam, unix.SOCK_STREAM), actEPERM},
			tc{f + "family high bits", false, call(unix.SYS_SOCKET, 0xffffffff<<32|fam, unix.SOCK_STREAM), actEPERM},
			tc{f + "udp", false, call(unix.SYS_SOCKET, fam, unix.SOCK_DGRAM), actEPERM},
			tc{f + "raw", false, call(unix.SYS_SOCKET, fam, unix.SOCK_RAW, unix.IPPROTO_ICMP), actEPERM},
			tc{f + "seqpacket", false, call(unix.SYS_SOCKET, fam, unix.SOCK_SEQPACKET), actEPERM},
			tc{f + "rdm", false, call(unix.SYS_SOCKET, fam, unix.SOCK_RDM), actEPERM},
			tc{f + "stream sctp", false, call(unix.SYS_SOCKET, fam, unix.SOCK_STREAM, unix.IPPROTO_SCTP), actEPERM},
			tc{f + "stream mptcp", false, call(unix.SYS_SOCKET, fam, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), actEPERM},
			tc{f + "protocol tcp, high bit", false, call(unix.SYS_SOCKET, fam, unix.SOCK_STREAM, high|unix.IPPROTO_TCP), actEPERM},
			tc{f + "protocol 0, high bit", false, call(unix.SYS_SOCKET, fam, unix.SOCK_STREAM, high), actEPERM},
			tc{f + "udp, network", true, call(unix.SYS_SOCKET, fam, unix.SOCK_DGRAM, unix.IPPROTO_UDP), actAllow},
		)
	}
	for _, flag := range []uint64{unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWNET, unix.CLONE_NEWPID,
		unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWCGROUP} {
		cases = append(cases,
			tc{fmt.Sprintf("clone %#x", flag), false, call(unix.SYS_CLONE, flag|uint64(unix.SIGCHLD)), actEPERM},
			tc{fmt.Sprintf("clone %#x, network", flag), true, call(unix.SYS_CLONE, flag), actEPERM},
			tc{fmt.Sprintf("unshare %#x", flag), false, call(unix.SYS_UNSHARE, flag), actEPERM},
			tc{fmt.Sprintf("unshare %#x in the high half", flag), false, call(unix.SYS_UNSHARE, flag<<32), actAllow},
		)
	}
	for _, nr := range wantDenied() {
		for _, network := range []bool{false, true} {
			cases = append(cases,
				tc{fmt.Sprintf("denied %d", nr), network, call(nr), actEPERM},
				tc{fmt.Sprintf("denied %d, arguments", nr), network, call(nr, ^uint64(0), 1, high, 3, 4, 5), actEPERM},
				tc{fmt.Sprintf("denied %d, i386", nr), network, seccompData{nr: nr, arch: unix.AUDIT_ARCH_I386}, actENOSYS},
			)
		}
	}
	if limit := uint32(foreignNr); limit != 0 {
		cases = append(cases,
			tc{"x32 read", false, call(foreignNr | unix.SYS_READ), actENOSYS},
			tc{"x32 ptrace", true, call(foreignNr | unix.SYS_PTRACE), actENOSYS},
			tc{"number -1", true, call(^uint32(0)), actENOSYS},
			tc{"last number", true, call(limit - 1), actAllow},
		)
	}
	progs := map[bool][]unix.SockFilter{false: mustProgram(t, false), true: mustProgram(t, true)}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/network=%v", c.name, c.network), func(t *testing.T) {
			got, err := runFilter(progs[c.network], c.d)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%v: action %#x, want %#x", c.d, got, c.want)
			}
			if ref := policyAction(c.d, c.network); ref != c.want {
				t.Errorf("%v: the policy written out says %#x, the table %#x", c.d, ref, c.want)
			}
		})
	}
}

// TestSeccompDenied: the list the filter refuses is the one written out
// here, so that a call dropped from it fails this test.
func TestSeccompDenied(t *testing.T) {
	got := slices.Sorted(slices.Values(slices.Concat(deniedSyscalls, archDeniedSyscalls)))
	want := slices.Sorted(slices.Values(wantDenied()))
	if !slices.Equal(got, want) {
		t.Errorf("denied %v, want %v", got, want)
	}
}

// TestSeccompProgramSize: the filter stays far below the kernel's limit,
// and a policy many times its size still assembles, since no jump spans
// more than one rule.
func TestSeccompProgramSize(t *testing.T) {
	for _, network := range []bool{false, true} {
		if n := len(mustProgram(t, network)); n > maxInsns/8 {
			t.Errorf("network=%v: %d instructions, want at most %d", network, n, maxInsns/8)
		} else {
			t.Logf("network=%v: %d instructions", network, n)
		}
	}
	var many []rule
	for nr := range uint32(120) {
		many = append(many, rule{nr: nr, tests: []argTest{{0, argNe, 1}, {1, argEq, 2}, {2, lowAnyBit, 4}, {3, lowEq, 8}}, action: actEPERM})
	}
	prog, err := filterProgram(many)
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) < 2*maxOffset {
		t.Fatalf("%d instructions: too few to test long programs", len(prog))
	}
	for _, tc := range []struct {
		d    seccompData
		want uint32
	}{
		{call(119, 0, 2, 4, 8), actEPERM},
		{call(0, 0, 2, 4, 8), actEPERM},
		{call(120, 0, 2, 4, 8), actAllow},
		{call(119, 1, 2, 4, 8), actAllow},                // argNe
		{call(119, 1<<32|1, 2, 4, 8), actEPERM},          // argNe, high half
		{call(119, 0, 1<<32|2, 4, 8), actAllow},          // argEq, high half
		{call(119, 0, 2, 1<<32|4, 8), actEPERM},          // lowAnyBit ignores the high half
		{call(119, 0, 2, 4<<32|0xfb, 8), actAllow},       // lowAnyBit, other bits
		{call(119, 0, 2, 4, 0xffffffff<<32|8), actEPERM}, // lowEq ignores the high half
		{call(119, 0, 2, 4, 9), actAllow},                // lowEq
	} {
		if got, err := runFilter(prog, tc.d); err != nil || got != tc.want {
			t.Errorf("%v: action %#x, %v; want %#x", tc.d, got, err, tc.want)
		}
	}
}

// TestAssembleRefuses: what the kernel would refuse or run wrongly is an
// error, never a program.
func TestAssembleRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(p *program)
		want  string
	}{
		{"empty", func(p *program) {}, "0 instructions"},
		{"no return at the end", func(p *program) { p.load(offNr) }, "not a return"},
		{"label never placed", func(p *program) {
			p.jumpEq(1, p.label(), next)
			p.ret(actAllow)
		}, "never placed"},
		{"label never made", func(p *program) {
			p.jumpEq(1, next, label(3))
			p.ret(actAllow)
		}, "never placed"},
		{"backward", func(p *program) {
			l := p.label()
			p.place(l)
			p.load(offNr)
			p.jumpEq(1, l, next)
			p.ret(actAllow)
		}, "jumps to instruction 0"},
		{"too far", func(p *program) {
			l := p.label()
			p.jumpEq(1, next, l)
			for range maxOffset + 1 {
				p.load(offNr)
			}
			p.place(l)
			p.ret(actAllow)
		}, "reaches 1 to 256"},
		{"past the end", func(p *program) {
			l := p.label()
			p.jumpEq(1, next, l)
			p.ret(actAllow)
			p.place(l)
		}, "of 2"},
		{"too long", func(p *program) {
			for range maxInsns {
				p.load(offNr)
			}
			p.ret(actAllow)
		}, "4097 instructions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p program
			tc.build(&p)
			_, err := p.assemble()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
	for _, bad := range []argTest{{6, argEq, 0}, {-1, argEq, 0}, {0, lowEq, 1 << 32}, {0, lowAnyBit, 1 << 40}, {0, argOp(9), 0}} {
		if _, err := filterProgram([]rule{{nr: 1, tests: []argTest{bad}, action: actEPERM}}); err == nil {
			t.Errorf("test %+v assembled", bad)
		}
	}
}

// FuzzSeccompProgram: on any call, the filter does what the policy
// written out in Go says; a denied call, whatever its arguments, is never
// allowed.
func FuzzSeccompProgram(f *testing.F) {
	for _, nr := range append(wantDenied(), unix.SYS_CLONE, unix.SYS_UNSHARE, unix.SYS_IOCTL, unix.SYS_SOCKET, unix.SYS_CLONE3, unix.SYS_READ) {
		f.Add(false, nr, uint32(auditArch), uint64(unix.AF_INET), uint64(unix.TIOCSTI), uint64(0), uint64(1<<32))
		f.Add(false, nr, uint32(auditArch), uint64(1<<32|unix.AF_INET6), uint64(unix.SOCK_DGRAM), uint64(unix.IPPROTO_TCP), uint64(0))
		f.Add(true, nr, uint32(unix.AUDIT_ARCH_I386), uint64(unix.CLONE_NEWUSER), uint64(0), uint64(0), uint64(0))
	}
	progs := map[bool][]unix.SockFilter{false: mustProgram(f, false), true: mustProgram(f, true)}
	f.Fuzz(func(t *testing.T, network bool, nr, arch uint32, a0, a1, a2, a3 uint64) {
		d := seccompData{nr: nr, arch: arch, args: [6]uint64{a0, a1, a2, a3, a1 ^ a2, a0 ^ a3}}
		got, err := runFilter(progs[network], d)
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		if want := policyAction(d, network); got != want {
			t.Errorf("%v network=%v: action %#x, the policy says %#x", d, network, got, want)
		}
		if arch == auditArch && slices.Contains(wantDenied(), nr) && got != actEPERM {
			t.Errorf("%v: denied call gets %#x", d, got)
		}
	})
}
