package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/server"
)

// TestMemoryFlat runs many decisions through a built toolgate, once
// through `toolgate check --batch` and once through `toolgate serve`
// (POST /v1/check, 8 keep-alive connections, every decision logged
// durably), samples the process's resident set size (VmRSS) every
// twentieth of the run, and fails if it grew by more than 10% from the end
// of the warm-up (the first tenth) to the end. The calls vary (a new
// command and file name each time) so that a cache keyed by them would
// show. It only measures: set TOOLGATE_MEMFLAT=1 to run it, and
// TOOLGATE_MEMFLAT_DECISIONS (default 100000) for the count:
//
//	TOOLGATE_MEMFLAT=1 TOOLGATE_MEMFLAT_DECISIONS=1000000 nice go test ./internal/cli -run TestMemoryFlat -v -timeout 2h
func TestMemoryFlat(t *testing.T) {
	if os.Getenv("TOOLGATE_MEMFLAT") == "" {
		t.Skip("set TOOLGATE_MEMFLAT=1 to measure memory over many decisions")
	}
	n := 100_000
	if v := os.Getenv("TOOLGATE_MEMFLAT_DECISIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("TOOLGATE_MEMFLAT_DECISIONS=%q: want an integer of at least 1000", v)
		}
	}
	bin := filepath.Join(t.TempDir(), "toolgate")
	build := exec.Command("go", "build", "-o", bin, "github.com/toolgate/toolgate/cmd/toolgate")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	t.Run("check-batch", func(t *testing.T) { memCheckBatch(t, bin, n) })
	t.Run("serve", func(t *testing.T) { memServe(t, bin, n) })
}

// memRequest is the i-th call of a run: allowed reads and shell commands
// and denied ones, each with its own file name or argument.
func memRequest(i int, cwd, session string) map[string]any {
	var tool string
	var input map[string]any
	switch i % 4 {
	case 0:
		tool, input = "Read", map[string]any{"file_path": fmt.Sprintf("src/file%d.go", i)}
	case 1:
		tool, input = "Bash", map[string]any{"command": fmt.Sprintf("git log -n %d", i)}
	case 2:
		tool, input = "Bash", map[string]any{"command": fmt.Sprintf("cat .env.%d", i)}
	default:
		tool, input = "Bash", map[string]any{"command": fmt.Sprintf("ls -la dir%d && git status", i)}
	}
	req := map[string]any{"tool": tool, "input": input, "cwd": cwd}
	if session != "" {
		req["session"] = session
		req["wait"] = false
	}
	return req
}

// memProject makes a project directory and a home for a run.
func memProject(t *testing.T) (project, home string) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project, home = filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(project, ".git"), filepath.Join(project, "src"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return project, home
}

func memEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local/state"), "TOOLGATE_MANAGED_POLICY="+filepath.Join(home, "managed.toml"))
}

// rssKiB reads a process's VmRSS from /proc.
func rssKiB(t *testing.T, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read the memory of process %d: %v", pid, err)
	}
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	v, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return v
}

// memSamples records RSS against decisions and judges the growth.
type memSamples struct {
	t    *testing.T
	n    int
	pid  int
	mu   sync.Mutex
	at   []int
	kib  []int64
	next int
}

func (s *memSamples) step() int { return max(s.n/20, 1) }

// maybe samples if done has reached the next sampling point.
func (s *memSamples) maybe(done int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if done < s.next {
		return
	}
	s.at = append(s.at, done)
	s.kib = append(s.kib, rssKiB(s.t, s.pid))
	s.next = (done/s.step() + 1) * s.step()
}

func (s *memSamples) report() {
	t := s.t
	for i := range s.at {
		t.Logf("%9d decisions  RSS %7d KiB", s.at[i], s.kib[i])
	}
	warm := -1
	for i, at := range s.at {
		if at >= s.n/10 {
			warm = i
			break
		}
	}
	if warm < 0 || warm == len(s.at)-1 {
		t.Fatalf("too few samples after the warm-up: %v", s.at)
	}
	base, peak := s.kib[warm], s.kib[warm]
	for _, k := range s.kib[warm:] {
		peak = max(peak, k)
	}
	last := s.kib[len(s.kib)-1]
	growth, peakGrowth := float64(last)/float64(base)-1, float64(peak)/float64(base)-1
	t.Logf("after warm-up (%d decisions, %d KiB): growth to the end %+.1f%%, to the peak %+.1f%%", s.at[warm], base, 100*growth, 100*peakGrowth)
	if growth > 0.10 {
		t.Errorf("RSS grew %.1f%% after the warm-up (more than 10%%)", 100*growth)
	}
}

func memCheckBatch(t *testing.T, bin string, n int) {
	project, home := memProject(t)
	cmd := exec.Command(bin, "check", "--batch")
	cmd.Env = memEnv(home)
	cmd.Dir = project
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// stdin stays open until the last sample is taken, so that the
	// process is still there to be measured.
	sampled := make(chan struct{})
	go func() {
		w := bufio.NewWriter(stdin)
		enc := json.NewEncoder(w)
		for i := range n {
			if enc.Encode(memRequest(i, project, "")) != nil {
				break
			}
		}
		w.Flush()
		<-sampled
		stdin.Close()
	}()
	s := &memSamples{t: t, n: n, pid: cmd.Process.Pid}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	done := 0
	decisions := map[string]int{}
	for sc.Scan() {
		var d struct{ Decision string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("decision %d: %v: %s", done+1, err, sc.Bytes())
		}
		decisions[d.Decision]++
		done++
		if done%1000 == 0 || done == n {
			s.maybe(done)
		}
		if done == n {
			close(sampled)
		}
	}
	if done != n {
		close(sampled)
	}
	if err := cmd.Wait(); err != nil || done != n {
		t.Fatalf("check --batch: %v after %d of %d decisions: %s", err, done, n, stderr.String())
	}
	t.Logf("decisions: %v", decisions)
	s.report()
}

func memServe(t *testing.T, bin string, n int) {
	project, home := memProject(t)
	state := filepath.Join(home, "state")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--state-dir", state,
		"--user-policy", filepath.Join(project, "none.toml"), "--managed-policy", filepath.Join(project, "none.toml"))
	cmd.Env = memEnv(home)
	cmd.Dir = project
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-listening:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start: %s", stderr.String())
	}
	token := readToken(t, filepath.Join(state, server.AgentTokenFile))

	s := &memSamples{t: t, n: n, pid: cmd.Process.Pid}
	var next, done atomic.Int64
	var mu sync.Mutex
	decisions := map[string]int{}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range 8 {
		wg.Go(func() {
			mine := map[string]int{}
			defer func() {
				mu.Lock()
				for k, v := range mine {
					decisions[k] += v
				}
				mu.Unlock()
			}()
			for !failed.Load() {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				body, _ := json.Marshal(memRequest(int(i), project, fmt.Sprintf("mem-%d", i%16)))
				req, _ := http.NewRequest("POST", url+"/v1/check", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failed.Store(true)
					t.Errorf("decision %d: %v", i, err)
					return
				}
				var d struct{ Decision string }
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &d) != nil {
					failed.Store(true)
					t.Errorf("decision %d: %s: %s", i, resp.Status, data)
					return
				}
				mine[d.Decision]++
				c := int(done.Add(1))
				if c%1000 == 0 || c == n {
					s.maybe(c)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		t.FailNow()
	}
	t.Logf("decisions: %v", decisions)
	if strings.TrimSpace(stderr.String()) != "" {
		t.Logf("serve's stderr: %s", stderr.String())
	}
	s.report()
}
