package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/policy"
)

var update = flag.Bool("update", false, "rewrite testdata/*.jsonl from the events produced")

// gated is a gate over a real engine and SQLite log, with a fixed clock
// and ids tc_1, tc_2, …, and an executor whose shell runner blocks until
// its context ends.
type gated struct {
	project string
	g       *gate.Gate
	store   eventlog.Store
	x       *Executor
}

func newGated(t *testing.T, rules string, mode policy.Mode) *gated {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	project, home := filepath.Join(base, "project"), filepath.Join(base, "home")
	must(t, os.MkdirAll(filepath.Join(project, ".git"), 0o755))
	must(t, os.MkdirAll(home, 0o755))
	pf, err := policy.ParseFile("project.toml", []byte(rules), policy.LayerProject)
	must(t, err)
	set, err := policy.Merge(pf)
	must(t, err)
	eng, err := engine.New(engine.Options{Policy: engine.Fixed(set), Project: project, Home: home})
	must(t, err)
	store, err := sqlite.Open(filepath.Join(base, "events.db"), nil)
	must(t, err)
	t.Cleanup(func() { store.Close() })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := 0
	g, err := gate.New(eng, store, nil, gate.Options{
		Clock: func() time.Time { return now },
		NewID: func() string { ids++; return fmt.Sprintf("tc_%d", ids) },
	})
	must(t, err)
	x, err := New(Options{StateDir: filepath.Join(base, "state"), Mode: mode, Shell: func(ctx context.Context, command, cwd string, env []string) (gate.Result, error) {
		<-ctx.Done()
		return gate.Result{ExitCode: -1}, ctx.Err()
	}})
	must(t, err)
	return &gated{project: project, g: g, store: store, x: x}
}

func (gd *gated) run(t *testing.T, tool string, input map[string]any, timeout time.Duration) (*engine.Decision, gate.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return gd.x.Run(ctx, gd.g, &engine.Request{Tool: tool, Input: input, Cwd: gd.project, Session: "s1"}, "t1")
}

var unstable = regexp.MustCompile(`("argsHash":"|"version":"stat:)[^"]*"`)

// events returns the session's events as the golden files hold them.
func (gd *gated) events(t *testing.T) []byte {
	t.Helper()
	var out bytes.Buffer
	for e, err := range gd.store.Query(context.Background(), eventlog.Filter{Session: "s1"}) {
		must(t, err)
		var payload bytes.Buffer
		must(t, json.Compact(&payload, e.Payload))
		e.Payload = payload.Bytes()
		b, err := json.Marshal(e)
		must(t, err)
		line := unstable.ReplaceAllString(strings.ReplaceAll(string(b), gd.project, "$PROJECT"), "${1}…\"")
		out.WriteString(line + "\n")
	}
	return out.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".jsonl")
	if *update {
		must(t, os.MkdirAll("testdata", 0o755))
		must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Errorf("events differ from %s (run with -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestGoldenChains records the event chain of a run that completes, one
// that fails, one that times out and one that is denied.
func TestGoldenChains(t *testing.T) {
	const rules = "[permissions]\nallow = [\"Read\", \"Bash(sleep 10)\"]\ndeny = [\"Write(secret.txt)\"]\n"
	t.Run("completed", func(t *testing.T) {
		gd := newGated(t, rules, "")
		must(t, os.WriteFile(filepath.Join(gd.project, "a.txt"), []byte("hello\n"), 0o644))
		d, res, err := gd.run(t, "Read", map[string]any{"file_path": "a.txt"}, 5*time.Second)
		must(t, err)
		if d.Decision != policy.Allow || string(res.Stdout) != "hello\n" || res.Artifact != Hash([]byte("hello\n")) {
			t.Fatalf("decision %s, stdout %q, artifact %s", d.Decision, res.Stdout, res.Artifact)
		}
		golden(t, "completed", gd.events(t))
	})
	t.Run("failed", func(t *testing.T) {
		gd := newGated(t, rules, "")
		_, _, err := gd.run(t, "Read", map[string]any{"file_path": "missing.txt"}, 5*time.Second)
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("error = %v", err)
		}
		golden(t, "failed", gd.events(t))
	})
	t.Run("timeout", func(t *testing.T) {
		gd := newGated(t, rules, "")
		start := time.Now()
		_, _, err := gd.run(t, "Bash", map[string]any{"command": "sleep 10"}, 100*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") || time.Since(start) > 3*time.Second {
			t.Fatalf("error = %v after %v", err, time.Since(start))
		}
		golden(t, "timeout", gd.events(t))
	})
	t.Run("denied", func(t *testing.T) {
		gd := newGated(t, rules, "")
		d, _, err := gd.run(t, "Write", map[string]any{"file_path": "secret.txt", "content": "x"}, 5*time.Second)
		must(t, err)
		if d.Decision != policy.Deny {
			t.Fatalf("decision %s", d.Decision)
		}
		if _, err := os.Stat(filepath.Join(gd.project, "secret.txt")); err == nil {
			t.Fatal("a denied write ran")
		}
		golden(t, "denied", gd.events(t))
	})
}

// TestPlanMode: in plan mode the write and execute tools are not offered,
// and a call to one is denied (recorded) even when a rule allows it.
func TestPlanMode(t *testing.T) {
	gd := newGated(t, "[permissions]\nallow = [\"Write\", \"Edit\", \"Bash\", \"apply_patch\", \"Read\"]\n", "")
	var names []string
	for _, tl := range gd.x.Tools(policy.ModePlan) {
		names = append(names, string(tl.Name))
	}
	if got := strings.Join(names, ","); got != "fetch,list,read,search" {
		t.Errorf("plan mode offers %s", got)
	}
	names = nil
	for _, tl := range gd.x.Tools(policy.ModeDefault) {
		names = append(names, string(tl.Name))
	}
	if got := strings.Join(names, ","); got != "edit,fetch,list,patch,read,search,shell,write" {
		t.Errorf("default mode offers %s", got)
	}
	for _, tc := range []struct {
		tool  string
		input map[string]any
	}{
		{"Write", map[string]any{"file_path": "w.txt", "content": "x"}},
		{"Edit", map[string]any{"file_path": "w.txt", "old_string": "a", "new_string": "b"}},
		{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: w.txt\n+x\n*** End Patch\n"}},
		{"Bash", map[string]any{"command": "touch w.txt"}},
	} {
		ctx := context.Background()
		d, _, err := gd.x.Run(ctx, gd.g, &engine.Request{Tool: tc.tool, Input: tc.input, Cwd: gd.project, Session: "s1", Mode: "plan"}, "t1")
		must(t, err)
		if d.Decision != policy.Deny || d.Reason != engine.ReasonModePlan {
			t.Errorf("%s in plan mode: %s %s", tc.tool, d.Decision, d.Reason)
		}
		if _, err := os.Stat(filepath.Join(gd.project, "w.txt")); err == nil {
			t.Fatalf("%s ran in plan mode", tc.tool)
		}
	}
	// every denial is in the log, with no tool.started
	n := 0
	for e, err := range gd.store.Query(context.Background(), eventlog.Filter{Session: "s1"}) {
		must(t, err)
		if e.Type == eventlog.TypeToolStarted {
			t.Errorf("a tool started in plan mode: %s", e.Payload)
		}
		if e.Type == eventlog.TypePermissionResolved && strings.Contains(string(e.Payload), `"plan_mode"`) {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d plan_mode denials recorded, want 4", n)
	}
	// An executor set to plan mode refuses on its own, even when the
	// engine, in its default mode, would allow the call by rule.
	planned := newGated(t, "[permissions]\nallow = [\"Write\"]\n", policy.ModePlan)
	d, _, err := planned.x.Run(context.Background(), planned.g, &engine.Request{Tool: "Write", Input: map[string]any{"file_path": "w.txt", "content": "x"}, Cwd: planned.project, Session: "s1"}, "t1")
	must(t, err)
	if d.Decision != policy.Deny || d.Reason != engine.ReasonModePlan {
		t.Errorf("Write with the executor in plan mode: %s %s", d.Decision, d.Reason)
	}
	if _, err := os.Stat(filepath.Join(planned.project, "w.txt")); err == nil {
		t.Fatal("Write ran with the executor in plan mode")
	}
	if _, err := planned.x.Exec(context.Background(), &Call{ID: "tc_x", Tool: "Write", Input: map[string]any{"file_path": "w.txt", "content": "x"}, Cwd: planned.project}, ""); !errors.Is(err, ErrPlanMode) {
		t.Errorf("Exec of Write in plan mode: %v", err)
	}
	// read-only tools still run in plan mode
	must(t, os.WriteFile(filepath.Join(gd.project, "r.txt"), []byte("r\n"), 0o644))
	d, _, err = gd.x.Run(context.Background(), gd.g, &engine.Request{Tool: "Read", Input: map[string]any{"file_path": "r.txt"}, Cwd: gd.project, Session: "s1", Mode: "plan"}, "t1")
	must(t, err)
	if d.Decision != policy.Allow {
		t.Errorf("Read in plan mode: %s %s", d.Decision, d.Message)
	}
}

// TestRunRefusesBadArguments: arguments the tool's schema rejects are a
// recorded deny naming the field, and nothing runs.
func TestRunRefusesBadArguments(t *testing.T) {
	gd := newGated(t, "[permissions]\nallow = [\"Write\"]\n", "")
	d, _, err := gd.run(t, "Write", map[string]any{"file_path": "x.txt", "content": 7}, 5*time.Second)
	must(t, err)
	if d.Decision != policy.Deny || d.Reason != engine.ReasonInvalidArguments || !strings.Contains(d.Message, "input.content") {
		t.Errorf("decision %s %s %q", d.Decision, d.Reason, d.Message)
	}
	if _, err := os.Stat(filepath.Join(gd.project, "x.txt")); err == nil {
		t.Error("the write ran")
	}
}

// TestRunFetch: fetch goes through the gate's checked fetcher and its body
// is stored as the artifact.
func TestRunFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "fetched body")
	}))
	defer srv.Close()
	gd := newGated(t, "network = true\n[permissions]\nallow = [\"WebFetch(domain:127.0.0.1)\"]\n", "")
	d, res, err := gd.run(t, "WebFetch", map[string]any{"url": srv.URL + "/x"}, 5*time.Second)
	must(t, err)
	if d.Decision != policy.Allow || string(res.Stdout) != "fetched body" {
		t.Fatalf("decision %s (%s: %s), stdout %q", d.Decision, d.Reason, d.Message, res.Stdout)
	}
	if got, err := gd.x.Artifacts().Get(res.Artifact); err != nil || string(got) != "fetched body" {
		t.Errorf("artifact %s: %q, %v", res.Artifact, got, err)
	}
	// a redirect to the metadata address is not followed
	_, _, err = gd.run(t, "WebFetch", map[string]any{"url": srv.URL + "/away"}, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("redirect to the metadata address: %v", err)
	}
}

// TestRunCallHomeIsTheEngines: RunCall's executor reads "~" as the
// engine's home, so the file written is the one the gate judged.
func TestRunCallHomeIsTheEngines(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	project := filepath.Join(base, "project")
	home := filepath.Join(project, "h")
	must(t, os.MkdirAll(filepath.Join(project, ".git"), 0o755))
	must(t, os.MkdirAll(home, 0o755))
	pf, err := policy.ParseFile("project.toml", []byte("[permissions]\nallow = [\"Write\"]\n"), policy.LayerProject)
	must(t, err)
	set, err := policy.Merge(pf)
	must(t, err)
	eng, err := engine.New(engine.Options{Policy: engine.Fixed(set), Project: project, Home: home})
	must(t, err)
	store, err := sqlite.Open(filepath.Join(base, "events.db"), nil)
	must(t, err)
	t.Cleanup(func() { store.Close() })
	g, err := gate.New(eng, store, nil, gate.Options{})
	must(t, err)
	req := &engine.Request{Tool: "Write", Input: map[string]any{"file_path": "~/n.txt", "content": "x"}, Cwd: project, Session: "s1"}
	d, _, err := RunCall(context.Background(), g, eng, req, "t1", shellrun.Options{}, Options{StateDir: filepath.Join(base, "state"), Workspace: project})
	if err != nil || d == nil || d.Decision != policy.Allow {
		t.Fatalf("decision %+v, error %v", d, err)
	}
	if b, err := os.ReadFile(filepath.Join(home, "n.txt")); err != nil || string(b) != "x" {
		t.Errorf("%s/n.txt = %q, %v: the write did not land in the engine's home", home, b, err)
	}
}
