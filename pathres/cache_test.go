//go:build linux

package pathres

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/pathres/pathrestest"
	"golang.org/x/sys/unix"
)

func newCache(t *testing.T) *Cache {
	t.Helper()
	c, err := NewCache()
	if err != nil {
		t.Skipf("no path cache here: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// kept reports whether c holds abs's real path or the entry at abs.
func kept(c *Cache, abs string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, r := c.reals[abs]
	_, e := c.ents[lookup{filepath.Dir(abs), filepath.Base(abs)}]
	return r || e
}

// TestCacheSeesChanges: a kept answer is used while nothing changed, and
// every kind of change completed before a view begins is seen by it: the
// answer is then what resolving afresh gives, and differs from the kept
// one.
func TestCacheSeesChanges(t *testing.T) {
	type probe struct {
		path  string // relative to root
		entry bool   // Lstat of the path rather than its real path
	}
	tests := []struct {
		name   string
		probe  probe
		change func(t *testing.T, root string)
	}{
		{"link swapped for another target", probe{path: "project/keys/id_rsa"}, func(t *testing.T, root string) {
			relink(t, filepath.Join(root, "outside"), filepath.Join(root, "project/keys"))
		}},
		{"link replaced by a directory", probe{path: "project/keys/id_rsa"}, func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "project/keys")))
			must(t, os.Mkdir(filepath.Join(root, "project/keys"), 0o755))
		}},
		{"directory replaced by a link", probe{path: "project/src/main.go"}, func(t *testing.T, root string) {
			must(t, os.Rename(filepath.Join(root, "project/src"), filepath.Join(root, "project/src.old")))
			must(t, os.Symlink(filepath.Join(root, "home/.ssh"), filepath.Join(root, "project/src")))
		}},
		{"ancestor renamed", probe{path: "project/src/main.go"}, func(t *testing.T, root string) {
			must(t, os.Rename(filepath.Join(root, "project"), filepath.Join(root, "moved")))
		}},
		{"ancestor replaced by a link", probe{path: "project/src/main.go"}, func(t *testing.T, root string) {
			must(t, os.Rename(filepath.Join(root, "project"), filepath.Join(root, "moved")))
			must(t, os.Symlink(filepath.Join(root, "moved"), filepath.Join(root, "project")))
			must(t, os.Rename(filepath.Join(root, "moved/src"), filepath.Join(root, "moved/other")))
		}},
		{"link in an ancestor's place swapped", probe{path: "project/up/notes.txt"}, func(t *testing.T, root string) {
			relink(t, "../home/.ssh", filepath.Join(root, "project/up"))
		}},
		{"missing file created", probe{path: "project/src/new.go"}, func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "project/src/new.go"), nil, 0o644))
		}},
		{"file removed", probe{path: "project/src/main.go"}, func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "project/src/main.go")))
		}},
		{"dangling link's target created", probe{path: "project/dangling"}, func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "outside/new.txt"), nil, 0o644))
		}},
		{"missing directory created under a link", probe{path: "project/keys/sub/k"}, func(t *testing.T, root string) {
			must(t, os.Mkdir(filepath.Join(root, "home/.ssh/sub"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, "home/.ssh/sub/k"), nil, 0o600))
		}},
		{".toolgate created", probe{path: "project/src/.toolgate", entry: true}, func(t *testing.T, root string) {
			must(t, os.Mkdir(filepath.Join(root, "project/src/.toolgate"), 0o755))
		}},
		{".toolgate removed", probe{path: "project/.toolgate", entry: true}, func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "project/.toolgate")))
		}},
		{".toolgate replaced by a link to a directory", probe{path: "project/.toolgate", entry: true}, func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "project/.toolgate")))
			must(t, os.Symlink(filepath.Join(root, "outside"), filepath.Join(root, "project/.toolgate")))
		}},
		{"project renamed away, another put in its place", probe{path: "project/.toolgate", entry: true}, func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "other/src"), 0o755))
			must(t, os.Rename(filepath.Join(root, "project"), filepath.Join(root, "project.old")))
			must(t, os.Rename(filepath.Join(root, "other"), filepath.Join(root, "project")))
		}},
		{"queue overflowed before a link was swapped", probe{path: "project/keys/id_rsa"}, func(t *testing.T, root string) {
			// More events than an inotify queue holds (16384 by
			// default), in a watched directory, so that the swap's
			// own events are lost and only the overflow tells.
			f := filepath.Join(root, "project/churn")
			for range 12000 {
				must(t, os.WriteFile(f, nil, 0o644))
				must(t, os.Remove(f))
			}
			relink(t, filepath.Join(root, "outside"), filepath.Join(root, "project/keys"))
		}},
		{"link and directory exchanged in one rename", probe{path: "project/keys/id_rsa"}, func(t *testing.T, root string) {
			must(t, os.Mkdir(filepath.Join(root, "project/keys.dir"), 0o755))
			must(t, unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "project/keys"), unix.AT_FDCWD, filepath.Join(root, "project/keys.dir"), unix.RENAME_EXCHANGE))
		}},
		{"hard link made at a missing name", probe{path: "project/src/.toolgate", entry: true}, func(t *testing.T, root string) {
			must(t, os.Link(filepath.Join(root, "outside/notes.txt"), filepath.Join(root, "project/src/.toolgate")))
		}},
		{"name beyond ASCII made beside the one looked up", probe{path: "project/src/main.go"}, func(t *testing.T, root string) {
			must(t, os.Rename(filepath.Join(root, "project/src/main.go"), filepath.Join(root, "project/src/ma\u0131n.go")))
		}},
		{"parent of the tree renamed and replaced", probe{path: "project/src/main.go"}, func(t *testing.T, root string) {
			must(t, os.Rename(root, root+".old"))
			must(t, os.MkdirAll(filepath.Join(root, "project"), 0o755))
			t.Cleanup(func() { os.RemoveAll(root); os.Rename(root+".old", root) })
		}},
		{"tmpfs mounted over a directory", probe{path: "project/src/main.go"}, func(t *testing.T, root string) {
			src := filepath.Join(root, "project/src")
			if err := syscall.Mount("none", src, "tmpfs", 0, ""); err != nil {
				t.Skipf("cannot mount here: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(src, syscall.MNT_DETACH) })
		}},
		{"file system mounted over a directory", probe{path: "project/src/notes.txt"}, func(t *testing.T, root string) {
			src := filepath.Join(root, "project/src")
			if err := syscall.Mount(filepath.Join(root, "outside"), src, "", syscall.MS_BIND, ""); err != nil {
				t.Skipf("cannot bind mount here: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(src, syscall.MNT_DETACH) })
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(t)
			root, _ := tree(t)
			must(t, os.Mkdir(filepath.Join(root, "project/.toolgate"), 0o755))
			abs := filepath.Join(root, tc.probe.path)
			look := func(v *View) any {
				if tc.probe.entry {
					return v.Lstat(filepath.Dir(abs), filepath.Base(abs))
				}
				p, err := v.Resolve("/", "", abs)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			// Other paths first, so that the probe is kept through
			// directories already known.
			warm := c.Begin()
			for _, p := range []string{"project/src/main.go", "project/keys/id_rsa", "outside/notes.txt"} {
				warm.Resolve("/", "", filepath.Join(root, p))
			}
			warm.Lstat(filepath.Join(root, "project"), ".git")
			first := look(c.Begin())
			if !kept(c, abs) {
				t.Fatalf("%s was not kept", abs)
			}
			if again := look(c.Begin()); again != first {
				t.Fatalf("kept answer %v, first %v", again, first)
			}
			tc.change(t, root)
			got := look(c.Begin())
			want := look(nil)
			if want == first {
				t.Fatalf("the change does not change the answer (%v): the test cannot fail", want)
			}
			if got != want {
				t.Fatalf("after the change the view says %v, resolving afresh %v", got, want)
			}
		})
	}
}

// TestCacheRaceSwap swaps a link between two targets while views resolve
// through it: a view begun after a swap completed, with no swap begun
// before it finished, must see that swap's target.
func TestCacheRaceSwap(t *testing.T) {
	c := newCache(t)
	root, _ := tree(t)
	link := filepath.Join(root, "project/data")
	targets := [2]string{filepath.Join(root, "project/src"), filepath.Join(root, "home/.ssh")}
	relink(t, targets[0], link)
	pathrestest.Race{Pause: 50 * time.Microsecond, For: 2 * time.Second, States: 2, Min: 50}.Run(t, func(i int64) error {
		return swapLink(targets[i%2], link)
	}, func(done int64) error {
		want := filepath.Join(targets[done%2], "id_rsa")
		// A walk that a swap changed under it may fail; with no swap
		// running it must not.
		p, err := c.Begin().Resolve(root, "", "project/data/id_rsa")
		if err != nil || p.Real != want {
			return fmt.Errorf("the view sees %s (%v), want %s", p.Real, err, want)
		}
		return nil
	})
}

// TestCacheRacePolicyDir creates and removes a .toolgate/ directory while
// views look for it.
func TestCacheRacePolicyDir(t *testing.T) {
	c := newCache(t)
	root, _ := tree(t)
	dir := filepath.Join(root, "project/src")
	pathrestest.Race{Pause: 60 * time.Microsecond, For: 2 * time.Second, States: 2, Min: 50}.Run(t, func(i int64) error {
		if i%2 == 1 {
			tmp := filepath.Join(dir, ".toolgate.new")
			return errors.Join(os.MkdirAll(tmp, 0o755), os.WriteFile(filepath.Join(tmp, "policy.toml"), nil, 0o644),
				os.Rename(tmp, filepath.Join(dir, ".toolgate")))
		}
		return os.RemoveAll(filepath.Join(dir, ".toolgate"))
	}, func(done int64) error {
		if got, want := c.Begin().Lstat(dir, ".toolgate"), [2]Entry{Absent, Dir}[done%2]; got != want {
			return fmt.Errorf("the view sees %v, want %v", got, want)
		}
		return nil
	})
}

// TestCacheKeepsWhatAChangeDoesNotAffect: a change drops only the answers
// whose walk looked up what changed.
func TestCacheKeepsWhatAChangeDoesNotAffect(t *testing.T) {
	c := newCache(t)
	root, _ := tree(t)
	main := filepath.Join(root, "project/src/main.go")
	key := filepath.Join(root, "home/.ssh/id_rsa")
	v := c.Begin()
	v.Resolve("/", "", main)
	v.Resolve("/", "", key)
	v.Lstat(filepath.Join(root, "project"), ".toolgate")
	// A new file nobody looked up, beside a kept one.
	must(t, os.WriteFile(filepath.Join(root, "project/src/other.go"), nil, 0o644))
	c.Begin()
	if !kept(c, main) || !kept(c, key) || !kept(c, filepath.Join(root, "project/.toolgate")) {
		t.Fatal("a file nobody looked up dropped what was kept")
	}
	// The key replaced: its answer goes, the project's stay.
	must(t, os.Rename(filepath.Join(root, "home/.ssh/id_rsa"), filepath.Join(root, "home/.ssh/id_rsa.old")))
	c.Begin()
	if kept(c, key) {
		t.Fatal("the answer for a renamed file is still kept")
	}
	if !kept(c, main) || !kept(c, filepath.Join(root, "project/.toolgate")) {
		t.Fatal("a change in ~/.ssh dropped answers in the project")
	}
	// The project's directory renamed: everything below it goes.
	must(t, os.Rename(filepath.Join(root, "project"), filepath.Join(root, "moved")))
	c.Begin()
	if kept(c, main) || kept(c, filepath.Join(root, "project/.toolgate")) || c.known(filepath.Join(root, "project/src")) {
		t.Fatal("answers under a renamed directory are still kept")
	}
}

// TestCacheKnownDirectoryReplaced: a directory walked through without
// looking, because its lookups are watched, stops being taken as real as
// soon as it is replaced by a link: what is looked up through the link
// afterwards is watched where the link leads.
func TestCacheKnownDirectoryReplaced(t *testing.T) {
	c := newCache(t)
	root, _ := tree(t)
	src := filepath.Join(root, "project/src")
	if e := c.Begin().Lstat(src, ".toolgate"); e != Absent || !c.known(src) {
		t.Fatalf("first look: %v, known %v", e, c.known(src))
	}
	must(t, os.Rename(src, src+".old"))
	must(t, os.Symlink(filepath.Join(root, "outside"), src))
	if e := c.Begin().Lstat(src, ".toolgate"); e != Absent {
		t.Fatalf("through the link: %v", e)
	}
	must(t, os.Mkdir(filepath.Join(root, "outside/.toolgate"), 0o755))
	if e := c.Begin().Lstat(src, ".toolgate"); e != Dir {
		t.Fatalf("after .toolgate/ was made where the link leads: %v, want %v", e, Dir)
	}
}

// TestCacheBoundsNames: the names registered by fills whose answers are
// never kept (a change keeps starting new generations) do not grow
// without bound in a long-running process.
func TestCacheBoundsNames(t *testing.T) {
	c := newCache(t)
	root, _ := tree(t)
	src := filepath.Join(root, "project/src")
	for i := range maxNamed + 100 {
		deps := []lookup{{src, "n" + strconv.Itoa(i)}}
		if _, _, ok := c.watch(deps); !ok {
			t.Fatalf("watch %s: not watched", src)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, names := range c.names {
		n += len(names)
	}
	if n > maxNamed || c.named != n {
		t.Fatalf("%d names registered (counted %d), at most %d", n, c.named, maxNamed)
	}
}
