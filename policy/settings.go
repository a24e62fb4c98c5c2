package policy

import (
	"fmt"
	"strings"
)

// Mode is a preset on top of the two axes.
type Mode string

// The modes.
const (
	// ModeDefault asks where the pipeline says ask.
	ModeDefault Mode = "default"
	// ModeAcceptEdits allows file edits inside the workspace without asking.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan is read-only: write and execute tools are not offered.
	ModePlan Mode = "plan"
	// ModeDontAsk turns every ask into a deny.
	ModeDontAsk Mode = "dontAsk"
	// ModeBypass allows everything that no deny rule, sandbox, credential
	// check, ask rule or protected path stops — except destructive effects
	// and what cannot be judged statically, which still ask.
	ModeBypass Mode = "bypassPermissions"
	// ModeStrict denies everything no allow rule matches.
	ModeStrict Mode = "strict"
)

// Approval is the approval axis: when a person is asked.
type Approval string

// The approval settings.
const (
	// ApprovalOnRequest asks only where the pipeline says ask.
	ApprovalOnRequest Approval = "on-request"
	// ApprovalAlways asks for every call the pipeline would allow.
	ApprovalAlways Approval = "always"
	// ApprovalNever never asks: what would ask runs if the sandbox contains
	// it, and destructive, protected-path and ask-rule asks are denied.
	ApprovalNever Approval = "never"
)

// Sandbox is the sandbox axis: what is structurally permitted.
type Sandbox string

// The sandbox settings.
const (
	// SandboxReadOnly denies every write and all network access.
	SandboxReadOnly Sandbox = "read-only"
	// SandboxWorkspaceWrite permits writes under the workspace and the
	// writable roots; network only when enabled.
	SandboxWorkspaceWrite Sandbox = "workspace-write"
	// SandboxFullAccess permits writes anywhere and network access.
	SandboxFullAccess Sandbox = "danger-full-access"
)

var (
	modes      = []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypass, ModeStrict}
	approvals  = []Approval{ApprovalOnRequest, ApprovalAlways, ApprovalNever}
	sandboxes  = []Sandbox{SandboxReadOnly, SandboxWorkspaceWrite, SandboxFullAccess}
	modeAlias  = map[string]Mode{"bypass": ModeBypass, "acceptedits": ModeAcceptEdits, "dontask": ModeDontAsk}
	sandboxAls = map[string]Sandbox{"full-access": SandboxFullAccess, "workspace": SandboxWorkspaceWrite}
)

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range modes {
		if string(m) == s {
			return m, nil
		}
	}
	if m, ok := modeAlias[strings.ToLower(s)]; ok {
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want %s)", s, joinNames(modes))
}

// ParseApproval returns the approval setting named s.
func ParseApproval(s string) (Approval, error) {
	for _, a := range approvals {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown approval %q (want %s)", s, joinNames(approvals))
}

// ParseSandbox returns the sandbox setting named s.
func ParseSandbox(s string) (Sandbox, error) {
	for _, v := range sandboxes {
		if string(v) == s {
			return v, nil
		}
	}
	if v, ok := sandboxAls[s]; ok {
		return v, nil
	}
	return "", fmt.Errorf("unknown sandbox %q (want %s)", s, joinNames(sandboxes))
}

func joinNames[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
