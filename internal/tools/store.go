package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Blobs is a content-addressed store: each blob is kept under the hex
// sha256 of its bytes, in dir/ab/cdef…, written atomically (a reader sees
// the whole blob or none). Storing the same bytes twice keeps one copy.
type Blobs struct {
	dir  string
	sync bool
}

// NewBlobs returns the store kept in dir; dir is created on first Put.
// Blobs are not synced to disk before they are renamed into place: a
// crash can lose one, which [Blobs.Get] then reports as corrupt or
// missing, and the next Put of the same bytes writes it again.
func NewBlobs(dir string) *Blobs { return &Blobs{dir: dir} }

// newSyncedBlobs is NewBlobs whose blobs are on disk once Put returns.
func newSyncedBlobs(dir string) *Blobs { return &Blobs{dir: dir, sync: true} }

// Hash returns the id data is stored under: its hex sha256.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ValidID reports whether id has the form of a blob id.
func ValidID(id string) bool {
	if len(id) != 64 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

func (b *Blobs) path(id string) string { return filepath.Join(b.dir, id[:2], id[2:]) }

// Put stores data and returns its id.
func (b *Blobs) Put(data []byte) (string, error) {
	id := Hash(data)
	p := b.path(id)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		return id, nil // same name, same size: the same bytes unless tampered with, which Get detects
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("store %s: %w", id, err)
	}
	if err := writeFile(p, data, 0o600, b.sync); err != nil {
		return "", fmt.Errorf("store %s: %w", id, err)
	}
	return id, nil
}

// Get returns the blob id. It fails for an id that is not one, for an
// unknown id, and for a blob whose bytes no longer hash to its id.
func (b *Blobs) Get(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q is not an artifact id: want 64 lower-case hex digits", id)
	}
	data, err := os.ReadFile(b.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no artifact %s in %s", id, b.dir)
	}
	if err != nil {
		return nil, err
	}
	if Hash(data) != id {
		return nil, fmt.Errorf("artifact %s is corrupt: its content hashes to %s", id, Hash(data))
	}
	return data, nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename, so path holds the old or the new bytes, never a
// part; the data is synced before the rename.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	return writeFile(path, data, perm, true)
}

// writeFile is writeAtomic, with the sync before the rename only when
// sync is set.
func writeFile(path string, data []byte, perm fs.FileMode, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}
