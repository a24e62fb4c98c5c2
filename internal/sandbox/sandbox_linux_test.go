package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// result is what one confined run did.
type result struct {
	rep            Report
	code           int
	stdout, stderr string
}

// env is the world a test program runs in: a workspace, a home with a
// private key, an outside directory that no sandbox may write.
type env struct {
	ws, home, outside string
}

const secret = "SECRET-7f3a"

func newEnv(t *testing.T) env {
	t.Helper()
	e := env{ws: t.TempDir(), home: t.TempDir(), outside: t.TempDir()}
	must(t, os.MkdirAll(filepath.Join(e.home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(e.home, ".ssh", "id_rsa"), []byte(secret), 0o600))
	must(t, os.WriteFile(filepath.Join(e.home, ".netrc"), []byte(secret), 0o600))
	must(t, os.WriteFile(filepath.Join(e.ws, ".env"), []byte(secret), 0o600))
	must(t, os.MkdirAll(filepath.Join(e.ws, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(e.ws, "sub", ".env.local"), []byte(secret), 0o600))
	must(t, os.WriteFile(filepath.Join(e.ws, ".env.example"), []byte("EXAMPLE=1"), 0o644))
	must(t, os.WriteFile(filepath.Join(e.outside, "prod.secrets"), []byte(secret), 0o600))
	must(t, os.Symlink(filepath.Join(e.outside, "prod.secrets"), filepath.Join(e.ws, ".env.production")))
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e env) policy() Policy { return Policy{Workspace: e.ws, Home: e.home} }

func run(t *testing.T, ctx context.Context, p Policy, argv ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	c := Command(ctx, p, argv[0], argv[1:]...)
	c.Stdout, c.Stderr = &out, &errb
	rep, code, err := c.Run()
	if err != nil && ctx.Err() == nil {
		t.Fatalf("%q: %v (stderr: %s)", argv, err, errb.String())
	}
	return result{rep, code, out.String(), errb.String()}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func needProgram(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed", n)
		}
	}
}

// TestWorkspaceWrite runs the attacks that the analysis cannot see: each
// writes outside the workspace and must fail with nothing on disk, while
// writes inside the workspace and the private temporary directory land.
func TestWorkspaceWrite(t *testing.T) {
	needProgram(t, "python3", "sh")
	e := newEnv(t)
	etc := "/etc/toolgate-test-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove(etc); os.Remove("/root/x-toolgate-test") })
	script := filepath.Join(e.ws, "w.py")
	must(t, os.WriteFile(script, []byte(fmt.Sprintf("open(%q, 'w').write('x')\n", filepath.Join(e.outside, "from-script"))), 0o644))
	for _, tc := range []struct {
		name    string
		argv    []string
		outside string // must not exist afterwards ("" for none)
		inside  string // must exist afterwards ("" for none)
		ok      bool
	}{
		{"python open /etc", []string{"python3", "-c", fmt.Sprintf("open(%q,'w')", etc)}, etc, "", false},
		{"script in workspace writes outside", []string{"python3", script}, filepath.Join(e.outside, "from-script"), "", false},
		{"dotdot through /tmp", []string{"sh", "-c", "$(printf 'touch /tmp/../root/x-toolgate-test')"}, "/root/x-toolgate-test", "", false},
		{"outside dir", []string{"sh", "-c", "echo x > " + filepath.Join(e.outside, "f")}, filepath.Join(e.outside, "f"), "", false},
		{"symlink in workspace to outside", []string{"sh", "-c", "ln -s " + e.outside + " link && echo x > link/g"}, filepath.Join(e.outside, "g"), "", false},
		{"write inside", []string{"sh", "-c", "mkdir -p d && echo inside > d/f"}, "", filepath.Join(e.ws, "d", "f"), true},
		{"private tmp", []string{"sh", "-c", `echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && test "$TMPDIR" != /tmp`}, "", "", true},
		{"dev null", []string{"sh", "-c", "echo x > /dev/null"}, "", "", true},
		{"reads and listings", []string{"sh", "-c", "ls / >/dev/null && ls /dev >/dev/null && head -c1 /dev/urandom >/dev/null && cat /etc/passwd >/dev/null"}, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, context.Background(), e.policy(), tc.argv...)
			if (r.code == 0) != tc.ok {
				t.Errorf("exit %d, want success %v; stderr: %s", r.code, tc.ok, r.stderr)
			}
			if tc.outside != "" && exists(tc.outside) {
				t.Errorf("%s was written outside the workspace", tc.outside)
			}
			if tc.inside != "" && !exists(tc.inside) {
				t.Errorf("%s was not written inside the workspace", tc.inside)
			}
			if r.rep.FS != "landlock" || r.rep.Seccomp != "on" || !r.rep.Complete() {
				t.Errorf("report %+v, want every mechanism on", r.rep)
			}
		})
	}
}

// TestPrivateTmpRemoved checks that the private temporary directory is
// fresh and removed afterwards.
func TestPrivateTmpRemoved(t *testing.T) {
	e := newEnv(t)
	r := run(t, context.Background(), e.policy(), "sh", "-c", `echo "$TMPDIR"; ls -A "$TMPDIR" | wc -l`)
	lines := strings.Fields(r.stdout)
	if r.code != 0 || len(lines) != 2 || lines[1] != "0" {
		t.Fatalf("exit %d, output %q: want the private tmp path and an empty listing", r.code, r.stdout)
	}
	if exists(lines[0]) {
		t.Errorf("private tmp %s is left behind", lines[0])
	}
}

// TestReadOnly refuses writes to the workspace; the private tmp stays
// writable.
func TestReadOnly(t *testing.T) {
	e := newEnv(t)
	p := e.policy()
	p.Mode = ReadOnly
	r := run(t, context.Background(), p, "sh", "-c", "echo x > "+filepath.Join(e.ws, "ro"))
	if r.code == 0 || exists(filepath.Join(e.ws, "ro")) {
		t.Errorf("read-only mode wrote the workspace (exit %d)", r.code)
	}
	r = run(t, context.Background(), p, "sh", "-c", `echo x > "$TMPDIR/t" && cat `+filepath.Join(e.ws, ".env.example"))
	if r.code != 0 || r.stdout != "EXAMPLE=1" {
		t.Errorf("read-only mode: tmp write and workspace read: exit %d, output %q, stderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestCredentialsMasked reads the credential files, directly and through
// the parent's /proc/PID/root, which is outside the mount namespace.
func TestCredentialsMasked(t *testing.T) {
	e := newEnv(t)
	p := e.policy()
	extra := filepath.Join(e.outside, "state")
	must(t, os.MkdirAll(extra, 0o700))
	must(t, os.WriteFile(filepath.Join(extra, "approver.token"), []byte(secret), 0o600))
	p.CredentialPaths = []string{extra}
	for _, tc := range []struct{ name, script string }{
		{"workspace .env", "cat .env"},
		{"nested .env.local", "cat sub/.env.local"},
		{".env link to a file outside", "cat .env.production"},
		{"ssh key", `cat "$HOME/.ssh/id_rsa"; ls -A "$HOME/.ssh" | sed s/^/LISTED:/`},
		{"netrc", `cat "$HOME/.netrc"`},
		{"extra credential dir", "cat " + filepath.Join(extra, "approver.token") + "; ls -A " + extra + " | sed s/^/LISTED:/"},
		{"parent's root", `cat /proc/$PPID/root` + filepath.Join(e.home, ".ssh", "id_rsa")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Command(context.Background(), p, "sh", "-c", tc.script)
			var out bytes.Buffer
			c.Stdout, c.Stderr = &out, &out
			c.Env = append(os.Environ(), "HOME="+e.home)
			rep, _, err := c.Run()
			must(t, err)
			if strings.Contains(out.String(), secret) || strings.Contains(out.String(), "LISTED:") {
				t.Errorf("credential readable: %q", out.String())
			}
			if rep.Mask != "mountns" || rep.Masked != 6 {
				t.Errorf("report %+v, want 6 masked paths in a mount namespace", rep)
			}
		})
	}
	// Not credentials: read as they are; masked files stay on disk.
	r := run(t, context.Background(), p, "cat", ".env.example")
	if r.stdout != "EXAMPLE=1" {
		t.Errorf(".env.example = %q", r.stdout)
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, ".env")); string(b) != secret {
		t.Errorf(".env changed on disk: %q", b)
	}
}

// listener accepts TCP connections and UDP datagrams on loopback outside
// the sandbox and counts what arrives.
func listener(t *testing.T) (tcpPort, udpPort int, got func() string) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close(); pc.Close() })
	ch := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 16)
			n, _ := c.Read(b)
			ch <- "tcp:" + string(b[:n])
			c.Close()
		}
	}()
	go func() {
		b := make([]byte, 16)
		for {
			n, _, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			ch <- "udp:" + string(b[:n])
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, pc.LocalAddr().(*net.UDPAddr).Port, func() string {
		var s []string
		deadline := time.After(300 * time.Millisecond)
		for {
			select {
			case m := <-ch:
				s = append(s, m)
			case <-deadline:
				return strings.Join(s, ",")
			}
		}
	}
}

const netScript = `
import socket, sys
ok = []
try:
    socket.create_connection(("127.0.0.1", %d), 2).sendall(b"hi")
    ok.append("tcp")
except OSError as e:
    print("tcp:", e, file=sys.stderr)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"hi", ("127.0.0.1", %d))
    ok.append("udp")
except OSError as e:
    print("udp:", e, file=sys.stderr)
try:
    u = socket.socket(socket.AF_UNIX)
    ok.append("unix")
except OSError as e:
    print("unix:", e, file=sys.stderr)
print(",".join(ok))
`

// TestNetwork connects to a server started outside the sandbox: refused
// with the network off (TCP, UDP and AF_UNIX), reached with it on.
func TestNetwork(t *testing.T) {
	needProgram(t, "python3")
	e := newEnv(t)
	tcp, udp, got := listener(t)
	for _, tc := range []struct {
		network          bool
		wantOut, wantGot string
		wantNet          string
	}{
		{false, "", "", "landlock"},
		{true, "tcp,udp,unix", "tcp:hi,udp:hi", "open"},
	} {
		t.Run(fmt.Sprint("network=", tc.network), func(t *testing.T) {
			p := e.policy()
			p.Network = tc.network
			r := run(t, context.Background(), p, "python3", "-c", fmt.Sprintf(netScript, tcp, udp))
			if strings.TrimSpace(r.stdout) != tc.wantOut {
				t.Errorf("succeeded: %q, want %q; stderr: %s", strings.TrimSpace(r.stdout), tc.wantOut, r.stderr)
			}
			if g := got(); g != tc.wantGot && !(tc.wantGot != "" && g == "udp:hi,tcp:hi") {
				t.Errorf("server received %q, want %q", g, tc.wantGot)
			}
			if r.rep.Net != tc.wantNet {
				t.Errorf("report net %q, want %q", r.rep.Net, tc.wantNet)
			}
		})
	}
}

// TestExitStatus propagates exit codes and signals as a shell would.
func TestExitStatus(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 7", 7}, {"kill -TERM $$", 143}} {
		if r := run(t, context.Background(), e.policy(), "sh", "-c", tc.script); r.code != tc.want {
			t.Errorf("%q: exit %d, want %d", tc.script, r.code, tc.want)
		}
	}
	c := Command(context.Background(), e.policy(), "no-such-program-toolgate")
	_, _, err := c.Run()
	var se *StartError
	if !errors.As(err, &se) || se.Code != 127 {
		t.Errorf("missing program: %v, want a StartError with code 127", err)
	}
	c = Command(context.Background(), Policy{Workspace: filepath.Join(e.ws, "nope")}, "true")
	if _, _, err := c.Run(); !errors.Is(err, ErrPolicy) {
		t.Errorf("missing workspace: %v, want ErrPolicy", err)
	}
}

// alive reports whether pid is a process that has not exited.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestCancelKillsGroup cancels a program with children in the background;
// nothing of it may be left in /proc.
func TestCancelKillsGroup(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := run(t, ctx, e.policy(), "sh", "-c", `sleep 60 & echo $! > pids; (sleep 61 & echo $! >> pids; wait) & echo $$ >> pids; wait`)
	if time.Since(start) > 10*time.Second {
		t.Errorf("cancel took %s", time.Since(start))
	}
	if r.code != 128+9 {
		t.Errorf("exit %d, want %d (SIGKILL)", r.code, 128+9)
	}
	b, err := os.ReadFile(filepath.Join(e.ws, "pids"))
	must(t, err)
	pids := strings.Fields(string(b))
	if len(pids) != 3 {
		t.Fatalf("pids %q, want 3", pids)
	}
	time.Sleep(100 * time.Millisecond)
	for _, s := range pids {
		pid, _ := strconv.Atoi(s)
		if alive(pid) {
			t.Errorf("process %d is left running", pid)
		}
	}
}

// TestFallbacks disables each mechanism in turn: the Report names what is
// missing, the mechanisms that remain still hold, and the one disabled is
// really gone.
func TestFallbacks(t *testing.T) {
	needProgram(t, "python3", "unshare")
	e := newEnv(t)
	tcp, udp, got := listener(t)
	for _, tc := range []struct {
		disable   string
		fs, net   string
		mask, sec string
		missing   []string
		// effects: whether the outside write, the secret read, the TCP
		// connection and a new user namespace succeed.
		write, read, connect, userns bool
	}{
		{"", "landlock", "landlock", "mountns", "on", nil, false, false, false, false},
		{"landlock", "none", "netns", "mountns", "on", []string{"file system"}, true, false, false, false},
		{"landlock-net", "landlock", "netns", "mountns", "on", nil, false, false, false, false},
		{"userns", "landlock", "landlock", "unavailable", "on", []string{"credential masking"}, false, true, false, false},
		{"landlock-net,userns", "landlock", "none", "unavailable", "on", []string{"credential masking", "network"}, false, true, true, false},
		{"seccomp", "landlock", "landlock", "mountns", "off", []string{"seccomp"}, false, false, false, true},
	} {
		t.Run("disable="+tc.disable, func(t *testing.T) {
			t.Setenv(DisableEnv, tc.disable)
			target := filepath.Join(e.outside, "fallback-"+strings.ReplaceAll(tc.disable, ",", "-"))
			script := fmt.Sprintf(`
import socket, subprocess
try:
    open(%q, "w").write("x"); print("write")
except OSError: pass
if "%s" in open(".env").read(): print("read")
try:
    socket.create_connection(("127.0.0.1", %d), 2).sendall(b"fb"); print("connect")
except OSError: pass
if subprocess.run(["unshare", "-U", "true"], stderr=subprocess.DEVNULL).returncode == 0: print("userns")
`, target, secret, tcp)
			_ = udp
			r := run(t, context.Background(), e.policy(), "python3", "-c", script)
			out := strings.Fields(r.stdout)
			has := func(s string) bool {
				for _, o := range out {
					if o == s {
						return true
					}
				}
				return false
			}
			if has("write") != tc.write || has("read") != tc.read || has("connect") != tc.connect || has("userns") != tc.userns {
				t.Errorf("effects %q, want write=%v read=%v connect=%v userns=%v; stderr %s", out, tc.write, tc.read, tc.connect, tc.userns, r.stderr)
			}
			got()
			rep := r.rep
			if rep.FS != tc.fs || rep.Net != tc.net || rep.Mask != tc.mask || rep.Seccomp != tc.sec {
				t.Errorf("report %+v, want fs=%s net=%s mask=%s seccomp=%s", rep, tc.fs, tc.net, tc.mask, tc.sec)
			}
			if len(rep.Missing) != len(tc.missing) {
				t.Fatalf("missing %q, want one entry for each of %q", rep.Missing, tc.missing)
			}
			for i, m := range tc.missing {
				if !strings.HasPrefix(rep.Missing[i], m+": ") {
					t.Errorf("missing[%d] = %q, want it about %s", i, rep.Missing[i], m)
				}
			}
		})
	}
}

// TestIdentity: the program runs as the caller, with no capability left
// when the caller is not root.
func TestIdentity(t *testing.T) {
	e := newEnv(t)
	r := run(t, context.Background(), e.policy(), "sh", "-c", `id -u; grep CapEff /proc/self/status; grep CapBnd /proc/self/status`)
	f := strings.Fields(r.stdout)
	if len(f) != 5 || f[0] != strconv.Itoa(os.Geteuid()) {
		t.Fatalf("output %q, want uid %d", r.stdout, os.Geteuid())
	}
	if os.Geteuid() != 0 && f[2] != "0000000000000000" {
		t.Errorf("capabilities %s left to an unprivileged program", f[2])
	}
	if os.Geteuid() != 0 {
		return // no_new_privs: nothing in the bounding set can be gained
	}
	// A root program keeps what a build needs in its own files, and none
	// of what reaches past the sandbox.
	bnd, err := strconv.ParseUint(f[4], 16, 64)
	must(t, err)
	for _, c := range []struct {
		name string
		bit  uint
	}{{"CAP_SETFCAP", 31}, {"CAP_DAC_READ_SEARCH", 2}, {"CAP_KILL", 5}, {"CAP_SYS_ADMIN", 21}, {"CAP_SYS_PTRACE", 19}, {"CAP_SYS_CHROOT", 18}} {
		if bnd&(1<<c.bit) != 0 {
			t.Errorf("%s is left in the bounding set (%s)", c.name, f[4])
		}
	}
	// Only CHOWN, DAC_OVERRIDE, FOWNER, FSETID, SETGID, SETUID,
	// NET_BIND_SERVICE, IPC_LOCK and SYS_NICE are kept.
	const kept = 1<<0 | 1<<1 | 1<<3 | 1<<4 | 1<<6 | 1<<7 | 1<<10 | 1<<14 | 1<<23
	if extra := bnd &^ kept; extra != 0 {
		t.Errorf("capabilities %#x are left in the bounding set (%s)", extra, f[4])
	}
}

// unprivilegedEnv marks the re-run of this test binary as an unprivileged
// user.
const unprivilegedEnv = "TOOLGATE_SANDBOX_TEST_UNPRIVILEGED"

// TestUnprivileged re-runs the tests above as nobody (65534), where the
// mount and network namespaces need a user namespace.
func TestUnprivileged(t *testing.T) {
	if os.Getenv(unprivilegedEnv) != "" {
		t.Skip("already unprivileged")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: run as root to also run the sandbox tests as an unprivileged user")
	}
	needProgram(t, "setpriv")
	runUnprivileged(t, "^(TestSeccomp|TestWorkspaceWrite|TestPrivateTmpRemoved|TestReadOnly|TestCredentialsMasked|TestNetwork|TestExitStatus|TestCancelKillsGroup|TestFallbacks|TestIdentity)$")
}

// runUnprivileged runs this test binary as nobody with the given -run
// filter and fails unless every test passed.
func runUnprivileged(t *testing.T, filter string) {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	dir, err := os.MkdirTemp("", "toolgate-unpriv-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, filepath.Base(self))
	data, err := os.ReadFile(self)
	must(t, err)
	must(t, os.WriteFile(bin, data, 0o755))
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", filter, "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(withoutVars(os.Environ(), "HOME", "TMPDIR", DisableEnv), "HOME="+dir, "TMPDIR=/tmp", unprivilegedEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("\nPASS\n")) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("--- SKIP")) {
		t.Errorf("as nobody, tests were skipped:\n%s", out)
	}
	t.Logf("as nobody: %d tests passed", bytes.Count(out, []byte("--- PASS: Test")))
}

// TestSeccomp runs what Landlock does not stop: each succeeds with seccomp
// disabled and fails with it on.
func TestSeccomp(t *testing.T) {
	needProgram(t, "strace", "unshare", "python3")
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"ptrace", []string{"strace", "-o", "/dev/null", "true"}},
		{"new user namespace", []string{"unshare", "-U", "true"}},
		{"keyctl", []string{"python3", "-c", "import ctypes, sys; r = ctypes.CDLL(None, use_errno=True).syscall(250, 0, -3, 0); sys.exit(1 if r < 0 else 0)"}},
		{"i386 AF_UNIX socket", []string{"python3", "-c", i386Socket}},
		{"another process's file descriptor", []string{"python3", "-c", pidfdGetfd}},
	} {
		if tc.name == "i386 AF_UNIX socket" {
			// Only where the kernel runs 32-bit calls at all.
			if runtime.GOARCH != "amd64" || exec.Command("python3", "-c", i386Socket).Run() != nil {
				continue
			}
		}
		for _, on := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/seccomp=%v", tc.name, on), func(t *testing.T) {
				if !on {
					t.Setenv(DisableEnv, "seccomp")
				}
				r := run(t, context.Background(), e.policy(), tc.argv...)
				if (r.code == 0) == on {
					t.Errorf("exit %d with seccomp %v; stderr: %s", r.code, on, r.stderr)
				}
			})
		}
	}
}

// pidfdGetfd takes a copy of another process's standard output with
// pidfd_getfd (438) and exits 0 when it got one.
const pidfdGetfd = `import ctypes, os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(10)
    os._exit(0)
fd = ctypes.CDLL(None).syscall(438, os.pidfd_open(pid), 1, 0)
os.kill(pid, 9)
sys.exit(0 if fd >= 0 else 1)
`

// i386Socket makes socket(AF_UNIX, SOCK_STREAM, 0) through the i386
// system call interface (int 0x80, socket is 359 there) and exits 0 when it
// got a socket.
const i386Socket = `import ctypes, sys
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
low = libc.mmap(None, 4096, 7, 0x22 | 0x40, -1, 0)
# push rbx; mov eax,edi; mov ebx,esi; mov r8d,ecx; mov ecx,edx; mov edx,r8d; int 0x80; pop rbx; ret
code = bytes([0x53, 0x89,0xf8, 0x89,0xf3, 0x41,0x89,0xc8, 0x89,0xd1, 0x44,0x89,0xc2, 0xcd,0x80, 0x5b, 0xc3])
ctypes.memmove(low, code, len(code))
call = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_long)(low)
sys.exit(0 if call(359, 1, 1, 0) >= 0 else 1)
`

// TestTerminalInjection pushes a character into the controlling terminal
// with TIOCSTI, which the caller's shell would read after the program
// ends, also with the request's high bits set, which the kernel ignores.
// The terminal is the one `script` makes; the program runs through the
// built toolgate, so that it shares the terminal's session.
func TestTerminalInjection(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no toolgate build")
	}
	if os.Getenv(unprivilegedEnv) != "" {
		t.Skip("run by the privileged run")
	}
	needProgram(t, "script", "python3")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build toolgate with")
	}
	bin := buildToolgate(t, goBin)
	e := newEnv(t)
	for _, req := range []string{"termios.TIOCSTI", "termios.TIOCSTI | (1 << 32)"} {
		prog := filepath.Join(e.ws, "sti.py")
		must(t, os.WriteFile(prog, []byte(fmt.Sprintf(`import fcntl, termios
try:
    fcntl.ioctl(0, %s, b"#")
    print("injected")
except OSError as e:
    print("refused", e.errno)
`, req)), 0o644))
		for _, on := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/seccomp=%v", req, on), func(t *testing.T) {
				cmd := exec.Command("script", "-qec", bin+" sandbox --workspace "+e.ws+" -- python3 "+prog, "/dev/null")
				cmd.Stdin = nil
				cmd.Env = withoutVars(os.Environ(), DisableEnv)
				if !on {
					cmd.Env = append(cmd.Env, DisableEnv+"=seccomp")
				}
				out, _ := cmd.CombinedOutput()
				want := map[bool]string{true: "refused 1", false: "injected"}[on]
				if !strings.Contains(string(out), want) {
					t.Errorf("output %q, want %q", out, want)
				}
			})
		}
	}
}

// TestEscapeesKilledWithoutSubreaper: a program that leaves its process
// group (setsid, a double fork) is killed when the run ends, also where the
// caller is no subreaper (a server running many calls at once): it cannot
// leave the run's mount namespace.
func TestEscapeesKilledWithoutSubreaper(t *testing.T) {
	needProgram(t, "setsid", "sh")
	e := newEnv(t)
	r := run(t, context.Background(), e.policy(), "sh", "-c", `setsid sh -c 'sleep 60 & echo $! > pid; wait' >/dev/null 2>&1 & sleep 0.3`)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(e.ws, "pid"))
	must(t, err)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 {
		t.Fatalf("pid file %q", b)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	time.Sleep(100 * time.Millisecond)
	if alive(pid) {
		t.Errorf("the escaped process %d is left running", pid)
	}
}

// TestSysVIPCPrivate: System V shared memory is no file, so Landlock does
// not govern it; a program must not reach a segment of a process outside.
func TestSysVIPCPrivate(t *testing.T) {
	needProgram(t, "python3")
	e := newEnv(t)
	const key = 0x7a1233
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Skipf("System V shared memory: %v", err)
	}
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	script := fmt.Sprintf("import ctypes, sys; sys.exit(0 if ctypes.CDLL(None).shmget(%d, 0, 0) >= 0 else 1)", key)
	if r := run(t, context.Background(), e.policy(), "python3", "-c", script); r.code == 0 {
		t.Errorf("the program reached the segment of a process outside (%s)", r.stderr)
	}
}

// TestReadStatus: only a complete report from the set-up stage lets the
// program count as started; a missing, cut or unreadable one is an error.
func TestReadStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    string
		err     error
		wantErr bool
		code    int
		missing int
	}{
		{"confined", `{}` + "\n", nil, false, 0, 0},
		{"confined, a mechanism missing", `{"missing":["seccomp: refused"]}` + "\n", nil, false, 0, 1},
		{"program not found", `{"error":"sandbox: not found","code":127}` + "\n", nil, true, 127, 0},
		{"no report", "", nil, true, 0, 0},
		{"cut report", `{"missing":["seccomp: ref`, nil, true, 0, 0},
		{"report then garbage", `{}` + "\n" + `garbage`, nil, true, 0, 0},
		{"pipe error", `{}` + "\n", errors.New("EIO"), true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := readStatus([]byte(tc.data), tc.err)
			if (st.Error != "") != tc.wantErr || st.Code != tc.code || len(st.Missing) != tc.missing {
				t.Errorf("readStatus(%q) = %+v", tc.data, st)
			}
		})
	}
}

// TestNamespaceNumberReused: once a program's processes are gone, its
// mount namespace's number may go to the next sandbox; Wait of the first
// must not kill the second.
func TestNamespaceNumberReused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := Command(ctx, e.policy(), "sleep", "979")
	if _, err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if a.MountNS() == "" {
		t.Skip("no mount namespace here")
	}
	// The program dies and is not reaped: its namespace is gone.
	must(t, unix.Kill(-a.PID(), unix.SIGKILL))
	for deadline := time.Now().Add(5 * time.Second); !zombie(a.PID()); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the program did not die")
		}
	}
	b := Command(ctx, e.policy(), "sleep", "980")
	if _, err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Signal(unix.SIGKILL); _, _ = b.Wait() })
	_, _ = a.Wait()
	if zombie(b.PID()) {
		t.Errorf("the first sandbox's Wait killed the second (namespaces %s, %s)", a.MountNS(), b.MountNS())
	}
}

// zombie reports whether pid has exited (and is not reaped).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

// TestRequire: a required mechanism that is missing stops the start and
// nothing runs; one that is there lets the program run; an unknown name is
// a policy error.
func TestRequire(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		disable string
		require []string
		runs    bool
		errHas  string
	}{
		{"", []string{"landlock", "mountns"}, true, ""},
		{"landlock", nil, true, ""},
		{"landlock", []string{"landlock"}, false, "landlock is required"},
		{"userns", []string{"landlock"}, true, ""},
		{"userns", []string{"landlock", "mountns"}, false, "mountns is required"},
		{"", []string{"seccomp"}, false, "unknown mechanism"},
	} {
		t.Run(tc.disable+"/"+strings.Join(tc.require, ","), func(t *testing.T) {
			t.Setenv(DisableEnv, tc.disable)
			marker := filepath.Join(e.ws, "ran-"+strings.Join(append([]string{tc.disable}, tc.require...), "-"))
			c := Command(context.Background(), e.policy(), "touch", marker)
			c.Require = tc.require
			_, code, err := c.Run()
			_, statErr := os.Stat(marker)
			ran := statErr == nil
			if ran != tc.runs {
				t.Fatalf("ran = %v, want %v (exit %d, err %v)", ran, tc.runs, code, err)
			}
			if tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Fatalf("err = %v, want one saying %q", err, tc.errHas)
			}
			if tc.errHas == "" && err != nil {
				t.Fatal(err)
			}
		})
	}
}
