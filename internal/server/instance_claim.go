package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/fslock"
)

// maxInstances bounds the servers that run at once on one state directory
// and event log, each with an identity of its own.
const maxInstances = 64

// ClaimInstance returns the identity ([Options.Instance]) of a server on
// the state directory dir for the event log db (a file or a connection
// string), and a function that gives it up. The identity is kept in a
// file of dir (instance-HASH-N.id), so that the server has the same one
// when it starts again, after a crash too; the file is locked while the
// server runs, so two servers running on one state directory take two
// identities. Where files cannot be locked, the identity is new at every
// start.
func ClaimInstance(dir, db string) (string, func(), error) {
	sum := sha256.Sum256([]byte(db))
	prefix := "instance-" + hex.EncodeToString(sum[:6])
	for n := range maxInstances {
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.id", prefix, n))
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return "", nil, fmt.Errorf("claim a server identity: %w", err)
		}
		held, err := fslock.TryFile(f)
		if err != nil {
			f.Close()
			if errors.Is(err, fslock.ErrUnsupported) {
				return newInstanceID(), func() {}, nil
			}
			return "", nil, fmt.Errorf("claim a server identity: lock %s: %w", path, err)
		}
		if !held {
			f.Close()
			continue // another server on this directory runs with it
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			f.Close()
			return "", nil, fmt.Errorf("claim a server identity: %w", err)
		}
		id := strings.TrimSpace(string(raw))
		if !validID(id) || !strings.HasPrefix(id, "in_") {
			id = newInstanceID()
			if err := writeSynced(f, id+"\n"); err != nil {
				f.Close()
				return "", nil, fmt.Errorf("claim a server identity: write %s: %w", path, err)
			}
		}
		return id, func() { f.Close() }, nil // closing the file releases the lock
	}
	return "", nil, fmt.Errorf("claim a server identity: %d servers already run on the state directory %s with this event log", maxInstances, dir)
}

// newInstanceID returns a fresh random instance id.
func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "in_" + hex.EncodeToString(b[:])
}

// writeSynced replaces the content of f with s and syncs it.
func writeSynced(f *os.File, s string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(s), 0); err != nil {
		return err
	}
	return f.Sync()
}

// OutageFile returns the usual name, in the state directory, of the
// record of what the server with identity instance (see [ClaimInstance])
// decided while the event log db could not be written (see package
// spool): one file a log and server, since each server appends its record
// to the log and rewrites it on its own, and two sharing one would append
// each other's records twice or lose them. A server that starts again
// under the same identity takes up its record where it was left.
func OutageFile(db, instance string) string {
	sum := sha256.Sum256([]byte(db))
	return "outage-" + hex.EncodeToString(sum[:6]) + "-" + instance + ".jsonl"
}
