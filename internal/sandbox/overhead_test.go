package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// overheadRuns is how many times each command runs for the medians.
const overheadRuns = 50

// TestOverhead measures what `toolgate sandbox -- true` costs over a plain
// exec of true: the median of 50 runs each, through the library (the
// sandbox's own cost) and through the built toolgate binary (which adds
// toolgate's start-up, measured by itself as `toolgate help`).
func TestOverhead(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no overhead measurement")
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
	dir := t.TempDir()
	bin := filepath.Join(dir, "toolgate")
	build := exec.Command(goBin, "build", "-o", bin, "github.com/toolgate/toolgate/cmd/toolgate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building toolgate: %v\n%s", err, out)
	}
	ws := t.TempDir()
	measure := func(f func() error) time.Duration {
		var d []time.Duration
		for range overheadRuns {
			start := time.Now()
			if err := f(); err != nil {
				t.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	plain := measure(func() error { return exec.Command(truePath).Run() })
	lib := measure(func() error {
		_, code, err := Command(context.Background(), Policy{Workspace: ws}, truePath).Run()
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d", code)
		}
		return err
	})
	cli := measure(func() error {
		cmd := exec.Command(bin, "sandbox", "--workspace", ws, "--", truePath)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out)
		}
		return err
	})
	bare := measure(func() error { return exec.Command(bin, "help").Run() })
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	t.Logf("median of %d runs: exec of true %v; sandbox.Command(true) %v (overhead %v, %.1fx); "+
		"toolgate sandbox -- true %v (overhead %v, %.1fx), of which toolgate's own start-up (toolgate help) %v",
		overheadRuns, r(plain), r(lib), r(lib-plain), float64(lib)/float64(plain),
		r(cli), r(cli-plain), float64(cli)/float64(plain), r(bare))
	// The target is 10 ms on an idle machine; the bound leaves room for a
	// loaded one and still catches a stage that runs after the heavy
	// package initializers, or a network namespace made on every run.
	if lib-plain > 25*time.Millisecond {
		t.Errorf("sandbox overhead %v over a plain exec; the target is under 10ms", r(lib-plain))
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
