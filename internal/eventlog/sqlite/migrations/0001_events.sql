-- The event log: one row per event, append-only.
--
-- id orders all events by commit and is the cursor of subscriptions;
-- (session, seq) is the envelope's identity. time is Unix nanoseconds, UTC.
-- decision and tool are copied out of the payload at append time, NULL when
-- the payload has no such string field, so filters on them use an index.
CREATE TABLE events (
	id       INTEGER PRIMARY KEY,
	session  TEXT    NOT NULL,
	seq      INTEGER NOT NULL CHECK (seq > 0),
	turn     TEXT    NOT NULL DEFAULT '',
	time     INTEGER NOT NULL,
	type     TEXT    NOT NULL CHECK (type <> ''),
	decision TEXT,
	tool     TEXT,
	payload  TEXT    NOT NULL,
	UNIQUE (session, seq)
) STRICT;

CREATE INDEX events_time ON events (time);
CREATE INDEX events_type ON events (type, id);
CREATE INDEX events_decision ON events (decision, id) WHERE decision IS NOT NULL;
CREATE INDEX events_tool ON events (tool, id) WHERE tool IS NOT NULL;
