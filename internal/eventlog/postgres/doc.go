// Package postgres is the [eventlog.Store] on PostgreSQL (13 or newer),
// through github.com/jackc/pgx/v5. Several toolgate processes, on one
// machine or many, may share one database: sequence numbers stay gapless
// per session and IDs stay in commit order across all of them.
//
// # IDs in commit order
//
// A sequence (bigserial, identity) hands out numbers when a transaction
// asks, not when it commits: a transaction that took ID 10 may commit
// after one that took ID 11, and a reader that saw 11 and moved its cursor
// past it would never see 10. So IDs come from a counter instead: the one
// row of eventlog_counter, which every append transaction updates first
// and, by PostgreSQL's row locking, holds locked until it has committed.
// The next append transaction, in this process or any other, waits for
// that lock, and by the time it gets it the previous transaction is
// committed and visible. Appends therefore commit one at a time, in ID
// order, and once an ID is visible every smaller ID that will ever exist
// is visible too; a subscriber's cursor can skip nothing. A failed
// transaction rolls the counter back with everything else, so IDs have no
// gaps.
//
// The price is that appends to one database are serialized: one commit,
// one WAL flush, at a time. Each Store makes that cheap with group commit:
// it has one writer connection, which takes every append waiting in the
// process and commits them in one transaction, so the number of
// transactions grows with time, not with the number of appending
// goroutines.
//
// The counter row was preferred to an advisory lock (pg_advisory_xact_lock
// before taking IDs from a sequence), which would serialize the same way:
// a row lock needs no key that another application on the same database
// could happen to use too, and the counter cannot drift from the table.
//
// # Sequence numbers
//
// eventlog_sessions holds each session's last seq. An append transaction
// adds to it with INSERT … ON CONFLICT DO UPDATE … RETURNING, which locks
// the session's row until the commit, and gives its events the numbers in
// between. The counter lock, taken first, already orders all appends; the
// session rows keep each session's numbering correct on its own, and make
// finding the last seq one index lookup.
//
// # Durability
//
// Append returns once PostgreSQL has committed the transaction. The store
// sets synchronous_commit to on for its connections unless the connection
// string sets it, so a commit waits for its WAL flush (and, where
// synchronous standbys are configured, for them). If the connection is lost
// while COMMIT is under way, the store asks the server, on a new
// connection, whether the transaction committed (pg_xact_status), and
// reports the answer; if it cannot find out, the error wraps
// [ErrCommitUnknown] and the events are not written again.
//
// # Subscriptions
//
// A subscription is a cursor over IDs, read a page at a time from the
// pool. Every append transaction sends a notification (NOTIFY, delivered
// when it commits) on the channel toolgate_eventlog with the schema of the
// tables as its payload; each Store listens on one connection of its own
// and wakes its subscribers, so appends from other processes are seen at
// once. While the listening connection is down, subscribers poll.
//
// # Schema
//
// The tables live in the connection's current schema (set search_path in
// the connection string to put them elsewhere) and are named eventlog_*.
// The schema is a series of embedded migrations (migrations/NNNN_*.sql);
// [Open] applies the missing ones in one transaction, holding an advisory
// lock so that processes starting together do not race, records each in
// eventlog_schema_version, and refuses a database whose version is newer
// than the code with [ErrSchemaTooNew].
package postgres
