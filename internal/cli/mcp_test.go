package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

// filesystemServer installs @modelcontextprotocol/server-filesystem from
// npm into a cache directory shared by test runs and returns its program,
// or skips the test when npm or the network is not there.
func filesystemServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: skipping the test against server-filesystem")
	}
	dir := filepath.Join(os.TempDir(), "toolgate-test-npm")
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	out, err := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "@modelcontextprotocol/server-filesystem").CombinedOutput()
	if err != nil {
		t.Skipf("npm install @modelcontextprotocol/server-filesystem failed (no network?): %v: %.200s", err, out)
	}
	return bin
}

type mcpWorld struct {
	project, stateDir, none, bin string
}

func newMCPWorld(t *testing.T) *mcpWorld {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &mcpWorld{project: filepath.Join(dir, "project"), stateDir: filepath.Join(dir, "state"), none: filepath.Join(dir, "none.toml"), bin: filesystemServer(t)}
	for f, body := range map[string]string{".git/config": "", "README.md": "# hello from the project", ".env": "API_KEY=sk-secret-value-42"} {
		p := filepath.Join(w.project, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// proxy runs `toolgate mcp` with flags in front of server-filesystem and
// returns a client connected to it over its stdio.
func (w *mcpWorld) proxy(t *testing.T, flags ...string) *mcp.ClientSession {
	t.Helper()
	return w.proxyArgs(t, append(flags, "--", w.bin, w.project)...)
}

// proxyArgs runs `toolgate mcp` with args after the common flags.
func (w *mcpWorld) proxyArgs(t *testing.T, flags ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	args := append([]string{"mcp", "--name", "fs", "--state-dir", w.stateDir, "--cwd", w.project,
		"--managed-policy", w.none, "--user-policy", w.none, "--session", "s1"}, flags...)
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		code := RunContext(ctx, args, inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v; stderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		cancel()
		<-done
	})
	return cs
}

func (w *mcpWorld) decisions(t *testing.T) []string {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(w.stateDir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	for e, err := range st.Query(context.Background(), eventlog.Filter{Session: "s1", Types: []eventlog.Type{eventlog.TypePermissionResolved}}) {
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Tool, Decision, Reason string }
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Tool+" "+p.Decision+" "+p.Reason)
	}
	return out
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

// TestMCPProxyFilesystem drives `toolgate mcp` in front of the real
// server-filesystem with the MCP SDK's client.
func TestMCPProxyFilesystem(t *testing.T) {
	t.Run("trusted: reads run, .env is refused, plan mode hides writes", func(t *testing.T) {
		w := newMCPWorld(t)
		cs := w.proxy(t, "--trusted")
		out, isErr := mcpCall(t, cs, "read_text_file", map[string]any{"path": filepath.Join(w.project, "README.md")})
		if isErr || !strings.Contains(out, "hello from the project") {
			t.Fatalf("read README: %q (isError %t)", out, isErr)
		}
		out, isErr = mcpCall(t, cs, "read_text_file", map[string]any{"path": filepath.Join(w.project, ".env")})
		if !isErr || !strings.Contains(out, "credential_access") || strings.Contains(out, "sk-secret-value-42") {
			t.Fatalf("read .env: %q (isError %t)", out, isErr)
		}
		want := []string{"mcp__fs__read_text_file allow read_only", "mcp__fs__read_text_file deny credential_access"}
		if got := w.decisions(t); !slices.Equal(got, want) {
			t.Fatalf("decisions %v, want %v", got, want)
		}
	})
	t.Run("plan mode lists only the read-only tools", func(t *testing.T) {
		w := newMCPWorld(t)
		cs := w.proxy(t, "--trusted", "--mode", "plan")
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if !slices.Contains(names, "read_text_file") || slices.Contains(names, "write_file") || slices.Contains(names, "move_file") {
			t.Fatalf("plan mode lists %v", names)
		}
	})
	t.Run("untrusted write asks and is denied without a server", func(t *testing.T) {
		w := newMCPWorld(t)
		cs := w.proxy(t)
		target := filepath.Join(w.project, "new.txt")
		out, isErr := mcpCall(t, cs, "write_file", map[string]any{"path": target, "content": "x"})
		if !isErr || !strings.Contains(out, "untrusted_mcp_server") || !strings.Contains(out, "--allow 'mcp__fs__write_file'") {
			t.Fatalf("write: %q (isError %t)", out, isErr)
		}
		if _, err := os.Stat(target); !os.IsNotExist(err) {
			t.Fatalf("the file was written: %v", err)
		}
		if got := w.decisions(t); !slices.Equal(got, []string{"mcp__fs__write_file deny headless"}) {
			t.Fatalf("decisions %v", got)
		}
	})
	t.Run("trusted write with an allow rule writes the file", func(t *testing.T) {
		w := newMCPWorld(t)
		cs := w.proxy(t, "--trusted", "--allow", "mcp__fs__write_file")
		target := filepath.Join(w.project, "new.txt")
		out, isErr := mcpCall(t, cs, "write_file", map[string]any{"path": target, "content": "written"})
		if isErr {
			t.Fatalf("write: %q", out)
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != "written" {
			t.Fatalf("file %q: %v", b, err)
		}
		if got := w.decisions(t); !slices.Equal(got, []string{"mcp__fs__write_file allow rule_allow"}) {
			t.Fatalf("decisions %v", got)
		}
	})
}

// TestMCPProxyAsksTheServer: with --server, a call that needs a person waits
// for the answer given to the running toolgate serve, and runs only when it
// is allowed.
func TestMCPProxyAsksTheServer(t *testing.T) {
	bin := filesystemServer(t)
	rs := startServe(t, "--timeout", "1m")
	w := &mcpWorld{project: rs.project, stateDir: rs.stateDir, none: filepath.Join(rs.project, "none.toml"), bin: bin}
	cs := w.proxy(t, "--server", rs.url)
	for _, tc := range []struct {
		answer  string
		written bool
	}{{"deny", false}, {"allow_once", true}} {
		target := filepath.Join(rs.project, tc.answer+".txt")
		type result struct {
			out   string
			isErr bool
		}
		got := make(chan result, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": target, "content": "x"}})
			if err != nil {
				got <- result{err.Error(), true}
				return
			}
			got <- result{res.Content[0].(*mcp.TextContent).Text, res.IsError}
		}()
		var id string
		deadline := time.Now().Add(20 * time.Second)
		for id == "" {
			_, list := rs.do(t, "GET", "/v1/approvals?state=pending", rs.approver, nil)
			if l, _ := list["approvals"].([]any); len(l) == 1 {
				id, _ = l[0].(map[string]any)["id"].(string)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the question never reached the server: %v", list)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if code, m := rs.post(t, "/v1/approvals/"+id, rs.approver, map[string]any{"answer": tc.answer}); code != 200 {
			t.Fatalf("answer: %d %v", code, m)
		}
		r := <-got
		_, err := os.Stat(target)
		if r.isErr == tc.written || (err == nil) != tc.written {
			t.Fatalf("%s: result %q (isError %t), file exists %t", tc.answer, r.out, r.isErr, err == nil)
		}
	}
}

// TestMCPProxyURL: --url puts the proxy in front of a streamable HTTP server.
func TestMCPProxyURL(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &mcpWorld{project: filepath.Join(dir, "project"), stateDir: filepath.Join(dir, "state"), none: filepath.Join(dir, "none.toml")}
	for f, body := range map[string]string{".git/config": "", ".env": "API_KEY=sk-secret-value-42"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(w.project, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.project, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	type in struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	yes := true
	mcp.AddTool(srv, &mcp.Tool{Name: "write_file", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, os.WriteFile(a.Path, []byte(a.Content), 0o644)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "read_file", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(a.Path)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, err
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close) // after the proxy, whose client holds a stream open
	w.bin = ""          // no command: --url
	cs := w.proxyArgs(t, "--trusted", "--allow", "mcp__fs__write_file", "--url", hs.URL)
	target := filepath.Join(w.project, "new.txt")
	if out, isErr := mcpCall(t, cs, "write_file", map[string]any{"path": target, "content": "via http"}); isErr {
		t.Fatalf("write: %q", out)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "via http" {
		t.Fatalf("file %q: %v", b, err)
	}
	out, isErr := mcpCall(t, cs, "read_file", map[string]any{"path": filepath.Join(w.project, ".env")})
	if !isErr || strings.Contains(out, "sk-secret-value-42") {
		t.Fatalf("read .env: %q (isError %t)", out, isErr)
	}
}

func TestMCPUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--", "true"}, "--name is required"},
		{[]string{"mcp", "--name", "fs"}, "no server"},
		{[]string{"mcp", "--name", "fs", "--url", "http://127.0.0.1:1/", "--", "true"}, "not both"},
		{[]string{"mcp", "--name", "fs", "--url", "file:///x"}, "not an http"},
		{[]string{"mcp", "--name", "a__b", "--state-dir", t.TempDir(), "--", "true"}, `contain no "__"`},
		{[]string{"mcp", "--name", "fs", "--state-dir", t.TempDir(), "--server", "127.0.0.1:8765", "--", "true"}, "--server \"127.0.0.1:8765\" is not an http"},
	} {
		var stdout, stderr strings.Builder
		code := Run(tc.args, strings.NewReader(""), &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
