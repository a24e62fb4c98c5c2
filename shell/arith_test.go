package shell

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// arithCase is a line with text that bash evaluates as arithmetic.
type arithCase struct {
	name string
	src  string
	// runs are the programs that a command substitution in the arithmetic
	// text runs: each must be reported with Via "subst".
	runs []string
	// unknown reports that the line must have a Problem: something in
	// the text cannot be known statically.
	unknown bool
}

var arithCases = []arithCase{
	// Quoted text is code.
	{name: "(( )) single quotes", src: `(( 'a[$(rm -rf /)]' ))`, runs: []string{"rm"}, unknown: true},
	{name: "$(( )) single quotes", src: `echo $(( 'a[$(rm -rf /)]' ))`, runs: []string{"rm"}, unknown: true},
	{name: "$[ ]", src: `echo $[ 'a[$(rm -rf /)]' ]`, runs: []string{"rm"}, unknown: true},
	{name: "backquotes", src: "(( 'a[`rm -rf /`]' ))", runs: []string{"rm"}, unknown: true},
	{name: "ANSI-C quotes", src: `(( a[$'\x24(rm -rf /)'] ))`, runs: []string{"rm"}, unknown: true},
	{name: "[[ -eq ]]", src: `[[ 'a[$(cat .env >&2)]' -eq 1 ]]`, runs: []string{"cat"}, unknown: true},
	{name: "[[ -lt ]] double quotes", src: `[[ 1 -lt "a[\$(rm x)]" ]]`, runs: []string{"rm"}, unknown: true},
	{name: "[[ -v ]]", src: `[[ -v 'a[$(rm x)]' ]]`, runs: []string{"rm"}, unknown: true},
	{name: "test -v", src: `test -v 'a[$(rm x)]'`, runs: []string{"rm"}, unknown: true},
	{name: "let", src: `let 'a[$(rm x)]=1'`, runs: []string{"rm"}, unknown: true},
	{name: "builtin let", src: `builtin let 'a[$(rm x)]=1'`, runs: []string{"rm"}, unknown: true},
	{name: "C-style for", src: `for (( i='a[$(rm x)]'; i<1; i++ )); do :; done`, runs: []string{"rm"}, unknown: true},
	{name: "expansion subscript", src: `echo ${a['$(rm x)']}`, runs: []string{"rm"}, unknown: true},
	{name: "length subscript", src: `echo ${#a['$(rm x)']}`, runs: []string{"rm"}, unknown: true},
	{name: "slice offset", src: `x=abc; echo ${x:'a[$(rm x)]'}`, runs: []string{"rm"}, unknown: true},
	{name: "slice length", src: `x=abc; echo ${x:0:'a[$(rm x)]'}`, runs: []string{"rm"}, unknown: true},
	{name: "assignment subscript", src: `a['$(rm x)']=1`, runs: []string{"rm"}, unknown: true},
	{name: "array element subscript", src: `a=(['$(rm x)']=1)`, runs: []string{"rm"}, unknown: true},
	{name: "declare name", src: `declare 'a[$(rm x)]'=1`, runs: []string{"rm"}, unknown: true},
	{name: "command declare", src: `command declare 'a[$(rm x)]=1'`, runs: []string{"rm"}, unknown: true},
	{name: "export name", src: `export 'a[$(rm x)]'=1`, runs: []string{"rm"}, unknown: true},
	{name: "read name", src: `read 'a[$(rm x)]' <<< x`, runs: []string{"rm"}, unknown: true},
	{name: "read -a name", src: `read -r -a 'a[$(rm x)]' <<< x`, runs: []string{"rm"}, unknown: true},
	{name: "printf -v", src: `printf -v 'a[$(rm x)]' x`, runs: []string{"rm"}, unknown: true},
	{name: "printf -v attached", src: `printf '-va[$(rm x)]' x`, runs: []string{"rm"}, unknown: true},
	{name: "mapfile", src: `mapfile -t 'a[$(rm x)]' < /dev/null`, runs: []string{"rm"}, unknown: true},
	{name: "unset", src: `unset 'a[$(rm x)]'`, runs: []string{"rm"}, unknown: true},
	{name: "getopts", src: `getopts a 'a[$(rm x)]'`, runs: []string{"rm"}, unknown: true},
	{name: "wait -p", src: `wait -p 'a[$(rm x)]'`, runs: []string{"rm"}, unknown: true},
	{name: "dynamic name", src: `read "$name" <<< x`, unknown: true},
	{name: "indirection", src: `r='a[$(rm x)]'; echo ${!r}`, runs: []string{"rm"}, unknown: true},
	{name: "unknown indirection", src: `echo ${!r}`, unknown: true},
	// A variable's value is evaluated as an expression.
	{name: "variable value", src: `x='a[$(rm x)]'; echo $((x))`, runs: []string{"rm"}, unknown: true},
	{name: "variable through a variable", src: `x='a[$(rm x)]'; y=x; echo $((y))`, runs: []string{"rm"}, unknown: true},
	{name: "loop word", src: `for x in 'a[$(rm x)]'; do (( x )); done`, runs: []string{"rm"}, unknown: true},
	{name: "brace loop word", src: `for x in 'a['{'$',}'(rm x)]'; do (( x )); done`, unknown: true},
	{name: "glob loop word", src: `for f in *; do (( f )); done`, unknown: true},
	{name: "unset variable", src: `echo $((x + 1))`, unknown: true},
	{name: "read variable", src: `read -r n < f; echo $((n))`, unknown: true},
	{name: "substituted variable", src: `n=$(cat f); (( n ))`, unknown: true},
	{name: "appended variable", src: `n=1; n+=2; (( n ))`, unknown: true},
	{name: "after eval", src: `n=1; eval "$x"; (( n ))`, unknown: true},
	{name: "integer attribute", src: `declare -i n; n='a[$(rm x)]'`, runs: []string{"rm"}, unknown: true},
	{name: "integer attribute read", src: `declare -i n; read n < f`, unknown: true},
	{name: "command output", src: `(( $(cat f) ))`, runs: []string{"cat"}, unknown: true},
	{name: "function parameter", src: `f() { (( $1 )); }; f 'a[$(rm x)]'`, unknown: true},
	{name: "value naming a parameter, used again in a function", src: `a=(1); x='a[$1]'; (( x )); f() { (( x )); }; f 'b[$(rm x)]'`, unknown: true},
	{name: "set parameters", src: `set -- 'a[$(rm x)]'; (( $1 ))`, unknown: true},
	{name: "shell string parameters", src: `bash -c '(( $1 ))' _ 'a[$(rm x)]'`, unknown: true},
	{name: "text that does not parse", src: `(( 'a[$(]' ))`, unknown: true},
	{name: "associative key", src: `declare -A m; m['$(rm x)']=1`, runs: []string{"rm"}, unknown: true},
	{name: "associative element key", src: `declare -A m=(['$(rm x)']=1)`, runs: []string{"rm"}, unknown: true},
	{name: "associative expansion key", src: `declare -A m; echo ${m['$(rm x)']}`, runs: []string{"rm"}, unknown: true},
	{name: "variables in a cycle", src: `x=y; y=x; echo $((x))`},
	// Inert arithmetic.
	{name: "numbers", src: `echo $((1+2)) $[3] $(( 16#ff + 0x1f + 2#101 ))`},
	{name: "loop words", src: `for i in 1 2 3; do echo $((i*2)); done`},
	{name: "numeric brace loop", src: `for i in {1..5}; do echo $((i*i)); done`},
	{name: "C-style loop", src: `for ((i=0; i<3; i++)); do echo $i; done`},
	{name: "special parameters", src: `[[ $# -eq 0 ]]; echo $(( $? + $$ + RANDOM + ${#x} ))`},
	{name: "static assignment", src: `n=5; (( n > 3 ))`},
	{name: "arithmetic assignment", src: `i=0; i=$((i + 1)); (( i += 2 )); echo $((i))`},
	{name: "static slice", src: `x=abcdef; echo ${x:0:3} ${x: -2}`},
	{name: "static subscript", src: `arr=(a b); echo ${arr[1]} ${#arr[@]} ${!arr[@]}`},
	{name: "static indirection", src: `r=HOME; echo ${!r}`},
	{name: "variable holding a number expression", src: `x='1 + 2'; y=x; echo $((y * 2))`},
	{name: "read plain name", src: `read -r line < f; echo "$line"`},
	{name: "unset plain name", src: `unset x`},
	{name: "dynamic words that are not names", src: `sleep 1 & pid=$!; wait "$pid"; printf "$fmt" x; read -r -p "$prompt" line`},
	{name: "dynamic word that may be -v", src: `printf "$opt" 'a[$(rm x)]' y`, runs: []string{"rm"}, unknown: true},
	{name: "associative arrays", src: `declare -A m=([a]=1 [b]=2); m[c]=3; echo ${m[a]} ${m[key]} ${m[$k]}`},
}

func TestArithContext(t *testing.T) {
	for _, tc := range arithCases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tc.src, testOpts)
			if err != nil {
				t.Fatalf("Analyze(%q): %v", tc.src, err)
			}
			var subst []string
			for _, c := range res.Commands {
				if c.Via == "subst" {
					subst = append(subst, c.Name)
				}
			}
			for _, r := range tc.runs {
				if !slices.Contains(subst, r) {
					t.Errorf("Analyze(%q): %s is not reported as run by a substitution; got %v", tc.src, r, res.Commands)
				}
			}
			if got := len(res.Problems) > 0; got != tc.unknown {
				t.Errorf("Analyze(%q): problems %v, want unknown=%t", tc.src, res.Problems, tc.unknown)
			}
		})
	}
}

// arithContexts are the places where a piece of text reaches arithmetic
// evaluation, with %s standing for the text in single quotes.
var arithContexts = []string{
	"(( %s ))", "echo $(( %s ))", "echo $[ %s ]", "let %s", "[[ %s -eq 1 ]]", "[[ -v a[%s] ]]",
	"echo ${a[%s]}", "echo ${x:%s}", "a[%s]=1", "declare -i n=%s", "read a[%s]", "printf -v a[%s] x",
	"unset a[%s]", "x=%s; echo $((x))",
}

// FuzzArithContext puts text in every arithmetic context. The analysis
// must not panic, must be deterministic, must return no result with an
// error, and must never report a line whose arithmetic text holds a
// command substitution, or does not parse, as free of problems: that is,
// nothing the line evaluates is allowed unseen.
func FuzzArithContext(f *testing.F) {
	for _, tc := range arithCases {
		f.Add(tc.src)
	}
	for _, s := range []string{"a[$(id)]", "a[`id`]", "x", "1+2", "$(", "a[$((1))]", "${x}", "\\$(id)", "a[$'\\x24(id)']"} {
		f.Add(s)
	}
	recoverPanics = false
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		quoted := "'" + strings.ReplaceAll(text, "'", `'\''`) + "'"
		// What bash's expansion of the text finds in it.
		doc, docErr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text))
		hasSubst := false
		if docErr == nil && doc != nil {
			syntax.Walk(doc, func(n syntax.Node) bool {
				_, ok := n.(*syntax.CmdSubst)
				hasSubst = hasSubst || ok
				return !hasSubst
			})
		}
		for _, form := range append(arithContexts, text) {
			src := form
			if form != text {
				src = strings.ReplaceAll(form, "%s", quoted)
			}
			start := time.Now()
			res, err := Analyze(src, testOpts)
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("Analyze(%q) took %v", src, d)
			}
			res2, err2 := Analyze(src, testOpts)
			if (err == nil) != (err2 == nil) || err == nil && (len(res.Commands) != len(res2.Commands) || len(res.Problems) != len(res2.Problems)) {
				t.Fatalf("Analyze(%q) is not deterministic", src)
			}
			if err != nil {
				if res != nil {
					t.Fatalf("Analyze(%q) returned a result with error %v", src, err)
				}
				continue
			}
			for _, c := range res.Commands {
				if len(c.Args) != len(c.ArgDynamic) {
					t.Fatalf("Analyze(%q): Args and ArgDynamic differ in length", src)
				}
			}
			if form == text || strings.Contains(text, `\`) {
				continue
			}
			if (docErr != nil || hasSubst) && len(res.Problems) == 0 {
				t.Fatalf("Analyze(%q): arithmetic text %q that %s gives no problem; commands %+v",
					src, text, map[bool]string{true: "does not parse", false: "holds a command substitution"}[docErr != nil], res.Commands)
			}
		}
	})
}

// TestAnalyzeLimits checks that the analysis refuses what is beyond its
// limits with an error wrapping ErrTooComplex, and stops when its context
// is done.
func TestAnalyzeLimits(t *testing.T) {
	for _, tc := range []struct {
		name, src string
	}{
		{"too long", "echo " + strings.Repeat("a", maxSource)},
		{"brackets too deep", strings.Repeat("(", maxBracketDepth+1) + "ls" + strings.Repeat(")", maxBracketDepth+1)},
		{"arithmetic too deep", "echo $" + strings.Repeat("(", maxBracketDepth+1) + "1" + strings.Repeat(")", maxBracketDepth+1)},
		{"too many commands", strings.Repeat("ls;", maxCommands+1)},
		{"shell strings too deep", strings.Repeat("eval ", maxNesting+1) + "ls"},
		{"work past the budget", strings.Repeat("while :; do ", 2000) + "ls" + strings.Repeat("; done", 2000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tc.src, nil)
			if !errors.Is(err, ErrTooComplex) || res != nil {
				t.Fatalf("got %v, %v; want an error wrapping ErrTooComplex", res, err)
			}
		})
	}
	// Just within the limits, the line is analyzed.
	res, err := Analyze(strings.Repeat("ls;", maxCommands), nil)
	if err != nil || len(res.Commands) != maxCommands {
		t.Fatalf("%d commands: got %v", maxCommands, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := AnalyzeContext(ctx, "ls", nil); !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled: got %v, %v", res, err)
	}
	// A context that ends during the analysis stops it.
	line := strings.Repeat("if a; then b; fi; ", 1000)
	cd := &countdown{Context: context.Background(), left: 2}
	if res, err := AnalyzeContext(cd, line, nil); !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled during the analysis: got %v, %v", res, err)
	}
	if cd.left > 0 {
		t.Fatalf("the context was looked at only %d times", 2-cd.left)
	}
}

// countdown is a context that is cancelled once its Err has been called
// left times.
type countdown struct {
	context.Context
	left int
}

func (c *countdown) Err() error {
	if c.left--; c.left < 0 {
		return context.Canceled
	}
	return nil
}
