-- Each session's events form a chain (see the eventlog package): hash is
-- the HMAC of the event and prev_hash, the hash of the session's previous
-- event (empty for its first). Rows stored before this migration have
-- neither; eventlog_chain_origin keeps the highest id among them, so a row
-- above it without a hash is known to have lost it. eventlog_sessions.
-- last_hash is the hash of the session's last event, taken and set with
-- last_seq under the row's lock in the append transaction, so concurrent
-- writers, in this process or others, never fork a chain.
ALTER TABLE eventlog_events ADD COLUMN prev_hash bytea;
ALTER TABLE eventlog_events ADD COLUMN hash bytea;
ALTER TABLE eventlog_sessions ADD COLUMN last_hash bytea;

CREATE TABLE eventlog_chain_origin (
	one               boolean PRIMARY KEY DEFAULT true CHECK (one),
	last_unchained_id bigint  NOT NULL
);
INSERT INTO eventlog_chain_origin (last_unchained_id) SELECT COALESCE(MAX(id), 0) FROM eventlog_events;
