//go:build linux

package pathres

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/pathres/pathrestest"
	"golang.org/x/sys/unix"
)

// propNames are the names the random operations use: few, so that
// operations collide, with two that differ only in case and one that
// is not UTF-8 and holds a newline.
var propNames = []string{"a", "b", "A", "l", ".toolgate", "\xe9\n"}

// propPaths returns every path of up to three names (and an occasional
// "..") below root, as a call would spell them.
func propPaths(root string) []string {
	var out []string
	var rec func(p string, depth int)
	rec = func(p string, depth int) {
		out = append(out, p)
		if depth == 3 {
			return
		}
		for _, n := range append(propNames, "..") {
			rec(p+"/"+n, depth+1)
		}
	}
	rec(root, 0)
	return out
}

// propOp makes one random change under root (and outside, a sibling
// directory standing for what lies outside the workspace), as an agent
// could, and returns what it did.
func propOp(r *rand.Rand, root, outside string) string {
	pick := func() string {
		p := root
		for i, n := 0, 1+r.Intn(3); i < n; i++ {
			p = filepath.Join(p, propNames[r.Intn(len(propNames))])
		}
		return p
	}
	targets := []string{outside, "..", "../..", "a", "b/a", "A", root, filepath.Join(outside, "x"), "."}
	switch k := r.Intn(9); k {
	case 0:
		p := pick()
		return fmt.Sprintf("mkdir %s: %v", p, os.Mkdir(p, 0o755))
	case 1:
		p, t := pick(), targets[r.Intn(len(targets))]
		return fmt.Sprintf("symlink %s -> %s: %v", p, t, os.Symlink(t, p))
	case 2:
		p := pick()
		return fmt.Sprintf("create %s: %v", p, os.WriteFile(p, nil, 0o644))
	case 3:
		p := pick()
		return fmt.Sprintf("remove %s: %v", p, os.RemoveAll(p))
	case 4, 5:
		a, b := pick(), pick()
		return fmt.Sprintf("rename %s %s: %v", a, b, os.Rename(a, b))
	case 6:
		a, b := pick(), pick()
		return fmt.Sprintf("exchange %s %s: %v", a, b, unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE))
	case 7:
		p := pick()
		q := filepath.Join(outside, fmt.Sprint(r.Intn(1000)))
		return fmt.Sprintf("move out %s: %v", p, os.Rename(p, q))
	default:
		p := pick()
		q := filepath.Join(outside, "x")
		os.MkdirAll(q, 0o755)
		return fmt.Sprintf("move in %s: %v", p, os.Rename(q, p))
	}
}

// TestCacheMatchesFresh: after each of many random changes to a small
// tree, every path resolved and every entry looked at through a view of
// a long-lived Cache is what resolving afresh gives.
func TestCacheMatchesFresh(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for i := range 2 * seeds {
		seed, onShm := i/2, i%2 == 1
		t.Run(fmt.Sprint(seed, map[bool]string{true: "/tmpfs"}[onShm]), func(t *testing.T) {
			c := newCache(t)
			base := t.TempDir()
			if onShm {
				// /dev/shm is tmpfs on Linux: the other kind of file
				// system the cache trusts that is at hand.
				var st unix.Statfs_t
				if unix.Statfs("/dev/shm", &st) != nil || st.Type != unix.TMPFS_MAGIC {
					t.Skip("no tmpfs at /dev/shm")
				}
				var err error
				if base, err = os.MkdirTemp("/dev/shm", "pathres"); err != nil {
					t.Skip(err)
				}
				t.Cleanup(func() { os.RemoveAll(base) })
			}
			root, outside := filepath.Join(base, "w"), filepath.Join(base, "out")
			must(t, os.Mkdir(root, 0o755))
			must(t, os.Mkdir(outside, 0o755))
			paths := propPaths(root)
			r := rand.New(rand.NewSource(int64(seed)))
			var log []string
			hits := 0
			for step := 0; step < 60; step++ {
				log = append(log, propOp(r, root, outside))
				v := c.Begin()
				c.mu.Lock()
				hits += len(c.reals) + len(c.ents)
				c.mu.Unlock()
				// Probe a random part of the paths each step, so that
				// some answers are kept for several steps.
				for i, p := range paths {
					if (i+step)%3 != 0 {
						continue
					}
					got, gerr := v.Resolve(root, "", p)
					want, werr := Resolve(root, "", p)
					if got != want || (gerr == nil) != (werr == nil) {
						t.Fatalf("after\n%s\nResolve %q: cached %+v (%v), fresh %+v (%v)", strings.Join(log, "\n"), p, got, gerr, want, werr)
					}
					if want.Real != "" && !want.Unknown {
						d, n := filepath.Dir(p), filepath.Base(p)
						if n == ".." {
							continue
						}
						if g, w := v.Lstat(d, n), (*View)(nil).Lstat(d, n); g != w {
							t.Fatalf("after\n%s\nLstat %q: cached %v, fresh %v", strings.Join(log, "\n"), p, g, w)
						}
					}
				}
			}
			if hits == 0 {
				t.Fatal("nothing was kept: the test compares nothing")
			}
			t.Logf("kept answers seen at the start of views: %d", hits)
		})
	}
}

// TestCacheMatchesFreshRacing: random changes run in the background
// while views resolve; every view begun after a change completed, with
// no change begun before its answers and fresh ones were all made, must
// agree with resolving afresh.
func TestCacheMatchesFreshRacing(t *testing.T) {
	c := newCache(t)
	base := t.TempDir()
	root, outside := filepath.Join(base, "w"), filepath.Join(base, "out")
	must(t, os.Mkdir(root, 0o755))
	must(t, os.Mkdir(outside, 0o755))
	paths := propPaths(root)
	changes := rand.New(rand.NewSource(1))
	r := rand.New(rand.NewSource(2))
	pathrestest.Race{Pause: 50 * time.Microsecond, For: 3 * time.Second, States: 1, Min: 100}.Run(t, func(int64) error {
		propOp(changes, root, outside)
		return nil
	}, func(int64) error {
		v := c.Begin()
		p := paths[r.Intn(len(paths))]
		got, gerr := v.Resolve(root, "", p)
		d, n := filepath.Dir(p), filepath.Base(p)
		ge := v.Lstat(d, n)
		want, werr := Resolve(root, "", p)
		we := (*View)(nil).Lstat(d, n)
		if got != want || (gerr == nil) != (werr == nil) || (n != ".." && ge != we) {
			return fmt.Errorf("%q: cached %+v %v (%v), fresh %+v %v (%v)", p, got, ge, gerr, want, we, werr)
		}
		return nil
	})
}

// TestCacheLongPath: a path longer than the kernel takes in one call
// (PATH_MAX) is not judged as if no link were in it, with the cache or
// without, however the link deep inside it is swapped.
func TestCacheLongPath(t *testing.T) {
	c := newCache(t)
	root, _ := tree(t)
	deep := root
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	name := strings.Repeat("d", 200)
	for range 24 {
		must(t, unix.Mkdirat(fd, name, 0o755))
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		must(t, err)
		fd, deep = next, deep+"/"+name
	}
	defer unix.Close(fd)
	swap := func(target string) {
		unix.Unlinkat(fd, "l.new", 0)
		must(t, unix.Symlinkat(target, fd, "l.new"))
		must(t, unix.Renameat(fd, "l.new", fd, "l"))
	}
	swap(filepath.Join(root, "outside"))
	p := deep + "/l/id_rsa"
	for i, target := range []string{filepath.Join(root, "home/.ssh"), filepath.Join(root, "outside"), filepath.Join(root, "home/.ssh")} {
		c.Begin().Resolve("/", "", p)
		got, gerr := c.Begin().Resolve("/", "", p)
		want, werr := Resolve("/", "", p)
		if werr == nil && !want.Symlink {
			t.Fatalf("step %d: %s taken as no link (%+v): the link was not followed", i, p, want)
		}
		if got != want || (gerr == nil) != (werr == nil) {
			t.Fatalf("step %d: cached %+v (%v), fresh %+v (%v)", i, got, gerr, want, werr)
		}
		swap(target)
	}
	// From deep, l/.. is the directory holding home/, and more ".."
	// climb to /: taken lexically they would stay below the tree.
	up := deep + "/l/" + strings.Repeat("../", 12) + "etc/hostname"
	for _, v := range []*View{nil, c.Begin()} {
		if p, err := v.Resolve("/", "", up); err == nil && Within(root, p.Real) {
			t.Fatalf("%s taken as %s, below the tree", up, p.Real)
		}
	}
	t.Cleanup(func() { exec.Command("rm", "-rf", root).Run() })
}
