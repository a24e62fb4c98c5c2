-- Every index is written by every append, under the write lock and before
-- the commit's fsync. Two served only the audit filters on decision and
-- tool: those queries read the events of a time range (events_time) or of
-- some types (events_type) and test decision and tool on the rows, as they
-- test session or seq. What follows each index:
--   events_session_seq  seq per session, the chains, session filters
--   events_type         the server's followers, stats, session bindings
--   events_time         time ranges: audit --since/--until, stats
DROP INDEX events_decision;
DROP INDEX events_tool;
