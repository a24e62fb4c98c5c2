package engine

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// thousandRules is a policy of 1,000 rules of every kind, none of which
// matches the benchmark requests until the last four allow rules.
func thousandRules(b *testing.B) *policy.Set {
	b.Helper()
	var allow, ask, deny []string
	for i := range 1000 {
		switch i % 5 {
		case 0:
			deny = append(deny, fmt.Sprintf("Bash(tool%d --flag%d:*)", i, i))
		case 1:
			ask = append(ask, fmt.Sprintf("Read(secret%d/**)", i))
		case 2:
			allow = append(allow, fmt.Sprintf("Bash(prog%d sub%d)", i, i))
		case 3:
			allow = append(allow, fmt.Sprintf("Edit(dir%d/*.go)", i))
		case 4:
			deny = append(deny, fmt.Sprintf("WebFetch(domain:host%d.example.com)", i))
		}
	}
	allow = append(allow[:len(allow)-4], "Bash(git status:*)", "Bash(npm run test:*)", "Bash(tee:*)", "Edit(src/**)")
	f, err := policy.ParseRules(policy.LayerProject, allow, ask, deny)
	if err != nil {
		b.Fatal(err)
	}
	s, err := policy.Merge(f)
	if err != nil {
		b.Fatal(err)
	}
	if len(s.Rules) != 1000 {
		b.Fatalf("%d rules", len(s.Rules))
	}
	return s
}

func benchEngine(b *testing.B) (*Engine, *world) {
	w := newWorld(b)
	e, err := New(Options{Policy: Fixed(thousandRules(b)), Home: w.home})
	if err != nil {
		b.Fatal(err)
	}
	return e, w
}

// benchCheck measures Check end to end for one request that is allowed.
func benchCheck(b *testing.B, req *Request) {
	e, w := benchEngine(b)
	req.Cwd = w.project
	ctx := context.Background()
	if d := e.Check(ctx, req); d.Decision != policy.Allow {
		b.Fatalf("got %s %s", d.Decision, d.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Check(ctx, req)
	}
}

// BenchmarkCheckRead is a non-shell decision with 1,000 rules loaded.
func BenchmarkCheckRead(b *testing.B) {
	benchCheck(b, &Request{Tool: "Read", Input: map[string]any{"file_path": "src/main.go"}})
}

// BenchmarkCheckWrite is a file write allowed by a rule, with 1,000
// rules loaded.
func BenchmarkCheckWrite(b *testing.B) {
	benchCheck(b, &Request{Tool: "Write", Input: map[string]any{"file_path": "src/util.go", "content": "package main\n"}})
}

// BenchmarkCheckShell1 is the call of the server's load benchmark
// (bench/cmd/checkload): one command, allowed by a rule, with 1,000 rules
// loaded.
func BenchmarkCheckShell1(b *testing.B) {
	benchCheck(b, &Request{Tool: "Bash", Input: map[string]any{"command": "git status"}})
}

// BenchmarkCheckShell3 is a three-command shell line with 1,000 rules loaded.
func BenchmarkCheckShell3(b *testing.B) {
	benchCheck(b, &Request{Tool: "Bash", Input: map[string]any{"command": "git status && npm run test -- --watch | tee test.log"}})
}

// benchPipeline measures the pipeline stages alone — rule evaluation,
// sandbox, credentials, safety, mode, default table, aggregation — on a
// call whose paths were already resolved, which is the part that grows
// with the number of rules.
func benchPipeline(b *testing.B, req *Request) {
	e, w := benchEngine(b)
	req.Cwd = w.project
	set := thousandRules(b)
	d := e.Explain(context.Background(), req)
	if d.Decision != policy.Allow {
		b.Fatalf("got %s %s", d.Decision, d.Message)
	}
	tool, _ := policy.Canonical(req.Tool)
	c := &call{req: req, tool: tool, meta: tools[tool], input: req.Input}
	env := &env{cwd: w.project, root: w.project, home: w.home, match: policy.MatchContext{Root: w.project, Home: w.home},
		fs: (*pathres.Cache)(nil).Begin()}
	st := &state{e: e, set: set, idx: set.Index(), call: c, env: env, mode: set.Mode, sandbox: set.Sandbox}
	units := d.Trace.Units
	b.ReportAllocs()
	for b.Loop() {
		for _, u := range units {
			st.judge(u)
		}
		if st.aggregate(units).Decision != policy.Allow {
			b.Fatal("decision changed")
		}
	}
}

// BenchmarkPipelineRead is BenchmarkCheckRead without path resolution.
func BenchmarkPipelineRead(b *testing.B) {
	benchPipeline(b, &Request{Tool: "Read", Input: map[string]any{"file_path": "src/main.go"}})
}

// BenchmarkPipelineShell3 is BenchmarkCheckShell3 without parsing and path
// resolution.
func BenchmarkPipelineShell3(b *testing.B) {
	benchPipeline(b, &Request{Tool: "Bash", Input: map[string]any{"command": "git status && npm run test -- --watch | tee test.log"}})
}

// benchEffects measures effect analysis alone: parsing a command line,
// resolving every path it names, classifying and escalating risk.
func benchEffects(b *testing.B, script string) {
	w := newWorld(b)
	e := &env{cwd: w.project, root: w.project, home: w.home, match: policy.MatchContext{Root: w.project, Home: w.home}}
	c := &call{tool: policy.ToolShell, command: script}
	units, err := e.shellUnits(c)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(units)), "commands")
	b.SetBytes(int64(len(script)))
	b.ReportAllocs()
	for b.Loop() {
		units, _ := e.shellUnits(c)
		for _, u := range units {
			e.escalate(u)
		}
	}
}

// BenchmarkEffects3 analyzes a typical three-command line.
func BenchmarkEffects3(b *testing.B) {
	benchEffects(b, "git status && npm run test -- --watch | tee test.log")
}

// BenchmarkEffects2KB analyzes a 2 KB build script.
func BenchmarkEffects2KB(b *testing.B) {
	var s strings.Builder
	s.WriteString("#!/bin/bash\nset -euo pipefail\n# build and package\n")
	for i := 0; s.Len() < 2048; i++ {
		fmt.Fprintf(&s, "if [ -d src/mod%d ]; then\n  cd src && go vet ./... && cd ..\n  grep -rn TODO src/ | wc -l > dist/todo%d.txt\nfi\nfor f in src/*.go; do gofmt -l \"$f\"; done\ncp README.md dist/ && tar czf dist/out%d.tgz src\n", i, i, i)
	}
	benchEffects(b, s.String())
}

var justEdited = flag.Bool("just-edited", false, "BenchmarkCheck*Files: measure right after the policy files were written")

// benchFiles is benchCheck with the 1,000 rules read from a project policy
// file (and absent managed and user files) through FromFiles, as a server
// loads them: it includes whatever a decision costs to keep the policy
// current.
func benchFiles(b *testing.B, req *Request) {
	w := newWorld(b)
	var src strings.Builder
	src.WriteString("[permissions]\n")
	for _, eff := range []policy.Decision{policy.Deny, policy.Ask, policy.Allow} {
		fmt.Fprintf(&src, "%s = [\n", eff)
		for _, r := range thousandRules(b).Rules {
			if r.Effect == eff {
				fmt.Fprintf(&src, "  %q,\n", r.Text)
			}
		}
		src.WriteString("]\n")
	}
	must(b, os.WriteFile(filepath.Join(w.project, policy.ProjectFile), []byte(src.String()), 0o644))
	user := filepath.Join(w.home, ".config/toolgate/policy.toml")
	must(b, os.WriteFile(user, []byte(fmt.Sprintf("trusted_projects = [%q]\n", w.project)), 0o644))
	if !*justEdited {
		// A file read within a few seconds of its last change is
		// compared by content as well as by stamp on every check until
		// that window passes; the steady state is measured.
		time.Sleep(3500 * time.Millisecond)
	}
	e, err := New(Options{Policy: FromFiles(filepath.Join(w.dir, "etc/managed.toml"), user), Home: w.home})
	must(b, err)
	req.Cwd = w.project
	ctx := context.Background()
	if d := e.Check(ctx, req); d.Decision != policy.Allow {
		b.Fatalf("got %s %s", d.Decision, d.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Check(ctx, req)
	}
}

// BenchmarkCheckShell1Files is BenchmarkCheckShell1 with the policy read
// from files.
func BenchmarkCheckShell1Files(b *testing.B) {
	benchFiles(b, &Request{Tool: "Bash", Input: map[string]any{"command": "git status"}})
}

// BenchmarkCheckReadFiles is BenchmarkCheckRead with the policy read from
// files.
func BenchmarkCheckReadFiles(b *testing.B) {
	benchFiles(b, &Request{Tool: "Read", Input: map[string]any{"file_path": "src/main.go"}})
}

// BenchmarkCheckReadChanged is BenchmarkCheckRead when the project
// directory changed before every decision (its mode set again, which the
// path cache cannot tell from a change that matters): every path and
// project marker is resolved afresh and watched again.
func BenchmarkCheckReadChanged(b *testing.B) {
	e, w := benchEngine(b)
	req := &Request{Tool: "Read", Cwd: w.project, Input: map[string]any{"file_path": "src/main.go"}}
	ctx := context.Background()
	if d := e.Check(ctx, req); d.Decision != policy.Allow {
		b.Fatalf("got %s %s", d.Decision, d.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		must(b, os.Chmod(w.project, 0o755))
		e.Check(ctx, req)
	}
}
