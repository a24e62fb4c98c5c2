// Package approval is how toolgate puts a question to a person. When the
// engine answers ask, the gate builds a [Request] — the session, the tool,
// the decision's reason, message and risk, a normalized summary of what the
// call does, whether it is destructive, and the narrowest rule that would
// allow the call next time ([Suggest]) — and hands it to an [Approver],
// which returns an [Answer]: allow once, allow for the session, always
// allow in this project, always allow for this user, or deny.
//
// Approvers are small: [ApproverFunc] adapts a function, and [Command] runs
// a configured program that reads the request as JSON on stdin and writes
// one answer as JSON on stdout. Whatever goes wrong — a bad answer, a
// crash, exit code 2 — is a deny with an error saying why; an approver
// never fails open.
package approval
