package shell

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cb builds an expected Command.
type cb struct{ c Command }

// c starts a command that runs in /w, the default test directory.
func c(name string, args ...string) *cb {
	b := &cb{Command{Name: name, Dir: "/w"}}
	if len(args) > 0 {
		b.c.Args = args
		b.c.ArgDynamic = make([]bool, len(args))
	}
	return b
}

// dyn marks the arguments at the given indexes dynamic.
func (b *cb) dyn(idx ...int) *cb {
	for _, i := range idx {
		b.c.ArgDynamic[i] = true
	}
	return b
}

func (b *cb) ndyn() *cb            { b.c.NameDynamic = true; return b }
func (b *cb) wr(w ...string) *cb   { b.c.Wrappers = w; return b }
func (b *cb) via(v string) *cb     { b.c.Via = v; return b }
func (b *cb) dir(d string) *cb     { b.c.Dir = d; return b }
func (b *cb) rd(r ...Redirect) *cb { b.c.Redirects = append(b.c.Redirects, r...); return b }
func (b *cb) as(name, val string, dyn bool) *cb {
	b.c.Assigns = append(b.c.Assigns, Assign{Name: name, Value: val, Dynamic: dyn})
	return b
}

type testCase struct {
	name     string
	src      string
	opts     *Options // nil means testOpts
	want     []*cb
	problems []string // substrings, one per expected problem
}

var testOpts = &Options{Dir: "/w", Home: "/h", Env: map[string]string{"KNOWN": "/k", "SPACED": "a  b", "EMPTY": ""}}

var cmpCommands = []cmp.Option{
	cmpopts.EquateEmpty(),
	cmpopts.IgnoreFields(Command{}, "Source", "Line", "Col", "Stdin"),
}

func runCases(t *testing.T, cases []testCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts == nil {
				opts = testOpts
			}
			res, err := Analyze(tc.src, opts)
			if err != nil {
				t.Fatalf("Analyze(%q): %v", tc.src, err)
			}
			want := make([]Command, len(tc.want))
			for i, b := range tc.want {
				want[i] = b.c
			}
			if diff := cmp.Diff(want, res.Commands, cmpCommands...); diff != "" {
				t.Errorf("Analyze(%q) commands mismatch (-want +got):\n%s", tc.src, diff)
			}
			checkProblems(t, tc.src, res.Problems, tc.problems)
			checkRepresented(t, tc.src, res)
		})
	}
}

func checkProblems(t *testing.T, src string, got []Problem, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("Analyze(%q): got %d problems %v, want %d %q", src, len(got), got, len(want), want)
		return
	}
	for i, p := range got {
		if !strings.Contains(p.Msg, want[i]) {
			t.Errorf("Analyze(%q): problem %d is %q, want it to contain %q", src, i, p.Msg, want[i])
		}
	}
}

var separatorsCases = []testCase{
	{name: "semicolon", src: "a; b", want: []*cb{c("a"), c("b")}},
	{name: "and or", src: "a && b || c", want: []*cb{c("a"), c("b"), c("c")}},
	{name: "pipes", src: "a | b |& c", want: []*cb{c("a"), c("b"), c("c")}},
	{name: "newlines and comments", src: "# start\na # one\n\nb\n# end", want: []*cb{c("a"), c("b")}},
	{name: "background", src: "a & b", want: []*cb{c("a"), c("b")}},
	{name: "subshell", src: "(a; b) && c", want: []*cb{c("a"), c("b"), c("c")}},
	{name: "block", src: "{ a; b; } || c", want: []*cb{c("a"), c("b"), c("c")}},
	{name: "negation", src: "! rm -rf /", want: []*cb{c("rm", "-rf", "/")}},
	{name: "time keyword", src: "time -p rm x", want: []*cb{c("rm", "x").wr("time")}},
	{name: "time keyword block", src: "time { a; b; }", want: []*cb{c("a").wr("time"), c("b").wr("time")}},
	{name: "coproc", src: "coproc rm -rf /", want: []*cb{c("rm", "-rf", "/")}},
	{name: "coproc named", src: "coproc NAME { rm -rf /; }", want: []*cb{c("rm", "-rf", "/")}},
	{name: "empty", src: "", want: nil},
	{name: "only comments", src: "# nothing\n", want: nil},
}

func TestSeparators(t *testing.T) { runCases(t, separatorsCases) }

var hiddenCommandsCases = []testCase{
	{name: "command substitution", src: "echo $(rm -rf /)", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("echo", "$(rm -rf /)").dyn(0),
	}},
	{name: "backticks", src: "echo `rm -rf /`", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("echo", "`rm -rf /`").dyn(0),
	}},
	{name: "nested substitutions", src: "echo $(a $(b))", want: []*cb{
		c("b").via("subst"),
		c("a", "$(b)").dyn(0).via("subst"),
		c("echo", "$(a $(b))").dyn(0),
	}},
	{name: "process substitution", src: "diff <(ls a) >(tee b)", want: []*cb{
		c("ls", "a").via("procsubst"),
		c("tee", "b").via("procsubst"),
		c("diff", "<(ls a)", ">(tee b)").dyn(0, 1),
	}},
	{name: "arithmetic", src: "echo $(( $(rm -rf /) + 1 ))", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("echo", "$(( $(rm -rf /) + 1 ))").dyn(0),
	}, problems: []string{"the output of a command substitution is evaluated as arithmetic"}},
	{name: "parameter default", src: "echo ${x:-$(rm -rf /)}", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("echo", "${x:-$(rm -rf /)}").dyn(0),
	}},
	{name: "parameter replacement", src: `echo "${x/$(a)/$(b)}"`, want: []*cb{
		c("a").via("subst"),
		c("b").via("subst"),
		c("echo", `"${x/$(a)/$(b)}"`).dyn(0),
	}},
	{name: "test clause", src: "[[ -f $(rm -rf /) && x == y ]]", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("[[", "-f", "$(rm -rf /)", "&&", "x", "==", "y").dyn(1),
	}},
	{name: "arithmetic command", src: "(( $(rm -rf /) ))", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("((", "$(rm -rf /)").dyn(0),
	}, problems: []string{"the output of a command substitution is evaluated as arithmetic"}},
	{name: "let", src: "let x=$(rm -rf /) y=2", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("let", "x=$(rm -rf /)", "y=2").dyn(0, 1),
	}, problems: []string{"the output of a command substitution is evaluated as arithmetic"}},
	{name: "case", src: "case $(a) in $(b)) c;; *) d;; esac", want: []*cb{
		c("a").via("subst"),
		c("b").via("subst"),
		c("c"),
		c("d"),
	}},
	{name: "for in substitution", src: "for f in $(ls); do rm \"$f\"; done", want: []*cb{
		c("ls").via("subst"),
		c("rm", `"$f"`).dyn(0),
	}},
	{name: "c style for", src: "for ((i=0; i<$(n); i++)); do x; done", want: []*cb{
		c("n").via("subst"),
		c("x"),
	}, problems: []string{"the output of a command substitution is evaluated as arithmetic"}},
	{name: "while", src: "while a; do b; done", want: []*cb{c("a"), c("b")}},
	{name: "until", src: "until a; do b; done", want: []*cb{c("a"), c("b")}},
	{name: "if elif else", src: "if a; then b; elif c; then d; else e; fi", want: []*cb{c("a"), c("b"), c("c"), c("d"), c("e")}},
	{name: "select", src: "select x in a b; do rm $x; done", want: []*cb{c("rm", "$x").dyn(0)}},
	{name: "function body", src: "f() { rm -rf /; }", want: []*cb{c("rm", "-rf", "/").dir("")}},
	{name: "function keyword", src: "function g { rm -rf /; }; g", want: []*cb{c("rm", "-rf", "/").dir(""), c("g")}},
	{name: "function subshell body", src: "f() (rm -rf /)", want: []*cb{c("rm", "-rf", "/").dir("")}},
	{name: "export", src: "export X=$(rm -rf /) Y", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("export", "X=$(rm -rf /)", "Y").dyn(0),
	}},
	{name: "declare local readonly", src: "declare -a a=(1 $(x)); local l=$(y); readonly r=1", want: []*cb{
		c("x").via("subst"),
		c("declare", "-a", "a=(1 $(x))").dyn(1),
		c("y").via("subst"),
		c("local", "l=$(y)").dyn(0),
		c("readonly", "r=1"),
	}},
	{name: "redirect target", src: "echo hi > $(rm -rf /)", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("echo", "hi").rd(Redirect{Op: ">", Target: "$(rm -rf /)", Dynamic: true}),
	}},
	{name: "redirect before command", src: "> $(a) echo $(b)", want: []*cb{
		c("a").via("subst"),
		c("b").via("subst"),
		c("echo", "$(b)").dyn(0).rd(Redirect{Op: ">", Target: "$(a)", Dynamic: true}),
	}},
	{name: "heredoc", src: "cat <<EOF\nhello $(rm -rf /)\nEOF\n", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("cat").rd(Redirect{Op: "<<", Heredoc: "hello $(rm -rf /)\n", Dynamic: true}),
	}},
	{name: "heredoc quoted", src: "cat <<'EOF'\nhello $(rm -rf /)\nEOF\n", want: []*cb{
		c("cat").rd(Redirect{Op: "<<", Heredoc: "hello $(rm -rf /)\n"}),
	}},
	{name: "heredoc dash", src: "cat <<-EOF\n\thi `id`\n\tEOF\n", want: []*cb{
		c("id").via("subst"),
		c("cat").rd(Redirect{Op: "<<-", Heredoc: "\thi `id`\n", Dynamic: true}),
	}},
	{name: "here string", src: "cat <<< \"$(id)\"", want: []*cb{
		c("id").via("subst"),
		c("cat").rd(Redirect{Op: "<<<", Heredoc: `"$(id)"`, Dynamic: true}),
	}},
	{name: "assignment only", src: "X=$(rm -rf /)", want: []*cb{
		c("rm", "-rf", "/").via("subst"),
		c("").as("X", "$(rm -rf /)", true),
	}},
	{name: "assignment prefix", src: "A=1 B=$(id) cmd", want: []*cb{
		c("id").via("subst"),
		c("cmd").as("A", "1", false).as("B", "$(id)", true),
	}},
	{name: "array assignment", src: "a=(x $(id))", want: []*cb{
		c("id").via("subst"),
		c("").as("a", "(x $(id))", true),
	}},
	{name: "index assignment", src: "a[$(id)]=1", want: []*cb{
		c("id").via("subst"),
		c("").as("a[$(id)]", "1", false),
	}, problems: []string{"the output of a command substitution is evaluated as arithmetic"}},
	{name: "named fd redirect", src: "exec {fd}>$(a) 3<&-", want: []*cb{
		c("a").via("subst"),
		c("exec").rd(Redirect{Op: ">", Fd: "{fd}", Target: "$(a)", Dynamic: true}, Redirect{Op: "<&", Fd: "3", Target: "-"}),
	}},
	{name: "redirect only", src: "> /etc/passwd", want: []*cb{
		c("").rd(Redirect{Op: ">", Target: "/etc/passwd"}),
	}},
	{name: "compound redirect", src: "{ a; b; } > out 2>&1", want: []*cb{
		c("a"), c("b"),
		c("").rd(Redirect{Op: ">", Target: "out"}, Redirect{Op: ">&", Fd: "2", Target: "1"}),
	}},
	{name: "loop redirect substitution", src: "while read l; do echo $l; done < $(ls)", want: []*cb{
		c("read", "l"), c("echo", "$l").dyn(0),
		c("ls").via("subst"),
		c("").rd(Redirect{Op: "<", Target: "$(ls)", Dynamic: true}),
	}},
	{name: "function redirect", src: "f() { :; } > /etc/x", want: []*cb{
		c(":").dir(""),
		c("").dir("").rd(Redirect{Op: ">", Target: "/etc/x"}),
	}},
	{name: "all redirect ops", src: "cmd >a >>b <c >|d &>e &>>f <>g 3<&0 4>&-", want: []*cb{
		c("cmd").rd(
			Redirect{Op: ">", Target: "a"},
			Redirect{Op: ">>", Target: "b"},
			Redirect{Op: "<", Target: "c"},
			Redirect{Op: ">|", Target: "d"},
			Redirect{Op: "&>", Target: "e"},
			Redirect{Op: "&>>", Target: "f"},
			Redirect{Op: "<>", Target: "g"},
			Redirect{Op: "<&", Fd: "3", Target: "0"},
			Redirect{Op: ">&", Fd: "4", Target: "-"},
		),
	}},
}

func TestHiddenCommands(t *testing.T) { runCases(t, hiddenCommandsCases) }

var quotingCases = []testCase{
	{name: "double quotes", src: `"rm" -rf /`, want: []*cb{c("rm", "-rf", "/")}},
	{name: "single quotes", src: `'rm' -rf /`, want: []*cb{c("rm", "-rf", "/")}},
	{name: "backslash", src: `\rm -rf /`, want: []*cb{c("rm", "-rf", "/")}},
	{name: "empty quotes", src: `r''m -rf /`, want: []*cb{c("rm", "-rf", "/")}},
	{name: "mixed", src: `r"m" 'a b'"c d"e\ f`, want: []*cb{c("rm", "a bc de f")}},
	{name: "ansi c", src: `$'\x72\155' $'a\tb' $'\'' $'\u00e9' $'a\0b'`, want: []*cb{c("rm", "a\tb", "'", "é", "a")}},
	{name: "dquote escapes", src: `echo "a\$b\"c\\d\e" "\q"`, want: []*cb{c("echo", `a$b"c\d\e`, `\q`)}},
	{name: "empty args", src: `echo "" '' x`, want: []*cb{c("echo", "", "", "x")}},
	{name: "line continuation", src: "r\\\nm -rf \\\n /", want: []*cb{c("rm", "-rf", "/")}},
	{name: "locale string", src: `echo $"hi"`, want: []*cb{c("echo", "hi")}},
	{name: "glob stays", src: "rm *.txt a?[bc]", want: []*cb{c("rm", "*.txt", "a?[bc]")}},
	{name: "escaped glob", src: `rm \*`, want: []*cb{c("rm", "*")}},
	{name: "extglob", src: "rm @(a|b)", want: []*cb{c("rm", "@(a|b)")}},
}

func TestQuoting(t *testing.T) { runCases(t, quotingCases) }

var bracesCases = []testCase{
	{name: "list", src: "rm {a,b}", want: []*cb{c("rm", "a", "b")}},
	{name: "prefix suffix", src: "rm x{a,b}y", want: []*cb{c("rm", "xay", "xby")}},
	{name: "sequence", src: "echo {1..3} {a..c}", want: []*cb{c("echo", "1", "2", "3", "a", "b", "c")}},
	{name: "nested", src: "echo {a,b{c,d}}", want: []*cb{c("echo", "a", "bc", "bd")}},
	{name: "quoted no expansion", src: `echo '{a,b}' "{a,b}" \{a,b}`, want: []*cb{c("echo", "{a,b}", "{a,b}", "{a,b}")}},
	{name: "single element", src: "echo {a} {}", want: []*cb{c("echo", "{a}", "{}")}},
	{name: "program", src: "{rm,ls} x", want: []*cb{c("rm", "ls", "x")}},
	{name: "with quotes inside", src: `echo {"a b",c}`, want: []*cb{c("echo", "a b", "c")}},
	{name: "dynamic element", src: `echo {$x,b}`, want: []*cb{c("echo", "$x", "b").dyn(0)}},
	{name: "dynamic suffix", src: `echo {a,b}"$(d)"`, want: []*cb{c("d").via("subst"), c("echo", `a"$(d)"`, `b"$(d)"`).dyn(0, 1)}},
	{name: "assignment-like words", src: `p a[1]=~ a+=~ 1a=~ a\=~ "a"=~`, want: []*cb{c("p", "a[1]=/h", "a+=/h", "1a=~", "a=~", "a=~")}},
	{name: "too large", src: "echo {1..5000}", want: []*cb{c("echo", "{1..5000}").dyn(0)}, problems: []string{"brace expansion"}},
}

func TestBraces(t *testing.T) { runCases(t, bracesCases) }

var variablesCases = []testCase{
	{name: "tilde", src: "ls ~ ~/x ~user ~+ ~- ~/'q'", want: []*cb{c("ls", "/h", "/h/x", "~user", "/w", "~-", "/h/q").dyn(2, 4)}},
	{name: "tilde in assignment", src: "X=~/a:~/b cmd a=~/c --o=~/d", want: []*cb{c("cmd", "a=/h/c", "--o=~/d").as("X", "/h/a:/h/b", false)}},
	{name: "tilde unknown home", src: "ls ~", opts: &Options{Dir: "/w"}, want: []*cb{c("ls", "~").dyn(0)}},
	{name: "known variables", src: `echo $HOME ${HOME} "$PWD" $KNOWN`, want: []*cb{c("echo", "/h", "/h", "/w", "/k")}},
	{name: "unknown variable", src: `echo $nope "${nope}" $1 $@ "$*" $$`, want: []*cb{
		c("echo", "$nope", `"${nope}"`, "$1", "$@", `"$*"`, "$$").dyn(0, 1, 2, 3, 4, 5)}},
	{name: "field splitting", src: `echo $SPACED "$SPACED" x$EMPTY $EMPTY "$EMPTY"`, want: []*cb{c("echo", "a", "b", "a  b", "x", "")}},
	{name: "operators are dynamic", src: `echo ${HOME:-x} ${#HOME} ${HOME%/}`, want: []*cb{
		c("echo", "${HOME:-x}", "${#HOME}", "${HOME%/}").dyn(0, 1, 2)}},
	{name: "reassigned home", src: "HOME=/; rm -rf ~ $HOME", want: []*cb{
		c("").as("HOME", "/", false),
		c("rm", "-rf", "~", "$HOME").dyn(1, 2),
	}},
	{name: "read into known", src: "read KNOWN; echo $KNOWN", want: []*cb{c("read", "KNOWN"), c("echo", "$KNOWN").dyn(0)}},
	{name: "eval taints all", src: "eval 'x=1'; echo $KNOWN", want: []*cb{
		c("").as("x", "1", false).wr("eval").via("eval"),
		c("echo", "$KNOWN").dyn(0),
	}},
	{name: "arithmetic taints all", src: "echo $((i)) $KNOWN", want: []*cb{c("echo", "$((i))", "$KNOWN").dyn(0, 1)},
		problems: []string{"i is evaluated as arithmetic"}},
	{name: "pwd follows cd", src: "cd /tmp; echo $PWD", want: []*cb{c("cd", "/tmp"), c("echo", "/tmp").dir("/tmp")}},
	{name: "special variable assignment", src: "PS4='$(rm -rf /)' bash -x", want: []*cb{
		c("bash", "-x").as("PS4", "$(rm -rf /)", false)}, problems: []string{"assignment to PS4"}},
}

func TestVariables(t *testing.T) { runCases(t, variablesCases) }

var namingCases = []testCase{
	{name: "system bin", src: "/bin/rm x; /usr/bin/env; /usr/local/sbin/x; /opt/homebrew/bin/git", want: []*cb{
		c("rm", "x"), c("env"), c("x"), c("git")}},
	{name: "cleaned system path", src: "/usr/bin/../bin/rm; //bin/./rm", want: []*cb{c("rm"), c("rm")}},
	{name: "escape from bin", src: "/usr/bin/../../tmp/rm", want: []*cb{c("/tmp/rm")}},
	{name: "local paths", src: "./sed; /tmp/cat; bin/sed; .//x; a/../y", want: []*cb{
		c("./sed"), c("/tmp/cat"), c("bin/sed"), c("./x"), c("./y")}},
	{name: "home path", src: "~/bin/x", want: []*cb{c("/h/bin/x")}},
	{name: "quoted path", src: `"/bin/"rm`, want: []*cb{c("rm")}},
	{name: "dynamic name", src: `$CMD -rf /`, want: []*cb{c("$CMD", "-rf", "/").ndyn()}, problems: []string{`program name is not static: "$CMD"`}},
	{name: "quoted dynamic name", src: `"${x}" a`, want: []*cb{c(`"${x}"`, "a").ndyn()}, problems: []string{"not static"}},
	{name: "substitution name", src: `$(echo rm) -rf /`, want: []*cb{c("echo", "rm").via("subst"), c("$(echo rm)", "-rf", "/").ndyn()}, problems: []string{"not static"}},
	{name: "variable name", src: `$KNOWN x`, want: []*cb{c("$KNOWN", "x").ndyn()}, problems: []string{"not static"}},
	{name: "glob name", src: `/bin/r? -rf /`, want: []*cb{c("/bin/r?", "-rf", "/").ndyn()}, problems: []string{"pattern"}},
	{name: "test bracket", src: `[ -f x ]`, want: []*cb{c("[", "-f", "x", "]")}},
}

func TestNaming(t *testing.T) { runCases(t, namingCases) }

var wrappersCases = []testCase{
	{name: "nested wrappers", src: "sudo env -i timeout 5 nice rm -rf /", want: []*cb{c("rm", "-rf", "/").wr("sudo", "env", "timeout", "nice")}},
	{name: "sudo options", src: "sudo -u root -g wheel -E -H -- rm x", want: []*cb{c("rm", "x").wr("sudo")}},
	{name: "sudo attached options", src: "sudo -uroot -Eu root --user=root --group wheel rm x", want: []*cb{c("rm", "x").wr("sudo")}},
	{name: "sudo all value options", src: "sudo -C 3 -h host -p x -r r -t t -U u -T 5 rm x", want: []*cb{c("rm", "x").wr("sudo")}},
	{name: "sudo chdir", src: "sudo -D /tmp rm -rf *", want: []*cb{c("rm", "-rf", "*").wr("sudo").dir("/tmp")}},
	{name: "sudo env assignment", src: "sudo LD_PRELOAD=/x.so rm", want: []*cb{c("rm").wr("sudo").as("LD_PRELOAD", "/x.so", false)}},
	{name: "sudo shell", src: "sudo -s; sudo -i", want: []*cb{c("sudo", "-s"), c("sudo", "-i")}},
	{name: "sudo shell command", src: "sudo -s rm x", want: []*cb{c("rm", "x").wr("sudo")}},
	{name: "sudo host", src: "sudo -h host rm x; sudo -h; sudo -h -u root; sudo -hhost rm", want: []*cb{
		c("rm", "x").wr("sudo"), c("sudo", "-h"), c("sudo", "-h", "-u", "root"), c("rm").wr("sudo")}},
	{name: "sudo chdir then list", src: "sudo -D /x -l", want: []*cb{c("sudo", "-D", "/x", "-l")}},
	{name: "sudo list", src: "sudo -l rm", want: []*cb{c("sudo", "-l", "rm")}},
	{name: "sudo edit", src: "sudo -e /etc/passwd", want: []*cb{c("sudo", "-e", "/etc/passwd")}},
	{name: "sudo unknown option", src: "sudo --bogus rm", want: []*cb{c("sudo", "--bogus", "rm").ndyn()}, problems: []string{"cannot tell what sudo runs"}},
	{name: "sudo dynamic option", src: "sudo $OPTS rm", want: []*cb{c("sudo", "$OPTS", "rm").dyn(0).ndyn()}, problems: []string{"cannot tell what sudo runs"}},
	{name: "sudo quoted dynamic value", src: `sudo -u "$U" rm`, want: []*cb{c("rm").wr("sudo")}},
	{name: "doas", src: "doas -u root rm x; doas -s", want: []*cb{c("rm", "x").wr("doas"), c("doas", "-s")}},
	{name: "env alone", src: "env; env -i", want: []*cb{c("env"), c("env", "-i")}},
	{name: "env assignments", src: "env -u HOME --unset=X A=1 B=2 rm", want: []*cb{c("rm").wr("env").as("A", "1", false).as("B", "2", false)}},
	// env -C changes the directory through an option's value, which no
	// check judges as a path: the wrapped program is not known.
	{name: "env chdir", src: "env -C /tmp rm -rf *; env --chdir=sub ls", want: []*cb{
		c("env", "-C", "/tmp", "rm", "-rf", "*").ndyn().dir("/w"),
		c("env", "--chdir=sub", "ls").ndyn().dir("/w"),
	}, problems: []string{`cannot tell what env runs: "-C" is not static`, `cannot tell what env runs: "--chdir=sub" is not static`}},
	{name: "env split string", src: `env -S 'rm -rf "/a b"'`, want: []*cb{c("rm", "-rf", "/a b").wr("env")}},
	{name: "env split string options", src: `env -S'-i A=1 rm' x`, want: []*cb{c("rm", "x").wr("env").as("A", "1", false)}},
	{name: "env split string quoting", src: `env -S"A=\"x y\" 'rm' a\\_b #c" x`, want: []*cb{c("rm", "a", "b", "x").wr("env").as("A", "x y", false)}},
	{name: "env split string variable", src: `env -S'rm ${X}'`, want: []*cb{c("env", "-Srm ${X}").ndyn()}, problems: []string{"cannot tell what env runs"}},
	{name: "env more options", src: "env -i - -0 -v -- A=1 rm; env --help; env -u $X rm; env --bogus rm; env -a argv0 --default-signal=INT rm", want: []*cb{
		c("rm").wr("env").as("A", "1", false),
		c("env", "--help"),
		c("env", "-u", "$X", "rm").dyn(1).ndyn(),
		c("env", "--bogus", "rm").ndyn(),
		c("rm").wr("env"),
	}, problems: []string{"cannot tell what env runs", "cannot tell what env runs"}},
	{name: "env dynamic assignment", src: `env "PATH=$P" ls`, want: []*cb{c("ls").wr("env").as("PATH", `$P"`, true)}},
	{name: "env dynamic word", src: `env $X ls`, want: []*cb{c("env", "$X", "ls").dyn(0).ndyn()}, problems: []string{"cannot tell what env runs"}},
	{name: "timeout", src: "timeout 5 rm; timeout -s KILL -k 3 10s rm; timeout --signal=TERM 1 rm; timeout --preserve-status 1 rm", want: []*cb{
		c("rm").wr("timeout"), c("rm").wr("timeout"), c("rm").wr("timeout"), c("rm").wr("timeout")}},
	{name: "timeout dynamic duration", src: `timeout "1$T" rm; timeout "$T" rm; timeout $T rm`, want: []*cb{
		c("rm").wr("timeout"),
		c("timeout", `"$T"`, "rm").dyn(0).ndyn(),
		c("timeout", "$T", "rm").dyn(0).ndyn(),
	}, problems: []string{"cannot tell what timeout runs", "cannot tell what timeout runs"}},
	{name: "timeout quoted list", src: `timeout "1$@" rm`, want: []*cb{c("timeout", `"1$@"`, "rm").dyn(0).ndyn()}, problems: []string{"cannot tell what timeout runs"}},
	{name: "timeout no command", src: "timeout 5", want: []*cb{c("timeout", "5")}},
	{name: "nice", src: "nice -n 10 rm; nice -10 rm; nice --adjustment=3 rm; nice", want: []*cb{
		c("rm").wr("nice"), c("rm").wr("nice"), c("rm").wr("nice"), c("nice")}},
	{name: "ionice", src: "ionice -c 3 rm; ionice -c3 -n7 -t rm; ionice -p 1", want: []*cb{
		c("rm").wr("ionice"), c("rm").wr("ionice"), c("ionice", "-p", "1")}},
	{name: "nohup", src: "nohup rm x &", want: []*cb{c("rm", "x").wr("nohup")}},
	// time -o writes a file the wrapper's words name: not seen through.
	{name: "time program", src: "/usr/bin/time -v -o out rm; sudo time -p rm", want: []*cb{c("time", "-v", "-o", "out", "rm").ndyn().dir("/w"), c("rm").wr("sudo", "time")},
		problems: []string{`cannot tell what time runs: "-o" is not static`}},
	{name: "command", src: "command rm x; command -p rm; command -v rm; command -V rm", want: []*cb{
		c("rm", "x").wr("command"), c("rm").wr("command"), c("command", "-v", "rm"), c("command", "-V", "rm")}},
	{name: "builtin", src: "builtin echo hi", want: []*cb{c("echo", "hi").wr("builtin")}},
	{name: "exec", src: "exec -a name rm x; exec -cl rm; exec > log", want: []*cb{
		c("rm", "x").wr("exec"), c("rm").wr("exec"), c("exec").rd(Redirect{Op: ">", Target: "log"})}},
	{name: "stdbuf", src: "stdbuf -oL -e 0 --input=L rm", want: []*cb{c("rm").wr("stdbuf")}},
	{name: "chrt", src: "chrt -f 99 rm; chrt -p 1 2", want: []*cb{c("rm").wr("chrt"), c("chrt", "-p", "1", "2")}},
	{name: "taskset", src: "taskset 0x3 rm; taskset -c 0,1 rm; taskset -p 1", want: []*cb{
		c("rm").wr("taskset"), c("rm").wr("taskset"), c("taskset", "-p", "1")}},
	{name: "setsid unbuffer", src: "setsid -f rm; unbuffer -p rm", want: []*cb{c("rm").wr("setsid"), c("rm").wr("unbuffer")}},
	{name: "busybox", src: "busybox rm -rf /; busybox --list", want: []*cb{c("rm", "-rf", "/").wr("busybox"), c("busybox", "--list")}},
	{name: "wrapped cd does not move", src: "sudo cd /tmp; ls", want: []*cb{c("cd", "/tmp").wr("sudo"), c("ls")}},
	{name: "builtin cd moves", src: "builtin cd /tmp; ls", want: []*cb{c("cd", "/tmp").wr("builtin"), c("ls").dir("/tmp")}},
}

func TestWrappers(t *testing.T) { runCases(t, wrappersCases) }

var nestedShellsCases = []testCase{
	{name: "sh -c", src: `sh -c 'rm -rf /; ls'`, want: []*cb{
		c("rm", "-rf", "/").wr("sh -c").via("sh -c"),
		c("ls").wr("sh -c").via("sh -c"),
	}},
	{name: "combined flags", src: `bash -lc 'rm a'; bash -ec 'rm b'; zsh -xc 'rm c'; dash --norc -c 'rm d'; bash -o pipefail -c 'rm e'`, want: []*cb{
		c("rm", "a").wr("sh -c").via("sh -c"),
		c("rm", "b").wr("sh -c").via("sh -c"),
		c("rm", "c").wr("sh -c").via("sh -c"),
		c("rm", "d").wr("sh -c").via("sh -c"),
		c("rm", "e").wr("sh -c").via("sh -c"),
	}},
	{name: "system path shell", src: `/bin/bash -c 'rm x'`, want: []*cb{c("rm", "x").wr("sh -c").via("sh -c")}},
	{name: "busybox sh", src: `busybox sh -c 'rm x'`, want: []*cb{c("rm", "x").wr("busybox", "sh -c").via("sh -c")}},
	{name: "three levels", src: `bash -c "sh -c 'eval \"rm -rf /\"'"`, want: []*cb{
		c("rm", "-rf", "/").wr("sh -c", "sh -c", "eval").via("eval"),
	}},
	{name: "inside wrappers", src: `sudo -u x bash -c 'cd /tmp && rm -rf *'`, want: []*cb{
		c("cd", "/tmp").wr("sudo", "sh -c").via("sh -c"),
		c("rm", "-rf", "*").wr("sudo", "sh -c").via("sh -c").dir("/tmp"),
	}},
	{name: "directory inherited not returned", src: `cd /a; sh -c 'cd /b; x'; y`, want: []*cb{
		c("cd", "/a"),
		c("cd", "/b").wr("sh -c").via("sh -c").dir("/a"),
		c("x").wr("sh -c").via("sh -c").dir("/b"),
		c("y").dir("/a"),
	}},
	{name: "substitution inside", src: `sh -c 'echo $(id)'`, want: []*cb{
		c("id").wr("sh -c").via("subst"),
		c("echo", "$(id)").dyn(0).wr("sh -c").via("sh -c"),
	}},
	{name: "prefix assignments inherited", src: `LD_PRELOAD=/x.so sh -c 'ls'`, want: []*cb{
		c("ls").wr("sh -c").via("sh -c").as("LD_PRELOAD", "/x.so", false),
	}},
	{name: "redirect of nested shell", src: `sh -c 'cat' < /etc/shadow`, want: []*cb{
		c("cat").wr("sh -c").via("sh -c"),
		c("").rd(Redirect{Op: "<", Target: "/etc/shadow"}),
	}},
	{name: "dynamic string", src: `bash -c "$CMD"`, want: []*cb{c("bash", "-c", `"$CMD"`).dyn(1)}, problems: []string{`bash -c string is not static: "\"$CMD\""`}},
	{name: "parse failure", src: `sh -c 'if then'`, want: []*cb{c("sh", "-c", "if then")}, problems: []string{"sh -c string does not parse"}},
	{name: "empty string", src: `sh -c ''`, want: []*cb{c("sh", "-c", "")}},
	{name: "script and stdin", src: `bash script.sh; sh; source f; . f`, want: []*cb{
		c("bash", "script.sh"), c("sh"), c("source", "f").dir("/w"), c(".", "f").dir(""),
	}},
	{name: "heredoc script", src: "bash <<'EOF'\ncd /tmp\nrm -rf *\nEOF\nls", want: []*cb{
		c("cd", "/tmp").wr("sh stdin").via("stdin"),
		c("rm", "-rf", "*").wr("sh stdin").via("stdin").dir("/tmp"),
		c("").rd(Redirect{Op: "<<", Heredoc: "cd /tmp\nrm -rf *\n"}),
		c("ls"),
	}},
	{name: "here-string script", src: `sudo sh -s <<< 'rm -rf /'`, want: []*cb{
		c("rm", "-rf", "/").wr("sudo", "sh stdin").via("stdin"),
		c("").rd(Redirect{Op: "<<<", Heredoc: "'rm -rf /'"}),
	}},
	{name: "stdin script with -s", src: "bash -s x <<'E'\necho \\$y\nE", want: []*cb{
		c("echo", "$y").wr("sh stdin").via("stdin"),
		c("").rd(Redirect{Op: "<<", Heredoc: "echo \\$y\n"}),
	}},
	{name: "unquoted heredoc script", src: "sh <<EOF\necho \\$y\nEOF", want: []*cb{
		c("echo", "$y").dyn(0).wr("sh stdin").via("stdin"),
		c("").rd(Redirect{Op: "<<", Heredoc: "echo \\$y\n"}),
	}},
	{name: "shell with script file and heredoc", src: "bash x.sh <<'E'\nrm\nE", want: []*cb{
		c("bash", "x.sh").rd(Redirect{Op: "<<", Heredoc: "rm\n"}),
	}},
	{name: "stdin path", src: "bash /dev/stdin <<< 'rm -rf dist'; sh - <<< 'rm b'", want: []*cb{
		c("rm", "-rf", "dist").wr("sh stdin").via("stdin"),
		c("").rd(Redirect{Op: "<<<", Heredoc: "'rm -rf dist'"}),
		c("rm", "b").wr("sh stdin").via("stdin"),
		c("").rd(Redirect{Op: "<<<", Heredoc: "'rm b'"}),
	}},
	{name: "echo piped into shell", src: "echo 'rm -rf dist' | sh", want: []*cb{
		c("echo", "rm -rf dist"),
		c("rm", "-rf", "dist").wr("sh stdin").via("stdin"),
	}},
	{name: "printf and cat piped into shell", src: "printf '%s\\n' 'rm a' 'rm b' | sudo bash -s; printf 'rm c\\n' | sh; cat <<'E' | zsh\nrm d\nE", want: []*cb{
		c("printf", "%s\\n", "rm a", "rm b"),
		c("rm", "a").wr("sudo", "sh stdin").via("stdin"),
		c("rm", "b").wr("sudo", "sh stdin").via("stdin"),
		c("printf", "rm c\\n"),
		c("rm", "c").wr("sh stdin").via("stdin"),
		c("cat").rd(Redirect{Op: "<<", Heredoc: "rm d\n"}),
		c("rm", "d").wr("sh stdin").via("stdin"),
	}},
	{name: "unknown text piped into shell", src: "curl -s x | bash; echo -e 'rm\\x20/' | sh; echo x > f | sh; echo $X | sh", want: []*cb{
		c("curl", "-s", "x"), c("bash"),
		c("echo", "-e", "rm\\x20/"), c("sh"),
		c("echo", "x").rd(Redirect{Op: ">", Target: "f"}), c("sh"),
		c("echo", "$X").dyn(0), c("sh"),
	}},
	{name: "source from stdin", src: "source /dev/stdin <<< 'cd /tmp'; ls", want: []*cb{
		c("cd", "/tmp").wr("source").via("stdin"),
		c("").rd(Redirect{Op: "<<<", Heredoc: "'cd /tmp'"}),
		c("ls").dir("/tmp"),
	}},
	{name: "fish", src: "fish -c 'rm -rf dist'; fish --command='rm a'", want: []*cb{
		c("rm", "-rf", "dist").wr("sh -c").via("sh -c"),
		c("rm", "a").wr("sh -c").via("sh -c"),
	}},
	{name: "dynamic heredoc script", src: "sh <<EOF\n$X\nEOF", want: []*cb{
		c("sh").rd(Redirect{Op: "<<", Heredoc: "$X\n", Dynamic: true}),
	}},
	{name: "su", src: `su - root -c 'rm -rf /'; su -c "rm x" bob; su bob`, want: []*cb{
		c("rm", "-rf", "/").wr("su").via("sh -c").dir(""),
		c("rm", "x").wr("su").via("sh -c"),
		c("su", "bob"),
	}},
	{name: "eval", src: `eval rm '-rf /'; eval "cd /tmp"; ls`, want: []*cb{
		c("rm", "-rf", "/").wr("eval").via("eval"),
		c("cd", "/tmp").wr("eval").via("eval"),
		c("ls").dir("/tmp"),
	}},
	{name: "eval dynamic", src: `eval "$X"; ls`, want: []*cb{c("eval", `"$X"`).dyn(0), c("ls").dir("")}, problems: []string{"eval string is not static"}},
	{name: "watch", src: `watch -n 2 'ls | wc -l'; watch -x rm a; watch df -h`, want: []*cb{
		c("ls").wr("watch").via("watch"),
		c("wc", "-l").wr("watch").via("watch"),
		c("rm", "a").wr("watch").via("watch"),
		c("df", "-h").wr("watch").via("watch"),
	}},
	{name: "trap", src: `trap 'rm -rf /tmp/x' EXIT`, want: []*cb{
		c("trap", "rm -rf /tmp/x", "EXIT"),
		c("rm", "-rf", "/tmp/x").wr("trap").via("trap").dir(""),
	}},
	{name: "alias", src: `alias ll='ls -l'`, want: []*cb{
		c("alias", "ll=ls -l"),
		c("ls", "-l").wr("alias").via("alias").dir(""),
	}},
	{name: "mapfile callback", src: `mapfile -C 'rm x' -c 1 arr < f`, want: []*cb{
		c("mapfile", "-C", "rm x", "-c", "1", "arr").rd(Redirect{Op: "<", Target: "f"}),
		c("rm", "x").wr("mapfile -C").via("eval"),
	}},
}

func TestNestedShells(t *testing.T) { runCases(t, nestedShellsCases) }

var xargsFindCases = []testCase{
	{name: "xargs", src: "ls | xargs rm -f", want: []*cb{
		c("ls"),
		c("rm", "-f", "{xargs-input}").dyn(1).wr("xargs").via("xargs"),
	}},
	{name: "xargs default echo", src: "xargs -0 -n 1", want: []*cb{c("echo", "{xargs-input}").dyn(0).wr("xargs").via("xargs")}},
	{name: "xargs options", src: "xargs -P 4 -L1 -d '\\n' -a f --max-args=2 -r rm", want: []*cb{
		c("rm", "{xargs-input}").dyn(0).wr("xargs").via("xargs")}},
	{name: "xargs replace", src: "xargs -I {} mv {} {}.bak x", want: []*cb{
		c("mv", "{}", "{}.bak", "x").dyn(0, 1).wr("xargs").via("xargs")}},
	{name: "xargs sh -c", src: `xargs -I % sh -c 'rm %'`, want: []*cb{
		c("sh", "-c", "rm %").dyn(1).wr("xargs").via("xargs")}, problems: []string{"sh -c string is not static"}},
	{name: "xargs sh -c static", src: `xargs sh -c 'rm "$@"' _`, want: []*cb{
		c("rm", `"$@"`).dyn(0).wr("xargs", "sh -c").via("sh -c")}},
	{name: "xargs wrapper", src: "xargs sudo rm", want: []*cb{c("rm", "{xargs-input}").dyn(0).wr("xargs", "sudo").via("xargs")}},
	{name: "find exec", src: `find . -name '*.tmp' -exec rm -f {} \;`, want: []*cb{
		c("find", ".", "-name", "*.tmp", "-exec", "rm", "-f", "{}", ";"),
		c("rm", "-f", "{}").dyn(1).wr("find -exec").via("find -exec"),
	}},
	{name: "find exec plus and several", src: `find / -exec rm {} + -execdir chmod 777 {} ';' -ok mv {} x ";" -okdir ls \;`, want: []*cb{
		c("find", "/", "-exec", "rm", "{}", "+", "-execdir", "chmod", "777", "{}", ";", "-ok", "mv", "{}", "x", ";", "-okdir", "ls", ";"),
		c("rm", "{}").dyn(0).wr("find -exec").via("find -exec"),
		c("chmod", "777", "{}").dyn(1).wr("find -exec").via("find -exec").dir(""),
		c("mv", "{}", "x").dyn(0).wr("find -exec").via("find -exec"),
		c("ls").wr("find -exec").via("find -exec").dir(""),
	}},
	{name: "find plus not terminator", src: `find . -exec echo + {} \;`, want: []*cb{
		c("find", ".", "-exec", "echo", "+", "{}", ";"),
		c("echo", "+", "{}").dyn(1).wr("find -exec").via("find -exec"),
	}},
	{name: "find exec shell", src: `find . -exec sh -c 'rm "$1"' _ {} \;`, want: []*cb{
		c("find", ".", "-exec", "sh", "-c", `rm "$1"`, "_", "{}", ";"),
		c("rm", `"$1"`).dyn(0).wr("find -exec", "sh -c").via("sh -c"),
	}},
	{name: "find exec found file", src: `find . -exec {} \;`, want: []*cb{
		c("find", ".", "-exec", "{}", ";"),
		c("{}").ndyn().wr("find -exec").via("find -exec"),
	}, problems: []string{"program name is not static"}},
	{name: "find dynamic split", src: `find $DIR -name x`, want: []*cb{c("find", "$DIR", "-name", "x").dyn(0)}, problems: []string{"find argument is not static"}},
	{name: "sudo find", src: `sudo find / -delete`, want: []*cb{c("find", "/", "-delete").wr("sudo")}},
}

func TestXargsFind(t *testing.T) { runCases(t, xargsFindCases) }

var dirTrackingCases = []testCase{
	{name: "cd relative", src: "cd sub; a; cd ../x/./y; b; cd /abs && c", want: []*cb{
		c("cd", "sub"), c("a").dir("/w/sub"),
		c("cd", "../x/./y").dir("/w/sub"), c("b").dir("/w/x/y"),
		c("cd", "/abs").dir("/w/x/y"), c("c").dir("/abs"),
	}},
	{name: "cd home", src: "cd; a; cd /; cd ~/p; b", want: []*cb{
		c("cd"), c("a").dir("/h"), c("cd", "/").dir("/h"), c("cd", "/h/p").dir("/"), c("b").dir("/h/p"),
	}},
	{name: "cd unknown", src: "cd $X; a; cd /t; cd -; b; cd /t; popd; c", want: []*cb{
		c("cd", "$X").dyn(0), c("a").dir(""), c("cd", "/t").dir(""), c("cd", "-").dir("/t"), c("b").dir(""),
		c("cd", "/t").dir(""), c("popd").dir("/t"), c("c").dir(""),
	}},
	{name: "cd options", src: "cd -P /a; a; cd -L -- b; b", want: []*cb{
		c("cd", "-P", "/a"), c("a").dir("/a"), c("cd", "-L", "--", "b").dir("/a"), c("b").dir("/a/b"),
	}},
	{name: "pushd", src: "pushd /a; a; pushd -n /b; b; pushd; c", want: []*cb{
		c("pushd", "/a"), c("a").dir("/a"), c("pushd", "-n", "/b").dir("/a"), c("b").dir("/a"), c("pushd").dir("/a"), c("c").dir(""),
	}},
	{name: "subshell keeps change", src: "(cd /a; a); b", want: []*cb{c("cd", "/a"), c("a").dir("/a"), c("b")}},
	{name: "pipeline keeps change", src: "cd /a | a; b", want: []*cb{c("cd", "/a"), c("a"), c("b")}},
	{name: "background keeps change", src: "cd /a & b", want: []*cb{c("cd", "/a"), c("b")}},
	{name: "substitution keeps change", src: "x $(cd /a; y); z", want: []*cb{
		c("cd", "/a").via("subst"), c("y").via("subst").dir("/a"), c("x", "$(cd /a; y)").dyn(0), c("z")}},
	{name: "or", src: "cd /a || b; c", want: []*cb{c("cd", "/a"), c("b").dir(""), c("c").dir("")}},
	{name: "or without cd", src: "a || b; c", want: []*cb{c("a"), c("b"), c("c")}},
	{name: "and", src: "cd /a && b; c", want: []*cb{c("cd", "/a"), c("b").dir("/a"), c("c").dir("/a")}},
	{name: "if", src: "if cd /a; then b; fi; c", want: []*cb{c("cd", "/a"), c("b").dir("/a"), c("c").dir("")}},
	{name: "if without cd", src: "if a; then b; else c; fi; d", want: []*cb{c("a"), c("b"), c("c"), c("d")}},
	{name: "case", src: "case x in a) cd /a;; esac; b", want: []*cb{c("cd", "/a"), c("b").dir("")}},
	{name: "loop", src: "for x in a b; do ls; cd sub; done; c", want: []*cb{
		c("ls").dir(""), c("cd", "sub").dir(""), c("c").dir("")}},
	{name: "loop with braced cd", src: "for x in 1; do ls; {cd,/tmp}; done", want: []*cb{c("ls").dir(""), c("cd", "/tmp").dir("")}},
	{name: "loop without cd", src: "while a; do b; done; c", want: []*cb{c("a"), c("b"), c("c")}},
	{name: "block carries", src: "{ cd /a; }; b", want: []*cb{c("cd", "/a"), c("b").dir("/a")}},
	{name: "function call", src: "f() { cd /x; }; f; ls", want: []*cb{c("cd", "/x").dir(""), c("f"), c("ls").dir("")}},
	{name: "dynamic program", src: "$X /a; ls", want: []*cb{c("$X", "/a").ndyn(), c("ls").dir("")}, problems: []string{"not static"}},
	{name: "unknown start", src: "cd sub; ls; cd /a; ls", opts: &Options{}, want: []*cb{
		c("cd", "sub").dir(""), c("ls").dir(""), c("cd", "/a").dir(""), c("ls").dir("/a")}},
	{name: "cdpath", src: "cd sub; ls; cd ./x; ls", opts: &Options{Dir: "/w", Env: map[string]string{"CDPATH": "/etc"}}, want: []*cb{
		c("cd", "sub"), c("ls").dir(""), c("cd", "./x").dir(""), c("ls").dir("")}},
	{name: "cdpath relative dot", src: "cd ./x; ls", opts: &Options{Dir: "/w", Env: map[string]string{"CDPATH": "/etc"}}, want: []*cb{
		c("cd", "./x"), c("ls").dir("/w/x")}},
	{name: "trap with cd", src: "trap 'cd /' DEBUG; ls", want: []*cb{
		c("trap", "cd /", "DEBUG"), c("cd", "/").wr("trap").via("trap").dir(""), c("ls").dir("")}},
}

func TestDirTracking(t *testing.T) { runCases(t, dirTrackingCases) }

var problemsCases = []testCase{
	{name: "cd unknown is not a problem", src: "cd $X", want: []*cb{c("cd", "$X").dyn(0)}},
	{name: "dynamic trap", src: `trap "$X" EXIT`, want: []*cb{c("trap", `"$X"`, "EXIT").dyn(0)}, problems: []string{"trap action is not static"}},
	{name: "dynamic alias", src: `alias x="$Y"`, want: []*cb{c("alias", `x="$Y"`).dyn(0)}, problems: []string{"alias definition is not static"}},
	{name: "watch dynamic", src: `watch "$X"`, want: []*cb{c("watch", `"$X"`).dyn(0)}, problems: []string{"watch command is not static"}},
	{name: "su shell", src: `su -s /usr/bin/python3 -c 'x'`, want: []*cb{c("su", "-s", "/usr/bin/python3", "-c", "x")}, problems: []string{"not a known shell"}},
	{name: "env -P", src: `env -P /tmp ls`, want: []*cb{c("ls").ndyn().wr("env")}, problems: []string{"env -P"}},
	{name: "arithmetic injection", src: `x='a[$(rm -rf /)]'; echo $((x))`, want: []*cb{
		c("").as("x", "a[$(rm -rf /)]", false),
		// The value of x is evaluated: its subscript runs rm.
		c("rm", "-rf", "/").via("subst"),
		c("echo", "$((x))").dyn(0),
	}, problems: []string{"value of x holds a command substitution", "a is evaluated as arithmetic", "the output of a command substitution is evaluated as arithmetic"}},
	{name: "prompt expansion", src: `echo "${x@P}"`, want: []*cb{c("echo", `"${x@P}"`).dyn(0)}, problems: []string{"prompt expansion"}},
	{name: "enable makes cd unknown", src: `enable -n cd; cd /tmp; ls`, want: []*cb{
		c("enable", "-n", "cd"), c("cd", "/tmp"), c("ls").dir(""),
	}},
	{name: "bash env", src: `BASH_ENV=/tmp/x bash -c 'ls'`, want: []*cb{c("ls").wr("sh -c").via("sh -c").as("BASH_ENV", "/tmp/x", false)}, problems: []string{"BASH_ENV"}},
}

func TestProblems(t *testing.T) { runCases(t, problemsCases) }

func TestPositions(t *testing.T) {
	src := "echo a\n  sudo rm -rf / > out\nbash -c 'ls; pwd' && x=$(id)\nf() {\n\tcat <<EOF\n$(who)\nEOF\n}"
	res, err := Analyze(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	type pos struct {
		Name      string
		Source    string
		Line, Col int
	}
	var got []pos
	for _, c := range res.Commands {
		got = append(got, pos{c.Name, c.Source, c.Line, c.Col})
	}
	want := []pos{
		{"echo", "echo a", 1, 1},
		{"rm", "sudo rm -rf / > out", 2, 3},
		{"ls", "ls", 3, 9},
		{"pwd", "pwd", 3, 9},
		{"id", "id", 3, 26},
		{"", "x=$(id)", 3, 22},
		{"who", "who", 6, 3},
		{"cat", "cat <<EOF", 5, 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("positions mismatch (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		src  string
		want string
	}{
		{"echo 'unterminated", "1:6: reached EOF without closing quote `'`"},
		{"if true; then\n  echo\n", "1:1: `if` statement must end with `fi`"},
		{"a &&", "1:3: `&&` must be followed by a statement"},
		{"echo ok\necho )", "2:6: a command can only contain words and redirects; encountered `)`"},
		{"foo() {", "1:7: `{` must be followed by a statement list"},
		{"echo $((1 +", "1:11: `+` must be followed by an expression"},
		{"echo ${(L)x}", "1:6: parameter expansion flags are a zsh feature; tried parsing as bash"},
	}
	for _, tc := range cases {
		res, err := Analyze(tc.src, nil)
		if err == nil {
			t.Errorf("Analyze(%q) = %v, want error", tc.src, res)
			continue
		}
		var pe *ParseError
		if !asParseError(err, &pe) {
			t.Errorf("Analyze(%q) error %T is not *ParseError", tc.src, err)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("Analyze(%q) error = %q, want %q", tc.src, got, tc.want)
		}
	}
}

func asParseError(err error, pe **ParseError) bool {
	p, ok := err.(*ParseError)
	*pe = p
	return ok
}

func TestNestingLimit(t *testing.T) {
	res, err := Analyze(strings.Repeat("eval ", 100)+"rm -rf /", nil)
	if err != nil {
		t.Fatalf("100 levels: %v", err)
	}
	if len(res.Commands) != 1 || res.Commands[0].Name != "rm" || len(res.Commands[0].Wrappers) != 100 {
		t.Fatalf("100 levels: got %+v", res.Commands)
	}
	_, err = Analyze("echo; "+strings.Repeat("eval ", 101)+"ls", nil)
	if !errors.Is(err, ErrTooComplex) {
		t.Fatalf("101 levels: got error %v, want one wrapping ErrTooComplex", err)
	}
	if !strings.Contains(err.Error(), "1:12: shell strings are nested more than 100") {
		t.Errorf("101 levels: got %v", err)
	}
	// Quoted nesting counts the same way.
	line := "rm -rf /"
	for range 3 {
		line = "sh -c " + shellQuote(line)
	}
	res, err = Analyze(line, nil)
	if err != nil || len(res.Commands) != 1 || len(res.Commands[0].Wrappers) != 3 {
		t.Errorf("3 levels: %v %+v", err, res)
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestOptionsNil(t *testing.T) {
	res, err := Analyze("cd x; ls ~ $HOME $PWD", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Name: "cd", Args: []string{"x"}, ArgDynamic: []bool{false}},
		{Name: "ls", Args: []string{"~", "$HOME", "$PWD"}, ArgDynamic: []bool{true, true, true}},
	}
	if diff := cmp.Diff(want, res.Commands, cmpCommands...); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestConcurrent(t *testing.T) {
	done := make(chan bool)
	for range 8 {
		go func() {
			for range 50 {
				if _, err := Analyze("sudo bash -c 'cd /x && rm -rf *' | xargs echo {a,b}", testOpts); err != nil {
					t.Error(err)
				}
			}
			done <- true
		}()
	}
	for range 8 {
		<-done
	}
}

// seedLines returns the sources of all table-driven cases.
func seedLines() []string {
	var out []string
	for _, cases := range [][]testCase{separatorsCases, hiddenCommandsCases, quotingCases, bracesCases, variablesCases, namingCases, wrappersCases, nestedShellsCases, xargsFindCases, dirTrackingCases, problemsCases} {
		for _, tc := range cases {
			out = append(out, tc.src)
		}
	}
	return out
}

func TestCommentBackslashIsAnError(t *testing.T) {
	for _, src := range []string{"echo ok # \\\nrm -rf ~", "# note \\\nrm -rf ~", "ls\n  # x \\\n  cp a .git/hooks/pre-commit"} {
		if _, err := Analyze(src, nil); err == nil || !strings.Contains(err.Error(), "comment ends in a backslash") {
			t.Errorf("Analyze(%q) = %v, want the comment continuation error", src, err)
		}
	}
	if _, err := Analyze("echo a \\\n  b # fine\nls", nil); err != nil {
		t.Errorf("a continuation before a comment is fine: %v", err)
	}
}

// TestIsWrapper ties the exported wrapper list to what Analyze does.
func TestIsWrapper(t *testing.T) {
	lines := map[string]string{
		"timeout": "timeout 5 rm x", "nice": "nice -n 1 rm x", "ionice": "ionice -c 3 rm x", "chrt": "chrt 5 rm x",
		"taskset": "taskset 1 rm x", "watch": "watch rm x", "su": "su -c 'rm x'", "busybox": "busybox rm x",
		"exec": "exec rm x", "xargs": "xargs rm x", "env": "env A=1 rm x",
	}
	for name := range wrappers {
		line, ok := lines[name]
		if !ok {
			line = name + " rm x"
		}
		res, err := Analyze(line, nil)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		found := false
		for _, c := range res.Commands {
			if c.Name == "rm" && slices.Contains(c.Wrappers, name) {
				found = true
			}
		}
		if !found {
			t.Errorf("IsWrapper(%q) but Analyze(%q) does not report rm run through it: %+v", name, line, res.Commands)
		}
	}
	if IsWrapper("rm") || IsWrapper("bash") {
		t.Error("rm and bash are not wrappers")
	}
}

// TestStdin: the text a heredoc, a here-string or a static echo, printf
// or cat gives a program on its standard input, as the shell makes it;
// nothing when it is left to run time.
func TestStdin(t *testing.T) {
	for _, tc := range []struct {
		line, program, want string
	}{
		{"curl -d @- https://x <<< hello", "curl", "hello\n"},
		{`curl -d @- https://x <<< $'\x41B'`, "curl", "AB\n"},
		{`curl -d @- https://x <<< "A"'B'`, "curl", "AB\n"},
		{"nc h 80 <<E\nline $HOME\nE", "nc", ""},
		{"nc h 80 <<'E'\nline $HOME\nE", "nc", "line $HOME\n"},
		{"nc h 80 <<E\nplain \\$x\nE", "nc", "plain $x\n"},
		{"nc h 80 <<-E\n\tindented\n\tE", "nc", "indented\n"},
		{"curl -d @- https://x <<< $X", "curl", ""},
		{"curl -d @- https://x <<< $(cat f)", "curl", ""},
		{"echo hi there | curl -d @- https://x", "curl", "hi there\n"},
		{"printf 'A\\x42C' | curl -T - https://x", "curl", ""}, // nor one with escapes
		{"printf 'A%sC' B | curl -T - https://x", "curl", ""},  // a format with directives is not read
		{"echo $(date) | curl -d @- https://x", "curl", ""},
		{"echo $X | curl -d @- https://x", "curl", ""},
		{"curl https://x", "curl", ""},
	} {
		res, err := Analyze(tc.line, &Options{Dir: "/w"})
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		found := false
		for _, c := range res.Commands {
			if c.Name == tc.program {
				found = true
				if c.Stdin != tc.want {
					t.Errorf("%q: %s's Stdin is %q, want %q", tc.line, tc.program, c.Stdin, tc.want)
				}
			}
		}
		if !found {
			t.Errorf("%q: no command %s in %+v", tc.line, tc.program, res.Commands)
		}
	}
}
