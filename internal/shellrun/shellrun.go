// Package shellrun runs the shell calls the gate allows under the operating
// system's sandbox ([github.com/toolgate/toolgate/internal/sandbox]), set up
// from what the policy and the session's settings say for the call.
//
// [Run] is the whole way for one call: it works out the call's sandbox
// ([PolicyFor]), probes which of the sandbox's mechanisms the system
// provides ([Probe]) and tells the engine ([engine.Request.Containment]),
// so that what only a missing mechanism would have stopped is decided by
// the analysis alone and more strictly; then it decides the call through
// the gate, which records tool.started, tool.completed or tool.failed with
// the sandbox report, and runs the command line with [Runner] only when it
// is allowed and its receipt still holds.
//
// A command line runs as `bash -c LINE` (or the request's shell) in a
// process group of its own. When it exits, times out or its context is
// cancelled, whatever is left of the group is killed, and with
// [Options.KillEscapees] the processes that left the group too: nothing
// is left running. A call with run_in_background keeps running after the
// call returns, with its output in a file in the state directory; see
// [List] and [Kill].
package shellrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/policy"
)

// Defaults of [Options].
const (
	DefaultTimeout   = 2 * time.Minute
	MaxTimeout       = 10 * time.Minute
	DefaultMaxOutput = 8 << 20
)

// Options configure how shell calls run. The zero value runs bash with the
// default timeout and keeps no background processes.
type Options struct {
	// Timeout ends a call that runs longer, killing its process group;
	// default [DefaultTimeout]. A call's own "timeout" (milliseconds, as
	// agents give it) replaces it, up to [MaxTimeout].
	Timeout time.Duration
	// CredentialPaths are masked in addition to the home directory's and
	// the workspace's credential files, such as toolgate's state
	// directory and event log.
	CredentialPaths []string
	// Home is the home directory whose credential locations are masked;
	// empty means $HOME.
	Home string
	// Env is the programs' environment; nil means this process's.
	Env []string
	// Stdin is the program's input; nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr, when set, receive the program's output as it
	// comes, in addition to the Result, which keeps at most MaxOutput
	// bytes of each.
	Stdout, Stderr io.Writer
	// MaxOutput is how much of each stream the Result keeps; default
	// [DefaultMaxOutput].
	MaxOutput int
	// KillEscapees also kills, when a call ends, the processes that left
	// its process group (setsid, a double fork). It makes this process a
	// subreaper for the run and kills every child it has left, so set it
	// only where the program is the process's only child, as in the
	// toolgate run command.
	KillEscapees bool
	// StateDir keeps background processes: their output files and their
	// registry. "" refuses run_in_background.
	StateDir string
}

// PolicyFor returns the sandbox policy of a call confined as c:
// read-only and workspace-write map to the sandbox's modes (read-only
// also keeps the network off, as the engine judges it); in
// danger-full-access the whole file system is writable, and credentials
// stay masked. A call with no workspace (the engine judges nothing to be
// inside one) runs read-only, in workspace-write too, with the directory
// it runs in searched for credential files to mask.
func PolicyFor(c engine.Confinement, o Options) sandbox.Policy {
	p := sandbox.Policy{
		Mode: sandbox.WorkspaceWrite, Network: c.Network, Workspace: c.Workspace,
		WritableRoots: c.WritableRoots, CredentialPaths: o.CredentialPaths, Home: o.Home,
	}
	switch {
	case c.Sandbox == policy.SandboxFullAccess:
		p.WritableRoots = []string{"/"}
	case c.Sandbox == policy.SandboxReadOnly:
		p.Mode, p.Network, p.WritableRoots = sandbox.ReadOnly, false, nil
	case c.Workspace == "":
		p.Mode, p.WritableRoots = sandbox.ReadOnly, nil
	}
	if p.Workspace == "" {
		p.Workspace = c.Dir
	}
	return p
}

// probes keeps the reports of Probe, per mode, network setting and
// disabled mechanisms.
var probes sync.Map

// Probe returns the report of the sandbox p sets up: which mechanisms the
// system provides, found by running true under p once per mode and
// network setting in the life of the process. The mechanisms do not
// depend on the workspace; Masked does, and is that of the first probe.
// An error means the sandbox cannot be set up at all.
func Probe(ctx context.Context, p sandbox.Policy) (sandbox.Report, error) {
	key := fmt.Sprintf("%s|%t|%s", p.Mode, p.Network, os.Getenv(sandbox.DisableEnv))
	if rep, ok := probes.Load(key); ok {
		return rep.(sandbox.Report), nil
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return sandbox.Report{}, fmt.Errorf("probing the sandbox: %w", err)
	}
	rep, code, err := sandbox.Command(ctx, p, truePath).Run()
	if err == nil && code != 0 {
		err = fmt.Errorf("true exited with status %d", code)
	}
	if err != nil {
		return sandbox.Report{}, fmt.Errorf("probing the sandbox: %w", err)
	}
	probes.Store(key, rep)
	return rep, nil
}

// Containment is what rep says confines a program, as the engine takes
// it.
func Containment(rep sandbox.Report) *engine.Containment {
	return &engine.Containment{
		FS: rep.FS == "landlock", Mask: rep.Mask == "mountns",
		Net: rep.Net != "none" && rep.Net != "", Syscalls: rep.Seccomp == "on",
	}
}

// Runner returns a function that runs a command line with the shell under
// p in cwd with env (nil: Options.Env) and returns its output and exit
// status, and the sandbox's report in Result.Sandbox. A program that
// exits non-zero is a Result, not an error; the error says that the
// program could not be started (the Result then has no output), timed
// out or was cancelled (the Result holds what it wrote until then). In
// every case the program's process group is gone when it returns.
func Runner(p sandbox.Policy, shell string, o Options) func(ctx context.Context, command, cwd string, env []string) (gate.Result, error) {
	return func(ctx context.Context, command, cwd string, env []string) (gate.Result, error) {
		if env == nil {
			env = o.Env
		}
		return run(ctx, p, shell, command, cwd, env, o, o.timeout(0), nil)
	}
}

func (o Options) timeout(asked time.Duration) time.Duration {
	t := o.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	if asked > 0 {
		t = min(asked, MaxTimeout)
	}
	return t
}

// run runs command under p. With judged set, a program whose sandbox came
// up weaker than the call was judged for is killed at once and the run
// fails.
func run(ctx context.Context, p sandbox.Policy, shell, command, cwd string, env []string, o Options, timeout time.Duration, judged *engine.Containment) (gate.Result, error) {
	prog, err := shellProgram(shell)
	if err != nil {
		return gate.Result{}, err
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	max := o.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	stdout, stderr := &capped{max: max}, &capped{max: max}
	c := sandbox.Command(tctx, p, prog, "-c", command)
	c.Dir, c.Env, c.Stdin, c.KillEscapees = cwd, env, o.Stdin, o.KillEscapees
	c.Stdout, c.Stderr = tee(stdout, o.Stdout), tee(stderr, o.Stderr)
	rep, failed, err := start(c, judged)
	if err != nil {
		return failed, err
	}
	code, err := c.Wait()
	res := gate.Result{ExitCode: code, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Sandbox: &rep}
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("cancelled: the command's process group was killed (%w)", ctx.Err())
	case tctx.Err() != nil:
		return res, fmt.Errorf("timed out after %s: the command's process group was killed", timeout)
	case err != nil:
		return res, err
	}
	return res, nil
}

// start starts c. A program that could not be started is an error with
// the exit status a shell would give; with judged set, one whose sandbox
// came up weaker than the call was judged for is killed at once, waited
// for, and an error.
func start(c *sandbox.Cmd, judged *engine.Containment) (sandbox.Report, gate.Result, error) {
	rep, err := c.Start()
	if err != nil {
		var se *sandbox.StartError
		res := gate.Result{ExitCode: 126}
		if errors.As(err, &se) {
			res.ExitCode = se.Code
		}
		return rep, res, fmt.Errorf("the command could not be started: %w", err)
	}
	if weaker(Containment(rep), judged) {
		_ = c.Signal(syscall.SIGKILL)
		code, _ := c.Wait()
		return rep, gate.Result{ExitCode: code, Sandbox: &rep}, fmt.Errorf("the sandbox came up without a mechanism the call was judged with (%s), so the program was killed", strings.Join(rep.Missing, "; "))
	}
	return rep, gate.Result{}, nil
}

// weaker reports whether got lacks a layer that judged has.
func weaker(got, judged *engine.Containment) bool {
	return judged != nil && (judged.FS && !got.FS || judged.Mask && !got.Mask || judged.Net && !got.Net || judged.Syscalls && !got.Syscalls)
}

// shellProgram returns the program that runs a command line for the
// request's shell, which the engine has judged the line for.
func shellProgram(shell string) (string, error) {
	switch strings.ToLower(shell) {
	case "", "bash":
		return "bash", nil
	case "sh", "zsh":
		return strings.ToLower(shell), nil
	}
	return "", fmt.Errorf("shell %q cannot be run here: only bash, sh and zsh are", shell)
}

// Run decides req through g and, only when it is allowed, runs it under
// the sandbox its policy and session settings give it (see the package
// documentation). eng must be g's engine. It returns the decision, the
// Result and the error of [gate.Gate.Run]: a call that is not allowed
// does not run, and the deny is in the log.
func Run(ctx context.Context, g *gate.Gate, eng *engine.Engine, req *engine.Request, turn string, o Options) (*engine.Decision, gate.Result, error) {
	r := *req
	conf, err := eng.Confinement(&r)
	if err != nil {
		// Judged as it is (the engine denies what it cannot read), but
		// never run, and judged as if nothing contained it.
		r.Containment = &engine.Containment{}
		return g.Run(ctx, &r, turn, func(context.Context) (gate.Result, error) {
			return gate.Result{}, fmt.Errorf("the call cannot be run: %w", err)
		})
	}
	p := PolicyFor(conf, o)
	rep, perr := Probe(ctx, p)
	if perr != nil {
		r.Containment = &engine.Containment{}
		return g.Run(ctx, &r, turn, func(context.Context) (gate.Result, error) {
			return gate.Result{}, perr
		})
	}
	r.Containment = Containment(rep)
	ctx = gate.WithSandbox(ctx, rep)
	asked := time.Duration(0)
	if ms, ok := number(r.Input["timeout"]); ok && ms > 0 {
		asked = time.Duration(ms * float64(time.Millisecond))
	}
	bg, _ := r.Input["run_in_background"].(bool)
	return g.Run(ctx, &r, turn, func(ctx context.Context) (gate.Result, error) {
		if bg {
			return startBackground(p, r.Shell, conf.Command, conf.Dir, r.Session, o, r.Containment)
		}
		return run(ctx, p, r.Shell, conf.Command, conf.Dir, o.Env, o, o.timeout(asked), r.Containment)
	})
}

// number reads a JSON number as the engine decodes it.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// tee writes to the capped buffer and, when set, to w; a failing w does
// not stop the program.
func tee(c *capped, w io.Writer) io.Writer {
	if w == nil {
		return c
	}
	return io.MultiWriter(c, errorless{w})
}

type errorless struct{ w io.Writer }

func (e errorless) Write(p []byte) (int, error) {
	_, _ = e.w.Write(p)
	return len(p), nil
}
