package pathres

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Entry is what lstat says about one name in a directory: no link at the
// name is followed.
type Entry uint8

// The kinds of [Entry].
const (
	// Absent: nothing is there, or it cannot be stat'ed.
	Absent Entry = iota
	// Dir: a directory.
	Dir
	// Link: a symbolic link.
	Link
	// Other: anything else (a file, a device).
	Other
)

// View is one decision's view of the file system: within it each path is
// resolved once and each directory entry looked at once, so a decision
// that names many paths under one directory walks that directory once.
// Backed by a [Cache], it also reuses what earlier decisions resolved, for
// as long as the Cache can prove nothing it depends on has changed.
//
// A nil *View resolves everything afresh. A View is not safe for use by
// multiple goroutines; begin one per decision.
type View struct {
	c *Cache
	// A decision looks up a few paths and entries: the first ones are
	// kept in these arrays, the rest in the memos' maps.
	realBuf [4]pair[string, realResult]
	entBuf  [8]pair[lookup, Entry]
	reals   memo[string, realResult]
	ents    memo[lookup, Entry]
}

type realResult struct {
	real   string
	exists bool
}

// Begin starts a decision's view. With a nil Cache the view only
// remembers within the decision. With a Cache, every change completed
// before Begin is called is seen by the view (see [Cache]).
func (c *Cache) Begin() *View {
	v := &View{c: c}
	v.reals.few, v.ents.few = v.realBuf[:0], v.entBuf[:0]
	if c != nil && !c.begin() {
		v.c = nil
	}
	return v
}

// Resolve is [Resolve] seen through the view.
func (v *View) Resolve(cwd, home, raw string) (Path, error) {
	p := Path{Requested: raw}
	if raw == "" {
		return p, ErrEmpty
	}
	spelled, ok := absolute(cwd, home, raw)
	if !ok {
		p.Unknown = true
		return p, nil
	}
	p.Abs = Clean(spelled)
	clean, err := v.physicalClean(spelled)
	if err != nil {
		return p, err
	}
	real, exists, err := v.realPath(clean)
	if err != nil {
		return p, err
	}
	p.Real = real
	p.Exists = exists
	p.Symlink = real != p.Abs
	return p, nil
}

// RealDir returns the real path of dir, an absolute directory, as [Real]
// does, seen through the view; a directory that cannot be resolved (a link
// loop, a path longer than the system takes in one call) is an error, not
// a cleaned path that could hide a link.
func (v *View) RealDir(dir string) (string, error) {
	clean, err := v.physicalClean(dir)
	if err != nil {
		return "", err
	}
	r, _, err := v.realPath(clean)
	if err != nil {
		return "", err
	}
	return r, nil
}

// Lstat reports what is at name in dir, an absolute directory, without
// following a link there. name is one name: no "/", not "." or "..".
func (v *View) Lstat(dir, name string) Entry {
	if v == nil || name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || !filepath.IsAbs(dir) {
		return lstatEntry(filepath.Join(dir, name))
	}
	at := lookup{dir, name}
	if e, ok := v.ents.get(at); ok {
		return e
	}
	e, ok := v.c.entry(at)
	if !ok {
		if e, ok = v.c.fillEntry(at); !ok {
			e = lstatEntry(filepath.Join(dir, name))
		}
	}
	v.ents.put(at, e)
	return e
}

// memo remembers a value per key: the first ones in few, a slice over an
// array its owner holds (searched in order, without hashing or
// allocating), the rest in a map.
type memo[K comparable, V any] struct {
	few  []pair[K, V]
	more map[K]V
}

type pair[K comparable, V any] struct {
	k K
	v V
}

func (m *memo[K, V]) get(k K) (V, bool) {
	for i := range m.few {
		if p := &m.few[i]; p.k == k {
			return p.v, true
		}
	}
	v, ok := m.more[k]
	return v, ok
}

func (m *memo[K, V]) put(k K, v V) {
	if len(m.few) < cap(m.few) {
		m.few = append(m.few, pair[K, V]{k, v})
		return
	}
	if m.more == nil {
		m.more = map[K]V{}
	}
	m.more[k] = v
}

func lstatEntry(path string) Entry {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return Absent
	case fi.IsDir():
		return Dir
	case fi.Mode()&fs.ModeSymlink != 0:
		return Link
	}
	return Other
}

// realPath is the package's realPath, remembered by the view.
func (v *View) realPath(abs string) (string, bool, error) {
	if v == nil {
		return realPath(abs)
	}
	if r, ok := v.reals.get(abs); ok {
		return r.real, r.exists, nil
	}
	real, exists, ok := v.c.real(abs)
	if !ok {
		var err error
		real, exists, err = realPath(abs)
		if err != nil {
			return "", false, err
		}
		v.c.fillReal(abs, real, exists)
	}
	v.reals.put(abs, realResult{real, exists})
	return real, exists, nil
}
