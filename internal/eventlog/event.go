package eventlog

import (
	"encoding/json"
	"time"
)

// Type names the kind of an [Event]. The types toolgate writes are the
// constants below; a [Store] accepts any type that passes [Validate], so a
// newer toolgate can add types without a schema change.
type Type string

// The event types of DESIGN.md, in the order they occur in a session.
const (
	// TypeSessionStarted opens a session.
	TypeSessionStarted Type = "session.started"
	// TypeTurnStarted opens a turn of the conversation.
	TypeTurnStarted Type = "turn.started"
	// TypeUserMessage records what the person said to the agent.
	TypeUserMessage Type = "user.message"
	// TypeToolCallRequested records a tool call the model asked for, when
	// a person is asked about it; a call decided at once is one
	// TypePermissionResolved event that carries the call. Logs written
	// before that hold one before every decision.
	TypeToolCallRequested Type = "model.tool_call_requested"
	// TypePermissionRequested records that a person was asked.
	TypePermissionRequested Type = "permission.requested"
	// TypePermissionResolved records a decision: its payload carries
	// decision, reason, actor, riskAtDecision, sourcedFrom, rule and receipt
	// and, for a call decided without a person, the call (input, cwd,
	// agent, parentAgent, workspace).
	TypePermissionResolved Type = "permission.resolved"
	// TypePermissionAnswered records a person's answer given to one server
	// about a question another server holds (several servers sharing one
	// log); the holder acts on it and records permission.resolved.
	TypePermissionAnswered Type = "permission.answered"
	// TypeToolStarted records that an allowed call began executing.
	TypeToolStarted Type = "tool.started"
	// TypeToolCompleted records a call that finished, with a truncated,
	// redacted stdout preview and byte counts.
	TypeToolCompleted Type = "tool.completed"
	// TypeToolFailed records a call that could not finish.
	TypeToolFailed Type = "tool.failed"
	// TypeTurnCompleted closes a turn.
	TypeTurnCompleted Type = "turn.completed"
	// TypePolicyChanged records a change of rules or settings.
	TypePolicyChanged Type = "policy.changed"
	// TypeLeaseGranted records a temporary grant.
	TypeLeaseGranted Type = "lease.granted"
	// TypeLeaseRevoked records the end of a temporary grant.
	TypeLeaseRevoked Type = "lease.revoked"
	// TypeInjectionSuspected flags tool output that looks like prompt injection.
	TypeInjectionSuspected Type = "injection.suspected"
	// TypeHookRan records one run of a user hook of the policy: which
	// hook (event, file:line, command or URL), how long it took, what it
	// answered and what the gate made of it.
	TypeHookRan Type = "hook.ran"
)

// Types lists every type, in the order of the constants: those of
// DESIGN.md, permission.answered and hook.ran.
func Types() []Type {
	return []Type{
		TypeSessionStarted, TypeTurnStarted, TypeUserMessage, TypeToolCallRequested,
		TypePermissionRequested, TypePermissionResolved, TypePermissionAnswered, TypeToolStarted,
		TypeToolCompleted, TypeToolFailed, TypeTurnCompleted, TypePolicyChanged,
		TypeLeaseGranted, TypeLeaseRevoked, TypeInjectionSuspected, TypeHookRan,
	}
}

// AgentContentField is the one payload field of an event an agent posts
// (see [PostedByAgent]): what the agent sent, a JSON object, is stored
// under it and nowhere else, as {"content": {…}}. Nothing the agent sends
// can therefore take the place of a field the gate writes — a decision, a
// reason, an actor, a rule, a toolCallId — at the top of a payload.
const AgentContentField = "content"

// PostedByAgent reports whether events of type t are what an agent says
// about itself — session.started, turn.started, user.message and
// turn.completed, the types an agent may post to the server — rather than
// what the gate saw and decided. Their payload holds the agent's words
// under [AgentContentField]. They are never decisions: a store indexes no
// decision or tool for them (see [IndexedFieldsOf]), so a [Filter] on
// decisions or tools never selects them, and readers show no decision,
// actor or rule for them and put them in no tool call's timeline.
func PostedByAgent(t Type) bool {
	switch t {
	case TypeSessionStarted, TypeTurnStarted, TypeUserMessage, TypeTurnCompleted:
		return true
	}
	return false
}

// AgentTypes lists the types for which [PostedByAgent] is true.
func AgentTypes() []Type {
	return []Type{TypeSessionStarted, TypeTurnStarted, TypeUserMessage, TypeTurnCompleted}
}

// Event is one stored entry of the log. Its JSON form is the envelope of
// DESIGN.md with the store-wide id: {"id", "seq", "session", "turn",
// "time", "type", "payload"}.
type Event struct {
	// ID numbers all the events of a store, across sessions, in commit
	// order: an event committed after another has a larger ID. IDs start
	// at 1 and are never reused, but may have gaps. Within a session, ID
	// grows with Seq. The store assigns it; it is the cursor a reader
	// resumes from (see [Filter].AfterID).
	ID int64 `json:"id"`
	// Seq numbers the events of one session: 1, 2, 3, … with no gap. The
	// store assigns it; it is never reused.
	Seq int64 `json:"seq"`
	// Session is the session the event belongs to; never empty.
	Session string `json:"session"`
	// Turn is the turn within the session, or empty for events outside a turn.
	Turn string `json:"turn,omitempty"`
	// Time is when the event happened, in UTC.
	Time time.Time `json:"time"`
	// Type is the kind of event.
	Type Type `json:"type"`
	// Payload is the type-specific body: a JSON object, "{}" when empty.
	Payload json.RawMessage `json:"payload"`
}

// Draft is an event before it is stored: what a caller passes to
// [Store.Append]. The store adds the session, the ID and the sequence
// number.
type Draft struct {
	// Turn is the turn within the session, or empty.
	Turn string
	// Time is when the event happened; the zero time means "when the store
	// commits it", which keeps times non-decreasing along a session's seq.
	Time time.Time
	// Type is the kind of event; it must not be empty (see [Validate]).
	Type Type
	// Payload is a JSON object, or empty for "{}". Its top-level string
	// fields "decision" and "tool" are indexed for [Filter], unless the
	// type is one an agent posts ([PostedByAgent]).
	Payload json.RawMessage
}
