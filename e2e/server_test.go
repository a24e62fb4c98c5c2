package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// userPolicy is the user layer the server runs with: npm test asks by a
// rule, git status is allowed, and everything else follows the default
// table (programs ask, rm -rf is destructive and asks).
const userPolicy = `
[permissions]
allow = ["Bash(git status)"]
ask   = ["Bash(npm test)"]
`

// server is a running `toolgate serve` process.
type server struct {
	base     string   // http://127.0.0.1:PORT
	login    string   // the one-time login link it printed
	agent    string   // agent token
	approver string   // approver token
	project  string   // a project directory (with .git and dist/)
	home     string   // the server's HOME
	state    string   // the server's state directory (events.db, tokens)
	env      []string // the server's environment: HOME, XDG_*, TOOLGATE_MANAGED_POLICY
	client   *http.Client
}

// binDir holds the toolgate binary the tests built; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildToolgate builds ./cmd/toolgate once per test binary.
var buildToolgate = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "toolgate-e2e-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "toolgate")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/toolgate")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/toolgate: %v\n%s", err, out)
	}
	return bin, nil
})

var loginLink = regexp.MustCompile(`(https?://[^\s/]+)/login\?code=[^\s]+`)

// startServer starts `toolgate serve` on a free loopback port with a fresh
// home, config and state directory, and stops it when the test ends. args
// are added to the command line.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	state := filepath.Join(root, "state")
	config := filepath.Join(home, ".config")
	project := filepath.Join(home, "proj")
	for _, d := range []string{filepath.Join(config, "toolgate"), filepath.Join(project, ".git"), filepath.Join(project, "dist")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(config, "toolgate", "policy.toml"), []byte(userPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "dist", "app.js"), []byte("built\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--state-dir", state}, args...)...)
	cmd.Dir = project
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + config,
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"TOOLGATE_MANAGED_POLICY=" + filepath.Join(root, "no-managed-policy.toml"),
	}
	cmd.Env = append(cleanEnv(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var out lockedBuffer
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			out.Write([]byte(line + "\n"))
			if m := loginLink.FindStringSubmatch(line); m != nil {
				select {
				case found <- m:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()

	var m []string
	select {
	case m = <-found:
	case err := <-exited:
		t.Fatalf("toolgate serve exited before printing a login link: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("toolgate serve printed no login link within 30s\nstdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("toolgate serve did not stop within 10s of SIGINT")
		}
		if t.Failed() {
			t.Logf("toolgate serve stdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
		}
	})

	s := &server{base: m[1], login: m[0], project: project, home: home, state: state, env: env, client: &http.Client{Timeout: 2 * time.Minute}}
	s.agent = readToken(t, filepath.Join(state, "agent.token"))
	s.approver = readToken(t, filepath.Join(state, "approver.token"))
	return s
}

// cleanEnv is this process's environment without the variables that would
// point the server at the developer's own files.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "TOOLGATE_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func readToken(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read token: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// call sends an API request with token and decodes the JSON answer into out
// (when not nil). It returns the status code.
func (s *server) call(ctx context.Context, token, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode/100 != 2 {
		return res.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, res.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return res.StatusCode, fmt.Errorf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return res.StatusCode, nil
}

// decision is the answer to POST /v1/check.
type decision struct {
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	Risk       string `json:"risk"`
	ToolCallID string `json:"tool_call_id"`
	err        error
}

// checkAsync sends a shell command to POST /v1/check with "wait": true as
// the agent, and delivers the final decision on the returned channel.
func (s *server) checkAsync(session, command string) <-chan decision {
	ch := make(chan decision, 1)
	go func() {
		var d decision
		_, d.err = s.call(context.Background(), s.agent, http.MethodPost, "/v1/check", map[string]any{
			"tool": "Bash", "input": map[string]any{"command": command}, "cwd": s.project,
			"session": session, "agent": "e2e-agent", "wait": true,
		}, &d)
		ch <- d
	}()
	return ch
}

// check is checkAsync that waits for the decision.
func (s *server) check(t *testing.T, session, command string) decision {
	t.Helper()
	return awaitDecision(t, s.checkAsync(session, command))
}

func awaitDecision(t *testing.T, ch <-chan decision) decision {
	t.Helper()
	select {
	case d := <-ch:
		if d.err != nil {
			t.Fatalf("POST /v1/check: %v", d.err)
		}
		return d
	case <-time.After(45 * time.Second):
		t.Fatal("POST /v1/check gave no answer within 45s")
	}
	return decision{}
}

// approval is the part of an Approval the tests read.
type approval struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	State   string `json:"state"`
	Request struct {
		Summary       string `json:"summary"`
		Destructive   bool   `json:"destructive"`
		ConfirmTarget string `json:"confirmTarget"`
		SuggestedRule string `json:"suggestedRule"`
	} `json:"request"`
	ConfirmWord string `json:"confirmWord"`
}

// pending waits until session has a pending approval and returns the
// oldest.
func (s *server) pending(t *testing.T, session string) approval {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct {
			Approvals []approval `json:"approvals"`
		}
		if _, err := s.call(context.Background(), s.approver, http.MethodGet, "/v1/approvals?state=pending&session="+session, nil, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Approvals) > 0 {
			return res.Approvals[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending approval in session %s within 30s", session)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answer answers an approval through the API as the approver.
func (s *server) answer(t *testing.T, id string, body map[string]any) {
	t.Helper()
	if _, err := s.call(context.Background(), s.approver, http.MethodPost, "/v1/approvals/"+id, body, nil); err != nil {
		t.Fatal(err)
	}
}

// event is a stored event as GET /v1/events returns it.
type event struct {
	ID      int64           `json:"id"`
	Seq     int64           `json:"seq"`
	Session string          `json:"session"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// resolved is the payload of a permission.resolved event.
type resolved struct {
	ToolCallID string `json:"toolCallId"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Actor      string `json:"actor"`
	Answer     string `json:"answer"`
	Message    string `json:"message"`
	Scope      string `json:"scope"`
	Rule       string `json:"rule"`
}

func (s *server) events(t *testing.T, query string) []event {
	t.Helper()
	var res struct {
		Events []event `json:"events"`
	}
	if _, err := s.call(context.Background(), s.approver, http.MethodGet, "/v1/events?"+query, nil, &res); err != nil {
		t.Fatal(err)
	}
	return res.Events
}

// lastResolved returns the payload of session's last permission.resolved
// event.
func lastResolved(t *testing.T, srv *server, session string) resolved {
	t.Helper()
	evs := srv.events(t, "type=permission.resolved&session="+session)
	if len(evs) == 0 {
		t.Fatalf("session %s has no permission.resolved event", session)
	}
	var p resolved
	if err := json.Unmarshal(evs[len(evs)-1].Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
