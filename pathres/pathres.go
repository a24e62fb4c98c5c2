// Package pathres resolves the paths that tool calls name to the files they
// really reach.
//
// A path is judged by where it goes, not by how it is spelled: [Resolve]
// expands "~", makes the path absolute against a working directory, and
// follows every symbolic link in the deepest part of the path that exists,
// so a link inside a project that points at ~/.ssh is reported as ~/.ssh.
// A ".." leaves what the kernel would leave: the target of a link before
// it, not the directory that holds the link, so "link/../x" is judged
// beside the link's target. [Within] compares paths by whole components, so
// "/work/project-old" is never inside "/work/project".
package pathres

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
)

// Path is a resolved path argument.
type Path struct {
	// Requested is the path exactly as the call spelled it.
	Requested string `json:"requested"`
	// Abs is the lexical absolute form: "~" expanded, joined to the working
	// directory, cleaned. No symbolic link has been followed.
	Abs string `json:"abs"`
	// Real is Abs with every symbolic link followed. For a path that does
	// not exist yet, the deepest existing ancestor is resolved and the
	// missing tail appended.
	Real string `json:"real"`
	// Symlink reports whether following links changed the path.
	Symlink bool `json:"symlink,omitempty"`
	// Exists reports whether the full path exists (after following links).
	Exists bool `json:"exists"`
	// Unknown is set when the path cannot be judged statically: it was
	// relative to an unknown working directory or used an unknown home.
	Unknown bool `json:"unknown,omitempty"`
}

// ErrEmpty is returned by [Resolve] for an empty path.
var ErrEmpty = errors.New("empty path")

// maxLinks bounds how many symbolic links one resolution follows; a longer
// chain is reported as an error rather than followed for ever.
const maxLinks = 255

// Resolve resolves raw, as written in a call made from the working directory
// cwd by a user whose home is home. cwd and home must be absolute or empty;
// when raw needs one of them and it is empty, the result has Unknown set and
// Abs/Real are left empty. A "~user" prefix is that user's home directory
// as the system reports it, and Unknown when there is no such user.
// Resolve never fails on a path that does not exist; it reports an error for
// an empty path and for one it cannot judge: a symbolic link loop, a path
// longer than the system takes in one call, a directory it cannot search,
// a link it cannot read.
func Resolve(cwd, home, raw string) (Path, error) {
	return (*View)(nil).Resolve(cwd, home, raw)
}

// Absolute returns the lexical absolute form of raw: "~" and "~/x" expanded
// with home, "~user/x" with that user's home, a relative path joined to
// cwd, and the result cleaned. It reports false when that needs an unknown
// cwd, home or user.
func Absolute(cwd, home, raw string) (string, bool) {
	p, ok := absolute(cwd, home, raw)
	if !ok {
		return "", false
	}
	return Clean(p), true
}

// absolute is [Absolute] before cleaning: the "." and ".." of raw are still
// in it, for [View.physicalClean] to take as the kernel does.
func absolute(cwd, home, raw string) (string, bool) {
	switch {
	case raw == "~" || strings.HasPrefix(raw, "~/"):
		if home == "" || !filepath.IsAbs(home) {
			return "", false
		}
		return home + "/" + raw[1:], true
	case strings.HasPrefix(raw, "~"):
		// ~user: that user's home directory, when the system knows it.
		name, rest, _ := strings.Cut(raw[1:], "/")
		u, err := user.Lookup(name)
		if err != nil || u.HomeDir == "" || !filepath.IsAbs(u.HomeDir) {
			return "", false
		}
		return u.HomeDir + "/" + rest, true
	case filepath.IsAbs(raw):
		return raw, true
	default:
		if cwd == "" || !filepath.IsAbs(cwd) {
			return "", false
		}
		return cwd + "/" + raw, true
	}
}

// physicalClean cleans the absolute path p as the kernel walks it: each
// ".." leaves the real directory reached so far, so after a symbolic link
// it leaves the link's target, not the directory holding the link (which
// [filepath.Clean] would leave). A path without ".." is only cleaned. A
// directory before a ".." that cannot be resolved (a link loop, a path
// too long) is an error: leaving it lexically could leave a link's
// target's parent unseen.
func (v *View) physicalClean(p string) (string, error) {
	if filepath.Separator != '/' || !strings.Contains(p, "..") {
		return Clean(p), nil
	}
	cur := "/"
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			r, _, err := v.realPath(cur)
			if err != nil {
				return "", err
			}
			cur = filepath.Dir(r)
		default:
			cur = filepath.Join(cur, c)
		}
	}
	return cur, nil
}

// realPath follows symbolic links through abs. It resolves the deepest
// existing ancestor with the operating system's view of links and appends
// the rest; a dangling link is followed to its target text.
func realPath(abs string) (string, bool, error) {
	if r, ok := kernelReal(abs); ok {
		return r, true, nil
	}
	cur := abs
	var tail []string
	for hops := 0; ; {
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, syscall.ENAMETOOLONG):
			// Longer than the kernel takes in one call: a shell
			// reaches it by changing directory in steps, through
			// links this walk could not follow. Not judged.
			return "", false, &os.PathError{Op: "resolve", Path: abs, Err: err}
		case err != nil && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTDIR):
			// Not missing but not seen (a directory that cannot be
			// searched, an I/O error): what is there may be a link
			// once the directory is opened up. Not judged.
			return "", false, &os.PathError{Op: "resolve", Path: abs, Err: err}
		}
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			// A dangling or live link at the deepest existing level:
			// read it and continue from its target.
			if hops++; hops > maxLinks {
				return "", false, &os.PathError{Op: "resolve", Path: abs, Err: errors.New("too many levels of symbolic links")}
			}
			target, err := os.Readlink(cur)
			if err != nil {
				return "", false, err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Dir(cur) + "/" + target
			}
			if strings.Contains(target, "..") {
				// A ".." of the target leaves what the kernel reaches
				// before it (a link's target), not the lexical parent:
				// walk it as the kernel does.
				r, exists, _, _, ok := walk(target, nil)
				if !ok {
					return "", false, &os.PathError{Op: "resolve", Path: abs, Err: errors.New("cannot follow link " + cur)}
				}
				return joinTail(r, tail), exists && len(tail) == 0, nil
			}
			cur = filepath.Clean(target)
			continue
		case err == nil:
			resolved, ok := kernelReal(cur)
			if ok {
				return joinTail(resolved, tail), len(tail) == 0, nil
			}
			resolved, err := filepath.EvalSymlinks(cur)
			if err != nil {
				// A parent loop or a race: not judged, as the lexical
				// path could hide a link.
				return "", false, err
			}
			out := joinTail(resolved, tail)
			return out, len(tail) == 0, nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return joinTail(cur, tail), false, nil
		}
		tail = append(tail, filepath.Base(cur))
		cur = parent
	}
}

func joinTail(base string, tail []string) string {
	parts := make([]string, 0, len(tail)+1)
	parts = append(parts, base)
	for i := len(tail) - 1; i >= 0; i-- {
		parts = append(parts, tail[i])
	}
	return filepath.Join(parts...)
}

// Within reports whether path is root or lies below it, comparing whole
// path components of the two cleaned absolute paths: "/a/b" is within "/a"
// but "/a-old" is not. Both must be absolute; an empty root contains nothing.
func Within(root, path string) bool {
	if root == "" || path == "" {
		return false
	}
	root, path = Clean(root), Clean(path)
	if root == string(filepath.Separator) {
		return path[0] == filepath.Separator
	}
	return strings.HasPrefix(path, root) && (len(path) == len(root) || path[len(root)] == filepath.Separator)
}

// Real returns the real path of dir, an absolute directory, following links
// as chdir does (a ".." after a link leaves the link's target); a path that
// cannot be resolved is returned cleaned. [View.RealDir] reports that as an
// error instead.
func Real(dir string) string {
	r, err := (*View)(nil).RealDir(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	return r
}

// Clean returns [filepath.Clean] of p, without the work of cleaning an
// absolute path that is already clean, as every real path is.
func Clean(p string) string {
	if isClean(p) {
		return p
	}
	return filepath.Clean(p)
}

// isClean reports whether p is an absolute slash-separated path that
// [filepath.Clean] returns unchanged: no empty, "." or ".." element and
// no trailing slash except for "/" itself.
func isClean(p string) bool {
	if filepath.Separator != '/' || p == "" || p[0] != '/' {
		return false
	}
	if len(p) == 1 {
		return true
	}
	start := 1 // where the current element begins
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch i - start {
		case 0:
			return false // "//" or a trailing slash
		case 1:
			if p[start] == '.' {
				return false
			}
		case 2:
			if p[start] == '.' && p[start+1] == '.' {
				return false
			}
		}
		start = i + 1
	}
	return true
}

// Parent returns [filepath.Dir] of p, without the work of cleaning when p
// is an absolute path that is already clean.
func Parent(p string) string {
	if !isClean(p) {
		return filepath.Dir(p)
	}
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}
