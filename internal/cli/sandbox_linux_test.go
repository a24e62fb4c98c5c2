package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/sandbox"
)

const sandboxSecret = "SECRET-c41d"

// sandboxWorld makes a workspace with a .env, a home with a private key
// and a state directory outside the home (XDG_STATE_HOME) with a token.
func sandboxWorld(t *testing.T) (ws, outside string) {
	t.Helper()
	root := t.TempDir()
	ws, outside = filepath.Join(root, "ws"), filepath.Join(root, "outside")
	home, state := filepath.Join(root, "home"), filepath.Join(root, "state")
	for _, d := range []string{ws, outside, filepath.Join(home, ".ssh"), filepath.Join(state, "toolgate")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(ws, ".env"), filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(state, "toolgate", "approver.token")} {
		if err := os.WriteFile(f, []byte(sandboxSecret), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", state)
	t.Chdir(ws)
	return ws, outside
}

func runSandbox(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = RunContext(ctx, append([]string{"sandbox"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// TestSandboxCommand runs programs through `toolgate sandbox`: writes
// outside the workspace and credential reads fail, the exit status is the
// program's, and refused mechanisms are named once on stderr.
func TestSandboxCommand(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	etc := "/etc/toolgate-cli-test-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })
	for _, tc := range []struct {
		name    string
		disable string
		args    []string
		code    int
		stdout  string
		stderr  string // substring; "" means empty stderr
		absent  string // path that must not exist afterwards
		present string // path in the workspace that must exist afterwards
	}{
		{name: "write /etc", args: []string{"--", "python3", "-c", fmt.Sprintf("open(%q,'w')", etc)}, code: 1, stderr: "PermissionError", absent: etc},
		{name: "write outside", args: []string{"--", "sh", "-c", "echo x > ../outside/f"}, code: 2, stderr: "Permission denied", absent: "../outside/f"},
		{name: "write inside", args: []string{"--", "sh", "-c", "echo x > made"}, present: "made"},
		{name: "read-only", args: []string{"--sandbox", "read-only", "--", "sh", "-c", "echo x > ro"}, code: 2, stderr: "Permission denied", absent: "ro"},
		{name: "writable root", args: []string{"--writable-root", "../outside", "--", "sh", "-c", "echo x > ../outside/root"}, present: "../outside/root"},
		{name: "credentials", args: []string{"--", "sh", "-c", `cat .env "$HOME/.ssh/id_rsa" "$XDG_STATE_HOME/toolgate/approver.token"; ls "$XDG_STATE_HOME/toolgate"`}, code: 0, stderr: "approver.token: No such file or directory"},
		{name: "extra credential path", args: []string{"--credential-path", "../outside", "--", "sh", "-c", "ls ../outside"}},
		{name: "exit status", args: []string{"--", "sh", "-c", "echo out; exit 7"}, code: 7, stdout: "out\n"},
		{name: "signal status", args: []string{"--", "sh", "-c", "kill -KILL $$"}, code: 137},
		{name: "no such program", args: []string{"--", "no-such-program-toolgate"}, code: 127, stderr: "executable file not found"},
		{name: "bad mode", args: []string{"--sandbox", "open", "--", "true"}, code: 2, stderr: "unknown sandbox mode"},
		{name: "bad writable root", args: []string{"--writable-root", "../nope", "--", "true"}, code: 2, stderr: "writable root ../nope"},
		{name: "no program", args: nil, code: 2, stderr: "no program given"},
		{name: "program flags are the program's", args: []string{"sh", "-c", "echo $0", "--network"}, stdout: "--network\n"},
		{name: "namespaces refused", disable: "userns", args: []string{"--", "cat", ".env"}, stdout: sandboxSecret, stderr: "toolgate sandbox: missing protection: credential masking: namespaces disabled"},
		{name: "landlock refused", disable: "landlock", args: []string{"--", "true"}, stderr: "toolgate sandbox: missing protection: file system: Landlock is unavailable"},
		{name: "seccomp refused", disable: "seccomp", args: []string{"--", "true"}, stderr: "toolgate sandbox: missing protection: seccomp: disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, _ := sandboxWorld(t)
			t.Setenv(sandbox.DisableEnv, tc.disable)
			stdout, stderr, code := runSandbox(context.Background(), tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			if stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			if tc.stderr == "" && stderr != "" || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if n := strings.Count(stderr, "missing protection"); n > 1 {
				t.Errorf("missing protection said %d times: %s", n, stderr)
			}
			if tc.absent != "" {
				if _, err := os.Lstat(filepath.Join(ws, tc.absent)); err == nil {
					t.Errorf("%s was written", tc.absent)
				}
			}
			if tc.present != "" {
				if _, err := os.Lstat(filepath.Join(ws, tc.present)); err != nil {
					t.Errorf("%s was not written: %v", tc.present, err)
				}
			}
		})
	}
}

// TestSandboxReport prints the active mechanisms with --report.
func TestSandboxReport(t *testing.T) {
	sandboxWorld(t)
	for _, tc := range []struct {
		args []string
		want sandbox.Report
	}{
		{[]string{"--report", "--", "true"}, sandbox.Report{FS: "landlock", Net: "landlock", Mask: "mountns", Seccomp: "on"}},
		{[]string{"--report", "--network", "--", "true"}, sandbox.Report{FS: "landlock", Net: "open", Mask: "mountns", Seccomp: "on"}},
	} {
		_, stderr, code := runSandbox(context.Background(), tc.args...)
		line, ok := strings.CutPrefix(strings.TrimSpace(stderr), "toolgate sandbox: ")
		var got sandbox.Report
		if code != 0 || !ok || json.Unmarshal([]byte(line), &got) != nil {
			t.Fatalf("exit %d, stderr %q: want a JSON report", code, stderr)
		}
		if got.FS != tc.want.FS || got.Net != tc.want.Net || got.Mask != tc.want.Mask || got.Seccomp != tc.want.Seccomp || got.Masked != 3 {
			t.Errorf("%q: report %+v, want %+v with 3 masked paths", tc.args, got, tc.want)
		}
	}
}

// procAlive reports whether pid is a process that has not exited.
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestSandboxSignalsAndTimeout: SIGTERM to toolgate reaches the whole
// group, and a timeout kills it; nothing is left in /proc.
func TestSandboxSignalsAndTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		term bool
		want int
		// script writes the pids of the processes that must not outlive
		// toolgate to ./pids, three of them.
		script string
	}{
		{"SIGTERM", true, 143, `sleep 60 & echo $! > pids; sleep 61 & echo $! >> pids; echo $$ >> pids; wait`},
		{"timeout", false, 137, `sleep 60 & echo $! > pids; sleep 61 & echo $! >> pids; echo $$ >> pids; wait`},
		{"escape by setsid", false, 0, `setsid sleep 62 & echo $! > pids; (setsid sh -c 'sleep 63 & echo $! >> pids; sleep 64 & echo $! >> pids; wait' &); sleep 0.3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, _ := sandboxWorld(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if !tc.term {
				ctx, cancel = context.WithTimeout(context.Background(), time.Second)
			}
			defer cancel()
			done := make(chan int, 1)
			go func() {
				_, _, code := runSandbox(ctx, "--", "sh", "-c", tc.script)
				done <- code
			}()
			var pids []string
			for deadline := time.Now().Add(10 * time.Second); len(pids) < 3; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the program did not start")
				}
				b, _ := os.ReadFile(filepath.Join(ws, "pids"))
				pids = strings.Fields(string(b))
			}
			if tc.term && tc.want != 0 {
				if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case code := <-done:
				if code != tc.want {
					t.Errorf("exit %d, want %d", code, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("toolgate sandbox did not end")
			}
			time.Sleep(100 * time.Millisecond)
			for _, s := range pids {
				pid, _ := strconv.Atoi(s)
				if procAlive(pid) {
					t.Errorf("process %d is left running", pid)
				}
			}
		})
	}
}

// TestSandboxUnprivileged re-runs the sandbox command's tests as nobody.
func TestSandboxUnprivileged(t *testing.T) {
	if os.Getenv("TOOLGATE_CLI_TEST_UNPRIVILEGED") != "" {
		t.Skip("already unprivileged")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: run as root to also run the sandbox tests as an unprivileged user")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "toolgate-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, err := os.ReadFile(self)
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "cli.test"), data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", filepath.Join(dir, "cli.test"),
		"-test.run", "^(TestSandboxCommand|TestSandboxReport|TestSandboxSignalsAndTimeout|TestRun|TestRunTerminal|TestRunTimeoutAndBackground)$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR=/tmp", "TOOLGATE_CLI_TEST_UNPRIVILEGED=1", sandbox.DisableEnv+"=")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("\nPASS\n")) || bytes.Contains(out, []byte("--- SKIP")) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
