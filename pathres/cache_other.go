//go:build !linux

package pathres

import "errors"

// Cache keeps real paths across decisions where the system reports every
// change of the directories involved; on this system it keeps nothing,
// and every [View] resolves afresh (remembering only within itself).
type Cache struct{}

// Shared returns the process's Cache: nil here, which keeps nothing.
func Shared() *Cache { return nil }

// NewCache fails: this system offers no way to learn of every change.
func NewCache() (*Cache, error) {
	return nil, errors.New("pathres: a path cache needs Linux's inotify")
}

// Close does nothing.
func (c *Cache) Close() error { return nil }

func (c *Cache) begin() bool                      { return false }
func (c *Cache) real(string) (string, bool, bool) { return "", false, false }
func (c *Cache) entry(lookup) (Entry, bool)       { return Absent, false }
func (c *Cache) fillReal(string, string, bool)    {}
func (c *Cache) fillEntry(lookup) (Entry, bool)   { return Absent, false }
