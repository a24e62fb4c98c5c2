// Package eventlog is toolgate's append-only record of everything that
// happens to a tool call: the [Event] envelope and types of DESIGN.md, and
// the [Store] interface that the SQLite store (package
// eventlog/sqlite) and any later store implement. Package
// eventlog/storetest holds the conformance suite every store passes.
//
// # Walkthrough
//
// Open a store and append events to a session. The store numbers them:
// seq starts at 1 in every session and has no gaps, even with many
// goroutines appending at once, and Append returns only once the events
// are durable:
//
//	s, err := sqlite.Open(filepath.Join(stateDir, "events.db"), nil)
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	evs, err := s.Append(ctx, "sess-1",
//		eventlog.Draft{Type: eventlog.TypeToolCallRequested, Payload: req},
//		eventlog.Draft{Type: eventlog.TypePermissionResolved, Payload: decision})
//	// evs[0].Seq, evs[1].Seq are consecutive.
//
// Query reads what is stored, filtered by session, type, time, and the
// payload's "decision" and "tool" fields:
//
//	for e, err := range s.Query(ctx, eventlog.Filter{Decisions: []string{"deny"}, Since: dayAgo}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(e.Session, e.Seq, e.Type)
//	}
//
// Subscribe follows the log as it grows, until ctx ends. To read a session
// and then follow it without missing an event, query it and subscribe
// from the last seq seen:
//
//	for e, err := range s.Subscribe(ctx, eventlog.Filter{Session: "sess-1", AfterSeq: last}) {
//		…
//	}
//
// Every event also has an ID, store-wide and in commit order. A reader of
// all sessions (an SSE stream) keeps the last ID it delivered and, after a
// reconnect, resumes from it; the stored events after it come first, then
// live ones, none missed and none twice:
//
//	for e, err := range s.Subscribe(ctx, eventlog.Filter{AfterID: lastEventID}) {
//		…
//	}
//
// A reader that has seen nothing yet passes [ReplayAll] instead.
//
// A slow subscriber never holds back writers: it reads what it has not
// seen yet from the store, so it lags but loses nothing.
//
// # What agents say
//
// Events of the types an agent posts about itself ([PostedByAgent]:
// session.started, turn.started, user.message, turn.completed) carry the
// agent's words under one payload field, [AgentContentField]. They are
// never decisions: stores index no decision or tool for them, so a
// [Filter] on decisions or tools never selects them, whatever their
// payload holds, and readers show no decision, actor or rule for them.
//
// # Tamper evidence
//
// Every event a store appends is chained to the one before it in its
// session: its row carries Prev, the Hash of the session's previous event
// (empty for the first), and Hash, an HMAC-SHA256 under the store's chain
// key of Prev and everything the event says — session, seq, turn, time,
// type and payload. An edited row no longer matches its Hash; a deleted,
// inserted or reordered one breaks the link from its successor's Prev; and
// without the key, which is derived from the approver token, no one can
// write rows that verify. [Verify] checks a store's chains.
//
// Hashes cover one session at a time: the order of events across sessions
// (their IDs) is not covered, and the newest events of a session can be
// cut off unnoticed by whoever can also rewrite the store's record of each
// session's last event. Rows written before a store had chains carry no
// hash; Verify counts them as unchained, not as tampered.
//
// Bad input (an empty session or type, a payload that is not a JSON
// object) is an error wrapping [ErrInvalid], checked by [Validate] before
// anything is written.
package eventlog
