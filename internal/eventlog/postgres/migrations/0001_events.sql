-- The event log: one row per event, append-only.
--
-- id orders all events by commit and is the cursor of subscriptions; it
-- is handed out from eventlog_counter, whose single row every append
-- transaction updates first and so holds locked until it commits: appends
-- commit one at a time, in id order. (session, seq) is the envelope's
-- identity; eventlog_sessions holds each session's last seq, and its row
-- is locked by the transaction that adds to the session. time is Unix
-- nanoseconds, UTC. decision and tool are copied out of the payload at
-- append time, NULL when the payload has no such string field, so filters
-- on them use an index. payload is the JSON text exactly as appended.
CREATE TABLE eventlog_counter (
	one     boolean PRIMARY KEY DEFAULT true CHECK (one),
	last_id bigint  NOT NULL CHECK (last_id >= 0)
);
INSERT INTO eventlog_counter (last_id) VALUES (0);

CREATE TABLE eventlog_sessions (
	session  text   PRIMARY KEY,
	last_seq bigint NOT NULL CHECK (last_seq > 0)
);

CREATE TABLE eventlog_events (
	id       bigint PRIMARY KEY CHECK (id > 0),
	session  text   NOT NULL,
	seq      bigint NOT NULL CHECK (seq > 0),
	turn     text   NOT NULL DEFAULT '',
	time     bigint NOT NULL,
	type     text   NOT NULL CHECK (type <> ''),
	decision text,
	tool     text,
	payload  text   NOT NULL,
	UNIQUE (session, seq)
);

CREATE INDEX eventlog_events_time ON eventlog_events (time);
CREATE INDEX eventlog_events_type ON eventlog_events (type, id);
CREATE INDEX eventlog_events_decision ON eventlog_events (decision, id) WHERE decision IS NOT NULL;
CREATE INDEX eventlog_events_tool ON eventlog_events (tool, id) WHERE tool IS NOT NULL;
