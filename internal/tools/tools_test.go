package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/gate"
)

// env is a workspace and an executor with its state outside it.
type env struct {
	ws, state string
	x         *Executor
	n         int
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	e := &env{ws: filepath.Join(base, "ws"), state: filepath.Join(base, "state")}
	must(t, os.MkdirAll(e.ws, 0o755))
	e.x, err = New(Options{StateDir: e.state, Shell: func(ctx context.Context, command, cwd string, env []string) (gate.Result, error) {
		return gate.Result{Stdout: []byte("ran " + command + " in " + cwd)}, nil
	}})
	must(t, err)
	return e
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) file(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(e.ws, rel)
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func (e *env) read(t *testing.T, rel string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ws, rel))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	must(t, err)
	return string(b), true
}

// run executes tool with input as call tc_N.
func (e *env) run(tool string, input map[string]any) (gate.Result, string, error) {
	e.n++
	id := "tc_" + string(rune('0'+e.n/10)) + string(rune('0'+e.n%10))
	res, err := e.x.Exec(context.Background(), &Call{ID: id, Tool: tool, Input: input, Cwd: e.ws}, "")
	return res, id, err
}

func TestTools(t *testing.T) {
	huge := strings.Repeat(strings.Repeat("x", 99)+"\n", 5000) // 500 KB
	tests := []struct {
		name    string
		files   map[string]string
		tool    string
		input   map[string]any
		wantOut string // substring of stdout
		wantErr string // substring of the error; "" for success
		after   map[string]string
		absent  []string
	}{
		{name: "read", files: map[string]string{"a.txt": "one\ntwo\nthree\n"}, tool: "Read", input: map[string]any{"file_path": "a.txt"}, wantOut: "one\ntwo\nthree\n"},
		{name: "read range", files: map[string]string{"a.txt": "one\ntwo\nthree\n"}, tool: "read", input: map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, wantOut: "two\n"},
		{name: "read missing", tool: "Read", input: map[string]any{"file_path": "nope.txt"}, wantErr: "nope.txt does not exist"},
		{name: "read binary", files: map[string]string{"b.bin": "PK\x03\x04\x00\x00rest"}, tool: "Read", input: map[string]any{"file_path": "b.bin"}, wantErr: "binary file"},
		{name: "read huge is bounded", files: map[string]string{"h.txt": huge}, tool: "Read", input: map[string]any{"file_path": "h.txt"}, wantOut: "[output cut at 262144 bytes"},
		{name: "read offset past an int", files: map[string]string{"a.txt": "one\ntwo\nthree\n"}, tool: "read", input: map[string]any{"path": "a.txt", "offset": json.Number("1e30"), "limit": 1e300}, wantErr: "a.txt has 3 lines, fewer than offset 9223372036854775807"},
		// Argument shapes: an integer however a decoder spells it is read as
		// the integer the schema checked; a field of another case, an edit
		// that is not an object or a word that is not a string refuses the
		// whole call, before anything is changed.
		{name: "read offset 0.3e1 is 3", files: map[string]string{"a.txt": "one\ntwo\n"}, tool: "read", input: map[string]any{"path": "a.txt", "offset": json.Number("0.3e1")}, wantErr: "a.txt has 2 lines, fewer than offset 3"},
		{name: "read offset -0", files: map[string]string{"a.txt": "one\n"}, tool: "Read", input: map[string]any{"file_path": "a.txt", "offset": json.Number("-0")}, wantErr: "input.offset: got -0, want at least 1"},
		{name: "read offset 1.5", files: map[string]string{"a.txt": "one\n"}, tool: "Read", input: map[string]any{"file_path": "a.txt", "offset": json.Number("1.5")}, wantErr: "input.offset: got number, want integer"},
		{name: "read field of another case", files: map[string]string{"a.txt": "one\n"}, tool: "Read", input: map[string]any{"file_path": "a.txt", "Offset": 2}, wantErr: `unknown field "Offset"`},
		{name: "search limit 5000.5", files: map[string]string{"a.go": "package a\n"}, tool: "Grep", input: map[string]any{"pattern": "package", "limit": json.Number("5000.5")}, wantErr: "input.limit: got number, want integer"},
		{name: "search limit 1e400", files: map[string]string{"a.go": "package a\n"}, tool: "Grep", input: map[string]any{"pattern": "package", "limit": json.Number("1e400")}, wantErr: "input.limit: got 1e400, want at most 5000"},
		{name: "search limit 5e3", files: map[string]string{"a.go": "package a\n"}, tool: "Grep", input: map[string]any{"pattern": "package", "limit": json.Number("5e3")}, wantOut: "a.go:1:package a\n"},
		{name: "edit edits with a null", files: map[string]string{"a.go": "a\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}, nil}},
			wantErr: "input.edits[1]: got null, want object", after: map[string]string{"a.go": "a\n"}},
		{name: "edit edits with a field of another case", files: map[string]string{"a.go": "a\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "edits": []any{map[string]any{"old_string": "a", "new_string": "b", "New_String": "c"}}},
			wantErr: `input.edits[0]: unknown field "New_String"`, after: map[string]string{"a.go": "a\n"}},
		{name: "edit edits not an array", files: map[string]string{"a.go": "a\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "edits": map[string]any{"old_string": "a", "new_string": "b"}},
			wantErr: "input.edits: got object, want array", after: map[string]string{"a.go": "a\n"}},
		{name: "edit path alias null", files: map[string]string{"a.go": "a\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "notebook_path": nil, "old_string": "a", "new_string": "b"},
			wantErr: "conflicts with", after: map[string]string{"a.go": "a\n"}},
		{name: "write content not a string", tool: "Write", input: map[string]any{"file_path": "w.txt", "content": []any{"x"}}, wantErr: "input.content: got array, want string", absent: []string{"w.txt"}},
		{name: "shell argv is not run", tool: "Bash", input: map[string]any{"command": []any{"ls"}}, wantErr: "input.command: got array, want string"},
		{name: "shell command and cmd", tool: "Bash", input: map[string]any{"command": "ls", "cmd": []any{"rm", "-rf", "."}}, wantErr: "conflicts with"},
		{name: "read bad offset type", files: map[string]string{"a.txt": "x\n"}, tool: "Read", input: map[string]any{"file_path": "a.txt", "offset": "2"}, wantErr: "input.offset"},
		{name: "read unknown field", files: map[string]string{"a.txt": "x\n"}, tool: "Read", input: map[string]any{"file_path": "a.txt", "lines": 2}, wantErr: `read: input: unknown field "lines" (known: limit, offset, path)`},
		{name: "read two paths", files: map[string]string{"a.txt": "x\n"}, tool: "Read", input: map[string]any{"file_path": "a.txt", "path": "b"}, wantErr: "conflicts with"},
		{name: "read outside", tool: "Read", input: map[string]any{"file_path": "/etc/hostname"}, wantErr: "outside the workspace"},
		{name: "read dotdot", tool: "Read", input: map[string]any{"file_path": "../state/x"}, wantErr: "outside the workspace"},
		{name: "write creates dirs", tool: "Write", input: map[string]any{"file_path": "d/e/f.txt", "content": "hi\n"}, after: map[string]string{"d/e/f.txt": "hi\n"}},
		{name: "write overwrites", files: map[string]string{"a.txt": "old"}, tool: "write_file", input: map[string]any{"path": "a.txt", "content": "new"}, after: map[string]string{"a.txt": "new"}},
		{name: "write missing content", tool: "Write", input: map[string]any{"file_path": "a.txt"}, wantErr: "input.content: is required", absent: []string{"a.txt"}},
		{name: "write outside", tool: "Write", input: map[string]any{"file_path": "../evil.txt", "content": "x"}, wantErr: "outside the workspace"},
		{name: "edit", files: map[string]string{"a.go": "x := 1\ny := 2\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "old_string": "y := 2", "new_string": "y := 3"}, after: map[string]string{"a.go": "x := 1\ny := 3\n"}},
		{name: "edit absent", files: map[string]string{"a.go": "x\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "old_string": "zz", "new_string": "y"}, wantErr: "not found", after: map[string]string{"a.go": "x\n"}},
		{name: "edit not unique", files: map[string]string{"a.go": "x\nx\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}, wantErr: "occurs 2 times", after: map[string]string{"a.go": "x\nx\n"}},
		{name: "edit replace_all", files: map[string]string{"a.go": "x\nx\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y", "replace_all": true}, after: map[string]string{"a.go": "y\ny\n"}},
		{name: "multiedit", files: map[string]string{"a.go": "a b c\n"}, tool: "MultiEdit", input: map[string]any{"file_path": "a.go", "edits": []any{map[string]any{"old_string": "a", "new_string": "A"}, map[string]any{"old_string": "c", "new_string": "C"}}}, after: map[string]string{"a.go": "A b C\n"}},
		{name: "multiedit all or nothing", files: map[string]string{"a.go": "a b c\n"}, tool: "MultiEdit", input: map[string]any{"file_path": "a.go", "edits": []any{map[string]any{"old_string": "a", "new_string": "A"}, map[string]any{"old_string": "zz", "new_string": "C"}}}, wantErr: "input.edits[1].old_string: not found", after: map[string]string{"a.go": "a b c\n"}},
		{name: "edit with both forms", files: map[string]string{"a.go": "a\n"}, tool: "Edit", input: map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b", "edits": []any{map[string]any{"old_string": "a", "new_string": "A"}}}, wantErr: "input.edits: conflicts with", after: map[string]string{"a.go": "a\n"}},
		{name: "edit missing file", tool: "Edit", input: map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}, wantErr: "does not exist", absent: []string{"a.go"}},
		{name: "list", files: map[string]string{"a.txt": "", "d/b.txt": ""}, tool: "LS", input: map[string]any{"path": "."}, wantOut: "a.txt\nd/\n"},
		{name: "list glob", files: map[string]string{"a.go": "", "d/b.go": "", "d/c.txt": ""}, tool: "Glob", input: map[string]any{"pattern": "**/*.go"}, wantOut: "a.go\nd/b.go\n"},
		{name: "list not a dir", files: map[string]string{"a.txt": ""}, tool: "LS", input: map[string]any{"path": "a.txt"}, wantErr: "not a directory"},
		{name: "list outside", tool: "LS", input: map[string]any{"path": "/"}, wantErr: "outside the workspace"},
		{name: "search", files: map[string]string{"a.go": "package a\nfunc Foo() {}\n", "b.go": "package b\n"}, tool: "Grep", input: map[string]any{"pattern": "func \\w+"}, wantOut: "a.go:2:func Foo() {}\n"},
		{name: "search bad regex", tool: "Grep", input: map[string]any{"pattern": "("}, wantErr: "input.pattern"},
		{name: "search missing pattern", tool: "Grep", input: map[string]any{"path": "."}, wantErr: "input.pattern: is required"},
		{name: "search outside", tool: "Grep", input: map[string]any{"pattern": "x", "path": "/etc"}, wantErr: "outside the workspace"},
		{name: "shell", tool: "Bash", input: map[string]any{"command": "ls"}, wantOut: "ran ls in "},
		{name: "shell workdir outside", tool: "Bash", input: map[string]any{"command": "ls", "workdir": "/tmp"}, wantErr: "outside the workspace"},
		{name: "shell no command", tool: "Bash", input: map[string]any{"description": "x"}, wantErr: "input.command: is required"},
		{name: "fetch needs the gate", tool: "WebFetch", input: map[string]any{"url": "https://example.com"}, wantErr: "only through the gate"},
		{name: "unknown tool", tool: "Frobnicate", input: map[string]any{}, wantErr: "unknown tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for p, c := range tt.files {
				e.file(t, p, c)
			}
			res, _, err := e.run(tt.tool, tt.input)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("error: %v", err)
			}
			if tt.wantOut != "" && !strings.Contains(string(res.Stdout), tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", res.Stdout, tt.wantOut)
			}
			if len(res.Stdout) > MaxOutput+200 {
				t.Errorf("stdout is %d bytes, more than the bound", len(res.Stdout))
			}
			for p, want := range tt.after {
				if got, ok := e.read(t, p); !ok || got != want {
					t.Errorf("%s = %q (exists %v), want %q", p, got, ok, want)
				}
			}
			for _, p := range tt.absent {
				if _, ok := e.read(t, p); ok {
					t.Errorf("%s exists", p)
				}
			}
			if err == nil {
				// the full output is stored under the artifact id
				got, gerr := e.x.Artifacts().Get(res.Artifact)
				must(t, gerr)
				if !bytes.Equal(got, res.Stdout) {
					t.Errorf("artifact holds %q, want the stdout", got)
				}
			}
		})
	}
}

func TestReadThroughSymlinkOutside(t *testing.T) {
	e := newEnv(t)
	secret := filepath.Join(filepath.Dir(e.ws), "secret.txt")
	must(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	must(t, os.Symlink(secret, filepath.Join(e.ws, "link.txt")))
	_, _, err := e.run("Read", map[string]any{"file_path": "link.txt"})
	if err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Fatalf("read through a symlink out of the workspace: %v", err)
	}
	// a write through a symlinked directory is refused too
	must(t, os.Symlink(filepath.Dir(e.ws), filepath.Join(e.ws, "up")))
	_, _, err = e.run("Write", map[string]any{"file_path": "up/planted.txt", "content": "x"})
	if err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Fatalf("write through a symlinked dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.ws), "planted.txt")); err == nil {
		t.Fatal("the file was planted outside the workspace")
	}
}

// TestPathsResolvedAsTheEngineDoes writes through paths that a lexical
// reading places elsewhere than the kernel does: "l/../x" after a link l
// to a directory outside (the kernel leaves the link's target, so x is
// outside, where the gate judged it) and "~/x" (the home directory, not a
// directory named "~"). The executor must act on the path the gate judged,
// or refuse it; never on a workspace file the gate did not judge.
func TestPathsResolvedAsTheEngineDoes(t *testing.T) {
	tests := []struct {
		name    string
		home    string // relative to the temporary base
		path    string
		wantErr string
		written string // relative to the base: the file written, "" none
		absent  []string
	}{
		{name: "dot-dot after a link out", home: "home", path: "l/../.toolgate/policy.yaml", wantErr: "outside the workspace",
			absent: []string{"ws/.toolgate/policy.yaml", "scratch/.toolgate/policy.yaml"}},
		{name: "home outside", home: "home", path: "~/planted.txt", wantErr: "outside the workspace",
			absent: []string{"ws/~/planted.txt", "home/planted.txt"}},
		{name: "home inside", home: "ws/h", path: "~/notes.txt", written: "ws/h/notes.txt", absent: []string{"ws/~/notes.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			must(t, err)
			ws := filepath.Join(base, "ws")
			for _, d := range []string{ws, filepath.Join(base, "scratch", "sub"), filepath.Join(base, tt.home)} {
				must(t, os.MkdirAll(d, 0o755))
			}
			must(t, os.Symlink(filepath.Join(base, "scratch", "sub"), filepath.Join(ws, "l")))
			x, err := New(Options{StateDir: filepath.Join(base, "state"), Workspace: ws, Home: filepath.Join(base, tt.home)})
			must(t, err)
			_, err = x.Exec(context.Background(), &Call{ID: "tc_1", Tool: "Write", Input: map[string]any{"file_path": tt.path, "content": "x"}, Cwd: ws}, "")
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("write %s: error %v, want %q", tt.path, err, tt.wantErr)
			}
			if tt.written != "" {
				if b, err := os.ReadFile(filepath.Join(base, tt.written)); err != nil || string(b) != "x" {
					t.Errorf("%s = %q, %v; want the content written", tt.written, b, err)
				}
			}
			for _, a := range tt.absent {
				if _, err := os.Lstat(filepath.Join(base, a)); err == nil {
					t.Errorf("%s was written", a)
				}
			}
		})
	}
}

func TestSearchGitignore(t *testing.T) {
	e := newEnv(t)
	e.file(t, ".gitignore", "# build output\n/build/\n*.log\n!keep.log\nnode_modules\n")
	e.file(t, "src/a.go", "needle\n")
	e.file(t, "src/.gitignore", "gen_*.go\n")
	e.file(t, "src/gen_x.go", "needle\n")
	e.file(t, "build/out.txt", "needle\n")
	e.file(t, "sub/build/keep.txt", "needle\n") // /build/ is anchored to the root
	e.file(t, "x.log", "needle\n")
	e.file(t, "keep.log", "needle\n")
	e.file(t, "node_modules/m/i.js", "needle\n")
	e.file(t, ".git/config", "needle\n")
	e.file(t, "bin.dat", "needle\x00\n")
	e.file(t, "other/gen_y.go", "needle\n") // src/.gitignore does not reach here
	res, _, err := e.run("Grep", map[string]any{"pattern": "needle"})
	must(t, err)
	want := "keep.log:1:needle\nother/gen_y.go:1:needle\nsrc/a.go:1:needle\nsub/build/keep.txt:1:needle\n"
	if string(res.Stdout) != want {
		t.Errorf("search output:\n%s\nwant:\n%s", res.Stdout, want)
	}
	res, _, err = e.run("Grep", map[string]any{"pattern": "needle", "glob": "*.go", "limit": 1})
	must(t, err)
	if !strings.HasPrefix(string(res.Stdout), "other/gen_y.go:1:needle\n[search cut after 1 matches") {
		t.Errorf("bounded search: %q", res.Stdout)
	}
}

func TestGitignoreRules(t *testing.T) {
	rules := parseGitignore([]byte("*.o\n/top\ndocs/**/*.md\n!docs/keep.md\ndir/\n\\#hash\ntrail   \n"), "")
	ig := &ignorer{rules: rules}
	for _, tc := range []struct {
		rel  string
		dir  bool
		want bool
	}{
		{"a.o", false, true}, {"x/y/a.o", false, true}, {"a.c", false, false},
		{"top", false, true}, {"x/top", false, false},
		{"docs/a/b.md", false, true}, {"docs/b.md", false, true}, {"docs/keep.md", false, false},
		{"dir", true, true}, {"dir", false, false}, {"x/dir", true, true},
		{"#hash", false, true}, {"trail", false, true},
	} {
		if got := ig.ignored(tc.rel, tc.dir); got != tc.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tc.rel, tc.dir, got, tc.want)
		}
	}
}

// TestWorkspaceIsNotTheCwd: the workspace comes from the executor (or the
// project root above the cwd), not from each call's cwd.
func TestWorkspaceIsNotTheCwd(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	proj := filepath.Join(base, "proj")
	must(t, os.MkdirAll(filepath.Join(proj, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(proj, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "top.txt"), []byte("top\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "outside.txt"), []byte("out\n"), 0o644))
	for _, tc := range []struct {
		name, ws, cwd, path, wantErr string
	}{
		{"project root found above the cwd", "", filepath.Join(proj, "sub"), "../top.txt", ""},
		{"nothing above the project", "", filepath.Join(proj, "sub"), "../../outside.txt", "outside the workspace"},
		{"fixed workspace", proj, proj, "top.txt", ""},
		{"a cwd outside the fixed workspace does not move it", proj, base, "outside.txt", "outside the workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := New(Options{StateDir: filepath.Join(base, "state"), Workspace: tc.ws})
			must(t, err)
			_, err = x.Exec(context.Background(), &Call{ID: "tc_1", Tool: "Read", Input: map[string]any{"file_path": tc.path}, Cwd: tc.cwd}, "")
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestNum checks how an integer argument is read, as decoders spell it.
func TestNum(t *testing.T) {
	tests := []struct {
		v    any
		want int
	}{
		{json.Number("2"), 2},
		{json.Number("2.0"), 2},
		{json.Number("2e0"), 2},
		{json.Number("-3"), -3},
		{json.Number("12345678901234567890"), math.MaxInt},
		{json.Number("1e30"), math.MaxInt},
		{json.Number("-1e400"), math.MinInt},
		{json.Number("x"), 7},
		{2.0, 2},
		{1e300, math.MaxInt},
		{math.NaN(), 7},
		{4, 4},
		{"4", 7},
		{nil, 7},
	}
	for _, tc := range tests {
		c := &call{args: map[string]any{"n": tc.v}}
		if got := c.num("n", 7); got != tc.want {
			t.Errorf("num(%#v) = %d, want %d", tc.v, got, tc.want)
		}
	}
}
