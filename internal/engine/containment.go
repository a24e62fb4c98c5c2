package engine

import (
	"fmt"
	"strings"
)

// Containment says which layers of the sandbox will confine a call when it
// runs. A layer that is false is missing: what only it would have stopped
// is then decided by the analysis alone, and more strictly. Code the
// analysis cannot follow into every effect — an interpreter's script or
// inline code (python3 -c, sh script.sh, node -e) — asks even under an
// allow rule, since nothing but that layer would stop it from writing
// outside the workspace, reading a credential or reaching the network.
//
// The ask is a floor like that of other code the words do not show: no
// allow rule lifts it; a mode lifts what it lifts without a sandbox.
type Containment struct {
	// FS: writes outside the workspace and the writable roots are blocked
	// (Landlock).
	FS bool `json:"fs"`
	// Mask: credential files are masked (a private mount namespace).
	Mask bool `json:"mask"`
	// Net: the network setting is enforced (network off holds).
	Net bool `json:"net"`
	// Syscalls: the system calls no confined program needs (ptrace,
	// mount, bpf, …) are refused (seccomp).
	Syscalls bool `json:"syscalls"`
}

// Missing names the missing layers, in a fixed order; nil when none is.
func (c Containment) Missing() []string {
	var m []string
	if !c.FS {
		m = append(m, "file system confinement")
	}
	if !c.Mask {
		m = append(m, "credential masking")
	}
	if !c.Net {
		m = append(m, "network confinement")
	}
	if !c.Syscalls {
		m = append(m, "system call filter")
	}
	return m
}

// uncontained says why u asks for want of containment, or "" when the
// request does not say what contains it, every layer is there, or u runs
// no code the analysis cannot follow.
func uncontained(c *Containment, u *Unit) string {
	if c == nil || u.interpreter == "" {
		return ""
	}
	missing := c.Missing()
	if len(missing) == 0 {
		return ""
	}
	what := u.interpreter + " runs a script the analysis does not follow"
	if u.inline != "" {
		what = u.inline
	}
	return fmt.Sprintf("%s, and the sandbox has no %s to contain it", what, strings.Join(missing, " and no "))
}
