package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/shell"
)

// indexRules are shell and path rules of every shape the index files
// differently.
var indexRules = []string{
	"Bash", "Bash(*)", "Bash(git:*)", "Bash(git status)", "Bash(git status:*)", "Bash(git log -n 5)",
	"Bash(git -C dir status:*)", "Bash(git --no-pager log:*)", "Bash(git * main)", "Bash(git push*)",
	"Bash(git commit -m*)", "Bash(sudo:*)", "Bash(./scripts/x.sh:*)", "Bash(/usr/bin/git status)",
	"Bash(rm -rf:*)", "Bash(rm -r -f /tmp/x)", "Bash(npm run test:*)", "Bash(make)",
	"Read(.env)", "Read(.env.*)", "Read(*.pem)", "Read(src/**)", "Read(src/pkg/*.go)", "Read(src/pkg/file.go)",
	"Read(./src)", "Read(src/{a,b}/x)", "Read(**/secret)", "Read(**/secret/**)", "Read(**/*.key)",
	"Read(~/.ssh/**)", "Read(~)", "Read(~/notes)", "Read(//etc/passwd)", "Read(/etc/**)", "Read(/)",
	"Read(/home/u/proj/src/deep/x)", "Edit(src/**)", "Edit(**/gen/*.go)", "Edit(/tmp/*)", "Edit(dist)",
	"Read(*/x)", "Read(src/*/y/**)", "Read(**)", "Read(src/**/z)",
}

// TestIndexKeepsEveryMatch checks the index against every rule: for each
// command and path, a rule that matches is among the index's candidates,
// for every effect, with and without conservative matching, on prepared
// and unprepared views.
func TestIndexKeepsEveryMatch(t *testing.T) {
	var ask []string
	ask = append(ask, indexRules...)
	f, err := ParseRules(LayerUser, nil, ask, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := buildIndex(f.Rules)
	ctx := &MatchContext{Root: "/home/u/proj", Home: "/home/u"}
	for _, line := range []string{
		"git status", "git status --short", "git -C dir status", "git --no-pager log -n 5", "git log -n 5",
		"git push origin main", "git commit -m wip", "git", "git --version", "git \"$X\" status", "git $(echo status)",
		"sudo git status", "./scripts/x.sh a", "/usr/bin/git status", "rm -rf /tmp/x", "rm -r -f /tmp/x",
		"npm run test -- --watch", "make", "make all", "xargs git status",
	} {
		res, err := shell.Analyze(line, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Commands {
			for _, prepared := range []bool{false, true} {
				v := CommandView{Name: c.Name, Dir: "/home/u/proj", Args: c.Args, Dynamic: c.ArgDynamic, NameDynamic: c.NameDynamic, Wrappers: c.Wrappers}
				if prepared {
					v.Prepare()
				}
				lists := x.Shell(Ask, &v)
				cands := slices.Concat(lists[:]...)
				for _, r := range f.Rules {
					for _, cons := range []bool{false, true} {
						if r.MatchCommand(&v, ctx, cons) && r.Kind != SpecNone && !slices.Contains(cands, r) {
							t.Errorf("%q (prepared %v, conservative %v): %s matches but is not a candidate", line, prepared, cons, r.Text)
						}
					}
				}
			}
		}
	}
	for _, abs := range []string{
		"/home/u/proj/.env", "/home/u/proj/a/.env", "/home/u/proj/.env.local", "/home/u/proj/k.pem",
		"/home/u/proj/src", "/home/u/proj/src/pkg/file.go", "/home/u/proj/src/pkg/file.go/x", "/home/u/proj/src/a/x",
		"/home/u/proj/src/pkg/sub/a.go", "/home/u/proj/x/secret", "/home/u/proj/x/secret/in", "/tmp/secret/a",
		"/home/u/proj/deep/k.key", "/home/u/.ssh/id_rsa", "/home/u/notes", "/home/u/notes/a", "/etc/passwd", "/etc",
		"/home/u/proj/src/deep/x", "/home/u/proj/gen/a.go", "/home/u/proj/q/gen/a.go", "/tmp/a", "/tmp/a/b",
		"/home/u/proj/dist", "/home/u/proj/dist/app.js", "/home/u/proj/p/x", "/home/u/proj/src/q/y/z",
		"/home/u/proj/src/../.env", "/home/u/proj//src/pkg/file.go", "/home/u", "/", "/home/u/proj/src/a/b/z",
	} {
		for _, family := range []string{"read", "write"} {
			var cands []*Rule
			x.EachPath(Ask, family, abs, ctx, func(r *Rule) { cands = append(cands, r) })
			for _, r := range f.Rules {
				for _, cons := range []bool{false, true} {
					if r.MatchPath(family, abs, ctx, cons) && !slices.Contains(cands, r) {
						t.Errorf("%s %s (conservative %v): %s matches but is not a candidate", family, abs, cons, r.Text)
					}
				}
			}
		}
	}
}

// TestIndexNarrows checks that the index files rules so that a call sees
// the rules of its own operand and path, not every rule of its program or
// directory.
func TestIndexNarrows(t *testing.T) {
	var ask []string
	for _, s := range []string{"a", "b", "c", "d"} {
		ask = append(ask, "Bash(git sub"+s+":*)", "Read(src/pkg"+s+"/**)", "Read(**/name"+s+")")
	}
	f, err := ParseRules(LayerUser, nil, ask, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := buildIndex(f.Rules)
	ctx := &MatchContext{Root: "/p", Home: "/h"}
	v := CommandView{Name: "git", Args: []string{"subb", "-v"}}
	v.Prepare()
	lists := x.Shell(Ask, &v)
	if got := ruleTexts(slices.Concat(lists[:]...)); got != "Bash(git subb:*)" {
		t.Errorf("git subb -v: candidates %s", got)
	}
	var cands []*Rule
	x.EachPath(Ask, "read", "/p/src/pkgc/x/namea", ctx, func(r *Rule) { cands = append(cands, r) })
	if got := ruleTexts(cands); got != "Read(src/pkgc/**) Read(**/namea)" {
		t.Errorf("/p/src/pkgc/x/namea: candidates %s", got)
	}
}

// TestIndexFirst checks FirstCommand and FirstPath against a scan of
// every rule in policy order: each returns the first rule that matches.
func TestIndexFirst(t *testing.T) {
	f, err := ParseRules(LayerUser, nil, indexRules, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := buildIndex(f.Rules)
	ctx := &MatchContext{Root: "/home/u/proj", Home: "/home/u"}
	name := func(r *Rule) string {
		if r == nil {
			return "none"
		}
		return r.Text
	}
	for _, cons := range []bool{false, true} {
		for _, words := range [][]string{{"git", "status"}, {"git", "push", "origin", "main"}, {"rm", "-rf", "/tmp/x"}, {"make"}, {"ls"}} {
			v := CommandView{Name: words[0], Args: words[1:], Dir: "/home/u/proj"}
			v.Prepare()
			var want *Rule
			for _, r := range f.Rules {
				if want == nil && r.Kind == SpecCommand && r.MatchCommand(&v, ctx, cons) {
					want = r
				}
			}
			if got := x.FirstCommand(Ask, &v, ctx, cons); got != want {
				t.Errorf("%v (conservative %v): FirstCommand %s, want %s", words, cons, name(got), name(want))
			}
		}
		for _, abs := range []string{"/home/u/proj/src/pkg/file.go", "/home/u/proj/x/secret", "/etc/passwd", "/home/u/proj/gen/a.go", "/srv/none"} {
			for _, family := range []string{"read", "write"} {
				var want *Rule
				for _, r := range f.Rules {
					if want == nil && r.Kind != SpecNone && r.MatchPath(family, abs, ctx, cons) {
						want = r
					}
				}
				if got := x.FirstPath(Ask, family, abs, ctx, cons); got != want {
					t.Errorf("%s %s (conservative %v): FirstPath %s, want %s", family, abs, cons, name(got), name(want))
				}
			}
		}
	}
}

func ruleTexts(rs []*Rule) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Text)
	}
	return strings.Join(out, " ")
}

// FuzzIndex checks, for any rule, path and command line, that a rule
// which matches is among the index's candidates.
func FuzzIndex(f *testing.F) {
	for i, r := range indexRules {
		f.Add(r, "/home/u/proj/src/pkg/file.go", "git status --short")
		f.Add(r, []string{"/home/u/.ssh/id_rsa", "/home/u/proj/x/secret/a", "/etc/passwd"}[i%3], []string{"git -C d log", "rm -rf x", "npm run test"}[i%3])
	}
	ctx := &MatchContext{Root: "/home/u/proj", Home: "/home/u"}
	f.Fuzz(func(t *testing.T, rule, abs, line string) {
		file, err := ParseRules(LayerUser, nil, []string{rule}, nil)
		if err != nil || len(file.Rules) != 1 {
			return
		}
		r := file.Rules[0]
		x := buildIndex(file.Rules)
		if strings.HasPrefix(abs, "/") {
			for _, family := range []string{"read", "write"} {
				found := false
				x.EachPath(Ask, family, abs, ctx, func(c *Rule) { found = found || c == r })
				for _, cons := range []bool{false, true} {
					if !found && r.MatchPath(family, abs, ctx, cons) {
						t.Fatalf("%s %s (conservative %v): %s matches but is not a candidate", family, abs, cons, r.Text)
					}
				}
			}
		}
		res, err := shell.Analyze(line, nil)
		if err != nil {
			return
		}
		for _, c := range res.Commands {
			v := CommandView{Name: c.Name, Dir: "/home/u/proj", Args: c.Args, Dynamic: c.ArgDynamic, NameDynamic: c.NameDynamic, Wrappers: c.Wrappers}
			v.Prepare()
			lists := x.Shell(Ask, &v)
			found := r.Kind == SpecNone || slices.Contains(slices.Concat(lists[:]...), r)
			for _, cons := range []bool{false, true} {
				if !found && r.MatchCommand(&v, ctx, cons) {
					t.Fatalf("%q (conservative %v): %s matches but is not a candidate", line, cons, r.Text)
				}
			}
		}
	})
}

// TestPathRulesHoldsEvery checks that PathRules returns every path rule of
// an effect and family, in policy order, so that a read of a whole tree
// meets each rule naming something below it: Read(**/secret/**) below a
// directory searched recursively among them.
func TestPathRulesHoldsEvery(t *testing.T) {
	f, err := ParseRules(LayerUser, nil, indexRules, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := buildIndex(f.Rules)
	for _, family := range []string{"read", "write"} {
		var want []*Rule
		for _, r := range f.Rules {
			if r.Kind == SpecPath && r.Tool.PathFamily() == family {
				want = append(want, r)
			}
		}
		if got := x.PathRules(Ask, family); !slices.Equal(got, want) {
			t.Errorf("%s: PathRules %s, want %s", family, ruleTexts(got), ruleTexts(want))
		}
		if got := x.PathRules(Deny, family); len(got) != 0 {
			t.Errorf("%s: deny PathRules %s, want none", family, ruleTexts(got))
		}
	}
	if got := x.PathRules(Ask, ""); len(got) != 0 {
		t.Errorf("no family: PathRules %s, want none", ruleTexts(got))
	}
	ctx := &MatchContext{Root: "/home/u/proj", Home: "/home/u"}
	below := false
	for _, r := range x.PathRules(Ask, "read") {
		below = below || r.Text == "Read(**/secret/**)" && r.MatchBelow("/home/u/proj", ctx)
	}
	if !below {
		t.Error("a read of the project tree does not meet Read(**/secret/**)")
	}
}
