package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/shellrun"
)

// runWorld is a sandboxWorld with a git workspace, a script in it that
// writes outside, and the state directory toolgate run logs to.
func runWorld(t *testing.T) (ws, outside, state string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	ws, outside = sandboxWorld(t)
	state = filepath.Join(os.Getenv("XDG_STATE_HOME"), "toolgate")
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("open(%q, 'w').write('x')\n", filepath.Join(outside, "from-script"))
	if err := os.WriteFile(filepath.Join(ws, "out.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, outside, state
}

// runTool runs `toolgate run` with a Bash request for command in ws.
func runTool(ctx context.Context, ws, session, command string, extra map[string]any, args ...string) (stdout, stderr string, code int) {
	in := map[string]any{"command": command}
	for k, v := range extra {
		in[k] = v
	}
	req, _ := json.Marshal(map[string]any{"tool": "Bash", "input": in, "cwd": ws, "session": session})
	var out, errb bytes.Buffer
	code = RunContext(ctx, append([]string{"run", "--tty", "/nonexistent-tty"}, args...), bytes.NewReader(req), &out, &errb)
	return out.String(), errb.String(), code
}

// runEvents reads the tool.* events of session from the state directory's
// log.
func runEvents(t *testing.T, state, session string) map[eventlog.Type]map[string]any {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(state, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	out := map[eventlog.Type]map[string]any{}
	for e, err := range store.Query(context.Background(), eventlog.Filter{Session: session}) {
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out[e.Type] = p
	}
	return out
}

// TestRun runs calls through `toolgate run` with Bash(python3:*) allowed:
// what the analysis lets through but writes outside the workspace fails at
// the operating system, with tool.completed carrying the sandbox report;
// a write inside lands; .env reads empty; a denied call, and an ask with
// no terminal, exit 126 with the reason.
func TestRun(t *testing.T) {
	etc := "/etc/toolgate-run-test-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })
	for _, tc := range []struct {
		name    string
		command string
		code    int    // -1: any non-zero but 126
		stdout  string // exact
		stderr  string // substring
		absent  string // must not exist afterwards; $OUT is the outside directory
		present string // must exist afterwards, relative to the workspace
	}{
		{name: "python writes /etc", command: fmt.Sprintf(`python3 -c "open('%s','w')"`, etc), code: 1, stderr: "PermissionError", absent: etc},
		{name: "script writes outside", command: "python3 out.py", code: 1, stderr: "PermissionError", absent: "$OUT/from-script"},
		{name: "write inside", command: `python3 -c "open('made','w').write('ok'); print('done')"`, stdout: "done\n", present: "made"},
		{name: "read .env", command: `python3 -c "print(repr(open('.env').read()))"`, stdout: "''\n"},
		{name: "exit status", command: `python3 -c "import sys; sys.exit(7)"`, code: 7},
		{name: "denied", command: "rm -rf /", code: 126, stderr: "denied (sandbox_rejected)"},
		{name: "ask without a terminal", command: "touch made", code: 126, stderr: "denied (no_approver)", absent: "made"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside, state := runWorld(t)
			stdout, stderr, code := runTool(context.Background(), ws, "s1", tc.command, nil, "--allow", "Bash(python3:*)")
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			if stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if p := strings.ReplaceAll(tc.absent, "$OUT", outside); p != "" {
				if !filepath.IsAbs(p) {
					p = filepath.Join(ws, p)
				}
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
			if tc.present != "" {
				if _, err := os.Lstat(filepath.Join(ws, tc.present)); err != nil {
					t.Errorf("%s was not written: %v", tc.present, err)
				}
			}
			ev := runEvents(t, state, "s1")
			if tc.code == 126 {
				if ev[eventlog.TypePermissionResolved]["decision"] != "deny" || ev[eventlog.TypeToolStarted] != nil {
					t.Errorf("events %v, want a deny and no tool.started", ev)
				}
				return
			}
			done := ev[eventlog.TypeToolCompleted]
			sb, _ := done["sandbox"].(map[string]any)
			if sb["fs"] != "landlock" || sb["mask"] != "mountns" {
				t.Errorf("tool.completed sandbox %v", done["sandbox"])
			}
			if got, _ := done["exitCode"].(float64); int(got) != tc.code {
				t.Errorf("tool.completed exitCode %v, want %d", done["exitCode"], tc.code)
			}
		})
	}
}

// TestRunTerminal: a call that asks is put on the terminal; answered y,
// the computed `sh -c` runs and still cannot write outside the workspace.
func TestRunTerminal(t *testing.T) {
	ws, _, state := runWorld(t)
	ptm, ptsPath := openPTY(t)
	asked := make(chan struct{})
	go func() {
		var seen bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			if err != nil {
				return
			}
			seen.Write(buf[:n])
			if bytes.Contains(seen.Bytes(), []byte("> ")) {
				close(asked)
				time.Sleep(100 * time.Millisecond)
				io.WriteString(ptm, "a\r")
				io.Copy(io.Discard, ptm)
				return
			}
		}
	}()
	target := "/tmp/../root/x"
	if os.Geteuid() != 0 {
		target = "/tmp/../etc/x"
	}
	os.Remove(filepath.Clean(target))
	in, _ := json.Marshal(map[string]any{"tool": "Bash", "cwd": ws, "session": "s1",
		"input": map[string]any{"command": fmt.Sprintf(`sh -c "$(printf 'touch %s')"`, target)}})
	var out, errb bytes.Buffer
	code := RunContext(context.Background(), []string{"run", "--approval-timeout", "5s", "--tty", ptsPath, "--allow", "Bash(python3:*)"}, bytes.NewReader(in), &out, &errb)
	select {
	case <-asked:
	default:
		t.Fatalf("no question on the terminal; exit %d, stderr: %s", code, errb.String())
	}
	if code == 0 || code == 126 {
		t.Errorf("exit %d, want the failure of touch; stderr: %s", code, errb.String())

	}
	if _, err := os.Lstat(filepath.Clean(target)); err == nil {
		t.Errorf("%s was written", target)
	}
	ev := runEvents(t, state, "s1")
	if ev[eventlog.TypePermissionResolved]["actor"] != "user" || ev[eventlog.TypePermissionResolved]["via"] != "terminal" || ev[eventlog.TypeToolCompleted]["sandbox"] == nil {
		t.Errorf("events %v, want a user's allow through the terminal and tool.completed with the sandbox", ev)
	}
}

// openPTY opens a pseudo-terminal: its master, and the path of its slave.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptm.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("pseudo-terminal number: %v", e)
	}
	path := fmt.Sprintf("/dev/pts/%d", n)
	if os.Geteuid() != 0 {
		// The slave belongs to whoever opened the master.
		if _, err := os.Stat(path); err != nil {
			t.Skipf("pseudo-terminal: %v", err)
		}
	}
	return ptm, path
}

// TestRunTimeoutAndBackground: a timed-out call exits with the signal's
// status, leaves nothing running and records tool.failed; a background
// call is listed by toolgate ps and stopped by toolgate kill.
func TestRunTimeoutAndBackground(t *testing.T) {
	ws, _, state := runWorld(t)
	_, stderr, code := runTool(context.Background(), ws, "s1", `python3 -c "import subprocess, time; subprocess.Popen(['sleep', '981']); time.sleep(60)"`,
		map[string]any{"timeout": 500}, "--allow", "Bash(python3:*)")
	if code != 137 || !strings.Contains(stderr, "timed out after 500ms") {
		t.Errorf("exit %d, stderr %q: want 137 and the timeout", code, stderr)
	}
	if left := procsNamed("sleep\x00981"); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
	if ev := runEvents(t, state, "s1"); ev[eventlog.TypeToolFailed]["sandbox"] == nil {
		t.Errorf("no tool.failed with the sandbox report: %v", ev)
	}

	stdout, stderr, code := runTool(context.Background(), ws, "s2", `python3 -c "import time; print('up', flush=True); time.sleep(982)"`,
		map[string]any{"run_in_background": true}, "--allow", "Bash(python3:*)")
	if code != 0 || !strings.Contains(stdout, "started in the background as bg_") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	id := strings.Fields(strings.SplitAfter(stdout, "background as ")[1])[0]
	t.Cleanup(func() { _, _ = shellrun.Kill(state, id, 0) })
	var out, errb bytes.Buffer
	if code := Run([]string{"ps", "--session", "s2"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), id) || !strings.Contains(out.String(), "running") {
		t.Fatalf("ps: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Run([]string{"kill", id}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "stopped") {
		t.Fatalf("kill: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if left := procsNamed("sleep(982)"); len(left) > 0 {
		t.Errorf("left running after kill: %v", left)
	}
	if code := Run([]string{"kill", id}, nil, &out, &errb); code != 2 {
		t.Errorf("second kill: exit %d, want 2", code)
	}
}

// procsNamed returns the live processes whose command line holds marker.
func procsNamed(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cl, []byte(marker)) && procAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestRunBuiltinTools: a built-in tool runs through toolgate run and
// prints its output; a read of .env is denied with 126.
func TestRunBuiltinTools(t *testing.T) {
	ws, _, state := runWorld(t)
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("line one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		code       int
		stdout     string
		stderr     string
	}{
		{"read", "notes.txt", 0, "line one", ""},
		{"read .env", ".env", 126, "", "denied (credential_access)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := json.Marshal(map[string]any{"tool": "Read", "input": map[string]any{"file_path": filepath.Join(ws, tc.file)}, "cwd": ws, "session": tc.name})
			var out, errb bytes.Buffer
			code := RunContext(context.Background(), []string{"run", "--tty", "/nonexistent-tty"}, bytes.NewReader(req), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errb.String(), tc.code, tc.stdout, tc.stderr)
			}
			if strings.Contains(out.String(), sandboxSecret) {
				t.Error("the secret was printed")
			}
			ev := runEvents(t, state, tc.name)
			if (ev[eventlog.TypeToolCompleted] != nil) != (tc.code == 0) {
				t.Errorf("events %v", ev)
			}
		})
	}
}

// TestRunOutputEscapedOnTerminal: a file the agent wrote holds terminal
// escapes (set the clipboard, rewrite the title); a built-in tool's output
// printed to a terminal shows them escaped, newlines and tabs kept.
func TestRunOutputEscapedOnTerminal(t *testing.T) {
	ws, _, _ := runWorld(t)
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ttwo\n\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ptm, ptsPath := openPTY(t)
	pts, err := os.OpenFile(ptsPath, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	req, _ := json.Marshal(map[string]any{"tool": "Read", "input": map[string]any{"file_path": filepath.Join(ws, "notes.txt")}, "cwd": ws, "session": "esc"})
	var errb bytes.Buffer
	code := RunContext(context.Background(), []string{"run", "--tty", "/nonexistent-tty"}, bytes.NewReader(req), pts, &errb)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	_ = ptm.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4096)
	n, _ := ptm.Read(buf)
	got := string(buf[:n])
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\x1b]52;c;ZXZpbA==\x07`) || !strings.Contains(got, "one\ttwo") {
		t.Errorf("terminal got %q, want the escapes shown as text and the tab kept", got)
	}
}

// TestRollbackDiffEscapedOnTerminal: the difference rollback shows holds
// what the agent put in the file; on a terminal its escapes show as text.
func TestRollbackDiffEscapedOnTerminal(t *testing.T) {
	_, state, ws := toolsDirs(t)
	f := filepath.Join(ws, "a.txt")
	toolsAt(t, state, ws, "tc_8", "Write", map[string]any{"file_path": "a.txt", "content": "after\n"})
	if err := os.WriteFile(f, []byte("after\n\x1b]52;c;ZXZpbA==\x07\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ptm, ptsPath := openPTY(t)
	pts, err := os.OpenFile(ptsPath, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	var errb bytes.Buffer
	if code := RunContext(context.Background(), []string{"rollback", "--state-dir", state, "tc_8"}, strings.NewReader(""), pts, &errb); code != 1 {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	_ = ptm.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 8192)
	n, _ := ptm.Read(buf)
	got := string(buf[:n])
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\x1b]52`) {
		t.Errorf("terminal got %q, want the escapes shown as text", got)
	}
}
