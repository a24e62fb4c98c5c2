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
// [Options].MaxBatch events, and waiting up to 50 µs for as many appends
// as recent batches had), assigns their sequence numbers, inserts them in
// one IMMEDIATE transaction, commits (one fsync) and then acknowledges
// each caller. The appends that arrive while one commit is being synced
// form the next batch, so the number of fsyncs grows with time, not with
// the number of writers. Sequence numbers are assigned by the writer
// alone, from a cache of each session's last seq that is dropped whenever
// another process has written the file (PRAGMA data_version), so they are
// gapless; if a batch fails, each append in it is retried alone, so one
// append's failure is not another's.
//
// SQLite holds its write lock until a commit's sync is done, so commits do
// not overlap: a caller that waits for each Append before making the next
// gets at most one event per sync, and N such callers at most N events per
// commit. More throughput takes more events per Append or more callers.
//
// # Checkpoints
//
// A checkpoint copies the WAL back into the database file and syncs it;
// SQLite runs one after the commit that takes the WAL past 8192 pages
// (32 MiB), on the writer's connection, and the commit after it starts the
// WAL over, which syncs its header once more. The appends waiting for
// those commits wait for the checkpoint too; a WAL eight times SQLite's
// default makes that eight times rarer, and a checkpoint copies each page
// once however often it was rewritten, so checkpoints cost less in all.
//
// # Schema
//
// The schema is a series of embedded migrations (migrations/NNNN_*.sql).
// [Open] applies the missing ones in one transaction and records each in
// the schema_version table; it refuses a database whose version is newer
// than the code with [ErrSchemaTooNew].
package sqlite
