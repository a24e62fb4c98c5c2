package shellrun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/sandbox"
)

// BackgroundDir is the directory of the state directory that holds the
// background processes: ID.json (the registry entry) and ID.log (the
// output, stdout and stderr together).
const BackgroundDir = "background"

// Process is a background process as its registry entry records it.
type Process struct {
	ID      string `json:"id"`
	Session string `json:"session,omitempty"`
	Command string `json:"command"`
	Dir     string `json:"dir"`
	PID     int    `json:"pid"`
	// StartTicks is the process's start time in clock ticks after boot
	// (/proc/PID/stat): with PID it names the process, so that a PID
	// reused by another process is never signalled.
	StartTicks uint64 `json:"startTicks"`
	// MountNS is the process's own mount namespace ("mnt:[N]"), when the
	// sandbox gave it one: every process it starts, those that left its
	// process group too, stays in it.
	MountNS string         `json:"mountNS,omitempty"`
	Started time.Time      `json:"started"`
	Log     string         `json:"log"`
	Sandbox sandbox.Report `json:"sandbox"`
	// Running is filled by List: the process is still there.
	Running bool `json:"running"`
}

// startBackground starts command in the background under p, its output
// going to a file in o.StateDir, and returns at once with a Result that
// names it. A program whose sandbox came up weaker than judged is killed
// and not registered.
func startBackground(p sandbox.Policy, shell, command, dir, session string, o Options, judged *engine.Containment) (gate.Result, error) {
	if o.StateDir == "" {
		return gate.Result{}, errors.New("run_in_background is not available: no state directory keeps background processes")
	}
	prog, err := shellProgram(shell)
	if err != nil {
		return gate.Result{}, err
	}
	bdir := filepath.Join(o.StateDir, BackgroundDir)
	if err := os.MkdirAll(bdir, 0o700); err != nil {
		return gate.Result{}, fmt.Errorf("background processes: %w", err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return gate.Result{}, err
	}
	id := "bg_" + hex.EncodeToString(b[:])
	logPath := filepath.Join(bdir, id+".log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return gate.Result{}, fmt.Errorf("background output: %w", err)
	}
	defer logf.Close()
	// The process outlives the call: only Kill or its own end stops it.
	c := sandbox.Command(context.Background(), p, prog, "-c", command)
	c.Dir, c.Env, c.Stdout, c.Stderr = dir, o.Env, logf, logf
	rep, res, err := start(c, judged)
	if err != nil {
		os.Remove(logPath)
		return res, err
	}
	pid := c.PID()
	ticks, _ := startTicks(pid)
	proc := Process{ID: id, Session: session, Command: command, Dir: dir, PID: pid, StartTicks: ticks,
		Started: time.Now().UTC(), Log: logPath, Sandbox: rep, MountNS: c.MountNS()}
	raw, _ := json.MarshalIndent(proc, "", "  ")
	if err := writeFileAtomic(filepath.Join(bdir, id+".json"), raw); err != nil {
		// A process nobody can list or stop is not left running.
		_ = c.Signal(syscall.SIGKILL)
		_, _ = c.Wait()
		return gate.Result{ExitCode: 126, Sandbox: &rep}, fmt.Errorf("background registry: %w", err)
	}
	// Reaped here while this process lives; the group is killed when its
	// leader ends, as in the foreground.
	go func() { _, _ = c.Wait() }()
	out := fmt.Sprintf("started in the background as %s (pid %d); output in %s; stop it with: toolgate kill %s\n", id, pid, logPath, id)
	if o.Stdout != nil {
		_, _ = io.WriteString(o.Stdout, out)
	}
	return gate.Result{Stdout: []byte(out), Sandbox: &rep, Detail: map[string]any{"background": id, "pid": pid, "log": logPath}}, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// stat returns the fields of /proc/PID/stat after the command name of a
// live process (f[0] the state, f[2] the process group, f[19] the start
// time in clock ticks after boot), or an error for a process that is gone
// or a zombie.
func stat(pid string) ([]string, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil, err
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return nil, errors.New("not running")
	}
	return f, nil
}

// startTicks returns the start time of pid in clock ticks after boot.
func startTicks(pid int) (uint64, error) {
	f, err := stat(strconv.Itoa(pid))
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// alive reports whether p's process is still the one started.
func (p Process) alive() bool {
	t, err := startTicks(p.PID)
	return err == nil && t == p.StartTicks
}

// List returns the background processes recorded in stateDir, of session
// (all when it is ""), oldest first, each with Running filled.
func List(stateDir, session string) ([]Process, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, BackgroundDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p, err := load(filepath.Join(stateDir, BackgroundDir, e.Name()))
		if err != nil {
			return nil, err
		}
		if session != "" && p.Session != session {
			continue
		}
		p.Running = p.alive()
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

func load(path string) (Process, error) {
	var p Process
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	if err != nil {
		return p, fmt.Errorf("background registry %s: %w", path, err)
	}
	return p, nil
}

// ErrNoProcess is wrapped by Kill's error for an id that names no
// background process.
var ErrNoProcess = errors.New("no such background process")

// Kill stops the background process id of stateDir: SIGTERM to its
// process group and to the processes that left it but not its mount
// namespace, SIGKILL after grace, and removes it from the registry
// (its output file stays). A process that has already ended is only
// removed. Only processes that started no earlier than the recorded one
// are signalled, and none by its process group once its number belongs
// to another process, so a reused number is never reached.
func Kill(stateDir, id string, grace time.Duration) (Process, error) {
	if strings.ContainsAny(id, "/\\") || !strings.HasPrefix(id, "bg_") {
		return Process{}, fmt.Errorf("%w: %q is not a background process id (bg_…)", ErrNoProcess, id)
	}
	path := filepath.Join(stateDir, BackgroundDir, id+".json")
	p, err := load(path)
	if errors.Is(err, os.ErrNotExist) {
		return Process{}, fmt.Errorf("%w: %s", ErrNoProcess, id)
	}
	if err != nil {
		return p, err
	}
	p.Running = len(group(p)) > 0
	for _, sig := range []unix.Signal{unix.SIGTERM, unix.SIGKILL} {
		members := group(p)
		if len(members) == 0 {
			break
		}
		for _, m := range members {
			_ = unix.Kill(m, sig)
		}
		for deadline := time.Now().Add(grace); time.Now().Before(deadline) && len(group(p)) > 0; {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if left := group(p); len(left) > 0 {
		return p, fmt.Errorf("background process %s: processes %v are still running", id, left)
	}
	return p, os.Remove(path)
}

// group returns the live processes of p's process group, or of its own
// mount namespace, that started no earlier than p itself. The kernel
// gives p's number to another process only once no process is left in
// p's group; a live process with that number that is not p is such a
// reuse, and its group is none of p's.
func group(p Process) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	t, err := startTicks(p.PID)
	reused := err == nil && t != p.StartTicks
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := stat(e.Name())
		if err != nil {
			continue
		}
		if reused || f[2] != strconv.Itoa(p.PID) {
			ns, err := os.Readlink("/proc/" + e.Name() + "/ns/mnt")
			if p.MountNS == "" || err != nil || ns != p.MountNS {
				continue
			}
		}
		if t, err := strconv.ParseUint(f[19], 10, 64); err == nil && t >= p.StartTicks {
			out = append(out, pid)
		}
	}
	return out
}
