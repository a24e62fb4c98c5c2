package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/pathres"
)

// Snapshots keeps, for every call that wrote files, each file's content
// before and after the call (in a content-addressed store) and a record
// keyed by the call id, so that [Snapshots.Rollback] can undo the call.
// A snapshot is recovery, not authorization: it never makes a write more
// acceptable, and a write whose snapshot cannot be kept does not happen.
type Snapshots struct {
	dir   string
	blobs *Blobs
}

// NewSnapshots returns the snapshots kept in dir.
func NewSnapshots(dir string) *Snapshots {
	return &Snapshots{dir: dir, blobs: newSyncedBlobs(filepath.Join(dir, "objects"))}
}

// Snapshot is the record of one call's file changes.
type Snapshot struct {
	CallID string     `json:"callId"`
	Time   time.Time  `json:"time"`
	Files  []FileSnap `json:"files"`
	// RolledBack is set once the call has been rolled back.
	RolledBack bool `json:"rolledBack,omitempty"`
}

// FileSnap is one file a call changed.
type FileSnap struct {
	Path string `json:"path"`
	// Before and After are blob ids of the content; "" for no file
	// (created, or deleted).
	Before string      `json:"before,omitempty"`
	After  string      `json:"after,omitempty"`
	Mode   fs.FileMode `json:"mode"`
}

// callIDPattern is what a tool call id may look like. Its repetition
// makes a large program, compiled at first use rather than when the
// program starts.
var callIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) })

func (s *Snapshots) recordPath(id string) (string, error) {
	if !callIDPattern().MatchString(id) || strings.Trim(id, ".") == "" {
		return "", fmt.Errorf("%q is not a tool call id", id)
	}
	return filepath.Join(s.dir, "calls", id+".json"), nil
}

// Get returns the snapshot of call id.
func (s *Snapshots) Get(id string) (*Snapshot, error) {
	p, err := s.recordPath(id)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no snapshot of call %s in %s: it wrote no file through the executor", id, s.dir)
	}
	if err != nil {
		return nil, err
	}
	var snap Snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return nil, fmt.Errorf("snapshot of call %s: %w", id, err)
	}
	return &snap, nil
}

func (s *Snapshots) put(snap *Snapshot) error {
	p, err := s.recordPath(snap.CallID)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return writeAtomic(p, append(data, '\n'), 0o600)
}

// change is one file a tool is about to change.
type change struct {
	path  string // real path
	shown string // as the call named it
	after []byte
	write bool // false: delete the file
}

// prior is a file's state before a change.
type prior struct {
	data   []byte
	exists bool
	mode   fs.FileMode
}

func readPrior(p string) (prior, error) {
	f, err := openExact(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return prior{mode: 0o644}, nil
	}
	if err != nil {
		return prior{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return prior{}, err
	}
	if !fi.Mode().IsRegular() {
		return prior{}, fmt.Errorf("%s is not a regular file", p)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return prior{}, err
	}
	return prior{data: data, exists: true, mode: fi.Mode().Perm()}, nil
}

// apply snapshots then makes the changes: all of them, or (when a write
// fails) none, the files already written being put back. A snapshot that
// cannot be kept fails the call before any file is touched.
func (x *Executor) apply(c *call, changes []change) error {
	if c.ID == "" {
		return errors.New("the call has no id to keep its snapshot under: nothing written")
	}
	priors := make([]prior, len(changes))
	snap := &Snapshot{CallID: c.ID, Time: time.Now().UTC()}
	for i, ch := range changes {
		p, err := readPrior(ch.path)
		if err != nil {
			return fmt.Errorf("%s: %w: nothing written", ch.shown, err)
		}
		priors[i] = p
		fsnap := FileSnap{Path: ch.path, Mode: p.mode}
		if p.exists {
			if fsnap.Before, err = x.snaps.blobs.Put(p.data); err != nil {
				return fmt.Errorf("snapshot of %s failed, so it is not written: %w", ch.shown, err)
			}
		}
		if ch.write {
			if fsnap.After, err = x.snaps.blobs.Put(ch.after); err != nil {
				return fmt.Errorf("snapshot of %s failed, so it is not written: %w", ch.shown, err)
			}
		}
		snap.Files = append(snap.Files, fsnap)
	}
	if rp, err := x.snaps.recordPath(c.ID); err != nil {
		return err
	} else if _, err := os.Stat(rp); err == nil {
		return fmt.Errorf("call %s already has a snapshot: nothing written", c.ID)
	}
	if err := x.snaps.put(snap); err != nil {
		return fmt.Errorf("snapshot of call %s failed, so nothing is written: %w", c.ID, err)
	}
	for i, ch := range changes {
		err := noLinkOnPath(ch.path)
		if err == nil {
			err = applyOne(ch.path, ch.write, ch.after, priors[i].mode)
		}
		if err != nil {
			werr := fmt.Errorf("%s: %w", ch.shown, err)
			for j := i - 1; j >= 0; j-- {
				if rerr := applyOne(changes[j].path, priors[j].exists, priors[j].data, priors[j].mode); rerr != nil {
					return fmt.Errorf("%w; and putting back %s failed: %v (its snapshot is call %s)", werr, changes[j].shown, rerr, c.ID)
				}
			}
			if rp, err := x.snaps.recordPath(c.ID); err == nil {
				os.Remove(rp)
			}
			return fmt.Errorf("%w: every file was put back as it was", werr)
		}
	}
	return nil
}

// noLinkOnPath returns an error when p, a path that was resolved without
// links, now leads through a symbolic link: a directory of the workspace
// swapped for a link to one elsewhere since p was resolved.
func noLinkOnPath(p string) error {
	r, err := pathres.Resolve("", "", p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if r.Real != p {
		return fmt.Errorf("%s now leads through a symbolic link to %s", p, r.Real)
	}
	return nil
}

// applyOne writes data to p (creating its directory) or, with write
// false, removes p.
func applyOne(p string, write bool, data []byte, mode fs.FileMode) error {
	if write {
		if err := mkdirExact(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return replaceFile(p, write, data, mode)
}

// ConflictError is returned by [Snapshots.Rollback] when a file no longer
// holds what the call wrote: Diff shows, per file, what the call wrote
// against what is there now. Nothing was changed.
type ConflictError struct {
	CallID string
	Diff   string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("call %s is not rolled back: a file changed after the call wrote it (nothing was changed)", e.CallID)
}

// Rollback restores every file call id changed to its content before the
// call, but only if each still holds exactly what the call left there;
// otherwise it changes nothing and returns a [*ConflictError]. It returns
// the paths restored.
func (s *Snapshots) Rollback(id string) ([]string, error) {
	snap, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	if snap.RolledBack {
		return nil, fmt.Errorf("call %s was already rolled back", id)
	}
	var diff strings.Builder
	for _, f := range snap.Files {
		if err := noLinkOnPath(f.Path); err != nil {
			return nil, fmt.Errorf("call %s is not rolled back (nothing was changed): %w", id, err)
		}
		cur, err := readPrior(f.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		now := ""
		if cur.exists {
			now = Hash(cur.data)
		}
		if now == f.After {
			continue
		}
		var wrote []byte
		if f.After != "" {
			if wrote, err = s.blobs.Get(f.After); err != nil {
				return nil, fmt.Errorf("%s: what the call wrote is not in the snapshot: %w", f.Path, err)
			}
		}
		diff.WriteString(lineDiff(f.Path+" (as the call left it)", f.Path+" (now)", wrote, cur.data, f.After != "", cur.exists))
	}
	if diff.Len() > 0 {
		return nil, &ConflictError{CallID: id, Diff: diff.String()}
	}
	befores := make([][]byte, len(snap.Files))
	for i, f := range snap.Files {
		if f.Before != "" {
			if befores[i], err = s.blobs.Get(f.Before); err != nil {
				return nil, fmt.Errorf("%s: the content before the call is not in the snapshot: %w", f.Path, err)
			}
		}
	}
	var done []string
	for i, f := range snap.Files {
		if err := applyOne(f.Path, f.Before != "", befores[i], f.Mode); err != nil {
			return done, fmt.Errorf("restore %s: %w (restored so far: %s)", f.Path, err, strings.Join(done, ", "))
		}
		done = append(done, f.Path)
	}
	snap.RolledBack = true
	if err := s.put(snap); err != nil {
		return done, fmt.Errorf("files restored, but the snapshot could not be marked rolled back: %w", err)
	}
	return done, nil
}
