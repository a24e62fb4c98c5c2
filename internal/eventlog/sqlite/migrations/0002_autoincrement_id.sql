-- events.id becomes AUTOINCREMENT. A plain INTEGER PRIMARY KEY hands out
-- MAX(id) + 1, which would reuse the ids of the newest events if they were
-- ever deleted; with AUTOINCREMENT SQLite keeps the highest id ever used in
-- sqlite_sequence, so an id, the cursor readers resume from, is never
-- handed out twice. SQLite cannot add AUTOINCREMENT to a table, so the
-- table is rebuilt with the same rows and ids.
CREATE TABLE events_v2 (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	session  TEXT    NOT NULL,
	seq      INTEGER NOT NULL CHECK (seq > 0),
	turn     TEXT    NOT NULL DEFAULT '',
	time     INTEGER NOT NULL,
	type     TEXT    NOT NULL CHECK (type <> ''),
	decision TEXT,
	tool     TEXT,
	payload  TEXT    NOT NULL
) STRICT;

INSERT INTO events_v2 (id, session, seq, turn, time, type, decision, tool, payload)
	SELECT id, session, seq, turn, time, type, decision, tool, payload FROM events ORDER BY id;

DROP TABLE events;
ALTER TABLE events_v2 RENAME TO events;

CREATE UNIQUE INDEX events_session_seq ON events (session, seq);
CREATE INDEX events_time ON events (time);
CREATE INDEX events_type ON events (type, id);
CREATE INDEX events_decision ON events (decision, id) WHERE decision IS NOT NULL;
CREATE INDEX events_tool ON events (tool, id) WHERE tool IS NOT NULL;
