// Package gate puts the decision engine, the event log and a person
// together. A [Gate] turns one tool call into the event chain of spec 000
// §5. A call decided without a person (allowed or denied at once) is one
// permission.resolved event that carries the call ([CallRequest]) with the
// decision, reason and actor; a call a person is asked about is
// model.tool_call_requested, then permission.requested, then
// permission.resolved with the answer. Through [Gate.Run] an allowed call
// goes on with tool.started followed by tool.completed or tool.failed,
// with injection.suspected when the output looks like prompt injection.
//
// The gate fails closed (DESIGN.md invariant 10): no approver, an approval
// timeout (30 s by default), a cancelled context or an approver error all
// deny, and every deny is a permission.resolved event (invariant 11), not
// only an error. Destructive calls are approved for one call at most, never
// remembered (invariant 6), and tool output never becomes a tool call
// (invariant 12).
//
// The user hooks of the policy run here (package userhook): PreToolUse
// hooks for every call the policy does not deny, PermissionRequest hooks
// before a person is asked, PostToolUse hooks after [Gate.Run] ran a call.
// Each run is a hook.ran event in the same chain. A hook may deny any
// call, make an allowed one ask, and allow only what an allow rule could
// (see [userhook.AllowBlocked]); whatever fails in a hook denies. A hook
// that changes a call's input makes it a new call, decided again from the
// start, at most [MaxInputChanges] times.
package gate
