package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
)

// walFile is the store's own handle on SQLite's write-ahead log, which it
// fsyncs after each commit in SyncFull. SQLite commits without syncing
// (synchronous=NORMAL), so its write lock is free while the disk works and
// the next batch is committed meanwhile; an fsync of the file makes every
// frame written to it so far durable, whichever connection or process
// wrote it. The WAL of an open database is never deleted (SQLite deletes
// it when the last connection closes, and the store holds one), but it is
// looked up again if the file at the path is no longer the one open, and
// the directory is synced whenever the file is opened, so that a WAL
// created since is found after a power cut.
//
// Only the syncer goroutine uses a walFile.
type walFile struct {
	path string
	f    *os.File
	fi   os.FileInfo
}

func (w *walFile) sync() error {
	fi, err := os.Stat(w.path)
	if err != nil {
		return fmt.Errorf("sync the write-ahead log: %w", err)
	}
	if w.f == nil || !os.SameFile(fi, w.fi) {
		if w.f != nil {
			w.f.Close()
			w.f = nil
		}
		f, err := os.OpenFile(w.path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("sync the write-ahead log: %w", err)
		}
		if w.fi, err = f.Stat(); err != nil {
			f.Close()
			return fmt.Errorf("sync the write-ahead log: %w", err)
		}
		if err := syncDir(filepath.Dir(w.path)); err != nil {
			f.Close()
			return err
		}
		w.f = f
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync the write-ahead log %s: %w", w.path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync the directory of the write-ahead log: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync the directory %s: %w", dir, err)
	}
	return nil
}

// close closes the handle; a nil walFile has nothing to close.
func (w *walFile) close() error {
	if w == nil || w.f == nil {
		return nil
	}
	return w.f.Close()
}
