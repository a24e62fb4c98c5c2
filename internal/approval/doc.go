// Package approval is how toolgate puts a question to a person. When the
// engine answers ask, the gate builds a [Request] — the session, the tool,
// the decision's reason, message and risk, a normalized summary of what the
// call does, whether it is destructive, and the narrowest rule that would
// allow the call next time ([Suggest]) — and hands it to an [Approver],
// which returns an [Answer]: allow once, allow for the session, always
// allow in this project, always allow for this user, or deny.
//
// Approvers are small: [ApproverFunc] adapts a function; [Terminal] asks
// at the terminal, one question at a time, and makes a destructive call
// be confirmed by typing its target; [Command] runs a configured program
// that reads the request as JSON on stdin and writes one answer as JSON
// on stdout; [HTTP] posts the request to a web hook, optionally signed,
// and reads the answer from the response. Whatever goes wrong — a bad
// answer, a crash, exit code 2, a non-2xx status, no terminal — is a deny
// with an error saying why; an approver never fails open.
//
// In auto mode a [Classifier] sees the same request first and returns a
// [Verdict]: allow, deny, or ask, which hands the call to a person.
// [ClassifierFunc], [CommandClassifier] and [HTTPClassifier] mirror the
// approvers and share their process and HTTP code; a classifier's error
// is never an allow.
package approval
