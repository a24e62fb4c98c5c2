package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/pathres/pathrestest"
	"github.com/toolgate/toolgate/policy"
)

// TestChecksRacingChanges changes the file system between two states
// while one engine decides the same request again and again: every
// decision that begins after a change completed, with no change begun
// before it finished, must be the decision of that change's state — a
// link swapped between the project and ~/.ssh, a nested project's
// .toolgate/policy.toml appearing and going, the cwd's own .toolgate/
// appearing and going.
func TestChecksRacingChanges(t *testing.T) {
	if runtime.GOOS == "linux" && pathres.Shared() == nil {
		t.Fatal("no path cache on Linux: the race would not test it")
	}
	const deny = "[permissions]\ndeny = [\"Read(**)\"]\n"
	// policyDir makes dir/.toolgate appear (on) or go (off) in one
	// rename.
	policyDir := func(dir string, on bool) error {
		if on {
			tmp := filepath.Join(dir, ".toolgate.new")
			return errors.Join(os.MkdirAll(tmp, 0o755), os.WriteFile(filepath.Join(tmp, "policy.toml"), []byte(deny), 0o644),
				os.Rename(tmp, filepath.Join(dir, ".toolgate")))
		}
		if _, err := os.Lstat(filepath.Join(dir, ".toolgate")); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		old := filepath.Join(dir, ".toolgate.old")
		return errors.Join(os.Rename(filepath.Join(dir, ".toolgate"), old), os.RemoveAll(old))
	}
	tests := []struct {
		name  string
		cwd   string // relative to the project
		file  string
		state func(w *world, on bool) error
		want  [2]policy.Decision // off, on
	}{
		{"link swapped between the project and ~/.ssh", "", "data/main.go", func(w *world, on bool) error {
			target := filepath.Join(w.project, "src")
			if on {
				target = filepath.Join(w.home, ".ssh")
			}
			tmp := filepath.Join(w.project, "data.new")
			os.Remove(tmp)
			return errors.Join(os.Symlink(target, tmp), os.Rename(tmp, filepath.Join(w.project, "data")))
		}, [2]policy.Decision{policy.Allow, policy.Deny}},
		{"nested project's policy appears and goes", "", "src/main.go", func(w *world, on bool) error {
			return policyDir(filepath.Join(w.project, "src"), on)
		}, [2]policy.Decision{policy.Allow, policy.Deny}},
		{"the cwd's own .toolgate appears and goes", "src", "main.go", func(w *world, on bool) error {
			return policyDir(filepath.Join(w.project, "src"), on)
		}, [2]policy.Decision{policy.Allow, policy.Deny}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			user := filepath.Join(w.home, ".config/toolgate/policy.toml")
			must(t, os.WriteFile(user, []byte("trusted_projects = [\""+w.project+"\"]\n"), 0o644))
			e, err := New(Options{Policy: FromFiles(filepath.Join(w.dir, "etc/managed.toml"), user), Home: w.home})
			must(t, err)
			must(t, tc.state(w, false))
			req := &Request{Tool: "Read", Cwd: filepath.Join(w.project, tc.cwd), Input: fp(tc.file)}
			ctx := context.Background()
			// Each state decided once, quietly, so the test knows it
			// tells them apart.
			for i, on := range []bool{true, false} {
				must(t, tc.state(w, on))
				if d := e.Check(ctx, req); d.Decision != tc.want[1-i] {
					t.Fatalf("state %v: got %s (%s), want %s", on, d.Decision, d.Message, tc.want[1-i])
				}
			}
			pathrestest.Race{Pause: 100 * time.Microsecond, For: time.Second, States: 2, Min: 20}.Run(t, func(i int64) error {
				return tc.state(w, i%2 == 1)
			}, func(done int64) error {
				d := e.Check(ctx, req)
				if want := tc.want[done%2]; d.Decision != want {
					return fmt.Errorf("got %s (%s), want %s", d.Decision, d.Message, want)
				}
				return nil
			})
		})
	}
}

// TestPathCacheOff: with NoPathCache an engine still decides as with it.
func TestPathCacheOff(t *testing.T) {
	w := newWorld(t)
	set, err := policy.Merge()
	must(t, err)
	for _, off := range []bool{false, true} {
		e, err := New(Options{Policy: Fixed(set), Home: w.home, NoPathCache: off})
		must(t, err)
		for range 3 {
			req := &Request{Tool: "Read", Cwd: w.project, Input: fp("keys/id_rsa")}
			if d := e.Check(context.Background(), req); d.Decision != policy.Deny || d.Reason != ReasonCredential {
				t.Fatalf("NoPathCache=%v: got %s %s", off, d.Decision, d.Reason)
			}
		}
	}
}

// TestWritableRootsUnresolvable: a writable root that cannot be resolved
// (a link loop) is left out rather than kept as spelled,
// and one that resolves is kept by its real path.
func TestWritableRootsUnresolvable(t *testing.T) {
	w := newWorld(t)
	must(t, os.Symlink("loop", filepath.Join(w.dir, "loop")))
	tests := []struct {
		root string
		want []string
	}{
		{"~/.ssh", []string{filepath.Join(w.home, ".ssh")}},
		{filepath.Join(w.project, "out"), []string{filepath.Join(w.dir, "outside")}},
		{filepath.Join(w.dir, "loop"), nil},
		{filepath.Join(w.dir, "loop/x"), nil},
	}
	for _, tc := range tests {
		for _, fs := range []*pathres.View{nil, pathres.Shared().Begin()} {
			got := writableRoots(fs, []string{tc.root}, w.home)
			if !slices.Equal(got, tc.want) {
				t.Errorf("writable root %s: got %q, want %q", tc.root, got, tc.want)
			}
		}
	}
}
