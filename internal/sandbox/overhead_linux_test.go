package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// overheadRuns is how many times each command runs for the medians.
const overheadRuns = 50

// TestOverhead measures what `toolgate sandbox -- true` costs over a plain
// exec of true: the median of 50 runs each, run side by side, through the library (the
// sandbox's own cost) and through the built toolgate binary (which adds
// toolgate's start-up, measured by itself as `toolgate help`).
func TestOverhead(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no overhead measurement")
	}
	if raceEnabled {
		t.Skip("the race detector slows the process that starts the sandbox: measured without it")
	}
	if os.Getenv(unprivilegedEnv) != "" {
		t.Skip("measured by the privileged run")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build toolgate with")
	}
	truePath, err := exec.LookPath("true")
	must(t, err)
	bin := buildToolgate(t, goBin)
	ws := t.TempDir()
	// The commands run side by side, in turn and in a rotating order, so
	// that a busy spell on a shared machine falls on all of them alike.
	runs := []func() error{
		func() error { return exec.Command(truePath).Run() },
		func() error {
			_, code, err := Command(context.Background(), Policy{Workspace: ws}, truePath).Run()
			if err == nil && code != 0 {
				err = fmt.Errorf("exit %d", code)
			}
			return err
		},
		func() error {
			cmd := exec.Command(bin, "sandbox", "--workspace", ws, "--", truePath)
			cmd.Dir = ws
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, out)
			}
			return err
		},
		func() error { return exec.Command(bin, "help").Run() },
	}
	times := make([][]time.Duration, len(runs))
	for i := range overheadRuns {
		for j := range runs {
			k := (i + j) % len(runs)
			start := time.Now()
			if err := runs[k](); err != nil {
				t.Fatal(err)
			}
			times[k] = append(times[k], time.Since(start))
		}
	}
	median := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	plain, lib, cli, bare := median(times[0]), median(times[1]), median(times[2]), median(times[3])
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	t.Logf("median of %d runs: exec of true %v; sandbox.Command(true) %v (overhead %v, %.1fx); "+
		"toolgate sandbox -- true %v (overhead %v, %.1fx), of which toolgate's own start-up (toolgate help) %v",
		overheadRuns, r(plain), r(lib), r(lib-plain), float64(lib)/float64(plain),
		r(cli), r(cli-plain), float64(cli)/float64(plain), r(bare))
	// The target is 10 ms on an idle machine; the bound leaves room for a
	// loaded one and still catches a stage that runs after the heavy
	// package initializers, or a network namespace made on every run. On
	// a machine so loaded that a plain exec is slow, every process start
	// is slow alike: the overhead fails only when it is also more than ten
	// plain execs.
	if lib-plain > 25*time.Millisecond && lib > 10*plain {
		t.Errorf("sandbox overhead %v over a plain exec; the target is under 10ms", r(lib-plain))
	}
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildToolgate builds the toolgate command once for the tests that run
// it, with the test hooks in: DisableEnv is honoured.
func buildToolgate(t *testing.T, goBin string) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolgate-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "toolgate")
		out, err := exec.Command(goBin, "build", "-tags", "toolgate_sandbox_testhooks", "-o", builtBin, "github.com/toolgate/toolgate/cmd/toolgate").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building toolgate: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// TestNested runs toolgate sandbox inside a sandbox, where seccomp refuses
// new namespaces: the inner sandbox says so, runs the program without
// them, and Landlock and seccomp still hold.
func TestNested(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no toolgate build")
	}
	if os.Getenv(unprivilegedEnv) != "" {
		t.Skip("run by the privileged run")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build toolgate with")
	}
	bin := buildToolgate(t, goBin)
	e := newEnv(t)
	r := run(t, context.Background(), e.policy(), bin, "sandbox", "--report", "--", "sh", "-c",
		"grep -c . .env; echo x > "+filepath.Join(e.outside, "nested"))
	if r.code == 0 || exists(filepath.Join(e.outside, "nested")) {
		t.Errorf("nested sandbox: exit %d, outside write exists %v", r.code, exists(filepath.Join(e.outside, "nested")))
	}
	if r.stdout != "0\n" {
		t.Errorf("nested sandbox read .env: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "missing protection: credential masking: namespaces refused") ||
		!strings.Contains(r.stderr, `"mask":"unavailable"`) || !strings.Contains(r.stderr, `"fs":"landlock"`) {
		t.Errorf("inner report: %s", r.stderr)
	}
}

// BenchmarkSandboxTrue runs true under the default policy through the
// library (the stage is this test binary).
func BenchmarkSandboxTrue(b *testing.B) {
	ws := b.TempDir()
	for b.Loop() {
		if _, code, err := Command(context.Background(), Policy{Workspace: ws}, "true").Run(); err != nil || code != 0 {
			b.Fatalf("exit %d: %v", code, err)
		}
	}
}

// TestDisableEnvIgnoredWhenInstalled: toolgate as it is installed (built
// without the test hooks) ignores DisableEnv, so the environment of the
// agent whose command runs inside cannot switch a mechanism off.
func TestDisableEnvIgnoredWhenInstalled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no toolgate build")
	}
	if os.Getenv(unprivilegedEnv) != "" {
		t.Skip("run by the privileged run")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build toolgate with")
	}
	bin := filepath.Join(t.TempDir(), "toolgate")
	if out, err := exec.Command(goBin, "build", "-o", bin, "github.com/toolgate/toolgate/cmd/toolgate").CombinedOutput(); err != nil {
		t.Fatalf("building toolgate: %v\n%s", err, out)
	}
	e := newEnv(t)
	outside := filepath.Join(t.TempDir(), "escaped")
	for name, b := range map[string]string{"installed": bin, "test build": buildToolgate(t, goBin)} {
		os.Remove(outside)
		cmd := exec.Command(b, "sandbox", "--workspace", e.ws, "--", "sh", "-c", "echo x > "+outside)
		cmd.Env = append(withoutVars(os.Environ(), DisableEnv), DisableEnv+"=landlock,userns,seccomp")
		out, err := cmd.CombinedOutput()
		_, statErr := os.Stat(outside)
		switch name {
		case "installed":
			if err == nil || statErr == nil {
				t.Errorf("installed toolgate with %s set let the program write outside: %v\n%s", DisableEnv, err, out)
			}
		case "test build":
			if statErr != nil {
				t.Errorf("the test build did not honour %s (so this test shows nothing): %v\n%s", DisableEnv, err, out)
			}
		}
	}
}
