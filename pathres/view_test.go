package pathres

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// relink points the link at path to target in one step, as a swap by
// rename does.
func relink(t testing.TB, target, path string) {
	t.Helper()
	must(t, swapLink(target, path))
}

func swapLink(target, path string) error {
	tmp := path + ".new"
	os.Remove(tmp)
	return errors.Join(os.Symlink(target, tmp), os.Rename(tmp, path))
}

// TestViewRemembers: within one view a path is resolved once.
func TestViewRemembers(t *testing.T) {
	root, ws := tree(t)
	v := (*Cache)(nil).Begin()
	p, err := v.Resolve(ws, "", "keys/id_rsa")
	must(t, err)
	relink(t, filepath.Join(root, "outside"), filepath.Join(ws, "keys"))
	again, err := v.Resolve(ws, "", "keys/id_rsa")
	must(t, err)
	if again != p {
		t.Fatalf("one view gave %v, then %v", p, again)
	}
	if fresh, _ := (*Cache)(nil).Begin().Resolve(ws, "", "keys/id_rsa"); fresh == p {
		t.Fatal("a new view must resolve afresh")
	}
}

// TestWalkAgrees: the walk that finds what an answer depends on resolves
// every path of the tree as the package does.
func TestWalkAgrees(t *testing.T) {
	root, _ := tree(t)
	for _, rel := range []string{"project/src/main.go", "project/keys/id_rsa", "project/keys/new", "project/inner/main.go",
		"project/dangling", "project/up/notes.txt", "project/src/new/deep.go", "project/src/main.go/x", "project", ""} {
		abs := filepath.Join(root, rel)
		want, wantEx, err := realPath(abs)
		must(t, err)
		got, ex, _, deps, ok := walk(abs, nil)
		if !ok || got != want || ex != wantEx {
			t.Errorf("walk(%s) = %s %v %v, want %s %v", rel, got, ex, ok, want, wantEx)
		}
		for i, d := range deps {
			if d.dir != "/" && !seenDir(deps[:i], d.dir) {
				t.Errorf("walk(%s): %s is looked in before its parent", rel, d.dir)
			}
		}
	}
	if _, _, _, _, ok := walk(filepath.Join(root, "project/loop1/x"), nil); ok {
		t.Error("a link loop must not be kept")
	}
}

// seenDir reports whether dir's parent was looked in, or dir itself.
func seenDir(deps []lookup, dir string) bool {
	for _, d := range deps {
		if d.dir == dir || d.dir == filepath.Dir(dir) {
			return true
		}
	}
	return false
}

func FuzzEachEvent(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 'a', 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, buf []byte) {
		total := 0
		err := eachEvent(buf, func(wd int32, mask uint32, name []byte) {
			total += eventHeader
			for _, b := range name {
				if b == 0 {
					t.Fatalf("name %q holds a NUL", name)
				}
			}
		})
		if err == nil && total > len(buf) {
			t.Fatalf("read %d bytes of headers from %d", total, len(buf))
		}
		if err == nil && len(buf) > 0 && total == 0 {
			t.Fatal("a non-empty buffer with no event must be an error")
		}
	})
}

// TestViewManyPaths: a view that resolves more paths and entries than it
// keeps in its arrays gives, for each, what a fresh resolution gives, the
// first time and again from what it remembers.
func TestViewManyPaths(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	for i := range 40 {
		sub := filepath.Join(dir, "d"+string(rune('a'+i%26))+string(rune('0'+i/26)))
		must(t, os.MkdirAll(sub, 0o755))
		if i%3 == 0 {
			must(t, os.Symlink(sub, sub+"-link"))
		}
	}
	for _, c := range []*Cache{nil, Shared()} {
		v := c.Begin()
		for round := range 2 {
			for i := range 40 {
				name := "d" + string(rune('a'+i%26)) + string(rune('0'+i/26))
				if i%3 == 0 {
					name += "-link"
				}
				got, err := v.Resolve(dir, "", name+"/f")
				must(t, err)
				want, err := Resolve(dir, "", name+"/f")
				must(t, err)
				if got != want {
					t.Errorf("cache %v, round %d: %s resolved to %+v, want %+v", c != nil, round, name, got, want)
				}
				if e, want := v.Lstat(dir, name), lstatEntry(filepath.Join(dir, name)); e != want {
					t.Errorf("cache %v, round %d: Lstat %s = %v, want %v", c != nil, round, name, e, want)
				}
				if e := v.Lstat(dir, name+"-none"); e != Absent {
					t.Errorf("cache %v, round %d: Lstat %s-none = %v, want Absent", c != nil, round, name, e)
				}
			}
		}
	}
}
