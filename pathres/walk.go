package pathres

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lookup is one name looked up in one real directory while a path was
// walked.
type lookup struct{ dir, name string }

// walk resolves the absolute path abs one name at a time, as the kernel
// does, and returns every lookup it made: the real directory and the
// name looked up in it. The directories are real paths, and each one's
// parent comes before it. A path that does not exist resolves to its
// deepest existing directory with the rest appended as written; isDir
// reports an existing directory. ok is false when the walk cannot tell
// (a stat or readlink error other than a missing name, too many links).
//
// A directory that known reports is taken as a real directory without
// looking (known may be nil).
func walk(abs string, known func(string) bool) (real string, exists, isDir bool, deps []lookup, ok bool) {
	if !strings.HasPrefix(abs, "/") {
		return "", false, false, nil, false
	}
	resolved, rest, links, dir := "/", abs, 0, true
	for {
		rest = strings.TrimLeft(rest, "/")
		if rest == "" {
			return resolved, true, dir, deps, true
		}
		name, after, _ := strings.Cut(rest, "/")
		rest = after
		switch name {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		deps = append(deps, lookup{resolved, name})
		next := filepath.Join(resolved, name)
		if known != nil && known(next) {
			resolved, dir = next, true
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR):
			return filepath.Join(next, rest), false, false, deps, true
		case err != nil:
			return "", false, false, nil, false
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", false, false, nil, false
			}
			target, err := os.Readlink(next)
			if err != nil || target == "" {
				return "", false, false, nil, false
			}
			if strings.HasPrefix(target, "/") {
				resolved = "/"
			}
			rest = target + "/" + rest
		case !fi.IsDir() && strings.Trim(rest, "/") != "":
			// A file with more of the path below it: nothing below
			// exists.
			return filepath.Join(next, rest), false, false, deps, true
		default:
			resolved, dir = next, fi.IsDir()
		}
	}
}
