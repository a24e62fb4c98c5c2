// Package gate puts the decision engine, the event log and a person
// together. A [Gate] turns one tool call into the event chain of spec 000
// §5: model.tool_call_requested, then — when the engine asks —
// permission.requested, then always permission.resolved with the decision,
// reason and actor; and, through [Gate.Run], tool.started followed by
// tool.completed or tool.failed, with injection.suspected when the output
// looks like prompt injection.
//
// The gate fails closed (DESIGN.md invariant 10): no approver, an approval
// timeout (30 s by default), a cancelled context or an approver error all
// deny, and every deny is a permission.resolved event (invariant 11), not
// only an error. Destructive calls are approved for one call at most, never
// remembered (invariant 6), and tool output never becomes a tool call
// (invariant 12).
package gate
