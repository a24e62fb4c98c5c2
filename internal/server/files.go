package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// File is a file that a question's call would write, as it was when the
// question was asked: what a person compares the change with. It is read
// at the real path the call's receipt binds, and its Version is in the
// receipt's form, so that it can be told whether the file a diff was
// computed from is the one the answer applies to.
type File struct {
	// Path is the real path (symlinks followed), as in the request's units.
	Path string `json:"path"`
	// Version is "absent" for a file that does not exist, "sha256:…" of
	// the content read, or "" when the content was not read (see Note).
	Version string `json:"version,omitempty"`
	// Content is the file's text with its secrets redacted, as the event
	// log would show them; empty when Version is "absent" or "".
	Content string `json:"content,omitempty"`
	// Note says why the content is not shown: too large, not a regular
	// file, not text, unreadable.
	Note string `json:"note,omitempty"`
}

// The bounds of the files a question carries: a file larger than
// fileLimit (the largest a receipt hashes the content of) is not read,
// and at most maxFiles are read for one question.
const (
	fileLimit = 64 << 10
	maxFiles  = 8
)

// snapshotFiles reads the files an edit, write or patch in req writes,
// redacted by red. Other tools get none: their writes are not shown as a
// diff.
func snapshotFiles(req *approval.Request, red *gate.Redactor) []File {
	t, ok := policy.Canonical(req.Tool)
	if !ok || (t != policy.ToolEdit && t != policy.ToolWrite && t != policy.ToolPatch) {
		return nil
	}
	var out []File
	seen := map[string]bool{}
	for _, u := range req.Units {
		for _, p := range u.Writes {
			if p == "" || seen[p] || len(out) >= maxFiles {
				continue
			}
			seen[p] = true
			out = append(out, readFile(p, red))
		}
	}
	return out
}

// readFile reads the file at path without following a final symlink.
func readFile(path string, red *gate.Redactor) File {
	f := File{Path: path}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f.Version = "absent"
		return f
	case err != nil:
		f.Note = "cannot be read"
		return f
	case !fi.Mode().IsRegular():
		f.Note = "not a regular file"
		return f
	case fi.Size() > fileLimit:
		f.Note = "larger than 64 KiB: no diff is shown"
		return f
	}
	// Opened without following a symlink and without blocking, and
	// checked again once open: the file may have been swapped for a
	// link or a pipe since Lstat.
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		f.Note = "cannot be read"
		return f
	}
	defer fd.Close()
	if st, err := fd.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Note = "not a regular file"
		return f
	}
	b, err := io.ReadAll(io.LimitReader(fd, fileLimit+1))
	if err != nil || len(b) > fileLimit {
		f.Note = "cannot be read"
		return f
	}
	sum := sha256.Sum256(b)
	f.Version = "sha256:" + hex.EncodeToString(sum[:])
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		f.Note = "not text: no diff is shown"
		return f
	}
	f.Content = red.String(string(b))
	return f
}
