// Package sqlite is the embedded [eventlog.Store]: one SQLite database
// file (modernc.org/sqlite, pure Go, no cgo) in WAL mode.
//
// # Durability
//
// With the default [SyncFull], every commit fsyncs the write-ahead log
// before any of its callers is acknowledged, so an acknowledged event
// survives kill -9 of the process, a kernel crash and a power cut. Surviving
// kill -9 alone would not need the fsync: a committed WAL frame is already
// in the kernel's page cache, which outlives the process; [SyncNormal]
// offers exactly that, trading the last commits on power loss for speed.
// The default keeps DESIGN.md's promise, "nothing lost that was
// acknowledged", without conditions.
//
// # Group commit
//
// Append never writes itself. It hands its events to one writer goroutine,
// which takes every append waiting in its queue (up to
// [Options].MaxBatch events), assigns their sequence numbers, inserts them
// in one IMMEDIATE transaction, commits (one fsync) and then acknowledges
// each caller. The appends that arrive while one commit is being synced
// form the next batch, so the number of fsyncs grows with time, not with
// the number of writers. Sequence numbers are assigned by the writer
// alone, from a cache of each session's last seq that is dropped whenever
// another process has written the file (PRAGMA data_version), so they are
// gapless; if a batch fails, each append in it is retried alone, so one
// append's failure is not another's.
//
// # Schema
//
// The schema is a series of embedded migrations (migrations/NNNN_*.sql).
// [Open] applies the missing ones in one transaction and records each in
// the schema_version table; it refuses a database whose version is newer
// than the code with [ErrSchemaTooNew].
package sqlite
