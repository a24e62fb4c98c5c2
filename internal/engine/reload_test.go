package engine

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// reloadStep edits the policy files (each path relative to the world, ""
// content removes the path), then decides a request.
type reloadStep struct {
	write   map[string]string
	remove  []string
	tool    string
	input   map[string]any
	want    policy.Decision
	reason  Reason
	has     string // the message or rule origin must contain this
	hasNot  string // ... and must not
	version string // "same" or "new": the policy version against the step before
}

// TestPolicyEdits: an engine that keeps each project's policy sees every
// edit of its files at the next decision, with no restart: an allow rule
// deleted asks again, a deny rule added denies, an invalid file denies
// everything (naming the file and line, logged once) until it is fixed,
// and a policy file that appears counts.
func TestPolicyEdits(t *testing.T) {
	const (
		project = "project/" + policy.ProjectFile
		local   = "project/" + policy.LocalFile
		user    = "home/.config/toolgate/policy.toml"
		managed = "etc/managed.toml"
	)
	npm := sh("npm test")
	readme := fp("README.md")
	cases := []struct {
		name  string
		steps []reloadStep
		logs  []string // the log records expected, in order (by message start)
	}{
		{name: "deleting an allow rule asks again", steps: []reloadStep{
			{write: map[string]string{project: "[permissions]\nallow = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: npm, want: policy.Allow, reason: ReasonRuleAllow, has: "policy.toml:2"},
			{write: map[string]string{project: "[permissions]\n"}, tool: "Bash", input: npm, want: policy.Ask, hasNot: "policy.toml:2", version: "new"},
			{tool: "Bash", input: npm, want: policy.Ask, version: "same"},
		}, logs: []string{"policy changed"}},
		{name: "adding a deny rule denies", steps: []reloadStep{
			{tool: "Read", input: readme, want: policy.Allow, reason: ReasonReadOnly},
			{write: map[string]string{project: "[permissions]\ndeny = [\"Read(README.md)\"]\n"}, tool: "Read", input: readme, want: policy.Deny, reason: ReasonRuleDeny, has: "policy.toml:2", version: "new"},
		}, logs: []string{"policy changed"}},
		{name: "an invalid edit denies everything, naming the file and line, until fixed", steps: []reloadStep{
			{write: map[string]string{project: "[permissions]\nallow = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: npm, want: policy.Allow},
			{write: map[string]string{project: "[permissions]\nallow = [\"Bash(npm test)\"]\ndeny = [\"Bash(npm\"]\n"}, tool: "Bash", input: npm, want: policy.Deny, reason: ReasonPolicyError, has: policy.ProjectFile + ":3:"},
			{tool: "Read", input: readme, want: policy.Deny, reason: ReasonPolicyError, has: policy.ProjectFile + ":3:"},
			{write: map[string]string{project: "[permissions]\nallow = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: npm, want: policy.Allow, reason: ReasonRuleAllow},
		}, logs: []string{"policy cannot be loaded", "policy loaded again"}},
		{name: "an unknown key in the user file denies", steps: []reloadStep{
			{tool: "Read", input: readme, want: policy.Allow},
			{write: map[string]string{user: "trusted_projects = [\"$P\"]\nmdoe = \"plan\"\n"}, tool: "Read", input: readme, want: policy.Deny, reason: ReasonPolicyError, has: "policy.toml:2:"},
		}, logs: []string{"policy cannot be loaded"}},
		{name: "a project policy file that appears counts", steps: []reloadStep{
			{remove: []string{"project/.toolgate"}, tool: "Bash", input: npm, want: policy.Ask},
			{write: map[string]string{project: "[permissions]\ndeny = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: npm, want: policy.Deny, reason: ReasonRuleDeny, version: "new"},
		}, logs: []string{"policy changed"}},
		{name: "a local policy file that appears counts", steps: []reloadStep{
			{tool: "Bash", input: npm, want: policy.Ask},
			{write: map[string]string{local: "[permissions]\nallow = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: npm, want: policy.Allow, reason: ReasonRuleAllow, has: "policy.local.toml:2"},
		}, logs: []string{"policy changed"}},
		{name: "a managed deny that appears counts", steps: []reloadStep{
			{remove: []string{managed}, write: map[string]string{project: "[permissions]\nallow = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: npm, want: policy.Allow},
			{write: map[string]string{managed: "[permissions]\ndeny = [\"Bash(npm:*)\"]\n"}, tool: "Bash", input: npm, want: policy.Deny, reason: ReasonRuleDeny, has: "managed.toml:2"},
		}, logs: []string{"policy changed"}},
		{name: "trust withdrawn from the project sets its allow rules aside", steps: []reloadStep{
			{write: map[string]string{project: "[permissions]\nallow = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: npm, want: policy.Allow},
			{write: map[string]string{user: "# no trusted projects\n"}, tool: "Bash", input: npm, want: policy.Ask, version: "new"},
		}, logs: []string{"policy changed"}},
		{name: "an enclosing project's new deny rule reaches a nested project", steps: []reloadStep{
			{write: map[string]string{"project/src/.toolgate/policy.toml": ""}, tool: "Bash", input: map[string]any{"command": "npm test", "cwd": "src"}, want: policy.Ask},
			{write: map[string]string{project: "[permissions]\ndeny = [\"Bash(npm test)\"]\n"}, tool: "Bash", input: map[string]any{"command": "npm test", "cwd": "src"}, want: policy.Deny, reason: ReasonRuleDeny, has: "project/" + policy.ProjectFile + ":2"},
		}, logs: []string{"policy changed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			must(t, os.MkdirAll(filepath.Join(w.dir, "etc"), 0o755))
			userPath := filepath.Join(w.dir, user)
			must(t, os.WriteFile(userPath, []byte(w.expand("trusted_projects = [\"$P\"]\n")), 0o644))
			var logs bytes.Buffer
			e, err := New(Options{
				Policy: FromFiles(filepath.Join(w.dir, managed), userPath), Home: w.home,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})),
			})
			must(t, err)
			version := ""
			for i, s := range c.steps {
				for _, p := range s.remove {
					must(t, os.RemoveAll(filepath.Join(w.dir, p)))
				}
				for p, body := range s.write {
					p = filepath.Join(w.dir, p)
					must(t, os.MkdirAll(filepath.Dir(p), 0o755))
					must(t, os.WriteFile(p, []byte(w.expand(body)), 0o644))
				}
				in := map[string]any{}
				cwd := w.project
				for k, v := range s.input {
					if k == "cwd" {
						cwd = filepath.Join(w.project, v.(string))
						continue
					}
					in[k] = v
				}
				d := e.Check(context.Background(), &Request{Tool: s.tool, Input: in, Cwd: cwd})
				where := d.Message + " " + d.RuleOrigin
				if d.Decision != s.want || (s.reason != "" && d.Reason != s.reason) ||
					(s.has != "" && !strings.Contains(where, s.has)) || (s.hasNot != "" && strings.Contains(where, s.hasNot)) {
					t.Fatalf("step %d: got %s (%s: %s, %s), want %s (%s) with %q and not %q", i+1, d.Decision, d.Reason, d.Message, d.RuleOrigin, s.want, s.reason, s.has, s.hasNot)
				}
				switch {
				case d.Reason == ReasonPolicyError && d.PolicyVersion != "":
					t.Fatalf("step %d: a policy that failed to load has version %s", i+1, d.PolicyVersion)
				case s.version == "same" && d.PolicyVersion != version, s.version == "new" && d.PolicyVersion == version:
					t.Fatalf("step %d: version %q after %q, want %s", i+1, d.PolicyVersion, version, s.version)
				}
				version = d.PolicyVersion
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				if line != "" {
					got = append(got, line)
				}
			}
			if len(got) != len(c.logs) {
				t.Fatalf("logged %d records, want %d (%q):\n%s", len(got), len(c.logs), c.logs, logs.String())
			}
			for i, want := range c.logs {
				if !strings.Contains(got[i], `msg="`+want) {
					t.Errorf("log record %d is %s, want %q", i+1, got[i], want)
				}
			}
		})
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestExplainVersion: the explanation names the policy version and each
// file with its own, and both change with the file.
func TestExplainVersion(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t, layers{project: "[permissions]\nallow = [\"Bash(npm test)\"]\n"})
	req := &Request{Tool: "Bash", Input: sh("npm test"), Cwd: w.project}
	d := e.Explain(context.Background(), req)
	if d.PolicyVersion == "" || d.Trace.Version != d.PolicyVersion {
		t.Fatalf("decision version %q, trace version %q", d.PolicyVersion, d.Trace.Version)
	}
	projectLine := func(tr *Trace) string {
		for _, f := range tr.Files {
			if strings.HasPrefix(f, "project "+filepath.Join(w.project, policy.ProjectFile)+" ") {
				return f
			}
		}
		t.Fatalf("no project file in %q", tr.Files)
		return ""
	}
	before := projectLine(d.Trace)
	must(t, os.WriteFile(filepath.Join(w.project, policy.ProjectFile), []byte("[permissions]\n"), 0o644))
	d2 := e.Explain(context.Background(), req)
	if d2.PolicyVersion == d.PolicyVersion || projectLine(d2.Trace) == before {
		t.Fatalf("version %s and %q did not change with the file", d2.PolicyVersion, before)
	}
}

// TestPolicyReloadRace: decisions racing edits of the policy file each see
// one whole version of it — the allow or the deny, never a mix, never an
// error — and the first decision after the last edit sees the last.
func TestPolicyReloadRace(t *testing.T) {
	w := newWorld(t)
	user := filepath.Join(w.home, ".config/toolgate/policy.toml")
	must(t, os.WriteFile(user, []byte(w.expand("trusted_projects = [\"$P\"]\n")), 0o644))
	e, err := New(Options{Policy: FromFiles(filepath.Join(w.dir, "none.toml"), user), Home: w.home})
	must(t, err)
	path := filepath.Join(w.project, policy.ProjectFile)
	bodies := []string{"[permissions]\nallow = [\"Bash(npm test)\"]\n", "[permissions]\ndeny = [\"Bash(npm test)\"]\n"}
	write := func(i int) {
		// As editors and toolgate itself do: a whole new file renamed
		// over the old one.
		tmp := fmt.Sprintf("%s.%d", path, i)
		must(t, os.WriteFile(tmp, []byte(bodies[i%2]), 0o644))
		must(t, os.Rename(tmp, path))
	}
	write(0)
	req := func() *Request { return &Request{Tool: "Bash", Input: sh("npm test"), Cwd: w.project} }
	edits := 200
	if raceEnabled {
		edits = 50
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan string, 4)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				d := e.Check(context.Background(), req())
				if !(d.Decision == policy.Allow && d.Reason == ReasonRuleAllow || d.Decision == policy.Deny && d.Reason == ReasonRuleDeny) {
					select {
					case errs <- fmt.Sprintf("%s (%s: %s)", d.Decision, d.Reason, d.Message):
					default:
					}
					return
				}
			}
		}()
	}
	for i := 1; i <= edits; i++ {
		write(i)
		want := policy.Allow
		if i%2 == 1 {
			want = policy.Deny
		}
		if d := e.Check(context.Background(), req()); d.Decision != want {
			close(done)
			wg.Wait()
			t.Fatalf("edit %d: the next decision is %s (%s), want %s", i, d.Decision, d.Message, want)
		}
	}
	close(done)
	wg.Wait()
	select {
	case s := <-errs:
		t.Fatalf("a decision racing the edits got %s", s)
	default:
	}
}
