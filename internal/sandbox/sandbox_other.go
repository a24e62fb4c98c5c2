//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"io"
	"syscall"
)

// Cmd is a program to be run under a Policy; see the Linux build.
type Cmd struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Env            []string
	Dir            string
	// KillEscapees and Require have no effect: only Linux has the sandbox.
	KillEscapees bool
	Require      []string
}

// StartError is a failure to start the program inside the sandbox.
type StartError struct {
	Code int
	Msg  string
}

func (e *StartError) Error() string { return e.Msg }

var errUnsupported = errors.New("sandbox: only Linux can confine a program")

// Command returns a Cmd that fails to start: only Linux has the sandbox.
func Command(ctx context.Context, p Policy, name string, args ...string) *Cmd { return &Cmd{} }

// Start fails: only Linux has the sandbox.
func (c *Cmd) Start() (Report, error) { return Report{}, errUnsupported }

// Wait fails: only Linux has the sandbox.
func (c *Cmd) Wait() (int, error) { return 0, errUnsupported }

// Run fails: only Linux has the sandbox.
func (c *Cmd) Run() (Report, int, error) { return Report{}, 0, errUnsupported }

// Report returns an empty Report.
func (c *Cmd) Report() Report { return Report{} }

// PID returns 0: only Linux has the sandbox.
func (c *Cmd) PID() int { return 0 }

// MountNS returns "": only Linux has the sandbox.
func (c *Cmd) MountNS() string { return "" }

// Signal fails: only Linux has the sandbox.
func (c *Cmd) Signal(sig syscall.Signal) error { return errUnsupported }
