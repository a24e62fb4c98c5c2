package pathres

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree makes a temp dir with a workspace, a sibling with a prefix name,
// and links in and out of the workspace.
func tree(t *testing.T) (root, ws string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws = filepath.Join(root, "project")
	for _, d := range []string{"project/src", "project-old", "home/.ssh", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"project/src/main.go", "home/.ssh/id_rsa", "outside/notes.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"project/keys":     filepath.Join(root, "home/.ssh"), // escapes
		"project/inner":    "src",                            // stays inside
		"project/dangling": filepath.Join(root, "outside/new.txt"),
		"project/loop1":    "loop2",
		"project/loop2":    "loop1",
		"project/up":       "../outside",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	return root, ws
}

func TestResolve(t *testing.T) {
	root, ws := tree(t)
	home := filepath.Join(root, "home")
	tests := []struct {
		name, cwd, raw string
		real           string // relative to root; "" means unknown
		exists         bool
		symlink        bool
		inside         bool
	}{
		{"relative file", ws, "src/main.go", "project/src/main.go", true, false, true},
		{"dot-dot stays", ws, "src/../src/main.go", "project/src/main.go", true, false, true},
		{"dot-dot escapes", ws, "../outside/notes.txt", "outside/notes.txt", true, false, false},
		{"prefix trap", ws, "../project-old", "project-old", true, false, false},
		{"tilde", ws, "~/.ssh/id_rsa", "home/.ssh/id_rsa", true, false, false},
		{"symlink escape", ws, "keys/id_rsa", "home/.ssh/id_rsa", true, true, false},
		{"symlink inside", ws, "inner/main.go", "project/src/main.go", true, true, true},
		{"new file under escaping link", ws, "keys/new_key", "home/.ssh/new_key", false, true, false},
		{"dangling link", ws, "dangling", "outside/new.txt", false, true, false},
		{"relative link", ws, "up/notes.txt", "outside/notes.txt", true, true, false},
		{"missing file inside", ws, "src/new/deep.go", "project/src/new/deep.go", false, false, true},
		{"absolute", "/", filepath.Join(ws, "src"), "project/src", true, false, true},
		// ".." after a link leaves the link's target, as the kernel does.
		{"dot-dot after an escaping link", ws, "keys/../.ssh/id_rsa", "home/.ssh/id_rsa", true, true, false},
		{"dot-dot after a relative link", ws, "up/../home/.ssh/id_rsa", "home/.ssh/id_rsa", true, true, false},
		{"new file beside a link's target", ws, "keys/../new.txt", "home/new.txt", false, true, false},
		{"dot-dot after a link inside", ws, "inner/../src/main.go", "project/src/main.go", true, false, true},
		{"absolute dot-dot after a link", "/", ws + "/keys/../.ssh/id_rsa", "home/.ssh/id_rsa", true, true, false},
		{"tilde dot-dot after a link", ws, "~/../project/keys/../.ssh/id_rsa", "home/.ssh/id_rsa", true, true, false},
		{"unknown cwd", "", "src/main.go", "", false, false, false},
		{"tilde unknown user", ws, "~no-such-user-here/x", "", false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Resolve(tc.cwd, home, tc.raw)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if tc.real == "" {
				if !p.Unknown {
					t.Fatalf("want Unknown, got %+v", p)
				}
				return
			}
			want := filepath.Join(root, tc.real)
			if p.Real != want || p.Exists != tc.exists || p.Symlink != tc.symlink {
				t.Errorf("got real=%s exists=%v symlink=%v, want %s %v %v", p.Real, p.Exists, p.Symlink, want, tc.exists, tc.symlink)
			}
			if got := Within(ws, p.Real); got != tc.inside {
				t.Errorf("Within(%s, %s) = %v, want %v", ws, p.Real, got, tc.inside)
			}
		})
	}
}

func TestResolveLoop(t *testing.T) {
	_, ws := tree(t)
	if _, err := Resolve(ws, "", "loop1/x"); err == nil {
		t.Fatal("a symlink loop must be an error, not a guess")
	}
	if _, err := Resolve(ws, "", ""); err != ErrEmpty {
		t.Fatalf("empty path: got %v", err)
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		root, path string
		want       bool
	}{
		{"/work/project", "/work/project", true},
		{"/work/project", "/work/project/a/b", true},
		{"/work/project", "/work/project-old", false},
		{"/work/project", "/work/project-old/x", false},
		{"/work/project", "/work", false},
		{"/work/project", "/work/project/../other", false},
		{"/work/project/", "/work/project/x", true},
		{"/", "/anything", true},
		{"", "/x", false},
		{"/a", "", false},
		{"/a", "/a/..b", true}, // "..b" is a name, not a parent
	}
	for _, tc := range tests {
		if got := Within(tc.root, tc.path); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.root, tc.path, got, tc.want)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "~/.ssh", "~bob", "/abs/../x", "./././", "a//b/", "..", "~", "\x00"} {
		f.Add("/work/p", s)
	}
	f.Fuzz(func(t *testing.T, cwd, raw string) {
		if strings.ContainsRune(raw, 0) || strings.ContainsRune(cwd, 0) {
			return
		}
		abs, ok := Absolute(cwd, "/home/u", raw)
		if !ok {
			return
		}
		if !filepath.IsAbs(abs) || filepath.Clean(abs) != abs {
			t.Fatalf("Absolute(%q, %q) = %q: not a clean absolute path", cwd, raw, abs)
		}
		if Within(abs, abs) != true {
			t.Fatalf("a path must be within itself: %q", abs)
		}
		if abs != "/" && Within(abs, filepath.Dir(abs)) {
			t.Fatalf("a parent must not be within its child: %q", abs)
		}
		if abs != "/" && Within(abs, abs+"-old") {
			t.Fatalf("prefix trap: %q-old within %q", abs, abs)
		}
	})
}

func TestTildeUser(t *testing.T) {
	p, err := Resolve("/", "", "~root/.ssh")
	if err != nil {
		t.Fatal(err)
	}
	if p.Unknown || !strings.HasSuffix(p.Abs, "/.ssh") || !filepath.IsAbs(p.Abs) {
		t.Fatalf("~root/.ssh: %+v", p)
	}
}

// TestRealDotDotAfterLink: Real leaves a link's target on "..", as chdir
// does.
func TestRealDotDotAfterLink(t *testing.T) {
	root, ws := tree(t)
	if got, want := Real(filepath.Join(ws, "keys")+"/.."), filepath.Join(root, "home"); got != want {
		t.Fatalf("Real = %s, want %s", got, want)
	}
}

// TestResolveDanglingDotDot: a dangling link's target is followed as the
// kernel follows it when a write creates it: a ".." after a link in the
// target leaves that link's target, through the view and the cache alike.
func TestResolveDanglingDotDot(t *testing.T) {
	root, ws := tree(t)
	for link, target := range map[string]string{
		"rel": "keys/../.ssh/authorized_keys",
		"abs": ws + "/keys/../.ssh/authorized_keys",
		"via": "inner/../keys/../new",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewCache()
	if err != nil {
		t.Skip("no cache:", err)
	}
	defer c.Close()
	for _, tc := range []struct{ raw, want string }{
		{"rel", filepath.Join(root, "home/.ssh/authorized_keys")},
		{"abs", filepath.Join(root, "home/.ssh/authorized_keys")},
		{"via", filepath.Join(root, "home/new")},
		{"dangling", filepath.Join(root, "outside/new.txt")},
	} {
		for i, v := range []*View{nil, c.Begin(), c.Begin()} {
			p, err := v.Resolve(ws, "", tc.raw)
			if err != nil || p.Real != tc.want || p.Exists {
				t.Errorf("%s (view %d): %+v, %v; want %s, not existing", tc.raw, i, p, err, tc.want)
			}
		}
	}
}

// TestCleanParent checks Clean and Parent against filepath.Clean and
// filepath.Dir.
func TestCleanParent(t *testing.T) {
	for _, p := range []string{
		"/", "/a", "/a/b", "/a/b/", "//a", "/a//b", "/./a", "/a/.", "/a/..", "/a/../b", "/..", "/.a", "/a..", "/...",
		"/a/.b/c", "a", "", ".", "a/b", "/a/b/c.go", "/a/./b", "a/../..", "/a/b/../../..",
	} {
		if got, want := Clean(p), filepath.Clean(p); got != want {
			t.Errorf("Clean(%q) = %q, want %q", p, got, want)
		}
		if got, want := Parent(p), filepath.Dir(p); got != want {
			t.Errorf("Parent(%q) = %q, want %q", p, got, want)
		}
	}
}

// FuzzCleanParent checks Clean and Parent against filepath.Clean and
// filepath.Dir on any path.
func FuzzCleanParent(f *testing.F) {
	for _, p := range []string{"/", "/a/b", "/a/../b", "//x", "/a/./b/", "rel", "/a/b/c"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, want := Clean(p), filepath.Clean(p); got != want {
			t.Fatalf("Clean(%q) = %q, want %q", p, got, want)
		}
		if got, want := Parent(p), filepath.Dir(p); got != want {
			t.Fatalf("Parent(%q) = %q, want %q", p, got, want)
		}
	})
}
