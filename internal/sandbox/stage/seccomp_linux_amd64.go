package stage

import "golang.org/x/sys/unix"

// auditArch is the architecture whose system calls the filter examines.
const auditArch = unix.AUDIT_ARCH_X86_64

// foreignNr is the first call number that is not this interface's: x32
// calls enter with bit 30 (__X32_SYSCALL_BIT) set and the same auditArch.
const foreignNr = 0x40000000

// archDeniedSyscalls are denied where they exist: port I/O.
var archDeniedSyscalls = []uint32{unix.SYS_IOPL, unix.SYS_IOPERM}
