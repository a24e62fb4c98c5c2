package risk

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSpecsParse loads every built-in table, the built ones included, as
// the first Lookup does, so that a table that would panic there fails
// here.
func TestSpecsParse(t *testing.T) {
	tables, subs := builtinTables()
	specs, err := loadSpecs(tables, subs)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range tables {
		if _, err := ParseSpecs(src.name, src.text); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cat", "rg", "ack", "git", "sudo", "tar"} {
		if specs[name] == nil {
			t.Errorf("no spec for %s", name)
		}
	}
	if specs["git"].Subcommand("commit") == nil {
		t.Error("no spec for git commit")
	}
	if len(SpecNames()) != len(specs) {
		t.Errorf("SpecNames has %d names, the tables %d", len(SpecNames()), len(specs))
	}
}

// TestLazySpecs: every program's entry, parsed alone at its lookup, is the
// spec the whole tables give it, with the same subcommands.
func TestLazySpecs(t *testing.T) {
	tables, subs := builtinTables()
	specs, err := loadSpecs(tables, subs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(specIndex()), len(specs); got != want {
		t.Errorf("the index has %d names, the tables %d", got, want)
	}
	for name, want := range specs {
		got := Lookup(name)
		if got == nil {
			t.Errorf("Lookup(%q) = nil", name)
			continue
		}
		if why := specDiff(got, want); why != "" {
			t.Errorf("Lookup(%q): the entry parsed alone differs from the whole load: %s", name, why)
		}
		for _, alias := range want.Aliases {
			if Lookup(alias) != got {
				t.Errorf("Lookup(%q) is not the spec of %s", alias, name)
			}
		}
	}
	if Lookup("no-such-program") != nil {
		t.Error("a program with no entry has a spec")
	}
}

// specDiff says how got, a spec parsed at its lookup with subcommands
// parsed at their use, differs from want, parsed with every table at once,
// or returns "".
func specDiff(got, want *Spec) string {
	switch {
	case got.Program != want.Program || !slices.Equal(got.Aliases, want.Aliases):
		return fmt.Sprintf("names %s %v, want %s %v", got.Program, got.Aliases, want.Program, want.Aliases)
	case got.Numeric != want.Numeric || got.Free != want.Free || got.Posix != want.Posix || got.NoAbbrev != want.NoAbbrev ||
		got.SingleDashLong != want.SingleDashLong || got.Plus != want.Plus:
		return "directives differ"
	case !reflect.DeepEqual(got.Options, want.Options) || !reflect.DeepEqual(*got.short, *want.short) ||
		!reflect.DeepEqual(got.long, want.long) || !slices.Equal(got.longs, want.longs) || !slices.Equal(got.refused, want.refused):
		return "options differ: " + got.Describe() + ", want " + want.Describe()
	case got.HasSubcommands() != (want.subcommands != nil) || got.numSubcommands() != len(want.subcommands):
		return fmt.Sprintf("%d subcommands, want %d", got.numSubcommands(), len(want.subcommands))
	}
	for n, ws := range want.subcommands {
		gs := got.Subcommand(n)
		if gs == nil {
			return "no subcommand " + n
		}
		if why := specDiff(gs, ws); why != "" {
			return n + ": " + why
		}
	}
	return ""
}

// TestLoadSpecsErrors checks that a table that does not load says which
// table and why, which is what the first Lookup panics with.
func TestLoadSpecsErrors(t *testing.T) {
	for _, tc := range []struct {
		tables []specSource
		subs   []subcommandSource
		want   string
	}{
		{[]specSource{{"a", "cat: -n"}, {"b", "cat: -n"}}, nil, `b: program "cat" has two specs`},
		{[]specSource{{"a", "cat tac: -n\ntac: -s"}}, nil, `a: program "tac" has two specs`},
		{[]specSource{{"a", "cat: -n -n"}}, nil, "a:1: cat: option -n listed twice"},
		{[]specSource{{"a", "cat: -n"}}, []subcommandSource{{name: "git commit", program: "git", text: "commit: -m=inert"}}, `git commit: no spec for "git"`},
		{[]specSource{{"a", "git: -C=inert"}}, []subcommandSource{{name: "git commit", program: "git", text: "commit: x"}}, `bad option spelling "x"`},
	} {
		specs, err := loadSpecs(tc.tables, tc.subs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("loadSpecs(%v, %v) = %v, want error containing %q", tc.tables, tc.subs, err, tc.want)
		}
		if specs != nil {
			t.Errorf("loadSpecs(%v, %v) returned specs with its error", tc.tables, tc.subs)
		}
	}
}

// TestSpecsConcurrentFirstUse looks specs up from several goroutines at
// once; run with -race (and -run to make it the first use), it checks that
// loading at first use is safe.
func TestSpecsConcurrentFirstUse(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if Lookup("git") == nil || Lookup("git").Subcommand("push") == nil {
				t.Error("no spec for git push")
			}
			if len(SpecNames()) == 0 {
				t.Error("no specs")
			}
			if PowerShellUnknownParameter("get-childitem", []string{"-Nope" + string(rune('a'+i))}) == "" {
				t.Error("Get-ChildItem -Nope is not reported")
			}
		})
	}
	wg.Wait()
}

func TestParseSpecsErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"cat -n", `t:1: want "program: options"`},
		{"  -n", "t:1: an indented line before any program"},
		{"cat: -n -n", "t:1: cat: option -n listed twice"},
		{"cat: --x=file", `unknown value kind "file"`},
		{"cat: @nope", `unknown directive "@nope"`},
		{"cat: x", `bad option spelling "x"`},
		{"cat: -n\n  --long|-n", "t:2: cat: option -n listed twice"},
		{"jq: --rawfile=inert+file", `unknown value kind "file"`},
		{"jq: --rawfile=inert+", `unknown value kind ""`},
		{"jq: --rawfile?=inert+read", "two values are neither optional nor a command"},
		{"find: -exec=cmd+inert", "two values are neither optional nor a command"},
		{"make: !-e", `bad refused option "!-e"`},
		{"make: !--", `bad refused option "!--"`},
		{"make: !--eval=code", `bad refused option "!--eval=code"`},
		{"make: !--eval !--eval", "option --eval refused twice"},
		{"make: --eval !--eval", "option --eval is both allowed and refused"},
	} {
		_, err := ParseSpecs("t", tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSpecs(%q) = %v, want error containing %q", tc.src, err, tc.want)
		}
	}
}

func TestSpecParse(t *testing.T) {
	sp, err := ParseSpecs("t", `
prog: @numeric -a -b|--bee -c|--see=inert -o|--output=write --compress-program=exec --color?=inert
  --colour-mode=inert +x|-x
`)
	if err != nil {
		t.Fatal(err)
	}
	p := sp[0]
	for _, tc := range []struct {
		args     []string
		dyn      []bool
		unknown  string
		problem  bool
		operands []int
		opts     []string // canonical names
		values   []string
	}{
		{args: []string{"-ab", "f"}, operands: []int{1}, opts: []string{"-a", "-b"}},
		{args: []string{"-c5", "f"}, operands: []int{1}, opts: []string{"-c"}, values: []string{"5"}},
		{args: []string{"-ac", "5", "f"}, operands: []int{2}, opts: []string{"-a", "-c"}, values: []string{"5"}},
		{args: []string{"--see=5", "f", "--bee"}, operands: []int{1}, opts: []string{"-c", "-b"}, values: []string{"5"}},
		{args: []string{"--se", "5"}, operands: nil, opts: []string{"-c"}, values: []string{"5"}},
		{args: []string{"--compress-prog=sh"}, opts: []string{"--compress-program"}, values: []string{"sh"}},
		{args: []string{"--co=sh"}, unknown: "--co"}, // ambiguous: --color, --colour-mode, --compress-program
		{args: []string{"--color", "f"}, operands: []int{1}, opts: []string{"--color"}},
		{args: []string{"--color=never", "f"}, operands: []int{1}, opts: []string{"--color"}, values: []string{"never"}},
		{args: []string{"--bee=1"}, unknown: "--bee=1"},
		{args: []string{"-I", "sh -c id"}, unknown: "-I"},
		{args: []string{"-aI"}, unknown: "-I"},
		{args: []string{"--to-command=id"}, unknown: "--to-command"},
		{args: []string{"--", "-I"}, operands: []int{1}},
		{args: []string{"-", "-5"}, operands: []int{0}},
		{args: []string{"+x", "f"}, operands: []int{1}, opts: []string{"+x"}},
		{args: []string{"$x", "f"}, dyn: []bool{true, false}, problem: true, operands: []int{0, 1}},
		{args: []string{"src/$x"}, dyn: []bool{true}, operands: []int{0}},
		{args: []string{"-o", "$x"}, dyn: []bool{false, true}, problem: true, opts: []string{"-o"}, values: []string{"$x"}},
		{args: []string{"-c", "$x"}, dyn: []bool{false, true}, opts: []string{"-c"}, values: []string{"$x"}},
		{args: []string{"-c"}, opts: []string{"-c"}},
	} {
		got := p.Parse(tc.args, tc.dyn)
		if got.Unknown != tc.unknown {
			t.Errorf("%q: unknown %q, want %q", tc.args, got.Unknown, tc.unknown)
			continue
		}
		if tc.unknown != "" {
			continue
		}
		if (got.Problem != "") != tc.problem {
			t.Errorf("%q: problem %q, want %v", tc.args, got.Problem, tc.problem)
		}
		if !slices.Equal(got.Operands, tc.operands) {
			t.Errorf("%q: operands %v, want %v", tc.args, got.Operands, tc.operands)
		}
		var names, values []string
		for _, o := range got.Options {
			names = append(names, o.Name)
			if o.HasValue {
				values = append(values, o.Value)
			}
		}
		if !slices.Equal(names, tc.opts) || !slices.Equal(values, tc.values) {
			t.Errorf("%q: options %v values %v, want %v %v", tc.args, names, values, tc.opts, tc.values)
		}
	}
}

func TestSpecSubcommands(t *testing.T) {
	sp, err := ParseSpecs("t", "tool: -C=dir\n")
	if err != nil {
		t.Fatal(err)
	}
	subs, err := ParseSpecs("t", "log: -n=inert --oneline\nstatus: -s\n")
	if err != nil {
		t.Fatal(err)
	}
	sp[0].subcommands = map[string]*Spec{"log": subs[0], "status": subs[1]}
	p := sp[0].Parse([]string{"-C", "d", "log", "--one", "-n", "5", "x"}, nil)
	if p.Unknown != "" || p.SubName != "log" || !p.Has("-C") || !p.Sub.Has("--oneline") || !slices.Equal(p.Sub.Operands, []int{6}) {
		t.Fatalf("parse = %+v sub %+v", p, p.Sub)
	}
	if p := sp[0].Parse([]string{"send-pack", "u"}, nil); p.Unknown != "send-pack" {
		t.Fatalf("unknown subcommand: %+v", p)
	}
	if p := sp[0].Parse([]string{"status", "--porcelain"}, nil); p.Unknown != "--porcelain" {
		t.Fatalf("unknown subcommand option: %+v", p)
	}
}

// TestSpecRefused checks that a long option the spec refuses ("!--name")
// is unknown however it is abbreviated, and that a prefix it shares with
// an allowed option is ambiguous, as getopt_long finds it; an allowed
// option's own abbreviations still read as it.
func TestSpecRefused(t *testing.T) {
	sps, err := ParseSpecs("t", "make: --dry-run --debug?=inert --environment-overrides-x !--eval !--environment-overrides\n")
	if err != nil {
		t.Fatal(err)
	}
	sp := sps[0]
	for _, tc := range []struct {
		word, unknown, name string
	}{
		{"--dry", "", "--dry-run"},
		{"--de", "", "--debug"},
		{"--debug=a", "", "--debug"},
		{"--dry-run", "", "--dry-run"},
		{"--eval=x", "--eval", ""},
		{"--ev", "--ev", ""},
		{"--e", "--e", ""},
		{"--environment-overrides", "--environment-overrides", ""},
		{"--environment-overrides-x", "", "--environment-overrides-x"},
		{"--environment", "--environment", ""},
		{"--d", "--d", ""},
	} {
		p := sp.Parse([]string{tc.word}, nil)
		if p.Unknown != tc.unknown {
			t.Errorf("%s: unknown %q, want %q", tc.word, p.Unknown, tc.unknown)
			continue
		}
		if tc.name != "" && (len(p.Options) != 1 || p.Options[0].Name != tc.name) {
			t.Errorf("%s: options %+v, want %s", tc.word, p.Options, tc.name)
		}
		if _, _, ok := sp.Canonical(tc.word); ok != (tc.unknown == "") {
			t.Errorf("Canonical(%s) known %v, want %v", tc.word, ok, tc.unknown == "")
		}
	}
}

// FuzzParseSpecs checks that reading any table never panics, and that a
// table that loads reads any words without naming a refused option.
func FuzzParseSpecs(f *testing.F) {
	f.Add("make: -j?=inert --dry-run !--eval\n  -C=dir", "--ev\x00-j4\x00--dry")
	f.Add("x: @noabbrev !--a --ab", "--a\x00--ab")
	f.Add("x: !--a|--b", "--a")
	f.Add("npm: -s\nrun: @free", "run\x00--x")
	f.Fuzz(func(t *testing.T, src, words string) {
		sps, err := ParseSpecs("f", src)
		if err != nil {
			return
		}
		args := strings.Split(words, "\x00")
		for _, sp := range sps {
			p := sp.Parse(args, nil)
			for _, o := range p.Options {
				for _, n := range o.Option.Names {
					if slices.Contains(sp.refused, strings.TrimLeft(n, "-")) && strings.HasPrefix(n, "--") {
						t.Fatalf("refused option %s read as known", n)
					}
				}
			}
			for _, i := range p.Operands {
				if i < 0 || i >= len(args) {
					t.Fatalf("operand index %d out of %d words", i, len(args))
				}
			}
		}
	})
}

// FuzzSpecParse checks that reading any words against any spec never
// panics and that every index it returns lies inside the words.
func FuzzSpecParse(f *testing.F) {
	f.Add("sort", "-S\x001K\x00--compress-prog=sh")
	f.Add("tar", "tf\x00x\x00-I\x00sh -c id")
	f.Add("head", "-5\x00-n\x00")
	f.Add("ls", "-la\x00--col\x00--\x00-x")
	f.Add("xxd", "-c16\x00-cols\x008")
	f.Add("hostname", "-")
	f.Add("jq", "--rawfile\x00k\x00.env\x00-n\x00$k")
	f.Add("find", ".\x00-exec\x00grep\x00-l\x00{}\x00+\x00-fprintf\x00x")
	f.Add("less", "+G\x00+!id\x00-k")
	f.Add("lsof", "+D\x00/tmp\x00-i\x00:80")
	f.Add("go", "test\x00-exec\x00/bin/rm\x00./...\x00-args\x00-x")
	f.Add("go", "build\x00--toolexec=sh\x00-o\x00$o\x00-overlays=x")
	f.Add("go", "$sub\x00-vettool\x00x")
	f.Add("npm", "run\x00build\x00--script-sh=x\x00--\x00-w")
	f.Add("make", "-kj4\x00--ev=x\x00CC=x\x00-C\x00$d")
	f.Add("ssh", "-p22\x00host\x00-o\x00ProxyCommand=x\x00--\x00ls\x00-la")
	f.Add("ssh", "--\x00host\x00-q\x00--\x00$x")
	f.Add("rsync", "-a\x00-e\x00ssh -p 22\x00a\x00h:")
	f.Add("cargo", "clippy\x00--\x00-D\x00warnings\x00-C\x00linker=x")
	f.Add("yarn", "$x\x00--silent")
	f.Add("pytest", "-vp\x00no:x\x00-k\x00a or b")
	f.Fuzz(func(t *testing.T, prog, words string) {
		sp := Lookup(prog)
		if sp == nil {
			sp = Lookup("sort")
		}
		args := strings.Split(words, "\x00")
		dyn := make([]bool, len(args))
		for i, a := range args {
			dyn[i] = strings.HasPrefix(a, "$")
		}
		p := sp.Parse(args, dyn)
		for _, i := range p.Operands {
			if i < 0 || i >= len(args) {
				t.Fatalf("operand index %d out of %d words", i, len(args))
			}
		}
		for _, o := range p.Options {
			if o.ValueIndex >= len(args) {
				t.Fatalf("value index %d out of %d words", o.ValueIndex, len(args))
			}
		}
		if p.Unknown == "" {
			e := Command(sp.Program, args, dyn)
			if e.UnknownOption == "" && e.Level == Read && e.Known && e.Exec != "" {
				t.Fatalf("a read that runs a program: %+v", e)
			}
		}
	})
}

func TestSpecTwoValues(t *testing.T) {
	sp, err := ParseSpecs("t", "jq: -n --arg=inert+inert --rawfile=inert+read -o=write+inert\n")
	if err != nil {
		t.Fatal(err)
	}
	type opt struct {
		name, value string
		kind        ValueKind
		index       int
	}
	for _, tc := range []struct {
		args     []string
		dyn      []bool
		opts     []opt
		operands []int
		problem  bool
	}{
		{args: []string{"--rawfile", "k", ".env", "-n", "$k"}, operands: []int{4},
			opts: []opt{{"--rawfile", "k", ValInert, 1}, {"--rawfile", ".env", ValRead, 2}, {"-n", "", ValNone, -1}}},
		{args: []string{"--arg", "x", "1", "f"}, operands: []int{3},
			opts: []opt{{"--arg", "x", ValInert, 1}, {"--arg", "1", ValInert, 2}}},
		{args: []string{"-oout", "%p", "f"}, operands: []int{2},
			opts: []opt{{"-o", "out", ValWrite, 0}, {"-o", "%p", ValInert, 1}}},
		// A missing second value: the program fails before it reads.
		{args: []string{"--rawfile", "k"}, opts: []opt{{"--rawfile", "k", ValInert, 1}}},
		// The second value is a file, and not known statically.
		{args: []string{"--rawfile", "k", "$F", "."}, dyn: []bool{false, false, true, false}, operands: []int{3}, problem: true,
			opts: []opt{{"--rawfile", "k", ValInert, 1}, {"--rawfile", "$F", ValRead, 2}}},
	} {
		p := sp[0].Parse(tc.args, tc.dyn)
		if p.Unknown != "" || (p.Problem != "") != tc.problem || !slices.Equal(p.Operands, tc.operands) {
			t.Errorf("%q: unknown %q problem %q operands %v", tc.args, p.Unknown, p.Problem, p.Operands)
			continue
		}
		var got []opt
		for _, o := range p.Options {
			got = append(got, opt{o.Name, o.Value, o.Option.Value, o.ValueIndex})
		}
		if !slices.Equal(got, tc.opts) {
			t.Errorf("%q: options %v, want %v", tc.args, got, tc.opts)
		}
	}
}

func TestSpecCommandValue(t *testing.T) {
	sp, err := ParseSpecs("t", "find: @single @noabbrev -L -name=pat -exec|-ok=cmd -print -a\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args     []string
		dyn      []bool
		unknown  string
		operands []int
		opts     []string
	}{
		// The command's own options are no options of find.
		{args: []string{".", "-exec", "grep", "-l", "x", "{}", "+"}, operands: []int{0}, opts: []string{"-exec"}},
		{args: []string{".", "-exec", "rm", "-f", "{}", ";", "-print"}, operands: []int{0}, opts: []string{"-exec", "-print"}},
		{args: []string{"-L", ".", "-ok", "ls", "-Z", ";", "-a", "-print"}, operands: []int{1}, opts: []string{"-L", "-exec", "-a", "-print"}},
		// "+" ends the command only right after "{}".
		{args: []string{".", "-exec", "echo", "+", "-Z", ";", "-print"}, operands: []int{0}, opts: []string{"-exec", "-print"}},
		// A dynamic ";" ends nothing: the rest is the command.
		{args: []string{".", "-exec", "echo", "$x", "-Z"}, dyn: []bool{false, false, false, true, false}, operands: []int{0}, opts: []string{"-exec"}},
		// No terminator: the command runs to the end of the words.
		{args: []string{".", "-exec", "rm", "-Z"}, operands: []int{0}, opts: []string{"-exec"}},
		{args: []string{".", "-exec", ";", "-Z"}, unknown: "-Z"},
		{args: []string{".", "-exec"}, operands: []int{0}, opts: []string{"-exec"}},
		// A primary the spec does not list, after a command, is unknown.
		{args: []string{".", "-exec", "id", ";", "-fprint", "x"}, unknown: "-fprint"},
	} {
		p := sp[0].Parse(tc.args, tc.dyn)
		if p.Unknown != tc.unknown {
			t.Errorf("%q: unknown %q, want %q", tc.args, p.Unknown, tc.unknown)
			continue
		}
		if tc.unknown != "" {
			continue
		}
		var names []string
		for _, o := range p.Options {
			names = append(names, o.Name)
		}
		if !slices.Equal(p.Operands, tc.operands) || !slices.Equal(names, tc.opts) {
			t.Errorf("%q: operands %v options %v, want %v %v", tc.args, p.Operands, names, tc.operands, tc.opts)
		}
	}
}

func TestSpecPlusAndSingle(t *testing.T) {
	sp, err := ParseSpecs("t", "less: @plus -N -p=pat +G +F\nx: @single -s=inert -cols|-c=inert -d -name=pat\n")
	if err != nil {
		t.Fatal(err)
	}
	less, x := sp[0], sp[1]
	if d := less.Describe(); !strings.Contains(d, "+WORD is an initial command") {
		t.Errorf("Describe() = %q, want the +WORD commands said", d)
	}
	for _, tc := range []struct {
		sp      *Spec
		args    []string
		dyn     []bool
		unknown string
		problem bool
		opts    []string
	}{
		{sp: less, args: []string{"+G", "f"}, opts: []string{"+G"}},
		{sp: less, args: []string{"+100", "-N", "f"}, opts: []string{"-N"}},
		{sp: less, args: []string{"+/TODO", "f"}},
		{sp: less, args: []string{"+!id", "f"}, unknown: "+!id"},
		{sp: less, args: []string{"++G", "f"}, unknown: "++G"},
		{sp: less, args: []string{"+Gv", "f"}, unknown: "+Gv"},
		{sp: less, args: []string{"+:e x", "f"}, unknown: "+:e x"},
		{sp: less, args: []string{`"+$c"`, "f"}, dyn: []bool{true, false}, problem: true},
		{sp: less, args: []string{"f", "+"}},
		// Single-dash long options; a word that names none is read as
		// short options.
		{sp: x, args: []string{"-s", "16", "-d", "f"}, opts: []string{"-s", "-d"}},
		{sp: x, args: []string{"-s16", "-cols", "8", "-c4"}, opts: []string{"-s", "-cols", "-cols"}},
		{sp: x, args: []string{"-name", "*.go"}, opts: []string{"-name"}},
		{sp: x, args: []string{"-n", "x"}, opts: []string{"-name"}},
		{sp: x, args: []string{"-z"}, unknown: "-z"},
		{sp: x, args: []string{"-dz"}, unknown: "-dz"},
		{sp: x, args: []string{"--nope"}, unknown: "--nope"},
	} {
		p := tc.sp.Parse(tc.args, tc.dyn)
		if p.Unknown != tc.unknown || (p.Problem != "") != tc.problem {
			t.Errorf("%s %q: unknown %q problem %q, want %q %v", tc.sp.Program, tc.args, p.Unknown, p.Problem, tc.unknown, tc.problem)
			continue
		}
		var names []string
		for _, o := range p.Options {
			names = append(names, o.Name)
		}
		if tc.unknown == "" && !slices.Equal(names, tc.opts) {
			t.Errorf("%s %q: options %v, want %v", tc.sp.Program, tc.args, names, tc.opts)
		}
	}
}
