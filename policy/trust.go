package policy

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/pathres"
)

// ApplyTrust decides, for the layers loaded for the project at root, which
// of them speak for the person. Unless a user or managed layer lists root
// itself in trusted_projects (a parent directory's entry does not count: a
// nested project, such as a package that ships its own .toolgate
// directory, needs its own entry), it applies [File.Distrust] to the
// project layer, and to the local layer when [LocalShipped] says the
// repository may have brought it. home expands ~/ in trusted_projects. It
// returns whether root is trusted.
func ApplyTrust(files []*File, root, home string) bool {
	if Trusted(files, root, home) {
		return true
	}
	why := fmt.Sprintf("the project %s is not in trusted_projects of the user or managed policy (list it there to let its policy loosen the gate)", root)
	for _, f := range files {
		switch f.Layer {
		case LayerProject:
			f.DistrustBecause(why)
		case LayerLocal:
			if shipped := LocalShipped(root); shipped != "" {
				f.DistrustBecause(why + ", and " + shipped)
			}
		}
	}
	return false
}

// LocalShipped says why the local policy file of the project at root
// (.toolgate/policy.local.toml) may have come with the repository rather
// than from the person, or "" when it cannot have. The file is the
// person's own only when root is the top of a git work tree (it holds
// .git) whose index does not track the file: a clone brings only tracked
// files. A project that is not a git checkout (a downloaded archive, a
// package under node_modules), a tracked file, or an index that cannot be
// read all count as shipped.
func LocalShipped(root string) string {
	const shipped = "its " + LocalFile + " "
	gitDir, err := gitDirOf(root)
	if err != nil {
		return shipped + "is not in a git checkout of its own (" + err.Error() + "), so it may have come with the project's files"
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "index"))
	if errors.Is(err, os.ErrNotExist) {
		return "" // a repository with nothing added tracks nothing
	}
	if err != nil {
		return shipped + "cannot be checked against git's index: " + err.Error()
	}
	tracked, err := gitIndexTracks(data, LocalFile)
	if err != nil {
		return shipped + "cannot be checked against git's index " + filepath.Join(gitDir, "index") + ": " + err.Error()
	}
	if tracked {
		return shipped + "is tracked by git, so it is committed like " + ProjectFile
	}
	return ""
}

// gitDirOf returns the git directory of the work tree whose top is root:
// root/.git, or the directory a .git file names (a worktree or a
// submodule).
func gitDirOf(root string) (string, error) {
	p := filepath.Join(root, ".git")
	fi, err := os.Lstat(p)
	if err != nil {
		return "", fmt.Errorf("no %s", p)
	}
	if fi.IsDir() {
		return p, nil
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is neither a directory nor a file", p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s does not name a git directory", p)
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if pathres.Within(root, filepath.Clean(dir)) {
		// Git never checks out a .git path, so such a pointer, and the
		// index it leads to, came with the files.
		return "", fmt.Errorf("%s names a git directory inside the project", p)
	}
	return dir, nil
}

// gitIndexTracks reports whether the git index data (the .git/index file,
// versions 2 to 4, SHA-1 or SHA-256) lists name, a slash-separated path
// relative to the work tree, or a sparse directory entry above it. An index
// it cannot make sense of is an error, never a "no".
func gitIndexTracks(data []byte, name string) (bool, error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return false, errors.New("not a git index (no DIRC header)")
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return false, fmt.Errorf("unknown index version %d", version)
	}
	// The trailer is the checksum of everything before it; it tells the
	// hash size. An all-zero trailer (index.skipHash) is tried both ways.
	var sizes []int
	for _, h := range []int{sha1.Size, sha256.Size} {
		if len(data) < 12+h {
			continue
		}
		body, sum := data[:len(data)-h], data[len(data)-h:]
		if h == sha1.Size && bytes.Equal(sum, sha1Sum(body)) || h == sha256.Size && bytes.Equal(sum, sha256Sum(body)) {
			sizes = []int{h}
			break
		}
		if bytes.Count(sum, []byte{0}) == h {
			sizes = append(sizes, h)
		}
	}
	if len(sizes) == 0 {
		return false, errors.New("its checksum does not match")
	}
	var err error
	for _, h := range sizes {
		var tracked bool
		if tracked, err = parseGitIndex(data[:len(data)-h], version, h, name); err == nil {
			return tracked, nil
		}
	}
	return false, err
}

func sha1Sum(b []byte) []byte   { s := sha1.Sum(b); return s[:] }
func sha256Sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// parseGitIndex walks the entries and extensions of an index body (without
// its trailing checksum) whose object names are hashSize bytes long.
func parseGitIndex(body []byte, version uint32, hashSize int, name string) (bool, error) {
	count := binary.BigEndian.Uint32(body[8:12])
	pos := 12
	fixed := 40 + hashSize + 2 // stat data, object name, flags
	var prev []byte
	tracked := false
	for i := uint32(0); i < count; i++ {
		start := pos
		if len(body)-pos < fixed {
			return false, fmt.Errorf("entry %d is cut short", i)
		}
		mode := binary.BigEndian.Uint32(body[pos+24 : pos+28])
		flags := binary.BigEndian.Uint16(body[pos+40+hashSize:])
		pos += fixed
		if flags&0x4000 != 0 {
			if version < 3 {
				return false, fmt.Errorf("entry %d has extended flags in a version %d index", i, version)
			}
			if len(body)-pos < 2 {
				return false, fmt.Errorf("entry %d is cut short", i)
			}
			pos += 2
		}
		var path []byte
		if version == 4 {
			strip, n := gitVarint(body[pos:])
			if n == 0 || strip > uint64(len(prev)) {
				return false, fmt.Errorf("entry %d has a bad path prefix", i)
			}
			pos += n
			end := bytes.IndexByte(body[pos:], 0)
			if end < 0 {
				return false, fmt.Errorf("entry %d has an unterminated path", i)
			}
			path = append(append([]byte{}, prev[:len(prev)-int(strip)]...), body[pos:pos+end]...)
			pos += end + 1
		} else {
			end := bytes.IndexByte(body[pos:], 0)
			if end < 0 {
				return false, fmt.Errorf("entry %d has an unterminated path", i)
			}
			path = body[pos : pos+end]
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			pos = start + (pos+end-start+8)&^7
			if pos > len(body) {
				return false, fmt.Errorf("entry %d is cut short", i)
			}
		}
		if n := int(flags & 0xfff); n < 0xfff && n != len(path) {
			return false, fmt.Errorf("entry %d: path length %d, flags say %d", i, len(path), n)
		}
		p := string(path)
		if p == name || mode&0o170000 == 0o040000 && strings.HasSuffix(p, "/") && strings.HasPrefix(name, p) {
			tracked = true
		}
		prev = path
	}
	// Extensions: a four-byte signature and a length each, to the end.
	for pos < len(body) {
		if len(body)-pos < 8 {
			return false, errors.New("an extension is cut short")
		}
		sig := string(body[pos : pos+4])
		size := binary.BigEndian.Uint32(body[pos+4 : pos+8])
		if uint64(size) > uint64(len(body)-pos-8) {
			return false, fmt.Errorf("extension %q is cut short", sig)
		}
		if sig == "link" {
			// A split index keeps entries in a shared file as well.
			return false, errors.New("it is a split index")
		}
		pos += 8 + int(size)
	}
	return tracked, nil
}

// gitVarint decodes git's offset varint; n is 0 when it is cut short or
// too long.
func gitVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = uint64(c & 0x7f)
	n = 1
	for c&0x80 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		c = b[n]
		n++
		v = ((v + 1) << 7) | uint64(c&0x7f)
	}
	return v, n
}
