package engine

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPathCacheMatchesFresh: after each of many random changes an agent
// can make in its project — links swapped between the project, ~/.ssh
// and outside, directories renamed or replaced by links, .toolgate/
// directories with a denying policy made and removed — a long-lived
// engine with the path cache decides every request as an engine without
// it does.
func TestPathCacheMatchesFresh(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	const deny = "[permissions]\ndeny = [\"Read(**)\", \"Edit(**)\"]\n"
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := newWorld(t)
			user := filepath.Join(w.home, ".config/toolgate/policy.toml")
			must(t, os.WriteFile(user, []byte("trusted_projects = [\""+w.project+"\"]\n"), 0o644))
			opts := func(off bool) Options {
				return Options{Policy: FromFiles(filepath.Join(w.dir, "etc/managed.toml"), user), Home: w.home, NoPathCache: off}
			}
			cached, err := New(opts(false))
			must(t, err)
			fresh, err := New(opts(true))
			must(t, err)
			names := []string{"d", "e", "keys", "src"}
			targets := []string{filepath.Join(w.home, ".ssh"), filepath.Join(w.dir, "outside"), "src", "..", "../..", "d", w.home, "e/d"}
			r := rand.New(rand.NewSource(int64(seed)))
			pick := func() string {
				p := w.project
				for i, n := 0, 1+r.Intn(2); i < n; i++ {
					p = filepath.Join(p, names[r.Intn(len(names))])
				}
				return p
			}
			var log []string
			reqs := func() []*Request {
				var out []*Request
				for _, cwd := range []string{w.project, filepath.Join(w.project, "d"), filepath.Join(w.project, "src"), filepath.Join(w.project, "keys"), filepath.Join(w.project, "e/d")} {
					if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
						continue
					}
					for _, f := range []string{"id_rsa", "d/id_rsa", "keys/id_rsa", "e/d/id_rsa", "src/main.go", "main.go", "d/notes.txt", "../.env"} {
						out = append(out, &Request{Tool: "Read", Cwd: cwd, Input: fp(f)},
							&Request{Tool: "Write", Cwd: cwd, Input: map[string]any{"file_path": f, "content": "x"}})
					}
					for _, c := range []string{"cat d/id_rsa", "cat e/d/id_rsa", "ls d", "cat main.go", "cd d && cat id_rsa"} {
						out = append(out, &Request{Tool: "Bash", Cwd: cwd, Input: sh(c)})
					}
				}
				return out
			}
			ctx := context.Background()
			seen := map[string]int{}
			for step := 0; step < 40; step++ {
				switch k := r.Intn(6); k {
				case 0, 1:
					p, tg := pick(), targets[r.Intn(len(targets))]
					tmp := p + ".new"
					os.Remove(tmp)
					err := os.Symlink(tg, tmp)
					if err == nil {
						err = os.Rename(tmp, p)
					}
					log = append(log, fmt.Sprintf("link %s -> %s: %v", p, tg, err))
				case 2:
					p := pick()
					log = append(log, fmt.Sprintf("mkdir %s: %v", p, os.Mkdir(p, 0o755)))
				case 3:
					a, b := pick(), pick()
					log = append(log, fmt.Sprintf("rename %s %s: %v", a, b, os.Rename(a, b)))
				case 4:
					p := filepath.Join(pick(), ".toolgate")
					err := os.Mkdir(p, 0o755)
					if err == nil {
						err = os.WriteFile(filepath.Join(p, "policy.toml"), []byte(deny), 0o644)
					}
					log = append(log, fmt.Sprintf("policy %s: %v", p, err))
				default:
					p := pick()
					if p == filepath.Join(w.project, "src") {
						continue
					}
					log = append(log, fmt.Sprintf("remove %s: %v", p, os.RemoveAll(p)))
				}
				for _, req := range reqs() {
					got, want := cached.Check(ctx, req), fresh.Check(ctx, req)
					seen[fmt.Sprint(want.Decision, " ", want.Reason)]++
					if req.Tool == "Bash" {
						// What a shell call is confined to comes
						// through the cache as well.
						gc, gerr := cached.Confinement(req)
						wc, werr := fresh.Confinement(req)
						if !reflect.DeepEqual(gc, wc) || (gerr == nil) != (werr == nil) {
							t.Fatalf("after\n%s\nconfinement of %v in %s: cached %+v (%v), fresh %+v (%v)", strings.Join(log, "\n"), req.Input, req.Cwd, gc, gerr, wc, werr)
						}
					}
					if got.Decision != want.Decision || got.Reason != want.Reason {
						t.Fatalf("after\n%s\n%s in %s %v: cached %s %s (%s), fresh %s %s (%s)", strings.Join(log, "\n"),
							req.Tool, req.Cwd, req.Input, got.Decision, got.Reason, got.Message, want.Decision, want.Reason, want.Message)
					}
				}
			}
			// The changes must lead to different decisions, or the
			// comparison proves nothing.
			if len(seen) < 3 {
				t.Fatalf("too few kinds of decision: %v", seen)
			}
			t.Logf("decisions: %v", seen)
		})
	}
}
