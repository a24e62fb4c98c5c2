package bench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServerRatio measures, side by side in one run, `toolgate serve` (a
// fresh state directory, the embedded durable SQLite log, a rule allowing
// `git status`) and bench/cmd/nullserver, which answers every check with a
// fixed allow and does nothing else. checkload drives them in turn, in
// alternating slices, with the same connections and the same request, and
// the test logs each one's requests/s, p50, p99 and CPU per request, and
// the ratio of toolgate to nullserver. It only measures: set
// TOOLGATE_SERVERRATIO=1 to run it.
//
//	cd bench && TOOLGATE_SERVERRATIO=1 go test -run TestServerRatio -v -count=1 -timeout 20m
//
// TOOLGATE_SERVERRATIO_SLICES (default 4) is the number of slices of each
// server, TOOLGATE_SERVERRATIO_SLICE their length (default 5s, after a
// one-second warm-up) and TOOLGATE_SERVERRATIO_CONNS the connections
// (default 64).
func TestServerRatio(t *testing.T) {
	if os.Getenv("TOOLGATE_SERVERRATIO") == "" {
		t.Skip("set TOOLGATE_SERVERRATIO=1 to measure toolgate serve against nullserver")
	}
	slicesN := envInt(t, "TOOLGATE_SERVERRATIO_SLICES", 4)
	conns := envInt(t, "TOOLGATE_SERVERRATIO_CONNS", 64)
	slice := 5 * time.Second
	if v := os.Getenv("TOOLGATE_SERVERRATIO_SLICE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("TOOLGATE_SERVERRATIO_SLICE=%q: want a positive duration such as 5s", v)
		}
		slice = d
	}

	dir := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := func(name, pkgDir, pkg string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = pkgDir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return out
	}
	toolgate := bin("toolgate", root, "./cmd/toolgate")
	nullserver := bin("nullserver", ".", "./cmd/nullserver")
	checkload := bin("checkload", ".", "./cmd/checkload")

	state := filepath.Join(dir, "state")
	env := append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "xstate"))
	nullAddr, gateAddr := freeAddr(t), freeAddr(t)
	nullPID := start(t, env, nullserver, "-addr", nullAddr)
	gatePID := start(t, env, toolgate, "serve", "--state-dir", state, "--addr", gateAddr, "--allow", "Bash(git status)")
	tokenFile := filepath.Join(state, "agent.token")
	waitUp(t, nullAddr, "")
	waitUp(t, gateAddr, tokenFile)

	type result struct {
		rate, p50, p99, cpu float64 // requests/s, µs, µs, server CPU µs per request
	}
	run := func(addr string, pid int) result {
		cpu0 := cpuTime(t, pid)
		var out bytes.Buffer
		cmd := exec.Command(checkload, "-server", "http://"+addr, "-token-file", tokenFile, "-conns", strconv.Itoa(conns),
			"-duration", slice.String(), "-warmup", "1s", "-cwd", root, "-command", "git status", "-json")
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("checkload against %s: %v\n%s", addr, err, out.String())
		}
		cpu := cpuTime(t, pid) - cpu0
		var r struct {
			Requests     int            `json:"requests"`
			Failed       int            `json:"failed"`
			RequestsPerS float64        `json:"requests_per_s"`
			P50          float64        `json:"p50_us"`
			P99          float64        `json:"p99_us"`
			Decisions    map[string]int `json:"decisions"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("checkload's output %q: %v", out.String(), err)
		}
		if r.Failed > 0 {
			t.Fatalf("checkload against %s: %d requests failed", addr, r.Failed)
		}
		// An answer other than allow would time another path through toolgate.
		if r.Requests == 0 || r.Decisions["allow"] != r.Requests {
			t.Fatalf("checkload against %s: decisions %v of %d requests, want all allow", addr, r.Decisions, r.Requests)
		}
		// The CPU is over the warm-up too: spread it over the requests of
		// the whole run, at the measured rate.
		total := r.RequestsPerS * (slice + time.Second).Seconds()
		return result{rate: r.RequestsPerS, p50: r.P50, p99: r.P99, cpu: cpu.Seconds() * 1e6 / total}
	}

	var nulls, gates []result
	var ratios []float64
	for i := range slicesN {
		n := run(nullAddr, nullPID)
		g := run(gateAddr, gatePID)
		nulls, gates = append(nulls, n), append(gates, g)
		ratios = append(ratios, g.rate/n.rate)
		t.Logf("slice %d: nullserver %6.0f/s p50 %5.0f µs p99 %6.0f µs cpu %3.0f µs/req | toolgate %6.0f/s p50 %5.0f µs p99 %6.0f µs (p99/p50 %.1f) cpu %3.0f µs/req | ratio %.2f",
			i+1, n.rate, n.p50, n.p99, n.cpu, g.rate, g.p50, g.p99, g.p99/g.p50, g.cpu, g.rate/n.rate)
	}
	med := func(rs []result, f func(result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	rate := func(r result) float64 { return r.rate }
	p50 := func(r result) float64 { return r.p50 }
	p99 := func(r result) float64 { return r.p99 }
	cpu := func(r result) float64 { return r.cpu }
	t.Logf("medians at %d connections: nullserver %.0f/s (p50 %.0f µs, p99 %.0f µs, %.0f µs CPU/req); toolgate %.0f/s (p50 %.0f µs, p99 %.0f µs, %.0f µs CPU/req); toolgate/nullserver %.2f (per slice %.2f–%.2f)",
		conns, med(nulls, rate), med(nulls, p50), med(nulls, p99), med(nulls, cpu),
		med(gates, rate), med(gates, p50), med(gates, p99), med(gates, cpu), median(ratios), slices.Min(ratios), slices.Max(ratios))
}

// start runs a server in the background and stops it when the test ends.
func start(t *testing.T, env []string, name string, args ...string) int {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s's output:\n%s", filepath.Base(name), log.String())
		}
	})
	return cmd.Process.Pid
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitUp waits until addr accepts connections and file, if named, exists.
func waitUp(t *testing.T, addr, file string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			if file == "" {
				return
			}
			if _, err := os.Stat(file); err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not come up within 30s", addr)
}

// cpuTime is the user and system CPU time process pid has used, from
// /proc/PID/stat (in clock ticks of 10 ms, which Linux uses everywhere
// toolgate runs).
func cpuTime(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q has too few fields", pid, b)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
