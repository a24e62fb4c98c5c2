//go:build unix

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/testnote"
)

// walkSections are the sections of README.md that TestReadmeWalk follows
// as a newcomer would: every fenced block in them carries a walk marker.
var walkSections = []string{"Set-up", "Quick start"}

// TestReadmeWalk follows the set-up and quick start of README.md on a
// fresh home directory: it runs every command shown there, in order, with
// this package's toolgate (the test binary, on PATH through TestMain) and
// compares what each prints with the output the README shows, after
// replacing what differs from run to run on both sides (tokens, ids,
// hashes, times, the home directory, the server's port).
//
// Each fenced block of those sections follows an HTML comment that says
// what the block is:
//
//	<!-- walk -->              a transcript: each "$ " line (with its "\"
//	                           continuation lines) is a command, run by bash
//	                           in the directory and with the variables the
//	                           commands before it left; the lines up to the
//	                           next "$ " are its output
//	<!-- walk input=TEXT -->   the same, with TEXT and a newline as the
//	                           commands' standard input (what a person types)
//	<!-- walk background NAME [asks] -->
//	                           one command started and left running (a
//	                           server, a call that waits for a person); the
//	                           output shown under it is waited for (60 s at
//	                           most) and compared before the walk goes on;
//	                           with "asks", the walk goes on once the server
//	                           has one more question pending, as a person
//	                           would answer only a question that was asked
//	<!-- walk output-of NAME --> the output NAME printed by the time it
//	                           ended (60 s at most)
//	<!-- walk install -->      the installation of toolgate, which the test
//	                           stands in for: its toolgate is on PATH
//	<!-- walk skip: WHY -->    not run (the test suite itself, a sample of
//	                           output from elsewhere)
//
// "toolgate serve" is started on a free port and the README's
// 127.0.0.1:8765 in later commands is replaced by that address. Every
// process it started is killed at the end.
func TestReadmeWalk(t *testing.T) {
	if testing.Short() {
		testnote.Skip(t, "README walk", "-short", "go test ./internal/cli -run TestReadmeWalk")
	}
	for _, prog := range []string{"bash", "curl", "git"} {
		if _, err := exec.LookPath(prog); err != nil {
			testnote.Skip(t, "README walk", prog+" is missing", "install "+prog+"; go test ./internal/cli -run TestReadmeWalk")
		}
	}
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := walkBlocks(string(data), walkSections)
	if err != nil {
		t.Fatal(err)
	}
	w := newWalker(t)
	for _, b := range blocks {
		w.block(b)
	}
	for name := range w.bg {
		if !w.bg[name].checked {
			t.Errorf("README.md: the output of background command %q is never shown (<!-- walk output-of %s -->)", name, name)
		}
	}
}

// walkBlock is one marked fenced block of the README.
type walkBlock struct {
	line   int    // of the opening fence
	marker string // the comment's words after "walk"
	body   []string
}

var markerRE = regexp.MustCompile(`^<!-- walk\b(.*?)-->$`)

// walkBlocks returns the fenced blocks of the named sections, in order,
// with their markers; a block without one is an error.
func walkBlocks(readme string, sections []string) ([]walkBlock, error) {
	lines := strings.Split(readme, "\n")
	var out []walkBlock
	in, seen := false, map[string]bool{}
	prev := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "## ") {
			title := strings.TrimPrefix(l, "## ")
			in, prev = false, ""
			for _, s := range sections {
				if title == s {
					in, seen[s] = true, true
				}
			}
			continue
		}
		if !in {
			continue
		}
		if strings.HasPrefix(l, "```") {
			m := markerRE.FindStringSubmatch(prev)
			if m == nil {
				return nil, fmt.Errorf("README.md:%d: a block of the walked sections without a <!-- walk … --> comment on the line before it", i+1)
			}
			b := walkBlock{line: i + 1, marker: strings.TrimSpace(m[1])}
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				b.body = append(b.body, lines[i])
			}
			out = append(out, b)
			prev = ""
			continue
		}
		if strings.TrimSpace(l) != "" {
			prev = strings.TrimSpace(l)
		}
	}
	for _, s := range sections {
		if !seen[s] {
			return nil, fmt.Errorf("README.md has no section %q", s)
		}
	}
	return out, nil
}

// walkCmd is one "$ " command of a transcript and the output shown for it.
type walkCmd struct {
	line int
	cmd  string
	want []string
}

// transcript splits a block's lines into commands and their outputs.
func transcript(b walkBlock) ([]walkCmd, error) {
	var cmds []walkCmd
	for i := 0; i < len(b.body); i++ {
		l := b.body[i]
		if strings.HasPrefix(l, "$ ") {
			c := walkCmd{line: b.line + 1 + i, cmd: strings.TrimPrefix(l, "$ ")}
			for strings.HasSuffix(l, `\`) && i+1 < len(b.body) {
				i++
				l = b.body[i]
				c.cmd += "\n" + l
			}
			cmds = append(cmds, c)
			continue
		}
		if len(cmds) == 0 {
			return nil, fmt.Errorf("README.md:%d: output before any \"$ \" command", b.line+1+i)
		}
		cmds[len(cmds)-1].want = append(cmds[len(cmds)-1].want, l)
	}
	return cmds, nil
}

// walker runs the README's commands and keeps what they leave behind.
type walker struct {
	t      *testing.T
	home   string
	dir    string // of the state the commands pass on
	server string // "http://127.0.0.1:PORT" once serve runs
	bg     map[string]*walkBG
}

// walkBG is a command left running.
type walkBG struct {
	cmd     *exec.Cmd
	out     *syncBuffer
	done    chan struct{}
	checked bool
}

func newWalker(t *testing.T) *walker {
	root := t.TempDir()
	w := &walker{t: t, home: filepath.Join(root, "home"), dir: filepath.Join(root, "walk"), bg: map[string]*walkBG{}}
	for _, d := range []string{w.home, w.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.dir, "cwd"), []byte(w.home), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "env"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.stop)
	return w
}

// env is a newcomer's environment: a fresh home, toolgate on PATH, and
// nothing of this machine's toolgate set-up (no managed policy).
func (w *walker) env() []string {
	env := []string{
		"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1",
		"TOOLGATE_MANAGED_POLICY=" + filepath.Join(w.dir, "no-managed-policy.toml"),
	}
	if w.server != "" {
		env = append(env, "TOOLGATE_SERVER="+w.server)
	}
	return env
}

// command returns bash running line in the walk's directory with the
// walk's variables, and saving both again afterwards.
func (w *walker) command(line string) *exec.Cmd {
	if w.server != "" {
		line = strings.ReplaceAll(line, "127.0.0.1:8765", strings.TrimPrefix(w.server, "http://"))
	}
	if strings.HasPrefix(line, "toolgate serve") {
		line = "toolgate serve --addr 127.0.0.1:0" + strings.TrimPrefix(line, "toolgate serve")
	}
	script := fmt.Sprintf(`set -a
. %[1]s/env
cd "$(cat %[1]s/cwd)"
%[2]s
rc=$?
export -p > %[1]s/env
pwd > %[1]s/cwd
exit $rc
`, w.dir, line)
	c := exec.Command("bash", "-c", script)
	c.Env = w.env()
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return c
}

func (w *walker) block(b walkBlock) {
	t := w.t
	words := strings.Fields(b.marker)
	kind := ""
	if len(words) > 0 {
		kind = words[0]
	}
	switch {
	case kind == "install":
		if !strings.Contains(strings.Join(b.body, "\n"), "go install ./cmd/toolgate") {
			t.Errorf("README.md:%d: the install block does not run go install ./cmd/toolgate", b.line)
		}
	case strings.HasPrefix(kind, "skip:"):
	case kind == "background":
		if len(words) < 2 || len(words) > 3 || len(words) == 3 && words[2] != "asks" {
			t.Fatalf("README.md:%d: use <!-- walk background NAME [asks] -->", b.line)
		}
		cmds, err := transcript(b)
		if err != nil || len(cmds) != 1 {
			t.Fatalf("README.md:%d: a background block holds one command (%v)", b.line, err)
		}
		before := 0
		if len(words) == 3 {
			before = w.pending(b.line)
		}
		w.background(words[1], cmds[0])
		if len(words) == 3 {
			for deadline := time.Now().Add(60 * time.Second); w.pending(b.line) <= before; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("README.md:%d: %s asked no question within 60 s; it printed:\n%s", b.line, words[1], w.bg[words[1]].out.String())
				}
			}
		}
	case kind == "output-of":
		if len(words) != 2 || w.bg[words[1]] == nil {
			t.Fatalf("README.md:%d: output-of names no background command started before it", b.line)
		}
		bg := w.bg[words[1]]
		select {
		case <-bg.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("README.md:%d: %s did not end within 60 s; it printed:\n%s", b.line, words[1], bg.out.String())
		}
		bg.checked = true
		w.compare(b.line, "the output of "+words[1], b.body, bg.out.String())
	case kind == "" || strings.HasPrefix(kind, "input="):
		input := ""
		if strings.HasPrefix(kind, "input=") {
			input = strings.TrimPrefix(b.marker, "input=") + "\n"
		}
		cmds, err := transcript(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			cmd := w.command(c.cmd)
			cmd.Stdin = strings.NewReader(input)
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatalf("README.md:%d: %s did not end within 60 s; it printed:\n%s", c.line, c.cmd, out.String())
			}
			if err != nil {
				t.Errorf("README.md:%d: %s: %v", c.line, c.cmd, err)
			}
			w.compare(c.line, c.cmd, c.want, out.String())
		}
	default:
		t.Fatalf("README.md:%d: unknown walk marker %q", b.line, b.marker)
	}
}

func (w *walker) background(name string, c walkCmd) {
	t := w.t
	if w.bg[name] != nil {
		t.Fatalf("README.md:%d: a second background command named %s", c.line, name)
	}
	cmd := w.command(c.cmd)
	bg := &walkBG{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = bg.out, bg.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.bg[name] = bg
	go func() { _ = cmd.Wait(); close(bg.done) }()
	if len(c.want) == 0 {
		return
	}
	bg.checked = true
	deadline := time.After(60 * time.Second)
	for len(strings.Split(strings.TrimRight(bg.out.String(), "\n"), "\n")) < len(c.want) || bg.out.String() == "" {
		select {
		case <-bg.done:
			t.Fatalf("README.md:%d: %s ended early; it printed:\n%s", c.line, c.cmd, bg.out.String())
		case <-deadline:
			t.Fatalf("README.md:%d: %s did not print %d lines within 60 s; it printed:\n%s", c.line, c.cmd, len(c.want), bg.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	got := bg.out.String()
	if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(got); m != nil && w.server == "" {
		w.server = m[1]
	}
	lines := strings.Split(got, "\n")
	w.compare(c.line, c.cmd, c.want, strings.Join(lines[:min(len(lines), len(c.want))], "\n"))
}

// pending counts the questions waiting for a person on the walk's
// server, asked with the approver token as toolgate approve would.
func (w *walker) pending(line int) int {
	if w.server == "" {
		w.t.Fatalf("README.md:%d: a command that asks before toolgate serve runs", line)
	}
	tok, err := server.ReadTokenFile(filepath.Join(w.home, ".local/state/toolgate", server.ApproverTokenFile))
	if err != nil {
		w.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, w.server+"/v1/approvals?state=pending", nil)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Approvals []json.RawMessage `json:"approvals"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		w.t.Fatalf("GET /v1/approvals: %d %v", resp.StatusCode, err)
	}
	return len(list.Approvals)
}

// stop ends what the walk left running.
func (w *walker) stop() {
	for _, bg := range w.bg {
		// The whole process group, toolgate under bash included, so that
		// nothing writes into the home directory as it is removed.
		pg := -bg.cmd.Process.Pid
		_ = syscall.Kill(pg, syscall.SIGTERM)
		start := time.Now()
		for syscall.Kill(pg, 0) == nil && time.Since(start) < 15*time.Second {
			if time.Since(start) > 10*time.Second {
				_ = syscall.Kill(pg, syscall.SIGKILL)
			}
			time.Sleep(10 * time.Millisecond)
		}
		<-bg.done
	}
}

// Run-to-run differences, replaced on both sides of a comparison.
var walkNorm = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<time>"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`), "<clock>"},
	{regexp.MustCompile(`\b(tc|rc)_[0-9a-f]{16}\b`), "${1}_<id>"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "<hash>"},
	{regexp.MustCompile(`code=[0-9a-f]+`), "code=<code>"},
}

func (w *walker) normalize(s string, actual bool) []string {
	if actual {
		s = strings.ReplaceAll(s, w.home, "/home/me")
		if w.server != "" {
			s = strings.ReplaceAll(s, strings.TrimPrefix(w.server, "http://"), "127.0.0.1:8765")
		}
	}
	for _, n := range walkNorm {
		s = n.re.ReplaceAllString(s, n.with)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), " \t"))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// compare fails the test with a line diff when got differs from the
// output the README shows at line.
func (w *walker) compare(line int, what string, want []string, got string) {
	exp := w.normalize(strings.Join(want, "\n"), false)
	act := w.normalize(got, true)
	if strings.Join(exp, "\n") == strings.Join(act, "\n") {
		return
	}
	w.t.Errorf("README.md:%d: %s prints other than the README shows (- README, + real):\n%s", line, what, lineDiff(exp, act))
}

// lineDiff is a plain longest-common-subsequence diff of two line lists.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+ " + b[j] + "\n")
			j++
		default:
			sb.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return sb.String()
}

// TestWalkBlocks checks how the walk reads the README: a block of a
// walked section without a marker, or a missing section, is an error, and
// a transcript's continuation lines belong to their command.
func TestWalkBlocks(t *testing.T) {
	tests := []struct {
		name, readme string
		err          string
		cmds         []string
		want         [][]string
	}{
		{name: "unmarked block", readme: "## Set-up\n\ntext\n\n```sh\ngo test ./...\n```\n", err: "README.md:5: a block of the walked sections without"},
		{name: "missing section", readme: "## Other\n", err: `no section "Set-up"`},
		{name: "other sections are not walked", readme: "## Set-up\n## Other\n```sh\nrm -rf /\n```\n", cmds: nil},
		{name: "transcript", readme: "## Set-up\n<!-- walk -->\n```console\n$ echo a \\\n    b\na b\n$ true\n```\n",
			cmds: []string{"echo a \\\n    b", "true"}, want: [][]string{{"a b"}, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := walkBlocks(tc.readme, []string{"Set-up"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cmds []string
			var want [][]string
			for _, b := range blocks {
				cs, err := transcript(b)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					cmds, want = append(cmds, c.cmd), append(want, c.want)
				}
			}
			if fmt.Sprint(cmds) != fmt.Sprint(tc.cmds) || fmt.Sprint(want) != fmt.Sprint(tc.want) {
				t.Fatalf("commands %q with outputs %q, want %q with %q", cmds, want, tc.cmds, tc.want)
			}
		})
	}
}
