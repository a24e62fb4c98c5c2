-- Each session's events form a chain (see the eventlog package): hash is
-- the HMAC of the event and prev_hash, the hash of the session's previous
-- event (empty for its first). Rows stored before this migration have
-- neither; chain_origin keeps the highest id among them, so a row above it
-- without a hash is known to have lost it. chain_heads is the writer's
-- record of each session's last event, written in the append transaction:
-- the next event chains from it, and a verifier compares it with the last
-- row to see events cut off the end.
ALTER TABLE events ADD COLUMN prev_hash BLOB;
ALTER TABLE events ADD COLUMN hash BLOB;

CREATE TABLE chain_heads (
	session TEXT    PRIMARY KEY,
	seq     INTEGER NOT NULL CHECK (seq > 0),
	hash    BLOB
) STRICT, WITHOUT ROWID;
INSERT INTO chain_heads (session, seq) SELECT session, MAX(seq) FROM events GROUP BY session;

CREATE TABLE chain_origin (
	one               INTEGER PRIMARY KEY CHECK (one = 1),
	last_unchained_id INTEGER NOT NULL
) STRICT;
INSERT INTO chain_origin (one, last_unchained_id) SELECT 1, COALESCE(MAX(id), 0) FROM events;
