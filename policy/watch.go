package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/pathres"
)

// racyWindow is how close to the moment a file was stamped its change
// time may be for a later write to leave the stamp as it was: file system
// timestamps are coarse (a clock tick, or a second or two on some file
// systems), so two writes of the same size within one tick look alike. The
// content of such a file is compared on every check until the window has
// passed.
const racyWindow = 3 * time.Second

// stamp is what stat says about a path: enough to tell, without reading
// it, that the file there is no longer the one that was read.
type stamp struct {
	exists       bool
	dir          bool
	err          string // a stat error other than "does not exist"
	dev, ino     uint64
	size         int64
	mode         fs.FileMode
	mtime, ctime int64 // nanoseconds
}

// watched is one place a Watch looks at.
type watched struct {
	path string
	st   stamp
	// racy is set when st cannot tell a later write: the content is
	// compared (or, for a path whose content is not kept, the policy
	// loaded again) until settle, in Unix nanoseconds.
	racy   bool
	settle int64
	// content reports that sum is the hash of what was read.
	content bool
	sum     [sha256.Size]byte
	// kind reports that only whether the path exists, and is a
	// directory, matters; lstat that the path itself is stat'ed, not what
	// a link there leads to. Neither is racy: see [watcher.gitFiles].
	kind, lstat bool
	// leadsTo, when set, is the real path the path must lead to: only
	// where its links lead matters (an entry of trusted_projects that
	// trusts the project through a link, see [LoadSet]).
	leadsTo string
}

// Watch tells cheaply whether the policy files a [Set] was loaded from have
// changed since: each file that was read, each place where a policy file
// may appear but was absent, and what decided whether the project's local
// file came with its repository. [LoadWatched] makes one; a nil Watch
// never changes. A Watch is immutable and safe for use by multiple
// goroutines.
type Watch struct {
	entries []watched
}

// Changed reports whether loading the policy now could give something
// other than what was loaded: a file was written, replaced, removed,
// appeared or changed its permissions. A change completed before Changed
// is called is always seen: each path is stat'ed (size, times to the
// nanosecond, inode, device, mode), and a file whose change time lies
// within a few seconds of when it was read has its content compared as
// well, since a second write in the same clock tick may leave its stamp
// alike. It costs one stat per path (four for a project's policy), and
// the resolution of the trusted_projects entry that trusts the project
// when it does so through a link.
func (w *Watch) Changed() bool {
	if w == nil {
		return false
	}
	var now int64
	for i := range w.entries {
		e := &w.entries[i]
		if e.leadsTo != "" {
			if pathres.Real(e.path) != e.leadsTo {
				return true
			}
			continue
		}
		if e.kind {
			if st := lstatPath(e.path); st.exists != e.st.exists || st.dir != e.st.dir || st.err != e.st.err {
				return true
			}
			continue
		}
		if e.lstat {
			if lstatPath(e.path) != e.st {
				return true
			}
			continue
		}
		if statPath(e.path) != e.st {
			return true
		}
		if !e.racy {
			continue
		}
		if now == 0 {
			now = time.Now().UnixNano()
		}
		if !e.content || now > e.settle {
			// Loading again now gives a stamp that tells later writes.
			return true
		}
		data, err := os.ReadFile(e.path)
		if err != nil || sha256.Sum256(data) != e.sum {
			return true
		}
	}
	return false
}

// Paths returns the paths the Watch looks at, in the order given.
func (w *Watch) Paths() []string {
	if w == nil {
		return nil
	}
	out := make([]string, len(w.entries))
	for i, e := range w.entries {
		out[i] = e.path
	}
	return out
}

// watcher builds a Watch while files are read.
type watcher struct {
	w     Watch
	start int64 // when loading began, Unix nanoseconds
}

func newWatcher() *watcher { return &watcher{start: time.Now().UnixNano()} }

func (b *watcher) add(path string, st stamp, content []byte) {
	e := watched{path: path, st: st}
	if content != nil {
		e.content, e.sum = true, sha256.Sum256(content)
	}
	if st.exists {
		t := max(st.mtime, st.ctime)
		if t >= b.start-int64(racyWindow) {
			e.racy, e.settle = true, t+int64(racyWindow)
		}
	}
	b.w.entries = append(b.w.entries, e)
}

// read reads the file at path and records it. A file that does not exist
// gives (nil, nil). The stamp is taken before the content is read, so a
// write after it changes the stamp (or is caught by the content check of
// a racy stamp).
func (b *watcher) read(path string) ([]byte, error) {
	before := statPath(path)
	f, err := openNoWait(path)
	if err != nil {
		b.add(path, before, nil)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.add(path, before, nil)
		return nil, err
	}
	st := stampOf(fi)
	if !fi.Mode().IsRegular() {
		b.add(path, st, nil)
		return nil, &Error{Pos: Position{File: path}, Msg: "is not a regular file"}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		b.add(path, st, nil)
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	b.add(path, st, data)
	return data, nil
}

// gitFiles records what [LocalShipped] reads for the project at root: its
// .git (whether it is a directory, or the pointer file's stamp) and the
// index of the git directory it leads to. Git replaces its index by
// renaming a new file over it, so the index's stamp (its inode) tells
// every write; and a change inside .git does not matter, only what .git
// is.
func (b *watcher) gitFiles(root string) {
	git := filepath.Join(root, ".git")
	st := lstatPath(git)
	b.w.entries = append(b.w.entries, watched{path: git, st: st, kind: st.dir, lstat: !st.dir})
	if dir, err := gitDirOf(root); err == nil {
		// Stat'ed as LocalShipped reads it: through a link there.
		index := filepath.Join(dir, "index")
		b.w.entries = append(b.w.entries, watched{path: index, st: statPath(index)})
	}
}

// contentVersion names a file's content: the first 12 hex digits of its
// SHA-256.
func contentVersion(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// setVersion names the contents of the files a Set was merged from, by
// layer: "" when none was read from a file.
func setVersion(files []*File) string {
	var b bytes.Buffer
	for _, f := range files {
		if f.Version != "" {
			b.WriteString(f.Layer.String())
			b.WriteByte('=')
			b.WriteString(f.Version)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return contentVersion(b.Bytes())
}

// LoadError is the error of a policy that could not be loaded, with the
// Watch of the files involved: loading is worth trying again only once it
// reports a change.
type LoadError struct {
	Err   error
	Watch *Watch
}

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// LoadWatched is [Load] with a Watch of every place it looked: each file it
// read, and each place a file of a layer may appear where none was. For a
// project whose local file is present it watches what [LocalShipped]
// reads too (root/.git and the git index), since the local file's trust
// depends on them. On error the Watch is returned as well, so that a
// caller can keep the error until the files change.
func LoadWatched(l Locations) ([]*File, *Watch, error) {
	b := newWatcher()
	type src struct {
		path  string
		layer Layer
	}
	srcs := []src{{l.Managed, LayerManaged}, {l.User, LayerUser}}
	if l.Project != "" {
		srcs = append(srcs, src{filepath.Join(l.Project, LocalFile), LayerLocal}, src{filepath.Join(l.Project, ProjectFile), LayerProject})
	}
	var out []*File
	var firstErr error
	for _, s := range srcs {
		if s.path == "" {
			continue
		}
		data, err := b.read(s.path)
		if err != nil {
			firstErr = cmpErr(firstErr, readError(s.layer, err))
			continue
		}
		if data == nil {
			continue
		}
		f, err := ParseFile(s.path, data, s.layer)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		f.Version = contentVersion(data)
		out = append(out, f)
		if s.layer == LayerLocal {
			b.gitFiles(l.Project)
		}
	}
	w := &b.w
	if firstErr != nil {
		return nil, w, firstErr
	}
	return out, w, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func readError(layer Layer, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("policy: reading %s layer: %w", layer, err)
}

// LoadSet loads the file layers at l ([LoadWatched]), applies the trust of
// the project l.Project ([ApplyTrust], with home expanding ~/), and merges
// them with extra layers (the CLI's, a session's). The Set's Watch tells
// when the files change and its Version names their contents. An error is
// a [*LoadError] carrying the Watch.
func LoadSet(l Locations, home string, extra ...*File) (*Set, error) {
	files, w, err := LoadWatched(l)
	if err != nil {
		return nil, &LoadError{Err: err, Watch: w}
	}
	if l.Project != "" {
		ApplyTrust(files, l.Project, home)
		if _, via := trustedVia(files, l.Project, home); via != "" {
			// Trusted while the entry leads to the project: a link
			// retargeted anywhere along it ends that.
			w.entries = append(w.entries, watched{path: via, leadsTo: l.Project})
		}
	}
	set, err := Merge(append(files, extra...)...)
	if err != nil {
		return nil, &LoadError{Err: err, Watch: w}
	}
	set.Watch = w
	return set, nil
}
