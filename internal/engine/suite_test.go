package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/toolgate/toolgate/policy"
)

// The data-driven suites live in testdata/attacks/*.txtar (attacks on the
// gate, each case stating the safe decision) and testdata/benign/*.txtar
// (ordinary development calls, each case stating the decision a sensible
// policy gives).
//
// One archive is one group of cases sharing one policy; its name is
// GROUP.txtar or GROUP.VARIANT.txtar, and the group is the part before the
// first dot. The archive comment describes the attack; a comment line that
// is exactly "untrusted" makes the user policy not trust the project.
// Files of the archive:
//
//	managed.toml, user.toml, project.toml, local.toml
//	            policy layers ($P project, $H home, $D temp dir expanded)
//	cli.toml    a CLI layer, in the policy file format
//	project/…, home/…, outside/…
//	            fixtures written into the world
//	symlinks    one "LINK TARGET" a line; LINK relative to the world's
//	            root, TARGET as written (expanded)
//	cases       one case a line: DECISION REASON TOOL[@MODE][[cwd=DIR]][[project=DIR]] INPUT
//
// DECISION is allow, ask, deny, or ask+ (ask or deny are both acceptable);
// REASON a reason code or "-" for any. INPUT is a JSON object (starting
// with "{") or, for shell tools, the command line as the rest of the line,
// where "\n" stands for a newline and "\\" for a backslash (any other
// backslash is itself). DIR is relative to the project (absolute allowed);
// project=DIR sets the request's Project, the client's project directory.
// A trailing " # false ask: WHY" or " # false deny: WHY" marks a benign
// case whose sensible decision is allow but that currently gets the stated
// ask or deny. Lines starting with "#" are comments; blank lines are
// ignored.

type suiteCase struct {
	file     string // base name of the archive
	line     int    // line in the archive
	text     string // the case line as written
	want     policy.Decision
	atLeast  bool // ask+: ask or deny
	reason   string
	tool     string
	mode     string
	cwd      string
	project  string // the request's Project, as cwd is written; "" for none
	input    map[string]any
	falseAsk string // "ask" or "deny" when marked as a false ask/deny
}

type suiteFile struct {
	name    string // base name
	group   string
	l       layers
	cliSrc  string
	fixture map[string]string
	links   [][2]string
	cases   []suiteCase
}

func loadSuite(t *testing.T, dir string) []*suiteFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	must(t, err)
	if len(paths) == 0 {
		t.Fatalf("no archives in testdata/%s", dir)
	}
	var files []*suiteFile
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		must(t, err)
		a := txtar.Parse(raw)
		base := filepath.Base(p)
		sf := &suiteFile{name: base, group: strings.SplitN(base, ".", 2)[0], fixture: map[string]string{}}
		for _, ln := range strings.Split(string(a.Comment), "\n") {
			if strings.TrimSpace(ln) == "untrusted" {
				sf.l.untrusted = true
			}
		}
		var casesSrc []byte
		for _, f := range a.Files {
			switch {
			case f.Name == "managed.toml":
				sf.l.managed = string(f.Data)
			case f.Name == "user.toml":
				sf.l.user = string(f.Data)
			case f.Name == "project.toml":
				sf.l.project = string(f.Data)
			case f.Name == "local.toml":
				sf.l.local = string(f.Data)
			case f.Name == "cli.toml":
				sf.cliSrc = string(f.Data)
			case f.Name == "cases":
				casesSrc = f.Data
			case f.Name == "symlinks":
				for _, ln := range strings.Split(string(f.Data), "\n") {
					if ln = strings.TrimSpace(ln); ln == "" || strings.HasPrefix(ln, "#") {
						continue
					}
					parts := strings.Fields(ln)
					if len(parts) != 2 {
						t.Fatalf("%s: symlinks: want LINK TARGET: %q", base, ln)
					}
					sf.links = append(sf.links, [2]string{parts[0], parts[1]})
				}
			case strings.HasPrefix(f.Name, "project/") || strings.HasPrefix(f.Name, "home/") || strings.HasPrefix(f.Name, "outside/"):
				sf.fixture[f.Name] = string(f.Data)
			default:
				t.Fatalf("%s: unknown archive file %q", base, f.Name)
			}
		}
		if casesSrc == nil {
			t.Fatalf("%s: no cases file", base)
		}
		// The line of the cases file's first line in the archive.
		first := 1
		marker := []byte("-- cases --\n")
		if i := bytes.Index(raw, marker); i >= 0 {
			first = bytes.Count(raw[:i], []byte("\n")) + 2
		}
		for i, ln := range strings.Split(string(casesSrc), "\n") {
			trimmed := strings.TrimSpace(ln)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			c, err := parseSuiteCase(ln)
			if err != nil {
				t.Fatalf("%s:%d: %v", base, first+i, err)
			}
			c.file, c.line, c.text = base, first+i, ln
			sf.cases = append(sf.cases, c)
		}
		files = append(files, sf)
	}
	return files
}

func parseSuiteCase(ln string) (suiteCase, error) {
	var c suiteCase
	for _, m := range []string{"ask", "deny"} {
		if i := strings.LastIndex(ln, " # false "+m+":"); i >= 0 {
			c.falseAsk = m
			ln = ln[:i]
		}
	}
	fields := strings.SplitN(ln, " ", 4)
	if len(fields) < 4 {
		return c, fmt.Errorf("want DECISION REASON TOOL INPUT: %q", ln)
	}
	switch fields[0] {
	case "allow":
		c.want = policy.Allow
	case "ask":
		c.want = policy.Ask
	case "ask+":
		c.want, c.atLeast = policy.Ask, true
	case "deny":
		c.want = policy.Deny
	default:
		return c, fmt.Errorf("unknown decision %q", fields[0])
	}
	if c.falseAsk != "" && c.falseAsk != fields[0] {
		return c, fmt.Errorf("a false %s must state %s as its decision", c.falseAsk, c.falseAsk)
	}
	if fields[1] != "-" {
		c.reason = fields[1]
	}
	tool := fields[2]
	for strings.HasSuffix(tool, "]") {
		i := strings.LastIndex(tool, "[")
		if i < 0 {
			return c, fmt.Errorf("tool %q: a ] without its [", tool)
		}
		key, val, _ := strings.Cut(tool[i+1:len(tool)-1], "=")
		switch key {
		case "cwd":
			c.cwd = val
		case "project":
			c.project = val
		default:
			return c, fmt.Errorf("tool %q: unknown [%s=…]: want cwd or project", tool, key)
		}
		tool = tool[:i]
	}
	if i := strings.Index(tool, "@"); i >= 0 {
		tool, c.mode = tool[:i], tool[i+1:]
	}
	c.tool = tool
	in := fields[3]
	if strings.HasPrefix(in, "{") {
		if err := json.Unmarshal([]byte(in), &c.input); err != nil {
			return c, fmt.Errorf("input: %v", err)
		}
		return c, nil
	}
	c.input = map[string]any{"command": unescapeCommand(in)}
	return c, nil
}

// unescapeCommand turns "\n" into a newline and "\\" into a backslash;
// any other backslash stands for itself.
func unescapeCommand(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (w *world) expandAll(v any) any {
	switch x := v.(type) {
	case string:
		return w.expand(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = w.expandAll(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = w.expandAll(e)
		}
		return out
	}
	return v
}

func traceOf(d *Decision) string {
	var b strings.Builder
	if d.Trace == nil {
		return ""
	}
	for _, u := range d.Trace.Units {
		b.WriteString("\n  unit " + u.Label + ": " + u.Decision.String() + " " + string(u.Reason) + " risk=" + u.Risk.String())
		for _, s := range u.Steps {
			b.WriteString("\n    " + s.Stage + " " + s.Result + " " + s.Detail)
		}
	}
	return b.String()
}

type suiteResult struct {
	c   suiteCase
	got policy.Decision
}

// runSuite runs every case of every archive, one subtest per archive and
// per case, and returns what each case got.
func runSuite(t *testing.T, files []*suiteFile) []suiteResult {
	var results []suiteResult
	for _, sf := range files {
		t.Run(strings.TrimSuffix(sf.name, ".txtar"), func(t *testing.T) {
			w := newWorld(t)
			for name, body := range sf.fixture {
				p := filepath.Join(w.dir, name)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(w.expand(body)), 0o644))
			}
			for _, ln := range sf.links {
				p := filepath.Join(w.dir, ln[0])
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.Symlink(w.expand(ln[1]), p))
			}
			l := sf.l
			if sf.cliSrc != "" {
				f, err := policy.ParseFile("cli.toml", []byte(w.expand(sf.cliSrc)), policy.LayerCLI)
				must(t, err)
				l.cli = f
			}
			e := w.engine(t, l)
			for _, c := range sf.cases {
				t.Run(fmt.Sprintf("%s:%d", c.file, c.line), func(t *testing.T) {
					in, _ := w.expandAll(c.input).(map[string]any)
					cwd := w.expand(c.cwd)
					if !filepath.IsAbs(cwd) {
						// Not cleaned: a ".." after a link is the engine's to judge.
						cwd = w.project + "/" + cwd
					}
					req := &Request{Tool: c.tool, Input: in, Cwd: cwd, Mode: c.mode}
					if c.project != "" {
						req.Project = w.expand(c.project)
						if !filepath.IsAbs(req.Project) {
							req.Project = w.project + "/" + req.Project
						}
					}
					d := e.Explain(context.Background(), req)
					results = append(results, suiteResult{c: c, got: d.Decision})
					ok := d.Decision == c.want || (c.atLeast && d.Decision > c.want)
					if ok && c.reason != "" && string(d.Reason) != c.reason {
						ok = false
					}
					if !ok {
						want := c.want.String()
						if c.atLeast {
							want = "at least " + want
						}
						reqJSON, _ := json.Marshal(req)
						t.Fatalf("%s:%d: %s\nrequest: %s\ngot %s (%s: %s), want %s (%s)%s",
							c.file, c.line, c.text, reqJSON, d.Decision, d.Reason, d.Message, want, c.reason, traceOf(d))
					}
					if d.Rule != "" && d.RuleOrigin == "" {
						t.Fatalf("%s:%d: rule %q has no origin", c.file, c.line, d.Rule)
					}
				})
			}
		})
	}
	return results
}

func groupCounts(files []*suiteFile) (string, int) {
	counts := map[string]int{}
	total := 0
	for _, sf := range files {
		counts[sf.group] += len(sf.cases)
		total += len(sf.cases)
	}
	groups := make([]string, 0, len(counts))
	for g := range counts {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var b strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&b, " %s=%d", g, counts[g])
	}
	return b.String(), total
}

// TestAttackSuite runs testdata/attacks: attacks on the gate, each case
// stating the safe decision the design requires.
func TestAttackSuite(t *testing.T) {
	files := loadSuite(t, "attacks")
	runSuite(t, files)
	summary, total := groupCounts(files)
	t.Logf("attack suite: %d cases in %d files; per group:%s", total, len(files), summary)
	if total < 300 {
		t.Errorf("the attack suite has %d cases, want at least 300", total)
	}
}

// TestBenignSuite runs testdata/benign: ordinary development calls under
// the policy that allows them. It reports the false-ask and false-deny
// rates: the fraction of cases whose sensible decision is allow that came
// back ask or deny (marked "# false ask:" / "# false deny:" in the files).
func TestBenignSuite(t *testing.T) {
	files := loadSuite(t, "benign")
	results := runSuite(t, files)
	summary, total := groupCounts(files)
	var shouldAllow, falseAsk, falseDeny int
	for _, r := range results {
		if r.c.want != policy.Allow && r.c.falseAsk == "" {
			continue
		}
		shouldAllow++
		switch {
		case r.got == policy.Ask:
			falseAsk++
		case r.got == policy.Deny:
			falseDeny++
		}
	}
	rate := func(n int) float64 {
		if shouldAllow == 0 {
			return 0
		}
		return 100 * float64(n) / float64(shouldAllow)
	}
	t.Logf("benign suite: %d cases in %d files; per group:%s", total, len(files), summary)
	t.Logf("benign suite: %d cases should be allowed; false asks %d (%.1f%%), false denies %d (%.1f%%)",
		shouldAllow, falseAsk, rate(falseAsk), falseDeny, rate(falseDeny))
	attacks := loadSuite(t, "attacks")
	_, attackTotal := groupCounts(attacks)
	if total*2 < attackTotal {
		t.Errorf("the benign suite has %d cases, want at least half the attack suite's %d", total, attackTotal)
	}
}

// approvedBefore is a PriorApprovals that claims every call was approved.
type approvedBefore struct{}

func (approvedBefore) Lookup(context.Context, *Call) (Grant, bool) {
	return Grant{Message: "approved earlier"}, true
}

// TestAttackGoOnly holds the attacks that need Go: inputs too large or not
// valid UTF-8 for a text file, requests decoded from raw JSON (a panic or a
// hang fails the case), and a fake approval store.
func TestAttackGoOnly(t *testing.T) {
	w := newWorld(t)
	denyRm := layers{project: "[permissions]\ndeny = ['Bash(rm -rf:*)']"}
	w.run(t, []tcase{
		{name: "robustness/long line", l: denyRm, tool: "Bash", input: sh(strings.Repeat("echo a; ", 1500) + "rm -rf dist"), want: policy.Deny, reason: ReasonRuleDeny},
		// Past the analysis's limits: denied as too complex, whatever it holds.
		{name: "robustness/too long line", l: denyRm, tool: "Bash", input: sh(strings.Repeat("echo a; ", 25000) + "ls"), want: policy.Deny, reason: ReasonTooComplex},
		{name: "robustness/too many commands", l: denyRm, tool: "Bash", input: sh(strings.Repeat("ls;", 2001)), want: policy.Deny, reason: ReasonTooComplex},
		{name: "robustness/too deep", l: denyRm, tool: "Bash", input: sh(strings.Repeat("(", 600) + "ls" + strings.Repeat(")", 600)), want: policy.Deny, reason: ReasonTooComplex},
		// An allow rule or a mode never loosens it.
		{name: "robustness/too complex with allow rules in bypass mode", l: layers{user: "[permissions]\nallow = ['Bash(*)', 'Bash(ls:*)']"}, tool: "Bash", mode: "bypassPermissions",
			input: sh(strings.Repeat("ls;", 2001)), want: policy.Deny, reason: ReasonTooComplex},
		{name: "robustness/too complex powershell", l: denyRm, tool: "PowerShell", input: sh("Get-ChildItem " + strings.Repeat("a", 70<<10)), want: policy.Deny, reason: ReasonTooComplex},
		// Bytes the parser rejects: asks.
		{name: "robustness/invalid UTF-8 in command", l: denyRm, tool: "Bash", input: sh("rm -rf dist \xff\xfe"), want: policy.Ask, reason: ReasonUnknownCommand},
	})

	t.Run("robustness/json", func(t *testing.T) {
		e := w.engine(t, denyRm)
		big := strings.Repeat("a", 4<<20)
		for _, c := range []struct {
			name string
			json string
			want policy.Decision // minimum
		}{
			{"null input", `{"tool":"Bash","input":null,"cwd":"` + w.project + `"}`, policy.Deny},
			{"number input fields", `{"tool":"Read","input":{"file_path":1e999},"cwd":"` + w.project + `"}`, policy.Deny},
			{"huge command", `{"tool":"Bash","input":{"command":"echo ` + big + `; rm -rf dist"},"cwd":"` + w.project + `"}`, policy.Deny},
			{"escaped NUL in cwd", `{"tool":"Bash","input":{"command":"touch x"},"cwd":"` + w.project + `\u0000/../.."}`, policy.Deny},
			{"NUL-escaped tool", `{"tool":"Bash\u0000","input":{"command":"ls"},"cwd":"` + w.project + `"}`, policy.Deny},
			{"empty cwd", `{"tool":"Bash","input":{"command":"ls"},"cwd":""}`, policy.Deny},
			{"cwd with ..", `{"tool":"Bash","input":{"command":"cat .env"},"cwd":"` + w.project + `/src/.."}`, policy.Deny},
			{"invalid UTF-8 path", "{\"tool\":\"Read\",\"input\":{\"file_path\":\".env\xff\"},\"cwd\":\"" + w.project + "\"}", policy.Allow},
			{"mode with odd case", `{"tool":"Bash","input":{"command":"make"},"cwd":"` + w.project + `","mode":"BypassPermissions"}`, policy.Ask},
			{"array of non-strings", `{"tool":"exec_command","input":{"command":[["rm"],"-rf"]},"cwd":"` + w.project + `"}`, policy.Deny},
		} {
			t.Run(c.name, func(t *testing.T) {
				done := make(chan string, 1)
				go func() {
					defer func() {
						if r := recover(); r != nil {
							done <- fmt.Sprintf("panic: %v", r)
						}
					}()
					req, err := DecodeRequest([]byte(c.json))
					if err != nil {
						done <- "" // rejected before the engine: a deny with invalid_request
						return
					}
					d := e.Check(context.Background(), req)
					if d.Decision < c.want {
						done <- fmt.Sprintf("got %s (%s: %.200s), want at least %s", d.Decision, d.Reason, d.Message, c.want)
						return
					}
					done <- ""
				}()
				select {
				case msg := <-done:
					if msg != "" {
						t.Fatal(msg)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("hang: no decision after 20s")
				}
			})
		}
	})

	// Prior approvals: never for destructive, protected or unjudgeable calls.
	t.Run("prior", func(t *testing.T) {
		f, err := policy.ParseRules(policy.LayerCLI, nil, nil, nil)
		must(t, err)
		set, err := policy.Merge(f)
		must(t, err)
		e, err := New(Options{Policy: Fixed(set), Home: w.home, Prior: approvedBefore{}})
		must(t, err)
		for _, c := range []struct {
			name string
			req  *Request
			want policy.Decision
		}{
			{"destructive is never reused", &Request{Tool: "Bash", Input: sh("rm -rf dist"), Cwd: w.project}, policy.Ask},
			{"protected path is never reused", &Request{Tool: "Edit", Input: fp(".git/config"), Cwd: w.project}, policy.Ask},
			{"destructive under a dynamic name is never reused", &Request{Tool: "Bash", Input: sh(`$CMD -rf dist`), Cwd: w.project}, policy.Ask},
			{"unparseable line is never reused", &Request{Tool: "Bash", Input: sh("echo 'x"), Cwd: w.project}, policy.Ask},
			{"control: a write is reused", &Request{Tool: "Edit", Input: fp("src/main.go"), Cwd: w.project}, policy.Allow},
		} {
			t.Run(c.name, func(t *testing.T) {
				if d := e.Check(context.Background(), c.req); d.Decision != c.want {
					t.Fatalf("got %s (%s: %s), want %s", d.Decision, d.Reason, d.Message, c.want)
				}
			})
		}
	})
}
