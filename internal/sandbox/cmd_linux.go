package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/internal/sandbox/stage"
	"github.com/toolgate/toolgate/risk"
)

// Cmd is a program to be run under a Policy. Set the exported fields
// before Start; a Cmd runs once.
type Cmd struct {
	// Stdin, Stdout and Stderr are the program's streams; nil means
	// /dev/null. An *os.File is handed to the program as it is.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is the program's environment; nil means this process's. TMPDIR
	// is set to the private temporary directory in any case.
	Env []string
	// Dir is the program's working directory; empty means the workspace.
	Dir string
	// KillEscapees makes this process a child subreaper for the run, so
	// that processes of the program that leave its process group (setsid,
	// a double fork) come back to it instead of to init, and Wait kills
	// them too. It concerns the whole process: Wait kills every child this
	// process has left, so set it only where the program is the process's
	// only child, as in the toolgate sandbox command.
	KillEscapees bool
	// Require names mechanisms the program must not run without:
	// "landlock" (the file system rules) and "mountns" (the credential
	// masks). When one is missing or refused, Start fails and nothing
	// runs, instead of running with what the system has.
	Require []string

	ctx      context.Context
	policy   Policy
	argv     []string
	cmd      *exec.Cmd
	scratch  string
	report   Report
	fg       int // terminal whose foreground the program took, or -1
	started  bool
	finished bool

	mu     sync.Mutex
	exited bool // the program has exited; its process group may be gone

	mntNS string // the program's own mount namespace ("mnt:[N]"), or ""
	// mntFile holds mntNS open until Wait has killed what is in it: a
	// namespace's number goes to the next namespace made once it is
	// freed, and that may be another program's.
	mntFile *os.File
}

// StartError is a failure to start the program inside the sandbox: Code is
// 127 when the program was not found, 126 otherwise, as a shell would
// exit.
type StartError struct {
	Code int
	Msg  string
}

func (e *StartError) Error() string { return e.Msg }

// Command returns a Cmd that runs name with args under p. Cancelling ctx
// kills the program and everything in its process group.
func Command(ctx context.Context, p Policy, name string, args ...string) *Cmd {
	return &Cmd{ctx: ctx, policy: p, argv: append([]string{name}, args...), fg: -1}
}

// Run starts the program, waits for it and returns the Report and the
// program's exit status (128+N when a signal N ended it).
func (c *Cmd) Run() (Report, int, error) {
	rep, err := c.Start()
	if err != nil {
		return rep, 0, err
	}
	code, err := c.Wait()
	return rep, code, err
}

// Report returns the mechanisms that confine the program; it is complete
// once Start has returned without error.
func (c *Cmd) Report() Report { return c.report }

// PID returns the program's process id, which is also its process group
// id, once Start has returned without error; 0 before.
func (c *Cmd) PID() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// MountNS returns the program's own mount namespace ("mnt:[N]") once Start
// has returned without error, or "" when it has none: every process the
// program starts stays in it, those that leave its process group too.
func (c *Cmd) MountNS() string { return c.mntNS }

// Signal sends sig to the program's whole process group. It may be called
// while Wait waits; once the program has exited it does nothing and
// returns an error, so that it never reaches a process group whose number
// has been reused.
func (c *Cmd) Signal(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process == nil || c.exited {
		return errors.New("sandbox: the program is not running")
	}
	return unix.Kill(-c.cmd.Process.Pid, sig)
}

// plan is the parent's view of what the stage will set up.
type plan struct {
	cfg    stage.Config
	rep    Report
	userns bool // the namespaces need a user namespace (not root)
	ns     bool // namespaces requested
	off    map[string]bool
	ws     string // the workspace's real path
	tmp    string
}

// Start sets the sandbox up and starts the program. It returns once the
// program has replaced the sandbox's set-up stage, so the Report says what
// confines the program itself. An invalid policy or a failure to set up an
// available mechanism is an error and nothing runs.
func (c *Cmd) Start() (Report, error) {
	if c.started {
		return Report{}, errors.New("sandbox: Cmd started twice")
	}
	c.started = true
	pl, err := c.plan()
	if err == nil {
		err = c.required(pl.rep)
	}
	if err != nil {
		c.removeScratch()
		return Report{}, err
	}
	if c.KillEscapees {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			c.removeScratch()
			return Report{}, fmt.Errorf("sandbox: becoming a subreaper: %w", err)
		}
	}
	err = c.start(pl)
	if err != nil && pl.ns && refused(err) {
		// The kernel refuses the namespaces (user namespaces disabled, a
		// container without the privilege): run without them and say so.
		pl.withoutNamespaces(fmt.Sprintf("namespaces refused (%v)", err))
		if err = c.required(pl.rep); err == nil {
			err = c.start(pl)
		}
	}
	if err != nil {
		c.removeScratch()
		c.endSubreaper()
		return Report{}, err
	}
	return c.report, nil
}

// required returns an error naming the first mechanism of c.Require that
// rep lacks, or that is not known.
func (c *Cmd) required(rep Report) error {
	for _, m := range c.Require {
		switch {
		case m == "landlock" && rep.FS == "landlock", m == "mountns" && rep.Mask == "mountns":
		case m == "landlock" || m == "mountns":
			return fmt.Errorf("sandbox: %s is required and unavailable here (%s); nothing was run", m, strings.Join(rep.Missing, "; "))
		default:
			return fmt.Errorf("%w: unknown mechanism %q to require: use landlock or mountns", ErrPolicy, m)
		}
	}
	return nil
}

// refused reports whether err is the kernel refusing to create namespaces.
func refused(err error) bool {
	for _, e := range []error{unix.EPERM, unix.EINVAL, unix.ENOSPC, unix.EUSERS, unix.EACCES} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (c *Cmd) plan() (*plan, error) {
	p := c.policy
	switch p.Mode {
	case "":
		p.Mode = WorkspaceWrite
	case ReadOnly, WorkspaceWrite:
	default:
		return nil, fmt.Errorf("%w: unknown mode %q: use %q or %q", ErrPolicy, p.Mode, ReadOnly, WorkspaceWrite)
	}
	if p.Workspace == "" {
		return nil, fmt.Errorf("%w: no workspace given", ErrPolicy)
	}
	ws, err := realDir(p.Workspace, "workspace")
	if err != nil {
		return nil, err
	}
	pl := &plan{off: disabled(), ws: ws}
	pl.cfg.Argv = c.argv
	pl.cfg.Network = p.Network
	base, err := os.MkdirTemp("", "toolgate-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: private temporary directory: %w", err)
	}
	c.scratch = base
	pl.tmp = filepath.Join(base, "tmp")
	pl.cfg.Scratch = filepath.Join(base, "mask")
	for _, d := range []string{pl.tmp, pl.cfg.Scratch} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	pl.cfg.Writable = []string{pl.tmp}
	if p.Mode == WorkspaceWrite {
		pl.cfg.Writable = append(pl.cfg.Writable, ws)
		for _, r := range p.WritableRoots {
			d, err := realDir(r, "writable root")
			if err != nil {
				return nil, err
			}
			pl.cfg.Writable = append(pl.cfg.Writable, d)
		}
	}

	// Landlock.
	abi := 0
	if !pl.off["landlock"] {
		if v, err := llsys.LandlockGetABIVersion(); err == nil {
			abi = v
		}
	}
	pl.rep.LandlockABI = abi
	pl.cfg.Landlock = abi >= 1
	pl.cfg.LandlockNet = abi >= 4 && !p.Network && !pl.off["landlock-net"]
	if pl.cfg.Landlock {
		pl.rep.FS = "landlock"
	} else {
		pl.rep.FS = "none"
		pl.rep.Missing = append(pl.rep.Missing, "file system: Landlock is unavailable, so writes outside the workspace and the writable roots are not blocked, and masked credentials stay readable through /proc/PID/root of processes outside the sandbox")
	}

	// seccomp.
	pl.cfg.Seccomp = !pl.off["seccomp"]
	if pl.cfg.Seccomp {
		pl.rep.Seccomp = "on"
	} else {
		pl.rep.Seccomp = "off"
		pl.rep.Missing = append(pl.rep.Missing, "seccomp: disabled, so ptrace, mount, new user namespaces, kernel modules, bpf and keyctl are not blocked"+map[bool]string{false: ", nor UDP, raw and AF_UNIX sockets", true: ""}[p.Network])
	}

	// Namespaces: a mount namespace for the masks, a network namespace
	// when the network is off.
	home := p.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	pl.cfg.MaskFiles, pl.cfg.MaskDirs, err = credentialPaths(home, ws, p.CredentialPaths)
	if err != nil {
		return nil, err
	}
	pl.ns = !pl.off["userns"]
	pl.userns = os.Geteuid() != 0
	if pl.ns {
		// The network namespace is the fallback for Landlock's TCP rules:
		// with them, seccomp refuses every other socket, and a namespace
		// would only add to the start-up time.
		pl.cfg.MountNS, pl.cfg.NetNS = true, !p.Network && !pl.cfg.LandlockNet
		pl.rep.Mask = "mountns"
		pl.rep.Masked = len(pl.cfg.MaskFiles) + len(pl.cfg.MaskDirs)
	} else {
		pl.withoutNamespaces("namespaces disabled")
	}
	pl.netReport()
	return pl, nil
}

// withoutNamespaces turns the namespaces off and records what is lost.
func (pl *plan) withoutNamespaces(why string) {
	pl.ns, pl.cfg.MountNS, pl.cfg.NetNS = false, false, false
	pl.rep.Mask, pl.rep.Masked = "unavailable", 0
	if all := append(append([]string(nil), pl.cfg.MaskFiles...), pl.cfg.MaskDirs...); len(all) > 0 {
		list := strings.Join(all, ", ")
		if len(all) > 5 {
			list = fmt.Sprintf("%s and %d more", strings.Join(all[:5], ", "), len(all)-5)
		}
		pl.rep.Missing = append(pl.rep.Missing, fmt.Sprintf("credential masking: %s, so %d credential path(s) stay readable: %s; System V IPC is shared with processes outside too", why, len(all), list))
	} else {
		pl.rep.Missing = append(pl.rep.Missing, fmt.Sprintf("credential masking: %s, so credential files created later stay readable; System V IPC is shared with processes outside too", why))
	}
	pl.netReport()
}

// netReport sets Report.Net from the plan.
func (pl *plan) netReport() {
	pl.rep.Missing = removePrefix(pl.rep.Missing, "network: ")
	if pl.cfg.Network {
		pl.rep.Net = "open"
		return
	}
	var by []string
	if pl.cfg.LandlockNet {
		by = append(by, "landlock")
	}
	if pl.cfg.NetNS {
		by = append(by, "netns")
	}
	switch {
	case len(by) == 0:
		pl.rep.Net = "none"
		pl.rep.Missing = append(pl.rep.Missing, "network: neither Landlock network rules (ABI 4) nor a network namespace is available, so TCP connections are not blocked")
	default:
		pl.rep.Net = strings.Join(by, "+")
	}
}

func removePrefix(list []string, prefix string) []string {
	out := list[:0]
	for _, s := range list {
		if !strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// realDir resolves dir to an absolute path without symbolic links and
// checks that it is a directory.
func realDir(dir, what string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s %s: %w", ErrPolicy, what, dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: %s %s is not a directory", ErrPolicy, what, dir)
	}
	return abs, nil
}

// Bounds of the search for credential files in the workspace.
const maxWorkspaceEntries = 100000

// credentialPaths returns the existing credential files and directories
// to mask: home's credential locations as the engine classes them, files
// in the workspace whose name marks a credential, and extra.
func credentialPaths(home, ws string, extra []string) (files, dirs []string, err error) {
	seen := map[string]bool{}
	add := func(p string) {
		st, err := os.Stat(p)
		if err != nil || seen[p] {
			return
		}
		seen[p] = true
		switch {
		case st.IsDir():
			dirs = append(dirs, p)
		case st.Mode().IsRegular():
			files = append(files, p)
		}
	}
	if home != "" {
		for _, rel := range risk.HomeCredentialPaths() {
			add(filepath.Join(home, strings.TrimSuffix(rel, "/")))
		}
	}
	for _, p := range extra {
		if p != "" {
			add(filepath.Clean(p))
		}
	}
	n := 0
	err = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable here is unreadable inside
		}
		if n++; n > maxWorkspaceEntries {
			return fmt.Errorf("sandbox: the workspace %s holds more than %d entries; it is too large to search for credential files", ws, maxWorkspaceEntries)
		}
		if d.IsDir() && d.Name() == ".git" && p != ws {
			return filepath.SkipDir
		}
		// A link with a credential's name is masked where it leads.
		if (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) && risk.IsCredentialName(d.Name()) {
			add(p)
		}
		return nil
	})
	return files, dirs, err
}

func (c *Cmd) start(pl *plan) error {
	raw, err := json.Marshal(pl.cfg)
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.CommandContext(c.ctx, "/proc/self/exe")
	cmd.Args = []string{stage.Arg0}
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(withoutVars(env, "TMPDIR", stage.Env), "TMPDIR="+pl.tmp, stage.Env+"="+string(raw))
	cmd.Dir = c.Dir
	if cmd.Dir == "" {
		cmd.Dir = pl.ws
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	cmd.ExtraFiles = []*os.File{w}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if f, ok := c.Stdin.(*os.File); ok && foreground(int(f.Fd())) {
		attr.Foreground, attr.Ctty = true, 0
		c.fg = int(f.Fd())
	}
	if pl.ns {
		// System V IPC and POSIX message queues are no files, so
		// Landlock does not govern them: a namespace of its own keeps the
		// program off those of processes outside.
		attr.Cloneflags = unix.CLONE_NEWNS | unix.CLONE_NEWIPC
		if pl.cfg.NetNS {
			attr.Cloneflags |= unix.CLONE_NEWNET
		}
		if pl.userns {
			uid, gid := os.Geteuid(), os.Getegid()
			attr.Cloneflags |= unix.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			attr.GidMappingsEnableSetgroups = false
			attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
		}
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	w.Close()
	if err != nil {
		c.fg = -1
		return fmt.Errorf("sandbox: starting %s: %w", c.argv[0], err)
	}
	c.cmd = cmd
	// The stage reports, then execs (closing the pipe) or exits.
	data, err := io.ReadAll(r)
	st := readStatus(data, err)
	c.report = pl.rep
	if pl.cfg.MountNS {
		// Every process of the program stays in this namespace: seccomp
		// refuses setns and new namespaces.
		if f, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid)); err == nil {
			ns, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
			if self, serr := os.Readlink("/proc/self/ns/mnt"); err == nil && serr == nil && ns != self {
				c.mntNS, c.mntFile = ns, f
			} else {
				f.Close()
			}
		}
	}
	if len(st.Missing) > 0 {
		c.report.Missing = append(append([]string(nil), c.report.Missing...), st.Missing...)
		for _, m := range st.Missing {
			if strings.HasPrefix(m, "seccomp: ") {
				c.report.Seccomp = "off"
			}
		}
	}
	if st.Error != "" {
		code, _ := c.Wait()
		if st.Code == 0 {
			st.Error, st.Code = fmt.Sprintf("%s (status %d)", st.Error, code), 126
		}
		return &StartError{Code: st.Code, Msg: st.Error}
	}
	return nil
}

// readStatus returns what the stage reported on the status pipe: the
// stage's error, or one of its own (Code 0) for a report that is missing,
// cut or unreadable, so that a stage that did not say it confined the
// program never counts as having done so.
func readStatus(data []byte, err error) stage.Status {
	var st stage.Status
	if err != nil {
		st.Error = fmt.Sprintf("sandbox: reading the set-up stage's report: %v", err)
		return st
	}
	if len(bytes.TrimSpace(data)) == 0 {
		st.Error = "sandbox: the set-up stage ended without a report"
		return st
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var m stage.Status
		if err := dec.Decode(&m); err != nil {
			return stage.Status{Error: fmt.Sprintf("sandbox: the set-up stage's report is unreadable: %v", err)}
		}
		st.Missing = append(st.Missing, m.Missing...)
		if m.Error != "" {
			st.Error, st.Code = m.Error, m.Code
		}
	}
	return st
}

// withoutVars returns env without the variables named.
func withoutVars(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// foreground reports whether fd is a terminal whose foreground process
// group is this process's: the program then takes the foreground, so that
// it can read the terminal and the terminal's signals reach it.
func foreground(fd int) bool {
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// Wait waits for the program to exit, kills whatever is left of its
// process group, removes the private temporary directory and returns the
// program's exit status: its exit code, or 128+N when signal N ended it.
func (c *Cmd) Wait() (int, error) {
	if c.cmd == nil {
		return 0, errors.New("sandbox: the program was not started")
	}
	if c.finished {
		return 0, errors.New("sandbox: Wait called twice")
	}
	pid := c.cmd.Process.Pid
	// Wait for the exit without reaping, so the group's id cannot be
	// reused before the rest of the group is killed.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	c.mu.Lock()
	c.exited = true
	_ = unix.Kill(-pid, unix.SIGKILL)
	c.mu.Unlock()
	c.killNamespace(pid)
	if c.mntFile != nil {
		c.mntFile.Close()
		c.mntFile = nil
	}
	c.killEscapees(pid)
	err := c.cmd.Wait()
	c.finished = true
	c.endSubreaper()
	if c.fg >= 0 {
		// Take the terminal back; SIGTTOU would stop a background caller.
		signal.Ignore(unix.SIGTTOU)
		_ = unix.IoctlSetPointerInt(c.fg, unix.TIOCSPGRP, unix.Getpgrp())
		signal.Reset(unix.SIGTTOU)
	}
	c.removeScratch()
	ps := c.cmd.ProcessState
	if ps == nil {
		return 0, err
	}
	code := ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	if ctxErr := c.ctx.Err(); ctxErr != nil {
		return code, ctxErr
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return code, err
	}
	return code, nil
}

// killEscapees kills and reaps every child this process has but the
// program (pid, which Wait reaps), as often as new ones come back: the
// children of one killed are re-parented here in turn.
func (c *Cmd) killEscapees(pid int) {
	if !c.KillEscapees {
		return
	}
	for round := 0; round < 100; round++ {
		var kids []int
		for _, k := range children(os.Getpid()) {
			if k != pid {
				kids = append(kids, k)
			}
		}
		if len(kids) == 0 {
			return
		}
		for _, k := range kids {
			_ = unix.Kill(k, unix.SIGKILL)
		}
		for _, k := range kids {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(k, &ws, 0, nil)
		}
	}
}

// killNamespace kills every process but pid (which Wait reaps) in the
// program's mount namespace, as often as new ones appear: those that left
// its process group too, wherever they were re-parented.
func (c *Cmd) killNamespace(pid int) {
	if c.mntNS == "" {
		return
	}
	for round := 0; round < 100; round++ {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range ents {
			n, err := strconv.Atoi(e.Name())
			if err != nil || n == pid {
				continue
			}
			// The pidfd holds the process, so a number reused after the
			// check never receives the signal.
			fd, err := unix.PidfdOpen(n, 0)
			if err != nil {
				continue
			}
			if ns, err := os.Readlink("/proc/" + e.Name() + "/ns/mnt"); err == nil && ns == c.mntNS {
				if unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
					found = true
				}
			}
			unix.Close(fd)
		}
		if !found {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// endSubreaper stops this process being a subreaper.
func (c *Cmd) endSubreaper() {
	if c.KillEscapees {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	}
}

// children returns the processes whose parent is pid.
func children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

func (c *Cmd) removeScratch() {
	if c.scratch != "" {
		_ = os.RemoveAll(c.scratch)
		c.scratch = ""
	}
}
