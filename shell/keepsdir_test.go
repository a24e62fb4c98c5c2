package shell

import "testing"

// TestKeepsDir: a sourced file that Options.KeepsDir vouches for leaves
// the directory known for the commands after it; without the hook, or when
// it does not vouch, or for a computed path, the directory is unknown.
func TestKeepsDir(t *testing.T) {
	yes := func(dir, file string) bool { return dir == "/p" && file == "./a.sh" }
	cases := []struct {
		name, line string
		keeps      func(dir, file string) bool
		want       string // Dir of the last command
	}{
		{"no hook", "source ./a.sh; cat x", nil, ""},
		{"vouched for", "source ./a.sh; cat x", yes, "/p"},
		{"vouched for with dot", ". ./a.sh; cat x", yes, "/p"},
		{"not vouched for", "source ./b.sh; cat x", yes, ""},
		{"computed path", "source $X; cat x", func(string, string) bool { return true }, ""},
		{"after a cd", "cd sub; source ./a.sh; cat x", yes, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Analyze(c.line, &Options{Dir: "/p", KeepsDir: c.keeps})
			if err != nil {
				t.Fatal(err)
			}
			last := res.Commands[len(res.Commands)-1]
			if last.Name != "cat" || last.Dir != c.want {
				t.Fatalf("last command %q in %q, want cat in %q", last.Name, last.Dir, c.want)
			}
		})
	}
}
