package policy

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the after.toml, change and error sections of testdata/edit/*.txtar from the results")

// The golden cases live in testdata/edit/*.txtar. The comment holds
// "key: value" lines:
//
//	rule:     the rule to add (required; may be a Go-quoted string)
//	decision: allow (default), ask or deny
//	layer:    project (default), local, user or managed
//
// and the files are:
//
//	before.toml  the policy file before; absent means there is none
//	after.toml   the file after a successful AddRule
//	change       Change.String() of the result, $DIR for the directory
//	error        the error, $DIR for the directory; the file must then be
//	             left byte for byte as it was
func TestAddRuleGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/edit/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, name := range files {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(name)
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]string{"decision": "allow", "layer": "project"}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok {
					v = strings.TrimSpace(v)
					if u, err := strconv.Unquote(v); err == nil {
						v = u
					}
					args[strings.TrimSpace(k)] = v
				}
			}
			if _, ok := args["rule"]; !ok {
				t.Fatal("the comment must give a rule:")
			}
			var d Decision
			if err := d.UnmarshalText([]byte(args["decision"])); err != nil {
				t.Fatal(err)
			}
			layer := map[string]Layer{"project": LayerProject, "local": LayerLocal, "user": LayerUser, "managed": LayerManaged}[args["layer"]]
			sections := map[string][]byte{}
			for _, f := range ar.Files {
				sections[f.Name] = f.Data
			}
			dir := t.TempDir()
			path := filepath.Join(dir, ".toolgate", "policy.toml")
			before, hadBefore := sections["before.toml"]
			if hadBefore {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, before, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ch, err := AddRule(path, layer, d, args["rule"])
			got := map[string][]byte{}
			if err != nil {
				got["error"] = []byte(strings.ReplaceAll(err.Error(), dir, "$DIR") + "\n")
				after, rerr := os.ReadFile(path)
				switch {
				case hadBefore && !bytes.Equal(after, before):
					t.Errorf("the file changed on error:\n%s", after)
				case !hadBefore && !errors.Is(rerr, fs.ErrNotExist):
					t.Errorf("a file was created on error")
				}
			} else {
				got["change"] = []byte(strings.ReplaceAll(ch.String(), dir, "$DIR") + "\n")
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				got["after.toml"] = after
				checkAdded(t, path, before, after, layer, d, ch)
				// Adding the same rule again changes nothing.
				again, err := AddRule(path, layer, d, args["rule"])
				if err != nil || !again.Existed || again.Line != ch.Line {
					t.Errorf("adding the rule again: %v, %+v; want Existed at line %d", err, again, ch.Line)
				}
				if after2, _ := os.ReadFile(path); !bytes.Equal(after2, after) {
					t.Errorf("adding the rule again changed the file:\n%s", after2)
				}
			}
			if *update {
				out := &txtar.Archive{Comment: ar.Comment}
				if hadBefore {
					out.Files = append(out.Files, txtar.File{Name: "before.toml", Data: before})
				}
				for _, k := range []string{"error", "change", "after.toml"} {
					if v, ok := got[k]; ok {
						out.Files = append(out.Files, txtar.File{Name: k, Data: v})
					}
				}
				if err := os.WriteFile(name, txtar.Format(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, k := range []string{"error", "change", "after.toml"} {
				if diff := cmp.Diff(string(sections[k]), string(got[k])); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

// checkAdded checks a successful AddRule: the file parses, holds every
// rule it held before and the new one at the line reported.
func checkAdded(t *testing.T, path string, before, after []byte, layer Layer, d Decision, ch *Change) {
	t.Helper()
	nf, err := ParseFile(path, after, layer)
	if err != nil {
		t.Fatalf("the written file does not parse: %v\n%s", err, after)
	}
	var want []string
	if before != nil {
		of, err := ParseFile(path, before, layer)
		if err != nil {
			t.Fatalf("AddRule succeeded on a file that does not parse: %v", err)
		}
		for _, r := range of.Rules {
			want = append(want, r.Effect.String()+" "+r.Text)
		}
	}
	found := false
	var have []string
	for _, r := range nf.Rules {
		have = append(have, r.Effect.String()+" "+r.Text)
		if r.Effect == d && r.Text == ch.Rule {
			found = true
			// The loader records no positions inside inline tables.
			if r.Pos.Line != 0 && r.Pos.Line != ch.Line {
				t.Errorf("Change.Line = %d, the rule is on line %d", ch.Line, r.Pos.Line)
			}
		}
	}
	if ch.Line < 1 {
		t.Errorf("Change.Line = %d", ch.Line)
	}
	if !found {
		t.Errorf("the written file does not hold %s rule %q:\n%s", d, ch.Rule, after)
	}
	if !ch.Existed {
		want = append(want, d.String()+" "+ch.Rule)
	}
	count := map[string]int{}
	for _, s := range want {
		count[s]++
	}
	for _, s := range have {
		count[s]--
	}
	for s, n := range count {
		if n != 0 {
			t.Errorf("rule %q: %d too few in the written file", s, n)
		}
	}
}

func TestAddRuleText(t *testing.T) {
	tests := []struct {
		name, before, rule string
		d                  Decision
		want               string
	}{
		{"no final newline", "[permissions]\nallow = [\"Read\"]", "Bash(ls)", Deny,
			"[permissions]\nallow = [\"Read\"]\ndeny = [\"Bash(ls)\"]\n"},
		{"no final newline, no table", "mode = \"plan\"", "Bash(ls)", Allow,
			"mode = \"plan\"\n\n[permissions]\nallow = [\"Bash(ls)\"]\n"},
		{"header at the end", "mode = \"plan\"\n[permissions]", "Bash(ls)", Allow,
			"mode = \"plan\"\n[permissions]\nallow = [\"Bash(ls)\"]\n"},
		{"crlf multi-line", "[permissions]\r\nallow = [\r\n  \"Read\", # r\r\n]\r\n", "Bash(ls)", Allow,
			"[permissions]\r\nallow = [\r\n  \"Read\", # r\r\n  \"Bash(ls)\",\r\n]\r\n"},
		{"crlf new table", "mode = \"plan\"\r\n", "Bash(ls)", Allow,
			"mode = \"plan\"\r\n\r\n[permissions]\r\nallow = [\"Bash(ls)\"]\r\n"},
		{"crlf new key", "[permissions]\r\nallow = [\"Read\"]\r\n", "Bash(ls)", Ask,
			"[permissions]\r\nallow = [\"Read\"]\r\nask = [\"Bash(ls)\"]\r\n"},
		{"control character", "", "Read(a\u007fb)", Allow,
			"[permissions]\nallow = [\"Read(a\\u007Fb)\"]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, _, err := insertRule("f.toml", []byte(tc.before), LayerProject, tc.d, tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(out)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddRuleRefusals(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.toml")
	for _, layer := range []Layer{LayerManaged, LayerCLI, LayerSession} {
		if _, err := AddRule(path, layer, Allow, "Bash(ls)"); err == nil || !strings.Contains(err.Error(), layer.String()) {
			t.Errorf("layer %s: got %v, want a refusal naming the layer", layer, err)
		}
	}
	if _, err := AddRule(path, LayerUser, Decision(7), "Bash(ls)"); err == nil {
		t.Error("an invalid decision must be refused")
	}
	if _, err := AddRule(path, LayerUser, Allow, "Bash(ls"); err == nil || !strings.Contains(err.Error(), `"Bash(ls"`) || !strings.Contains(err.Error(), "expected ')'") {
		t.Errorf("bad rule: got %v, want an error naming the rule and the problem", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused rule must not create the file")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.toml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRule(filepath.Join(dir, "sub.toml"), LayerUser, Allow, "Bash(ls)"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: got %v", err)
	}
}

func TestAddRuleModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix modes")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		layer             Layer
		rel               string
		dirMode, fileMode fs.FileMode
	}{
		{LayerUser, "cfg/toolgate/policy.toml", 0o700, 0o600},
		{LayerProject, "p/.toolgate/policy.toml", 0o755, 0o644},
		{LayerLocal, "q/.toolgate/policy.local.toml", 0o755, 0o600},
	} {
		path := filepath.Join(dir, tc.rel)
		ch, err := AddRule(path, tc.layer, Allow, "Bash(ls)")
		if err != nil {
			t.Fatal(err)
		}
		if !ch.Created || ch.Line != 2 || ch.File != path {
			t.Errorf("%s: change %+v", tc.layer, ch)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		di, err := os.Stat(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		// The umask may remove bits from the directory, never add them.
		if fi.Mode().Perm() != tc.fileMode || di.Mode().Perm()&^tc.dirMode != 0 {
			t.Errorf("%s: file %v dir %v, want %v %v", tc.layer, fi.Mode(), di.Mode(), tc.fileMode, tc.dirMode)
		}
	}
	// An existing file keeps its mode.
	path := filepath.Join(dir, "keep.toml")
	if err := os.WriteFile(path, []byte("[permissions]\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRule(path, LayerUser, Deny, "Read(.env)"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestAddRuleSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	dir := t.TempDir()
	mk := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, rel string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const orig = "# mine\n[permissions]\nallow = [\"Read\"]\n"

	// A user file that links into a dotfiles directory is edited there,
	// and stays a link.
	dot := mk("dotfiles/toolgate.toml", orig)
	user := link(dot, "cfg/toolgate/policy.toml")
	ch, err := AddRule(user, LayerUser, Allow, "Bash(ls)")
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(dot); ch.File != real {
		t.Errorf("Change.File = %s, want %s", ch.File, real)
	}
	if fi, err := os.Lstat(user); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if b, _ := os.ReadFile(dot); !strings.Contains(string(b), "Bash(ls)") {
		t.Errorf("the target was not edited:\n%s", b)
	}

	// A project file must not lead out of its directory.
	victim := mk("home/policy.toml", orig)
	proj := link(victim, "p1/.toolgate/policy.toml")
	if _, err := AddRule(proj, LayerProject, Allow, "Bash(ls)"); err == nil || !strings.Contains(err.Error(), "outside its directory") {
		t.Errorf("project link out of its directory: %v", err)
	}
	// Nor may its directory be a link.
	link(filepath.Join(dir, "home"), "p2/.toolgate")
	if _, err := AddRule(filepath.Join(dir, "p2/.toolgate/policy.toml"), LayerProject, Allow, "Bash(ls)"); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("project directory link: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != orig {
		t.Errorf("the link target was written:\n%s", b)
	}
	// A link within the directory is followed.
	mk("p3/.toolgate/real.toml", orig)
	inDir := link("real.toml", "p3/.toolgate/policy.local.toml")
	if _, err := AddRule(inDir, LayerLocal, Allow, "Bash(ls)"); err != nil {
		t.Errorf("link within the directory: %v", err)
	}
	// A dangling link is refused.
	dangling := link(filepath.Join(dir, "nowhere.toml"), "cfg2/policy.toml")
	if _, err := AddRule(dangling, LayerUser, Allow, "Bash(ls)"); err == nil {
		t.Error("a dangling link must be refused")
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere.toml")); err == nil {
		t.Error("a dangling link's target was created")
	}
}

// rulesFor returns the n distinct rules writer w adds in the concurrency
// tests.
func rulesFor(w, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("Bash(tool%d-%d:*)", w, i))
	}
	return out
}

func checkAllRules(t *testing.T, path string, writers, n int) {
	t.Helper()
	f, err := LoadFile(path, LayerProject)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range f.Rules {
		if have[r.Text] {
			t.Errorf("rule %q written twice", r.Text)
		}
		have[r.Text] = true
	}
	for w := range writers {
		for _, r := range rulesFor(w, n) {
			if !have[r] {
				t.Errorf("rule %q lost", r)
			}
		}
	}
	if !have["Read"] {
		t.Error("the rule that was there before was lost")
	}
	if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, []byte("# keep me\n")) {
		t.Errorf("the comment was lost:\n%s", b)
	}
}

func TestAddRuleConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte("# keep me\n[permissions]\nallow = [\"Read\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const writers, n = 16, 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for _, r := range rulesFor(w, n) {
				if _, err := AddRule(path, LayerProject, Allow, r); err != nil {
					t.Error(err)
				}
				// Every writer also adds one shared rule: it lands once.
				if _, err := AddRule(path, LayerProject, Allow, "Bash(shared)"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	checkAllRules(t, path, writers, n)
}

const childEnv = "TOOLGATE_ADDRULE_CHILD"

// TestAddRuleChild is the body of the processes TestAddRuleProcesses
// starts; it does nothing in a normal run.
func TestAddRuleChild(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("run by TestAddRuleProcesses")
	}
	parts := strings.SplitN(spec, ",", 3)
	w, _ := strconv.Atoi(parts[0])
	n, _ := strconv.Atoi(parts[1])
	for _, r := range rulesFor(w, n) {
		if _, err := AddRule(parts[2], LayerProject, Allow, r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAddRuleProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte("# keep me\n[permissions]\nallow = [\"Read\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const procs, n = 2, 40
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for w := range procs {
		cmd := exec.Command(exe, "-test.run=^TestAddRuleChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d,%s", childEnv, w, n, path))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	// This process writes too.
	for _, r := range rulesFor(procs, n) {
		if _, err := AddRule(path, LayerProject, Allow, r); err != nil {
			t.Error(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process %d: %v\n%s", i, err, outs[i])
		}
	}
	checkAllRules(t, path, procs+1, n)
}

func FuzzAddRule(f *testing.F) {
	seeds := []string{
		"",
		"# c\n",
		"mode = \"plan\"\n[permissions]\nallow = [\"Bash(ls)\"]\n",
		"[permissions]\nallow = [\n  \"Read\", # r\n  # \"Write\",\n]\ndeny = []\n",
		"[permissions]\nask = [\"Read\" ,\n'Bash(git push:*)'\n, ]\n[[test]]\ntool = \"Bash\"\ninput = {command = \"ls\"}\nexpect = \"allow\"\n",
		"permissions.deny = [\"Read(.env)\"]\nmode = \"default\"\n",
		"permissions = { allow = [ ], ask = [\"Bash\"] }\n",
		"permissions = {}\n",
		"[permissions]\r\nallow = [\"Read\"]\r\n",
		"[permissions]\n\tallow = [\n\t\t\"Read\"\n\t]",
		"network = true\n[permissions]\n[managed]\n",
		"[permissions]\nallow = [\"\"\"Read\"\"\"]\n",
		"[permissions]\nallow = [\"Read\"]\nallow = [\"Write\"]\n",
	}
	rules := []string{"Bash(ls)", "Read", " Write(src/**) ", "Bash(echo \"hi\")", "Bash(", "WebFetch(domain:a.com)", "Read(a'b\\c)"}
	for i, s := range seeds {
		f.Add(s, rules[i%len(rules)], uint8(i%3))
	}
	f.Fuzz(func(t *testing.T, src, rule string, dec uint8) {
		d := Decision(dec % 3)
		path := filepath.Join(t.TempDir(), "policy.toml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		ch, err := AddRule(path, LayerProject, d, rule)
		after, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if !bytes.Equal(after, []byte(src)) {
				t.Fatalf("AddRule failed (%v) but changed the file:\n%q\n->\n%q", err, src, after)
			}
			if _, perr := ParseFile(path, []byte(src), LayerProject); perr == nil {
				if _, rerr := ParseRule(rule, d, Position{}); rerr == nil && utf8Valid(rule) {
					t.Fatalf("refused a valid rule on a valid file: %v\n%q", err, src)
				}
			}
			return
		}
		if ch.Existed && !bytes.Equal(after, []byte(src)) {
			t.Fatal("an existing rule changed the file")
		}
		checkAdded(t, path, []byte(src), after, LayerProject, d, ch)
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// TestAddRuleLayouts adds a rule to every list of files written in each
// of the layouts a person might use, and checks each result as the fuzz
// target does.
func TestAddRuleLayouts(t *testing.T) {
	arrays := map[string]func(elems []string) string{
		"single": func(e []string) string { return "[" + strings.Join(e, ", ") + "]" },
		"single-comma": func(e []string) string {
			if len(e) == 0 {
				return "[ ]"
			}
			return "[ " + strings.Join(e, ", ") + ", ]"
		},
		"multi": func(e []string) string {
			s := "[\n"
			for _, x := range e {
				s += "    " + x + ",\n"
			}
			return s + "]"
		},
		"multi-no-comma": func(e []string) string {
			s := "[ # rules\n"
			for i, x := range e {
				s += "  " + x
				if i < len(e)-1 {
					s += ","
				}
				s += " # note\n"
			}
			return s + "  ]"
		},
		"multi-comments": func(e []string) string {
			s := "[\n  # first\n"
			for _, x := range e {
				s += "\t" + x + " ,\n  # between\n\n"
			}
			return s + "]"
		},
		"open-line": func(e []string) string {
			if len(e) == 0 {
				return "[\n]"
			}
			return "[" + strings.Join(e, ",\n  ") + "\n]"
		},
	}
	lists := map[string][]string{
		"none":  nil,
		"empty": {},
		"one":   {`"Read"`},
		"two":   {`'Bash(git status)'`, `"""Grep"""`},
	}
	containers := []string{"table", "table-indented", "dotted", "inline", "absent"}
	n := 0
	for cname, arr := range arrays {
		for lname, elems := range lists {
			for _, cont := range containers {
				for _, key := range []string{"allow", "Allow", "deny"} {
					for _, crlf := range []bool{false, true} {
						for _, finalNL := range []bool{true, false} {
							src := "# policy\nmode = \"default\"\n"
							var kv string
							if elems != nil {
								kv = key + " = " + arr(elems)
							}
							other := "ask = [\"Write\"]"
							switch cont {
							case "table":
								src += "\n[permissions]\n" + other + "\n"
								if kv != "" {
									src += kv + " # trailing\n"
								}
							case "table-indented":
								src += "[permissions]\n"
								if kv != "" {
									src += "  " + strings.ReplaceAll(kv, "\n", "\n  ") + "\n"
								}
							case "dotted":
								src += "permissions." + other + "\n"
								if kv != "" {
									src += "permissions." + kv + "\n"
								}
							case "inline":
								src += "permissions = { " + other
								if kv != "" {
									src += ", " + kv
								}
								src += " }\n"
							case "absent":
							}
							src += "\n[[test]]\ntool = \"Bash\"\ninput = { command = \"ls\" }\nexpect = \"ask\"\n"
							if cont == "table" && kv != "" && key == "deny" {
								// The permissions table last, no test after it.
								src = "[permissions]\n" + kv
							}
							if crlf {
								src = strings.ReplaceAll(src, "\n", "\r\n")
							}
							if !finalNL {
								src = strings.TrimRight(src, "\r\n")
							}
							if _, err := ParseFile("f.toml", []byte(src), LayerProject); err != nil {
								continue
							}
							for _, d := range []Decision{Allow, Ask, Deny} {
								n++
								out, line, existed, err := insertRule("f.toml", []byte(src), LayerProject, d, "Bash(new)")
								if err != nil {
									t.Errorf("%s/%s/%s/%s crlf=%v: %v\n%s", cname, lname, cont, key, crlf, err, src)
									continue
								}
								if existed {
									t.Errorf("Bash(new) reported as existing")
								}
								checkAdded(t, "f.toml", []byte(src), out, LayerProject, d, &Change{Decision: d, Rule: "Bash(new)", Line: line})
								if crlf && bytes.Count(out, []byte("\n")) != bytes.Count(out, []byte("\r\n")) {
									t.Errorf("mixed line endings:\n%q", out)
								}
								if !crlf && bytes.Contains(out, []byte("\r")) {
									t.Errorf("CR added:\n%q", out)
								}
							}
						}
					}
				}
			}
		}
	}
	if n < 500 {
		t.Errorf("only %d layouts parsed", n)
	}
}
