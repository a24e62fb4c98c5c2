package policy

import "testing"

// TestPathGlobsAsWritten checks every form of path pattern for allow, ask
// and deny rules: "*" never crosses "/", "**" does, and only a pattern
// without wildcards covers what lies below what it names. Deny and ask
// rules (matched conservatively) also cover what lies below a directory
// they match, and their slash-free patterns match outside the project.
func TestPathGlobsAsWritten(t *testing.T) {
	ctx := &MatchContext{Root: "/w/p", Home: "/h"}
	tests := []struct {
		spec, path string
		allow      bool // as an allow rule
		denyAsk    bool // as a deny or an ask rule
	}{
		// /abs/*: files directly in /d.
		{"/d/*", "/d/a", true, true},
		{"/d/*", "/d/a/b", false, true},
		{"/d/*", "/d", false, false},
		{"/d/*", "/d-old/a", false, false},
		{"//d/*", "/d/a/b", false, true},
		// /abs/**: everything below /d, and /d itself.
		{"/d/**", "/d/a", true, true},
		{"/d/**", "/d/a/b/c", true, true},
		{"/d/**", "/d", true, true},
		{"/d/**", "/e/a", false, false},
		// /abs/**/x: a name x at any depth below /d.
		{"/d/**/x", "/d/x", true, true},
		{"/d/**/x", "/d/a/b/x", true, true},
		{"/d/**/x", "/d/a/x/y", false, true},
		{"/d/**/x", "/d/a/y", false, false},
		// /abs/*.ext: the wildcard stays in the last segment.
		{"/d/*.pem", "/d/a.pem", true, true},
		{"/d/*.pem", "/d/sub/a.pem", false, false},
		// ./rel/*: relative to the project root.
		{"./src/*", "/w/p/src/a", true, true},
		{"./src/*", "/w/p/src/a/b", false, true},
		{"./src/*", "/w/p/x/src/a", false, false},
		{"src/*", "/w/p/src/a/b", false, true},
		// rel without a slash and without wildcards: a name at any depth,
		// and what lies below it.
		{"build", "/w/p/build", true, true},
		{"build", "/w/p/build/x/y", true, true},
		{"build", "/w/p/a/build/x", true, true},
		{"build", "/elsewhere/build/x", false, true},
		{"build", "/w/p/builds", false, false},
		// rel/sub without wildcards: anchored at the root, with what is below.
		{"src/gen", "/w/p/src/gen/x/y", true, true},
		{"src/gen", "/w/p/a/src/gen", false, false},
		{"src/gen/", "/w/p/src/gen/x", true, true},
		// ~/x/*: relative to the home directory.
		{"~/x/*", "/h/x/a", true, true},
		{"~/x/*", "/h/x/a/b", false, true},
		{"~/x/*", "/h/y/a", false, false},
		{"~/x", "/h/x/a/b", true, true},
		// *.env: a name at any depth; not what lies below a directory so named.
		{"*.env", "/w/p/a.env", true, true},
		{"*.env", "/w/p/sub/b.env", true, true},
		{"*.env", "/w/p/c.env/inner", false, true},
		{"*.env", "/other/a.env", false, true},
		{"*.env", "/w/p/a.envx", false, false},
		// **/*.pem: anchored at the root, at any depth.
		{"**/*.pem", "/w/p/a.pem", true, true},
		{"**/*.pem", "/w/p/x/y/a.pem", true, true},
		{"**/*.pem", "/w/p/a.pem/k", false, true},
		{"**/*.pem", "/other/a.pem", false, false},
		// /dir and /dir/: a directory named without a glob covers below it.
		{"/d", "/d", true, true},
		{"/d", "/d/a/b", true, true},
		{"/d", "/d2/a", false, false},
		{"/d/", "/d", true, true},
		{"/d/", "/d/a/b", true, true},
		{"/d/", "/d2", false, false},
		// Other wildcards stay within a segment too.
		{"/d/?", "/d/a/b", false, true},
		{"/d/[ab]", "/d/a", true, true},
		{"/d/[ab]", "/d/a/b", false, true},
		{"/d/{a,b}", "/d/b/c", false, true},
		// An escaped wildcard is a literal character, not a directory name.
		{"/d/\\*", "/d/*", true, true},
		{"/d/\\*", "/d/*/x", false, true},
		{"/d/\\*", "/d/a", false, false},
	}
	for _, tc := range tests {
		for _, eff := range []Decision{Allow, Ask, Deny} {
			for _, tool := range []string{"Read", "Edit", "Write"} {
				r, err := ParseRule(tool+"("+tc.spec+")", eff, Position{})
				if err != nil {
					t.Fatalf("%s(%s): %v", tool, tc.spec, err)
				}
				family := r.Tool.PathFamily()
				// The engine matches deny and ask rules conservatively.
				conservative := eff != Allow
				want := tc.allow
				if conservative {
					want = tc.denyAsk
				}
				if got := r.MatchPath(family, tc.path, ctx, conservative); got != want {
					t.Errorf("%s rule %s vs %s = %v, want %v", eff, r.Text, tc.path, got, want)
				}
			}
		}
	}
}

// TestSecretsDirDeny is the reading a person writing a deny rule for a
// directory's files expects: every file directly in it is denied, and so is
// what lies in its subdirectories.
func TestSecretsDirDeny(t *testing.T) {
	ctx := &MatchContext{Root: "/w/p", Home: "/h"}
	deny := mustRule(t, "Read(/secrets/*)")
	deny.Effect = Deny
	for _, p := range []string{"/secrets/key", "/secrets/.hidden", "/secrets/sub", "/secrets/sub/key", "/secrets/a/b/c"} {
		if !deny.MatchPath("read", p, ctx, true) {
			t.Errorf("deny Read(/secrets/*) does not deny %s", p)
		}
	}
	for _, p := range []string{"/secrets", "/secrets-old/key", "/other/secrets/key"} {
		if deny.MatchPath("read", p, ctx, true) {
			t.Errorf("deny Read(/secrets/*) denies %s", p)
		}
	}
}

// TestMatchBelow checks which rules name something inside a tree that is
// read whole (grep -r, Grep): a wildcard below the tree's root counts.
func TestMatchBelow(t *testing.T) {
	ctx := &MatchContext{Root: "/w/p", Home: "/h"}
	for _, tc := range []struct {
		spec, tree string
		want       bool
	}{
		{"/secrets/*", "/secrets", true},
		{"/secrets/*", "/", true},
		{"/secrets/**/*.key", "/secrets", true},
		{"/secrets/key", "/secrets", true},
		{"/secrets", "/secrets", false}, // the path itself: MatchPath matches it
		{"/secrets/*", "/secrets/sub", false},
		{"/secrets/*", "/other", false},
		{"~/.ssh/*", "/h", true},
		{"src/*", "/w/p/src", true},
		{"*.env", "/w/p", false}, // not anchored
		// a tree the pattern can go on below, whatever its literal part
		{"**/vault/**", "/w/p", true},
		{"**/vault/**", "/w/p/config", true},
		{"**/vault/**", "/w/p/config/vault", true},
		{"**/vault/**", "/w", true}, // holds the project
		{"**/vault/**", "/elsewhere", false},
		{"src/*/keys/**", "/w/p/src", true},
		{"src/*/keys/**", "/w/p/src/app", true},
		{"src/*/keys/**", "/w/p/src/app/keys", true},
		{"src/*/keys/**", "/w/p/src/app/other", false},
		{"src/*/keys/**", "/w/p/docs", false},
		{"src/{a,b}/k", "/w/p/src/b", true},
		{"src/{a,b}/k", "/w/p/src/c", false},
		{"/secrets/[ab]*/k", "/secrets/b1", true},
		{"/secrets/[ab]*/k", "/secrets/c1", false},
		// an alternative holding a slash spans segments: below it may match
		{"{a,b/c}/secret/**", "/w/p/b/c", true},
		{"{a,b/c}/secret/**", "/w/p/a", true},
		{"/x/{a,b/c}/k", "/x/b", true},
	} {
		r := mustRule(t, "Read("+tc.spec+")")
		if got := r.MatchBelow(tc.tree, ctx); got != tc.want {
			t.Errorf("Read(%s).MatchBelow(%s) = %v, want %v", tc.spec, tc.tree, got, tc.want)
		}
	}
}
