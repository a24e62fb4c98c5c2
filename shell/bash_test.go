package shell

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bashLines are static lines whose argv Analyze must predict exactly as
// bash produces it. They only run the stub programs below, never builtins.
var bashLines = []string{
	`p a b c`,
	`p "a b" 'c d' e\ f`,
	`p r''m "x"y'z' "" '' x""`,
	`p a\ b "c\"d" 'e\f' "g\\h" "i\j" \$HOME '$HOME' "\$x" "a\` + "`" + `b"`,
	`p $'\x41\101\t' $'a\0b'c $'a b'c $'\cA' $'\e' $'\u263a' $'\U0001F600' $'\x' $'\q' $'\'' $'\"' $'\?' $'\c?'`,
	`p {a,b} x{1..3}y {a..c} {a,b{c,d}} '{x,y}' \{a,b} "{a,b}"`,
	`p {a,b}{1,2} a{b,c}d{e,f}g {,a} a{,}b {a\,b,c} {"a,b",c}`,
	`p x{a..e..2} {-2..2} {5..1} {e..a} {01..03} {1..10..3} {a}b {} {a..} {1..2..}`,
	`p ~ ~/x a=~/y a=~/x:~/y --o=~/z ~"x" ~\/y ~+ ~+/a b:~ a=b=~`,
	`p a[1]=~ a+=~ 1a=~ a\=~ "a"=~ x[ab]y`,
	`p {~,b} {~/a,b} a{b,c}~`,
	`p $KNOWN "$KNOWN" $SPACED "$SPACED" x$EMPTY $EMPTY "$EMPTY" ${KNOWN} "${SPACED}"x $HOME "$PWD"`,
	`p \* "*" '*' a?b [ab] x]`,
	`X=1 p a; q b && p c || q d; false || q e`,
	`p a # comment`,
	"p a\\\nb \"c\\\nd\"",
	`cd sub && p x; cd .. && q y`,
	`if true; then p yes; fi; if false; then :; else p no; fi; for i in 1 2; do q $'i'; done`,
	`{ p a; q b; }; (p c)`,
	`/bin/rm -x; /usr/bin/ls -y`,
	`p $'\x72'm "a"'b'$'c'd`,
}

func TestBashCrossCheck(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	tmp := t.TempDir()
	stubs := filepath.Join(tmp, "bin")
	work := filepath.Join(tmp, "work")
	for _, d := range []string{stubs, work, filepath.Join(work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logFile := filepath.Join(tmp, "log")
	// Each stub records its name and arguments, NUL-separated, and ends the
	// record with \x1e. It uses only bash builtins.
	stub := "#!" + bash + "\nprintf '%s\\0' \"${0##*/}\" \"$@\" >> \"$LOG\"\nprintf '\\036' >> \"$LOG\"\n"
	names := []string{"p", "q", "rm", "ls"}
	isStub := map[string]bool{}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(stubs, n), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
		isStub[n] = true
	}
	env := map[string]string{"KNOWN": "/k", "SPACED": " a  b\tc ", "EMPTY": ""}
	opts := &Options{Dir: work, Home: "/h", Env: env}
	for _, line := range bashLines {
		res, err := Analyze(line, opts)
		if err != nil {
			t.Errorf("Analyze(%q): %v", line, err)
			continue
		}
		var want [][]string
		for _, c := range res.Commands {
			name := c.Name
			if !isStub[name] {
				continue
			}
			if c.NameDynamic || len(c.Wrappers) > 0 || c.Via != "" {
				t.Errorf("Analyze(%q): command %+v is not direct and static", line, c)
			}
			for i, d := range c.ArgDynamic {
				if d {
					t.Errorf("Analyze(%q): arg %q is dynamic", line, c.Args[i])
				}
			}
			want = append(want, append([]string{name}, c.Args...))
		}
		if len(res.Problems) > 0 {
			t.Errorf("Analyze(%q): problems %v", line, res.Problems)
		}

		os.Remove(logFile)
		// Absolute paths of system programs run the stubs instead.
		line2 := strings.NewReplacer("/bin/rm", stubs+"/rm", "/usr/bin/ls", stubs+"/ls").Replace(line)
		cmd := exec.Command(bash, "-c", line2)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + stubs, "HOME=/h", "LOG=" + logFile, "PWD=" + work, "LC_ALL=C.UTF-8"}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("bash -c %q: %v\n%s", line, err, out)
			continue
		}
		data, _ := os.ReadFile(logFile)
		var got [][]string
		for _, rec := range bytes.Split(data, []byte{0x1e}) {
			if len(rec) == 0 {
				continue
			}
			fields := strings.Split(strings.TrimSuffix(string(rec), "\x00"), "\x00")
			got = append(got, fields)
		}
		// Every command bash ran must have been predicted. Commands that ran
		// more than once count once; with || or else some predicted commands
		// do not run at all.
		want = uniqArgv(want)
		got = uniqArgv(got)
		if strings.Contains(line, "||") || strings.Contains(line, "else") {
			for _, g := range got {
				if !slices.ContainsFunc(want, func(w []string) bool { return slices.Equal(w, g) }) {
					t.Errorf("line %q: bash ran %q, which Analyze did not predict in %q", line, g, want)
				}
			}
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("line %q: Analyze and bash disagree (-analyze +bash):\n%s", line, diff)
		}
	}
}

// uniqArgv sorts argument lists and removes duplicates.
func uniqArgv(l [][]string) [][]string {
	sort.SliceStable(l, func(i, j int) bool {
		return strings.Join(l[i], "\x00") < strings.Join(l[j], "\x00")
	})
	var out [][]string
	for i, a := range l {
		if i == 0 || !cmp.Equal(a, l[i-1]) {
			out = append(out, a)
		}
	}
	return out
}
