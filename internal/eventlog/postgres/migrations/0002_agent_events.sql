-- Events an agent posts (session.started, turn.started, user.message,
-- turn.completed) are what the agent says, never decisions: filters on
-- decision and tool must not select them, whatever their payload holds.
UPDATE eventlog_events SET decision = NULL, tool = NULL
	WHERE type IN ('session.started', 'turn.started', 'user.message', 'turn.completed')
	AND (decision IS NOT NULL OR tool IS NOT NULL);
