package stage

import "golang.org/x/sys/unix"

// auditArch is the architecture whose system calls the filter examines;
// 32-bit Arm calls carry AUDIT_ARCH_ARM.
const auditArch = unix.AUDIT_ARCH_AARCH64

// foreignNr is 0: arm64 has no second interface within its own auditArch.
const foreignNr = 0

// archDeniedSyscalls is empty: arm64 has no iopl or ioperm.
var archDeniedSyscalls []uint32
