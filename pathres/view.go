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
	// kept in the arrays (searched in order, without hashing or
	// allocating), the rest in the maps.
	realBuf [4]realMemo
	entBuf  [8]entMemo
	reals   []realMemo
	ents    []entMemo
	realMap map[string]realResult
	entMap  map[lookup]Entry
}

type realResult struct {
	real   string
	exists bool
}

type realMemo struct {
	abs string
	realResult
}

type entMemo struct {
	at lookup
	e  Entry
}

// Begin starts a decision's view. With a nil Cache the view only
// remembers within the decision. With a Cache, every change completed
// before Begin is called is seen by the view (see [Cache]).
func (c *Cache) Begin() *View {
	v := &View{c: c}
	v.reals, v.ents = v.realBuf[:0], v.entBuf[:0]
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
	if e, ok := v.seenEntry(at); ok {
		return e
	}
	e, ok := v.c.entry(at)
	if !ok {
		if e, ok = v.c.fillEntry(at); !ok {
			e = lstatEntry(filepath.Join(dir, name))
		}
	}
	if len(v.ents) < cap(v.ents) {
		v.ents = append(v.ents, entMemo{at, e})
		return e
	}
	if v.entMap == nil {
		v.entMap = map[lookup]Entry{}
	}
	v.entMap[at] = e
	return e
}

// seenEntry returns the entry at at as the view already saw it.
func (v *View) seenEntry(at lookup) (Entry, bool) {
	for i := range v.ents {
		if m := &v.ents[i]; m.at == at {
			return m.e, true
		}
	}
	e, ok := v.entMap[at]
	return e, ok
}

// seenReal returns abs's real path as the view already resolved it.
func (v *View) seenReal(abs string) (realResult, bool) {
	for i := range v.reals {
		if m := &v.reals[i]; m.abs == abs {
			return m.realResult, true
		}
	}
	r, ok := v.realMap[abs]
	return r, ok
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
	if r, ok := v.seenReal(abs); ok {
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
	if len(v.reals) < cap(v.reals) {
		v.reals = append(v.reals, realMemo{abs, realResult{real, exists}})
		return real, exists, nil
	}
	if v.realMap == nil {
		v.realMap = map[string]realResult{}
	}
	v.realMap[abs] = realResult{real, exists}
	return real, exists, nil
}
