// Package fslock serializes the read-modify-write of files in one
// directory among processes: toolgate's policy files, and the files a
// server keeps in its state directory.
package fslock

// Dir takes an exclusive lock on the directory dir, waiting for it, and
// returns the function that releases it. On Unix it is an advisory flock,
// which every process that writes there through Dir respects; elsewhere it
// serializes the callers of this process only.
func Dir(dir string) (func(), error) { return lockDir(dir) }
