package shellrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/policy"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the events produced")

const secret = "SECRET-5e1b"

// world is a workspace with a .env, a script that writes outside it, an
// outside directory, a home, a gate over a real SQLite log whose policy
// allows Bash(python3:*), and an approver that allows once what it is
// asked.
type world struct {
	ws, outside, home, state string
	eng                      *engine.Engine
	store                    *sqlite.Store
	g                        *gate.Gate
	asked                    atomic.Int32
}

func newWorld(t *testing.T, network bool) *world {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	root := t.TempDir()
	w := &world{ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside"), home: filepath.Join(root, "home"), state: filepath.Join(root, "state")}
	for _, d := range []string{filepath.Join(w.ws, ".git"), w.outside, w.home, w.state} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(w.ws, ".env"), []byte(secret), 0o600))
	must(t, os.WriteFile(filepath.Join(w.ws, "out.py"), fmt.Appendf(nil, "open(%q, 'w').write('x')\n", filepath.Join(w.outside, "from-script")), 0o644))
	t.Setenv("HOME", w.home)
	f, err := policy.ParseRules(policy.LayerCLI, []string{"Bash(python3:*)"}, nil, nil)
	must(t, err)
	f.Network = &network
	set, err := policy.Merge(f)
	must(t, err)
	w.eng, err = engine.New(engine.Options{Policy: engine.Fixed(set), Home: w.home})
	must(t, err)
	w.store, err = sqlite.Open(filepath.Join(root, "events.db"), nil)
	must(t, err)
	t.Cleanup(func() { w.store.Close() })
	n := 0
	w.g, err = gate.New(w.eng, w.store, approval.ApproverFunc(func(ctx context.Context, r *approval.Request) (approval.Answer, error) {
		w.asked.Add(1)
		return approval.Answer{Kind: approval.AllowOnce}, nil
	}), gate.Options{NewID: func() string { n++; return "tc_" + strconv.Itoa(n) }})
	must(t, err)
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w *world) request(session, command string, extra map[string]any) *engine.Request {
	in := map[string]any{"command": command}
	for k, v := range extra {
		in[k] = v
	}
	return &engine.Request{Tool: "Bash", Input: in, Cwd: w.ws, Session: session}
}

// events returns the events of session as type → payload, in order.
func (w *world) events(t *testing.T, session string) []eventlog.Event {
	t.Helper()
	var out []eventlog.Event
	for e, err := range w.store.Query(context.Background(), eventlog.Filter{Session: session}) {
		must(t, err)
		out = append(out, e)
	}
	return out
}

// runEvents returns the payloads of the session's tool.* events.
func (w *world) runEvents(t *testing.T, session string) map[eventlog.Type]map[string]any {
	t.Helper()
	out := map[eventlog.Type]map[string]any{}
	for _, e := range w.events(t, session) {
		if strings.HasPrefix(string(e.Type), "tool.") {
			var p map[string]any
			must(t, json.Unmarshal(e.Payload, &p))
			out[e.Type] = p
		}
	}
	return out
}

// TestSandboxedRuns runs, through the gate with Bash(python3:*) allowed,
// what the analysis lets through but the sandbox stops: each fails at the
// operating system with nothing written, and its tool.completed carries
// the sandbox report; writes inside the workspace land; .env reads empty.
func TestSandboxedRuns(t *testing.T) {
	etc := "/etc/toolgate-shellrun-test-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })
	for _, tc := range []struct {
		name    string
		command string
		ok      bool   // exit 0
		stdout  string // exact, when ok
		absent  string // must not exist afterwards
		present string // must exist afterwards, relative to the workspace
		asks    bool   // the approver is asked
	}{
		{name: "python writes /etc", command: fmt.Sprintf(`python3 -c "open('%s','w')"`, etc), absent: etc},
		{name: "script writes outside", command: "python3 out.py", absent: "$OUTSIDE/from-script"},
		{name: "computed sh -c", command: `sh -c "$(printf 'touch /tmp/../root/x')"`, absent: "/root/x", asks: true},
		{name: "write inside", command: `python3 -c "open('made','w').write('ok')"`, ok: true, present: "made"},
		{name: "read .env", command: `python3 -c "print(repr(open('.env').read()))"`, ok: true, stdout: "''\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, false)
			if tc.absent == "/root/x" && os.Geteuid() == 0 {
				os.Remove("/root/x")
			}
			absent := strings.ReplaceAll(tc.absent, "$OUTSIDE", w.outside)
			d, res, err := Run(context.Background(), w.g, w.eng, w.request("s1", tc.command, nil), "", Options{})
			if err != nil || d.Decision != policy.Allow {
				t.Fatalf("decision %s %s (%s), err %v", d.Decision, d.Reason, d.Message, err)
			}
			if got := w.asked.Load() > 0; got != tc.asks {
				t.Errorf("asked: %t, want %t", got, tc.asks)
			}
			if (res.ExitCode == 0) != tc.ok {
				t.Errorf("exit %d, want ok=%t; stderr: %s", res.ExitCode, tc.ok, res.Stderr)
			}
			if tc.ok && tc.stdout != "" && string(res.Stdout) != tc.stdout {
				t.Errorf("stdout %q, want %q", res.Stdout, tc.stdout)
			}
			if absent != "" {
				if _, err := os.Lstat(absent); err == nil {
					t.Errorf("%s was written", absent)
				}
			}
			if tc.present != "" {
				if _, err := os.Lstat(filepath.Join(w.ws, tc.present)); err != nil {
					t.Errorf("%s was not written: %v", tc.present, err)
				}
			}
			ev := w.runEvents(t, "s1")
			for _, typ := range []eventlog.Type{eventlog.TypeToolStarted, eventlog.TypeToolCompleted} {
				sb, _ := ev[typ]["sandbox"].(map[string]any)
				if sb["fs"] != "landlock" || sb["mask"] != "mountns" || sb["net"] == "open" {
					t.Errorf("%s: sandbox %v, want fs landlock, mask mountns, network closed", typ, ev[typ]["sandbox"])
				}
			}
			if code, _ := ev[eventlog.TypeToolCompleted]["exitCode"].(float64); (code == 0) != tc.ok {
				t.Errorf("tool.completed exitCode %v, want ok=%t", code, tc.ok)
			}
		})
	}
}

// TestNetwork: with the network off, a connection to a loopback server of
// the test fails; with it on, it succeeds and the server sees it.
func TestNetwork(t *testing.T) {
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%t", network), func(t *testing.T) {
			w := newWorld(t, network)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			must(t, err)
			defer ln.Close()
			var accepted atomic.Int32
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					c.Close()
				}
			}()
			port := ln.Addr().(*net.TCPAddr).Port
			cmd := fmt.Sprintf(`python3 -c "import socket; socket.create_connection(('127.0.0.1', %d), timeout=5).close()"`, port)
			d, res, err := Run(context.Background(), w.g, w.eng, w.request("s1", cmd, nil), "", Options{})
			if err != nil || d.Decision != policy.Allow {
				t.Fatalf("decision %s %s, err %v", d.Decision, d.Reason, err)
			}
			time.Sleep(50 * time.Millisecond)
			if ok := res.ExitCode == 0 && accepted.Load() > 0; ok != network {
				t.Errorf("connected: exit %d, accepted %d; want success %t; stderr: %s", res.ExitCode, accepted.Load(), network, res.Stderr)
			}
			if sb := w.runEvents(t, "s1")[eventlog.TypeToolCompleted]["sandbox"].(map[string]any); (sb["net"] == "open") != network {
				t.Errorf("sandbox net %v with network %t", sb["net"], network)
			}
		})
	}
}

// procsWith returns the live processes whose command line holds marker.
func procsWith(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cl, []byte(marker)) {
			continue
		}
		if t, err := startTicks(pid); err == nil && t > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// killAll kills what a failed test left running.
func killAll(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// TestTimeoutAndCancel: a timeout and a cancelled context end the call
// with tool.failed, and nothing of it is left in /proc, not even what
// left its process group.
func TestTimeoutAndCancel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		marker string // the sleep's argument, which no other process has
		script string
	}{
		{"timeout", false, "971", `sleep 971 & sleep 971 & wait`},
		{"cancel", true, "972", `sleep 972 & sleep 972 & wait`},
		{"timeout with setsid", false, "973", `setsid sleep 973 & (setsid sh -c 'sleep 973 & wait' &); wait`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, false)
			marker := tc.marker
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			in := map[string]any{"timeout": 700}
			if tc.cancel {
				in = nil
				go func() {
					for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
						if len(procsWith("sleep\x00"+marker)) >= 2 {
							break
						}
					}
					cancel()
				}()
			}
			req := w.request("s1", "sh -c "+strconv.Quote(tc.script), in)
			// sh -c with a static script is judged; allow it for this test.
			req.Mode = "bypassPermissions"
			start := time.Now()
			_, _, err := Run(ctx, w.g, w.eng, req, "", Options{KillEscapees: true})
			t.Cleanup(func() { killAll(procsWith("sleep\x00" + marker)) })
			if err == nil {
				t.Fatal("no error from a run that was ended")
			}
			if time.Since(start) > 8*time.Second {
				t.Errorf("the run took %s", time.Since(start))
			}
			if left := procsWith("sleep\x00" + marker); len(left) > 0 {
				t.Errorf("left running: %v", left)
			}
			ev := w.runEvents(t, "s1")
			failed := ev[eventlog.TypeToolFailed]
			if failed == nil || failed["sandbox"] == nil {
				t.Fatalf("no tool.failed with a sandbox report: %v", ev)
			}
			want := "timed out"
			if tc.cancel {
				want = "cancelled"
			}
			if msg, _ := failed["error"].(string); !strings.Contains(msg, want) {
				t.Errorf("tool.failed error %q, want %q", msg, want)
			}
		})
	}
}

// TestMissingLayer: with Landlock missing, the call that only Landlock
// would have stopped asks even under Bash(python3:*), and its events
// say what is missing.
func TestMissingLayer(t *testing.T) {
	w := newWorld(t, false)
	t.Setenv(sandbox.DisableEnv, "landlock")
	asked := 0
	g, err := gate.New(w.eng, w.store, approval.ApproverFunc(func(ctx context.Context, r *approval.Request) (approval.Answer, error) {
		asked++
		if r.Reason != string(engine.ReasonUncontained) {
			t.Errorf("asked for %s, want %s", r.Reason, engine.ReasonUncontained)
		}
		return approval.Answer{Kind: approval.Deny}, nil
	}), gate.Options{})
	must(t, err)
	d, _, err := Run(context.Background(), g, w.eng, w.request("s1", "python3 out.py", nil), "", Options{})
	if err != nil || d.Decision != policy.Deny || asked != 1 {
		t.Fatalf("decision %s %s after %d questions, err %v", d.Decision, d.Reason, asked, err)
	}
	if _, err := os.Lstat(filepath.Join(w.outside, "from-script")); err == nil {
		t.Error("the script ran")
	}
	// A command that runs no interpreter is judged as before, and its
	// events carry the missing layer.
	d, _, err = Run(context.Background(), g, w.eng, w.request("s2", "pwd", nil), "", Options{})
	if err != nil || d.Decision != policy.Allow {
		t.Fatalf("pwd: %s %s, err %v", d.Decision, d.Reason, err)
	}
	sb := w.runEvents(t, "s2")[eventlog.TypeToolStarted]["sandbox"].(map[string]any)
	if sb["fs"] != "none" || !strings.Contains(fmt.Sprint(sb["missing"]), "Landlock is unavailable") {
		t.Errorf("sandbox %v, want fs none with the missing layer named", sb)
	}
}

// TestBackground: a background call keeps running after the call
// returns, writes its output to the state directory, is listed and
// stopped by id with its whole group.
func TestBackground(t *testing.T) {
	w := newWorld(t, false)
	req := w.request("s1", `sh -c "echo started; sleep 974 & sleep 974"`, map[string]any{"run_in_background": true})
	req.Mode = "bypassPermissions"
	d, res, err := Run(context.Background(), w.g, w.eng, req, "", Options{StateDir: w.state})
	if err != nil || d.Decision != policy.Allow {
		t.Fatalf("decision %s %s, err %v", d.Decision, d.Reason, err)
	}
	id, _ := res.Detail["background"].(string)
	t.Cleanup(func() { _, _ = Kill(w.state, id, 0) })
	procs, err := List(w.state, "s1")
	must(t, err)
	if len(procs) != 1 || procs[0].ID != id || !procs[0].Running {
		t.Fatalf("listed %+v, want %s running", procs, id)
	}
	if other, _ := List(w.state, "s2"); len(other) != 0 {
		t.Errorf("session s2 lists %+v", other)
	}
	for deadline := time.Now().Add(5 * time.Second); len(procsWith("sleep\x00974")) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background process did not start")
		}
	}
	if _, err := Kill(w.state, id, time.Second); err != nil {
		t.Fatal(err)
	}
	if left := procsWith("sleep\x00974"); len(left) > 0 {
		t.Errorf("left running after kill: %v", left)
	}
	if out, _ := os.ReadFile(procs[0].Log); string(out) != "started\n" {
		t.Errorf("output file holds %q", out)
	}
	if procs, _ := List(w.state, ""); len(procs) != 0 {
		t.Errorf("still listed: %+v", procs)
	}
	if _, err := Kill(w.state, id, time.Second); !errors.Is(err, ErrNoProcess) {
		t.Errorf("second kill: %v, want ErrNoProcess", err)
	}
}

// backgroundStarterEnv names the state directory a re-run of this test
// binary starts a background command in before it exits.
const backgroundStarterEnv = "TOOLGATE_SHELLRUN_TEST_BACKGROUND_STATE"

// TestBackgroundStarter is the re-run's part of TestBackgroundKillsEscapees.
func TestBackgroundStarter(t *testing.T) {
	state := os.Getenv(backgroundStarterEnv)
	if state == "" {
		t.Skip("run by TestBackgroundKillsEscapees")
	}
	w := newWorld(t, false)
	req := w.request("s1", `sh -c "setsid sleep 975 >/dev/null 2>&1 & sleep 976"`, map[string]any{"run_in_background": true})
	req.Mode = "bypassPermissions"
	d, res, err := Run(context.Background(), w.g, w.eng, req, "", Options{StateDir: state})
	if err != nil || d.Decision != policy.Allow {
		t.Fatalf("decision %s %s, err %v", d.Decision, d.Reason, err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(procsWith("sleep\x00975")) < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background process did not start")
		}
	}
	fmt.Printf("BACKGROUND-ID %s\n", res.Detail["background"])
}

// TestBackgroundKillsEscapees: toolgate kill, in another process than the
// one that started the command (which has exited, as toolgate run does),
// also stops what left the command's process group with setsid.
func TestBackgroundKillsEscapees(t *testing.T) {
	if os.Getenv(backgroundStarterEnv) != "" {
		t.Skip("the starter")
	}
	state := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestBackgroundStarter$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), backgroundStarterEnv+"="+state)
	out, err := cmd.Output()
	t.Cleanup(func() { killAll(procsWith("sleep\x00975")); killAll(procsWith("sleep\x00976")) })
	m := regexp.MustCompile(`BACKGROUND-ID (bg_\w+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("starter: %v\n%s", err, out)
	}
	if _, err := Kill(state, string(m[1]), time.Second); err != nil {
		t.Fatal(err)
	}
	if left := procsWith("sleep\x00975"); len(left) > 0 {
		t.Errorf("the process that left the group is left running after kill: %v", left)
	}
}

// TestGoldenChains records the event chain of a sandboxed run that
// completes, one that fails at the operating system, one that times out
// and one that is denied, against testdata/chains.golden.
func TestGoldenChains(t *testing.T) {
	w := newWorld(t, false)
	if rep, err := Probe(context.Background(), PolicyFor(engine.Confinement{Workspace: w.ws}, Options{})); err != nil || !rep.Complete() {
		t.Skipf("the sandbox is not complete here: %v %v", rep.Missing, err)
	}
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := 0
	g, err := gate.New(w.eng, w.store, nil, gate.Options{Clock: func() time.Time { return clock },
		NewID: func() string { n++; return "tc_" + strconv.Itoa(n) }})
	must(t, err)
	steps := []struct {
		session, command string
		in               map[string]any
	}{
		{"completes", `python3 -c "print('hello')"`, nil},
		{"fails", `python3 -c "open('/etc/passwd','a')"`, nil},
		{"times-out", `python3 -c "import time; time.sleep(60)"`, map[string]any{"timeout": 300}},
		{"denied", `rm -rf /`, nil},
	}
	var got bytes.Buffer
	for _, s := range steps {
		_, _, _ = Run(context.Background(), g, w.eng, w.request(s.session, s.command, s.in), "", Options{})
		fmt.Fprintf(&got, "# %s: %s\n", s.session, s.command)
		for _, e := range w.events(t, s.session) {
			fmt.Fprintf(&got, "%s %s\n", e.Type, normalize(t, e.Payload, w))
		}
	}
	path := filepath.Join("testdata", "chains.golden")
	if *update {
		must(t, os.MkdirAll("testdata", 0o755))
		must(t, os.WriteFile(path, got.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")); diff != "" {
		t.Errorf("event chains differ from %s (-want +got; run with -update to rewrite):\n%s", path, diff)
	}
}

var volatile = regexp.MustCompile(`"(landlock_abi|masked|durationMs|argsHash|version|mtime|size|inode)":("[^"]*"|[0-9]+)`)

// normalize makes a payload stable across machines and runs.
func normalize(t *testing.T, raw []byte, w *world) string {
	var v any
	must(t, json.Unmarshal(raw, &v))
	b, err := json.Marshal(v)
	must(t, err)
	s := strings.ReplaceAll(string(b), w.ws, "$WS")
	return volatile.ReplaceAllString(s, `"$1":"…"`)
}

// unprivilegedEnv marks the re-run of this test binary as nobody.
const unprivilegedEnv = "TOOLGATE_SHELLRUN_TEST_UNPRIVILEGED"

// TestUnprivileged re-runs the tests above as nobody (65534), where the
// sandbox's namespaces need a user namespace.
func TestUnprivileged(t *testing.T) {
	if os.Getenv(unprivilegedEnv) != "" {
		t.Skip("already unprivileged")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: run as root to also run these tests as an unprivileged user")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	self, err := os.Executable()
	must(t, err)
	dir, err := os.MkdirTemp("", "toolgate-unpriv-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	data, err := os.ReadFile(self)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "shellrun.test"), data, 0o755))
	golden, err := os.ReadFile(filepath.Join("testdata", "chains.golden"))
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(dir, "testdata"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "testdata", "chains.golden"), golden, 0o644))
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", filepath.Join(dir, "shellrun.test"),
		"-test.run", "^(TestSandboxedRuns|TestNetwork|TestTimeoutAndCancel|TestMissingLayer|TestBackground|TestGoldenChains|TestSessionSettings|TestWeakerThanJudged)$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR=/tmp", unprivilegedEnv+"=1", sandbox.DisableEnv+"=")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("\nPASS\n")) || bytes.Contains(out, []byte("--- SKIP")) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// TestWeakerThanJudged: a program whose sandbox comes up without a
// mechanism the call was judged with is killed and the run fails.
func TestWeakerThanJudged(t *testing.T) {
	w := newWorld(t, false)
	p := PolicyFor(engine.Confinement{Workspace: w.ws}, Options{})
	t.Setenv(sandbox.DisableEnv, "landlock")
	res, err := run(context.Background(), p, "", "echo ran > ran", w.ws, nil, Options{}, time.Minute,
		&engine.Containment{FS: true, Mask: true, Net: true, Syscalls: true})
	if err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Fatalf("err %v, want the program killed", err)
	}
	if res.Sandbox == nil || res.Sandbox.FS != "none" {
		t.Errorf("sandbox %+v", res.Sandbox)
	}
}

// TestBackgroundWeakerThanJudged: a background command whose sandbox
// comes up weaker than the probe the call was judged with is killed, not
// registered, and the call fails.
func TestBackgroundWeakerThanJudged(t *testing.T) {
	w := newWorld(t, false)
	t.Setenv(sandbox.DisableEnv, "landlock")
	// The probe found every mechanism; the run then comes up without one.
	key := fmt.Sprintf("%s|%t|%s", sandbox.WorkspaceWrite, false, "landlock")
	probes.Store(key, sandbox.Report{FS: "landlock", Net: "landlock", Mask: "mountns", Seccomp: "on", LandlockABI: 4})
	t.Cleanup(func() { probes.Delete(key) })
	req := w.request("s1", "sleep 977", map[string]any{"run_in_background": true})
	req.Mode = "bypassPermissions"
	_, res, err := Run(context.Background(), w.g, w.eng, req, "", Options{StateDir: w.state})
	t.Cleanup(func() { killAll(procsWith("sleep\x00977")) })
	if err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Fatalf("err %v, want the program killed", err)
	}
	if res.Sandbox == nil || res.Sandbox.FS != "none" {
		t.Errorf("sandbox %+v", res.Sandbox)
	}
	if procs, err := List(w.state, ""); err != nil || len(procs) != 0 {
		t.Errorf("registered: %+v, %v", procs, err)
	}
	if left := procsWith("sleep\x00977"); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// TestPolicyFor maps the sandbox axis, the network and the workspace of
// a call to the sandbox's policy.
func TestPolicyFor(t *testing.T) {
	roots := []string{"/cache"}
	for _, tc := range []struct {
		name string
		c    engine.Confinement
		want sandbox.Policy
	}{
		{"workspace-write", engine.Confinement{Sandbox: policy.SandboxWorkspaceWrite, Network: true, Workspace: "/ws", WritableRoots: roots, Dir: "/ws/sub"},
			sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: true, Workspace: "/ws", WritableRoots: roots}},
		{"read-only keeps the network off", engine.Confinement{Sandbox: policy.SandboxReadOnly, Network: true, Workspace: "/ws", WritableRoots: roots},
			sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: "/ws"}},
		{"danger-full-access", engine.Confinement{Sandbox: policy.SandboxFullAccess, Network: true, Workspace: "/ws"},
			sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: true, Workspace: "/ws", WritableRoots: []string{"/"}}},
		{"no workspace runs read-only", engine.Confinement{Sandbox: policy.SandboxWorkspaceWrite, WritableRoots: roots, Dir: "/home/me"},
			sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: "/home/me"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PolicyFor(tc.c, Options{})
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestSessionSettings: the session's sandbox setting holds at the
// operating system: switched to read-only, a write the analysis does not
// see fails; the session's network setting opens the network.
func TestSessionSettings(t *testing.T) {
	w := newWorld(t, false)
	sessions := engine.NewSessions()
	ro, on := policy.SandboxReadOnly, true
	sessions.Set("ro", engine.SessionSettings{Sandbox: &ro})
	sessions.Set("net", engine.SessionSettings{Network: &on})
	f, err := policy.ParseRules(policy.LayerCLI, []string{"Bash(python3:*)"}, nil, nil)
	must(t, err)
	set, err := policy.Merge(f)
	must(t, err)
	eng, err := engine.New(engine.Options{Policy: engine.Fixed(set), Home: w.home, Sessions: sessions})
	must(t, err)
	g, err := gate.New(eng, w.store, nil, gate.Options{})
	must(t, err)
	write := `python3 -c "open('made','w').write('x')"`
	for _, tc := range []struct {
		session string
		ok      bool
		net     string
	}{{"rw", true, "landlock"}, {"ro", false, "landlock"}, {"net", true, "open"}} {
		os.Remove(filepath.Join(w.ws, "made"))
		d, res, err := Run(context.Background(), g, eng, w.request(tc.session, write, nil), "", Options{})
		if err != nil || d.Decision != policy.Allow {
			t.Fatalf("%s: %s %s, err %v", tc.session, d.Decision, d.Reason, err)
		}
		_, statErr := os.Stat(filepath.Join(w.ws, "made"))
		if (res.ExitCode == 0 && statErr == nil) != tc.ok {
			t.Errorf("session %s: exit %d, file %v; want success %t", tc.session, res.ExitCode, statErr, tc.ok)
		}
		if res.Sandbox == nil || !strings.HasPrefix(res.Sandbox.Net, tc.net) && !(tc.net == "landlock" && res.Sandbox.Net == "netns") {
			t.Errorf("session %s: sandbox %+v, want net %s", tc.session, res.Sandbox, tc.net)
		}
	}
}

// TestKillReusedNumber: once a background process has ended and its
// number belongs to another process that leads a group of its own, kill
// signals nobody and only removes the entry.
func TestKillReusedNumber(t *testing.T) {
	state := t.TempDir()
	other := exec.Command("sleep", "978")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	ticks, err := startTicks(other.Process.Pid)
	must(t, err)
	// The recorded process had that number before, and started earlier.
	p := Process{ID: "bg_reused", Command: "sleep 1", PID: other.Process.Pid, StartTicks: ticks - 1}
	raw, _ := json.Marshal(p)
	must(t, os.MkdirAll(filepath.Join(state, BackgroundDir), 0o700))
	must(t, os.WriteFile(filepath.Join(state, BackgroundDir, p.ID+".json"), raw, 0o600))
	got, err := Kill(state, p.ID, 100*time.Millisecond)
	if err != nil || got.Running {
		t.Fatalf("kill: %+v, %v; want the entry removed as ended", got, err)
	}
	if t2, err := startTicks(other.Process.Pid); err != nil || t2 != ticks {
		t.Errorf("the process that reused the number was signalled: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, BackgroundDir, p.ID+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("entry still there: %v", err)
	}
}
