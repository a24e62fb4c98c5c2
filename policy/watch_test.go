package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWatchChanged: every kind of edit of a policy file, or of where one
// may appear, made after the files were loaded, is reported by the next
// Changed; nothing else is.
func TestWatchChanged(t *testing.T) {
	const projectPolicy = "[permissions]\nask  = [\"Bash(npm test)\"]\n"
	cases := []struct {
		name   string
		change func(t *testing.T, root, user string)
		want   bool
	}{
		{"nothing", func(*testing.T, string, string) {}, false},
		{"a rule appended", func(t *testing.T, root, _ string) {
			appendFile(t, filepath.Join(root, ProjectFile), "allow = [\"Read(x)\"]\n")
		}, true},
		{"a rule deleted", func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, ProjectFile), "[permissions]\n")
		}, true},
		{"same size in place, within the clock tick of the first write", func(t *testing.T, root, _ string) {
			// Most often the stamps are alike: only the content tells.
			writeFile(t, filepath.Join(root, ProjectFile), strings.Replace(projectPolicy, "ask ", "deny", 1))
		}, true},
		{"replaced by rename, same content", func(t *testing.T, root, _ string) {
			p := filepath.Join(root, ProjectFile)
			writeFile(t, p+".new", projectPolicy)
			must(t, os.Rename(p+".new", p))
		}, true},
		{"removed", func(t *testing.T, root, _ string) {
			must(t, os.Remove(filepath.Join(root, ProjectFile)))
		}, true},
		{"made unreadable", func(t *testing.T, root, _ string) {
			must(t, os.Chmod(filepath.Join(root, ProjectFile), 0))
		}, true},
		{"the local file appears", func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, LocalFile), "")
		}, true},
		{"the user file appears, with its directory", func(t *testing.T, _, user string) {
			must(t, os.MkdirAll(filepath.Dir(user), 0o755))
			writeFile(t, user, "[permissions]\ndeny = [\"Read(x)\"]\n")
		}, true},
		{"another file in .toolgate", func(t *testing.T, root, _ string) {
			writeFile(t, filepath.Join(root, ".toolgate", "notes.txt"), "x")
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			user := filepath.Join(t.TempDir(), "toolgate", "policy.toml")
			must(t, os.Mkdir(filepath.Join(root, ".toolgate"), 0o755))
			writeFile(t, filepath.Join(root, ProjectFile), projectPolicy)
			files, w, err := LoadWatched(Locations{Managed: filepath.Join(root, "managed.toml"), User: user, Project: root})
			must(t, err)
			if len(files) != 1 || files[0].Version == "" {
				t.Fatalf("loaded %d files: %+v", len(files), files)
			}
			c.change(t, root, user)
			if got := w.Changed(); got != c.want {
				t.Fatalf("Changed() = %v, want %v", got, c.want)
			}
		})
	}
}

// TestWatchTrustInputs: the local file's trust depends on git's index, so
// adding the file to the index is a change.
func TestWatchTrustInputs(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, ".toolgate"), 0o755))
	writeFile(t, filepath.Join(root, LocalFile), "[permissions]\nallow = [\"Bash(npm test)\"]\n")
	_, w, err := LoadWatched(Locations{Project: root})
	must(t, err)
	if w.Changed() {
		t.Fatal("changed before anything changed")
	}
	writeFile(t, filepath.Join(root, ".git", "index"), "DIRC")
	if !w.Changed() {
		t.Fatal("a git index that appeared is not a change")
	}
}

// TestWatchIndexThroughLink: git's index is read through a link there,
// so an edit of the file the link leads to is a change of the local
// file's trust, though the link itself stays as it was.
func TestWatchIndexThroughLink(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, ".toolgate"), 0o755))
	writeFile(t, filepath.Join(root, LocalFile), "[permissions]\nallow = [\"Bash(npm test)\"]\n")
	index := filepath.Join(elsewhere, "index")
	writeFile(t, index, "DIRC")
	must(t, os.Symlink(index, filepath.Join(root, ".git", "index")))
	_, w, err := LoadWatched(Locations{Project: root})
	must(t, err)
	if w.Changed() {
		t.Fatal("changed before anything changed")
	}
	appendFile(t, index, "x")
	if !w.Changed() {
		t.Fatal("an edit of the index a link leads to is not a change")
	}
}

// TestWatchRacy: a file read just after it was written is compared
// by content while its stamp cannot tell a second write; once that window
// has passed, Changed asks for one more load, whose stamps can.
func TestWatchRacy(t *testing.T) {
	root := t.TempDir()
	must(t, os.Mkdir(filepath.Join(root, ".toolgate"), 0o755))
	p := filepath.Join(root, ProjectFile)
	writeFile(t, p, "[permissions]\n")
	_, w, err := LoadWatched(Locations{Project: root})
	must(t, err)
	var e *watched
	for i := range w.entries {
		if w.entries[i].path == p {
			e = &w.entries[i]
		}
	}
	if e == nil || !e.racy || !e.content {
		t.Fatalf("a file written just now is not watched by content: %+v", e)
	}
	if w.Changed() {
		t.Fatal("changed while nothing changed")
	}
	// A second write of the same size in the same clock tick leaves the
	// stamp as it was on a file system with coarse timestamps (this
	// machine's may be finer): the content tells.
	writeFile(t, p, "[permissions]]")
	coarse := *w
	coarse.entries = append([]watched(nil), w.entries...)
	for i := range coarse.entries {
		if coarse.entries[i].path == p {
			coarse.entries[i].st = statPath(p)
		}
	}
	if !coarse.Changed() {
		t.Fatal("a write that kept the stamp is not a change")
	}
	writeFile(t, p, "[permissions]\n")
	for i := range coarse.entries {
		if coarse.entries[i].path == p {
			coarse.entries[i].st = statPath(p)
		}
	}
	if coarse.Changed() {
		t.Fatal("the same content and stamp is a change")
	}
	settled := *w
	settled.entries = append([]watched(nil), w.entries...)
	for i := range settled.entries {
		settled.entries[i].settle = time.Now().Add(-time.Second).UnixNano()
	}
	if !settled.Changed() {
		t.Fatal("a settled racy stamp does not ask for a load")
	}
	// A file last changed long ago is not racy.
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(p, old, old))
	b := newWatcher()
	b.start += int64(time.Hour) // as if loaded an hour after the change
	if _, err := b.read(p); err != nil {
		t.Fatal(err)
	}
	if b.w.entries[0].racy {
		t.Fatal("a file changed long before it was read is racy")
	}
}

// TestLoadSet: the Set's Version names the files' contents wherever they
// are; an invalid file is a LoadError naming the file and line, with a
// Watch that reports when it is fixed.
func TestLoadSet(t *testing.T) {
	load := func(project string) (*Set, error) {
		root := t.TempDir()
		must(t, os.Mkdir(filepath.Join(root, ".toolgate"), 0o755))
		writeFile(t, filepath.Join(root, ProjectFile), project)
		return LoadSet(Locations{Project: root}, "")
	}
	a, err := load("[permissions]\ndeny = [\"Read(x)\"]\n")
	must(t, err)
	b, err := load("[permissions]\ndeny = [\"Read(x)\"]\n")
	must(t, err)
	c, err := load("[permissions]\ndeny = [\"Read(y)\"]\n")
	must(t, err)
	if a.Version == "" || a.Version != b.Version || a.Version == c.Version {
		t.Fatalf("versions %q %q %q", a.Version, b.Version, c.Version)
	}
	if a.Watch == nil || a.Watch.Changed() {
		t.Fatal("no watch, or it reports a change")
	}
	none, err := LoadSet(Locations{Project: t.TempDir()}, "")
	must(t, err)
	if none.Version != "" {
		t.Fatalf("no files, version %q", none.Version)
	}

	_, err = load("[permissions]\nallow = [\"Read(x)\"]\ndeny = [\"Bash(npm\"]\n")
	var le *LoadError
	if !errors.As(err, &le) || le.Watch == nil || !strings.Contains(err.Error(), ProjectFile+":3:") {
		t.Fatalf("error %v does not name the file and line, or has no watch", err)
	}
	if le.Watch.Changed() {
		t.Fatal("the watch of an invalid file reports a change before it is fixed")
	}
	root := filepath.Dir(filepath.Dir(le.Watch.Paths()[0]))
	writeFile(t, filepath.Join(root, ProjectFile), "[permissions]\n")
	if !le.Watch.Changed() {
		t.Fatal("fixing the file is not a change")
	}
}

// TestLoadSetTrustThroughLink: a project trusted by an entry of
// trusted_projects that leads to it through a link is trusted only while
// the link leads there, so a link retargeted is a change of the Set's
// Watch; an entry that names the project as it is needs no such look.
func TestLoadSetTrustThroughLink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	root, other, link := filepath.Join(dir, "project"), filepath.Join(dir, "other"), filepath.Join(dir, "current")
	user := filepath.Join(dir, "user.toml")
	for _, d := range []string{root, other} {
		must(t, os.MkdirAll(filepath.Join(d, ".toolgate"), 0o755))
		writeFile(t, filepath.Join(d, ProjectFile), "[permissions]\nallow = [\"Read(/x)\"]\n")
	}
	must(t, os.Symlink(root, link))
	for _, entry := range []string{link, root} {
		writeFile(t, user, "trusted_projects = [\""+entry+"\"]\n")
		set, err := LoadSet(Locations{User: user, Project: root}, "")
		must(t, err)
		if len(set.Ignored) != 0 {
			t.Fatalf("entry %s: the project is not trusted", entry)
		}
		if set.Watch.Changed() {
			t.Fatalf("entry %s: changed before anything changed", entry)
		}
		must(t, os.Remove(link))
		must(t, os.Symlink(other, link))
		if got, want := set.Watch.Changed(), entry == link; got != want {
			t.Fatalf("entry %s: the link retargeted: Changed() = %v, want %v", entry, got, want)
		}
		must(t, os.Remove(link))
		must(t, os.Symlink(root, link))
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(body), 0o644))
}

func appendFile(t *testing.T, path, body string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(body)
	must(t, cmpErr(err, f.Close()))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkWatchChanged is what a decision adds to keep a project's policy
// current: the check of a project and a user file, and of the absent
// managed and local files, all settled.
func BenchmarkWatchChanged(b *testing.B) {
	root := b.TempDir()
	user := filepath.Join(b.TempDir(), "policy.toml")
	if err := os.Mkdir(filepath.Join(root, ".toolgate"), 0o755); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{filepath.Join(root, ProjectFile), user} {
		if err := os.WriteFile(p, []byte("[permissions]\nallow = [\"Bash(npm test)\"]\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(racyWindow + 100*time.Millisecond) // the change times settle
	_, w, err := LoadWatched(Locations{Managed: filepath.Join(root, "managed.toml"), User: user, Project: root})
	if err != nil {
		b.Fatal(err)
	}
	if len(w.entries) != 4 {
		b.Fatalf("%d entries", len(w.entries))
	}
	b.ReportAllocs()
	for b.Loop() {
		if w.Changed() {
			b.Fatal("changed")
		}
	}
}
