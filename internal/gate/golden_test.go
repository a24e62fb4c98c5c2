package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

var update = flag.Bool("update", false, "rewrite the events.jsonl section of testdata/*.txtar from the events produced")

// The golden fixtures live in testdata/*.txtar. Each archive holds:
//
//	options.json    optional: {"timeout": "50ms", "approver": "none",
//	                "classifier": {"decision": "ask", "reason": "…"}}
//	project.toml    the project policy
//	requests.jsonl  one step a line: {"advance": "10m", "turn": "t1",
//	                "cancelAfter": "20ms", "request": {…engine request…},
//	                "run": {"exitCode": 0, "stdout": "…", "stderr": "…", "error": "…"},
//	                "write": {"path": "…", "content": "…"}}
//	                A step with "run" goes through Gate.Run, else Gate.Check;
//	                "write" writes a file before the step's request.
//	answers.jsonl   the scripted approver's answers, in order: an Answer,
//	                {"block": true} (wait for the context) or {"error": "…"};
//	                "write" (as above) changes a file while the person looks
//	events.jsonl    the exact event chain expected, read back with Query
//
// $PROJECT and $HOME stand for the temporary project and home directories.
// Time is a fixed clock that moves only by "advance"; tool call ids are
// tc_1, tc_2, … in order.

type step struct {
	Advance     string          `json:"advance"`
	Turn        string          `json:"turn"`
	CancelAfter string          `json:"cancelAfter"`
	Request     json.RawMessage `json:"request"`
	Write       *fileWrite      `json:"write"`
	Run         *struct {
		ExitCode int    `json:"exitCode"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		Error    string `json:"error"`
	} `json:"run"`
}

type fileWrite struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type scripted struct {
	Block bool       `json:"block"`
	Error string     `json:"error"`
	Write *fileWrite `json:"write"`
	approval.Answer
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runGolden(t, path)
		})
	}
}

func runGolden(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	must(t, err)
	ar := txtar.Parse(raw)
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		sections[f.Name] = f.Data
	}

	var opts struct {
		Timeout    string            `json:"timeout"`
		Approver   string            `json:"approver"`
		Classifier *approval.Verdict `json:"classifier"`
	}
	if b := sections["options.json"]; len(b) > 0 {
		must(t, json.Unmarshal(b, &opts))
	}

	project, home := realDir(t), realDir(t)
	expand := strings.NewReplacer("$PROJECT", project, "$HOME", home)
	pf, err := policy.ParseFile("project.toml", sections["project.toml"], policy.LayerProject)
	must(t, err)
	eng, store := engineAndStore(t, pf, project, home)

	var answers []scripted
	for _, line := range lines(sections["answers.jsonl"]) {
		var a scripted
		must(t, json.Unmarshal([]byte(line), &a))
		answers = append(answers, a)
	}
	var mu sync.Mutex
	next := 0
	var approver approval.Approver = approval.ApproverFunc(func(ctx context.Context, r *approval.Request) (approval.Answer, error) {
		mu.Lock()
		if next >= len(answers) {
			mu.Unlock()
			return approval.Answer{}, fmt.Errorf("unexpected question %d about %s", next+1, r.Summary)
		}
		a := answers[next]
		next++
		mu.Unlock()
		if a.Write != nil {
			writeFile(t, expand, a.Write)
		}
		switch {
		case a.Block:
			<-ctx.Done()
			return approval.Answer{Kind: approval.Deny}, ctx.Err()
		case a.Error != "":
			return approval.Answer{Kind: approval.Deny}, errors.New(a.Error)
		}
		return a.Answer, nil
	})
	if opts.Approver == "none" {
		approver = nil
	}
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ids := 0
	gopts := Options{
		Clock: clock.Now, NewID: func() string { ids++; return fmt.Sprintf("tc_%d", ids) },
		Rules: PolicyFiles{User: filepath.Join(home, ".config", "toolgate", "policy.toml")},
	}
	if opts.Timeout != "" {
		gopts.Timeout, err = time.ParseDuration(opts.Timeout)
		must(t, err)
	}
	if v := opts.Classifier; v != nil {
		gopts.Classifier = approval.ClassifierFunc(func(context.Context, *approval.Request) (approval.Verdict, error) {
			return *v, nil
		})
	}
	g, err := New(eng, store, approver, gopts)
	must(t, err)

	sessions := map[string]bool{}
	var order []string
	for i, line := range lines(sections["requests.jsonl"]) {
		var s step
		must(t, json.Unmarshal([]byte(line), &s))
		if s.Advance != "" {
			d, err := time.ParseDuration(s.Advance)
			must(t, err)
			clock.Advance(d)
		}
		if s.Write != nil {
			writeFile(t, expand, s.Write)
		}
		if len(s.Request) == 0 {
			continue
		}
		req, err := engine.DecodeRequest([]byte(expand.Replace(string(s.Request))))
		must(t, err)
		if !sessions[req.Session] {
			sessions[req.Session] = true
			order = append(order, req.Session)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if s.CancelAfter != "" {
			d, err := time.ParseDuration(s.CancelAfter)
			must(t, err)
			time.AfterFunc(d, cancel)
		}
		start := time.Now()
		if s.Run != nil {
			run := s.Run
			called := false
			var d *engine.Decision
			d, _, err = g.Run(ctx, req, s.Turn, func(context.Context) (Result, error) {
				called = true
				if run.Error != "" {
					return Result{}, errors.New(run.Error)
				}
				return Result{ExitCode: run.ExitCode, Stdout: []byte(run.Stdout), Stderr: []byte(run.Stderr)}, nil
			})
			if run.Error != "" && err != nil && err.Error() == run.Error {
				err = nil
			}
			if called != (d.Decision == policy.Allow) {
				t.Fatalf("step %d: decision %s but exec called=%v", i+1, d.Decision, called)
			}
		} else {
			_, err = g.Check(ctx, req, s.Turn)
		}
		cancel()
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("step %d took %v: the gate hung", i+1, d)
		}
	}
	mu.Lock()
	asked := next
	mu.Unlock()
	if asked != len(answers) {
		t.Errorf("the approver was asked %d times, but %d answers are scripted", asked, len(answers))
	}

	var got bytes.Buffer
	unexpand := strings.NewReplacer(project, "$PROJECT", home, "$HOME")
	for _, sess := range order {
		for e, err := range store.Query(context.Background(), eventlog.Filter{Session: sess}) {
			must(t, err)
			var payload bytes.Buffer
			must(t, json.Compact(&payload, e.Payload))
			e.Payload = payload.Bytes()
			b, err := json.Marshal(e)
			must(t, err)
			got.WriteString(unstable.ReplaceAllString(unexpand.Replace(string(b)), "${1}…\""))
			got.WriteByte('\n')
		}
	}

	if *update {
		for i := range ar.Files {
			if ar.Files[i].Name == "events.jsonl" {
				ar.Files[i].Data = got.Bytes()
			}
		}
		must(t, os.WriteFile(path, txtar.Format(ar), 0o644))
		return
	}
	if diff := cmp.Diff(lines(sections["events.jsonl"]), lines(got.Bytes())); diff != "" {
		t.Errorf("event chain mismatch (-want +got); run with -update to accept:\n%s", diff)
	}
}

// unstable matches the parts of an event that differ from run to run: a
// hash over temporary paths, and the inode and change times of a file.
var unstable = regexp.MustCompile(`("argsHash":"|"version":"stat:)[^"]*"`)

func writeFile(t *testing.T, expand *strings.Replacer, w *fileWrite) {
	p := expand.Replace(w.Path)
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(w.Content), 0o644))
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func realDir(t testing.TB) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	return d
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
