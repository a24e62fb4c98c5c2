package shell

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

// representedVias are the ways a command can be reached from inside a
// string argument, whose position it then carries.
var representedVias = map[string]bool{
	"sh -c": true, "stdin": true, "eval": true, "watch": true, "trap": true, "alias": true, "subst": true, "procsubst": true,
}

// checkRepresented checks that every simple command with at least one
// word, and every declaration, test, arithmetic and let clause, that
// syntax.Walk finds in src is represented in res: either by a command at
// its position, or by a command reached through one of its argument
// strings or its heredoc.
func checkRepresented(t testing.TB, src string, res *Result) {
	t.Helper()
	f, err := parse(src)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	type lc struct{ line, col int }
	at := map[lc]bool{}
	nestedAt := map[lc]bool{}
	for _, c := range res.Commands {
		at[lc{c.Line, c.Col}] = true
		if representedVias[c.Via] || len(c.Wrappers) > 0 {
			nestedAt[lc{c.Line, c.Col}] = true
		}
	}
	posOf := func(p syntax.Pos) lc { return lc{int(p.Line()), int(p.Col())} }
	redirs := map[*syntax.CallExpr][]*syntax.Redirect{}
	syntax.Walk(f, func(n syntax.Node) bool {
		var p syntax.Pos
		var args []*syntax.Word
		switch n := n.(type) {
		case *syntax.Stmt:
			if ce, ok := n.Cmd.(*syntax.CallExpr); ok {
				redirs[ce] = n.Redirs
			}
			return true
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				return true
			}
			p, args = n.Pos(), n.Args
			for _, r := range redirs[n] {
				args = append(args, r.Word)
				if r.Hdoc != nil {
					args = append(args, r.Hdoc)
				}
			}
		case *syntax.DeclClause, *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
			p = n.Pos()
		default:
			return true
		}
		if at[posOf(p)] {
			return true
		}
		for _, w := range args {
			if nestedAt[posOf(w.Pos())] {
				return true
			}
		}
		t.Errorf("Analyze(%q): %T at %s is not represented in %+v", src, n, p, res.Commands)
		return true
	})
}

// trickyLines is a corpus of lines that hide commands in unusual places.
var trickyLines = []string{
	"echo $(rm -rf /)",
	"echo `rm -rf /`",
	"echo \"$(rm -rf /)\"",
	"echo \"`rm -rf /`\"",
	"cat <(rm -rf /) >(rm -rf /)",
	"echo $(( $(rm -rf /) ))",
	"echo ${x:-$(rm -rf /)} ${x:=`id`} ${x/$(a)/$(b)} ${x:$(c):$(d)} ${a[$(e)]}",
	"[[ $(rm -rf /) == x || -n `id` ]]",
	"(( x = $(rm -rf /) ))",
	"let \"x=$(rm -rf /)\"",
	"case $(a) in $(b)|c) d ;; *) $(e) ;; esac",
	"for x in $(rm -rf /); do :; done",
	"for ((i=$(a); i<$(b); i+=$(c))); do :; done",
	"while $(a); do b; done; until c; do d; done",
	"if a; then b; elif c; then d; else e; fi",
	"f() { rm -rf /; }; function g() { h; }",
	"export X=$(rm -rf /); declare -r Y=`id`; local Z=$(a); readonly W=$(b); typeset V=$(c)",
	"echo > $(rm -rf /) 2> `id` < $(a)",
	"cat <<EOF\n$(rm -rf /)\n`id`\n${x:-$(a)}\nEOF",
	"cat <<-EOF\n\t$(rm -rf /)\n\tEOF",
	"X=$(rm -rf /)",
	"X=$(a) Y=`b` cmd",
	"a=( $(rm -rf /) `id` ) b[$(c)]=1",
	"coproc rm -rf /",
	"coproc NAME { rm -rf /; }",
	"time rm -rf /",
	"! rm -rf /",
	"{ rm -rf /; } > $(a)",
	"( rm -rf / ) | cat |& tee x",
	"rm -rf / & disown",
	"sudo -u root bash -c 'rm -rf /; eval \"rm -rf ~\"'",
	"sh -c \"sh -c 'sh -c \\\"rm -rf /\\\"'\"",
	"find / -exec rm -rf {} \\; -exec sh -c 'rm -rf \"$1\"' _ {} +",
	"xargs -I{} sh -c 'rm {}'",
	"env -S 'rm -rf /'",
	"watch 'rm -rf /'",
	"trap 'rm -rf /' EXIT; alias x='rm -rf /'",
	"eval $(echo rm -rf /)",
	"$(echo rm) -rf /",
	"\\rm -rf /; 'rm' -rf /; \"rm\" -rf /; r''m -rf /; $'\\x72m' -rf /",
	"{rm,ls} -rf /",
	"command rm -rf /; builtin eval 'rm -rf /'; exec rm -rf /",
	"bash -c '' ; sh -c '#' ; eval ''",
	"sh -c 'if then'",
	"x=$(cd /; rm -rf *)",
	"echo ${x@Q} ${!x} ${#x} ${x^^} ${x,,}",
	"mapfile -C 'rm -rf /' -c 1 a",
	"declare -A m=([$(a)]=$(b))",
	"select x in $(a); do $(b); done",
	"echo $[ $(rm -rf /) ]",
	"echo @(a|$(b))",
	"cmd {$(a),$(b)}",
	"sudo $X rm -rf /",
	"timeout $T rm -rf /",
	"env $E rm -rf /",
	"nice -n $(a) rm",
	"exec {fd}>$(a)",
	"f() (rm -rf /)",
	"a && b || c; d | e & f; g",
	"su -c 'rm -rf /' root",
	"xargs rm -rf < list",
	"busybox sh -c 'rm -rf /'",
	"bash <<'EOF'\nrm -rf /\nEOF",
	"sudo sh -s <<< 'rm -rf /'",
	"bash <<EOF\n$(rm -rf /)\nEOF",
	"echo 'rm -rf /' | sh",
	"printf '%s\\n' 'rm -rf /' | bash -s",
	"cat <<'E' | sudo sh\nrm -rf /\nE",
	"bash /dev/stdin <<< 'rm -rf /'",
	"echo 'rm -rf /' | source /dev/stdin",
	"fish -c 'rm -rf /'",
	"time -p { a; b; }",
	"\"$@\"",
	"$EMPTY",
	"${x}",
}

func TestRepresentedCorpus(t *testing.T) {
	for _, src := range trickyLines {
		res, err := Analyze(src, testOpts)
		if err != nil {
			t.Errorf("Analyze(%q): %v", src, err)
			continue
		}
		checkRepresented(t, src, res)
		checkInvariants(t, src, res)
	}
}

func checkInvariants(t testing.TB, src string, res *Result) {
	t.Helper()
	for _, c := range res.Commands {
		if len(c.Args) != len(c.ArgDynamic) {
			t.Errorf("Analyze(%q): command %q has %d args but %d dynamic flags", src, c.Name, len(c.Args), len(c.ArgDynamic))
		}
		if c.Line < 0 || c.Col < 0 {
			t.Errorf("Analyze(%q): command %q has position %d:%d", src, c.Name, c.Line, c.Col)
		}
	}
}

// TestRmIsSeen checks that rm -rf / is found wherever the corpus hides it.
func TestRmIsSeen(t *testing.T) {
	for _, src := range trickyLines {
		if !strings.Contains(src, "rm -rf /") && !strings.Contains(src, `rm -rf \"$1\"`) {
			continue
		}
		res, err := Analyze(src, testOpts)
		if err != nil {
			t.Errorf("Analyze(%q): %v", src, err)
			continue
		}
		found := len(res.Problems) > 0
		for _, c := range res.Commands {
			if c.Name == "rm" || c.NameDynamic {
				found = true
			}
		}
		if !found {
			t.Errorf("Analyze(%q): rm not found and no problem reported: %+v", src, res.Commands)
		}
	}
}

func FuzzAnalyze(f *testing.F) {
	for _, src := range trickyLines {
		f.Add(src)
	}
	for _, src := range seedLines() {
		f.Add(src)
	}
	recoverPanics = false
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		res, err := Analyze(src, testOpts)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Analyze(%q) took %v", src, d)
		}
		res2, err2 := Analyze(src, testOpts)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("Analyze(%q) is not deterministic: %v vs %v", src, err, err2)
		}
		if err != nil {
			if _, ok := err.(*ParseError); !ok && !errors.Is(err, ErrTooComplex) {
				t.Fatalf("Analyze(%q): error %T is neither a *ParseError nor ErrTooComplex", src, err)
			}
			if err.Error() != err2.Error() {
				t.Fatalf("Analyze(%q) is not deterministic: %v vs %v", src, err, err2)
			}
			return
		}
		if diff := cmp.Diff(res, res2); diff != "" {
			t.Fatalf("Analyze(%q) is not deterministic:\n%s", src, diff)
		}
		checkInvariants(t, src, res)
		checkRepresented(t, src, res)
	})
}
