package approval

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Approver asks a person about one tool call and returns their answer.
//
// Approve must honour ctx: when ctx is done (the gate's timeout passed or
// the caller gave up) it should return promptly with ctx.Err(). The gate
// does not rely on that — it stops waiting as soon as ctx is done and
// treats the call as denied — but an approver that ignores ctx keeps its
// own resources until it returns. An error, or an answer that is not
// valid, is always a deny.
//
// The gate may call Approve from many goroutines at once, one call per
// pending question, so implementations must be safe for concurrent use.
type Approver interface {
	Approve(ctx context.Context, req *Request) (Answer, error)
}

// ApproverFunc adapts an ordinary function to the [Approver] interface.
// The function must be safe for concurrent use if the gate is.
type ApproverFunc func(ctx context.Context, req *Request) (Answer, error)

// Approve calls f(ctx, req).
func (f ApproverFunc) Approve(ctx context.Context, req *Request) (Answer, error) {
	return f(ctx, req)
}

// Request is what a person is shown when a call needs their approval. Its
// JSON form is what [Command] writes to the program's stdin.
type Request struct {
	// Session is the agent session the call belongs to.
	Session string `json:"session"`
	// Turn is the turn within the session, or empty.
	Turn string `json:"turn,omitempty"`
	// ToolCallID identifies the call in the event log.
	ToolCallID string `json:"toolCallId"`
	// Tool is the tool name as the agent spelled it.
	Tool string `json:"tool"`
	// Input is the tool's arguments as the agent sent them.
	Input map[string]any `json:"input"`
	// Cwd is the working directory of the call.
	Cwd string `json:"cwd"`
	// Reason is the engine's reason code for asking (rule_ask,
	// destructive_effect, execute_effect, ...).
	Reason string `json:"reason"`
	// Message is the engine's explanation of why it asks.
	Message string `json:"message"`
	// Risk is the call's risk level (read, write, execute, network,
	// credential, destructive).
	Risk string `json:"risk"`
	// Rule is the rule that made the engine ask, if one did.
	Rule string `json:"rule,omitempty"`
	// Summary is a one-line, normalized description of what the call does,
	// such as "Bash: npm test" or "Read: src/a.go".
	Summary string `json:"summary"`
	// Destructive reports that the call cannot be undone. Its answer is
	// never remembered: only allow once or deny take effect.
	Destructive bool `json:"destructive"`
	// Units are the parts of the call (the simple commands of a shell line,
	// or the call itself) with what each does.
	Units []Unit `json:"units,omitempty"`
	// ConfirmTarget is what a person must type to allow a destructive call
	// (a path it deletes, or its program and subcommand); empty otherwise.
	ConfirmTarget string `json:"confirmTarget,omitempty"`
	// SuggestedRule is the narrowest rule that would allow this call next
	// time, or empty when no single rule would. The person may edit it
	// (see [Answer.Rule]).
	SuggestedRule string `json:"suggestedRule,omitempty"`
	// Recorded is the payload of the permission.requested event that put
	// this question to a person, as the event log holds it; empty when
	// none did. Others reading the log see the question as these bytes.
	Recorded []byte `json:"-"`
}

// Unit is one part of a call as a person is shown it: a simple command of
// a shell line, or the whole call for other tools.
type Unit struct {
	// Label is the part as written, such as "rm -rf dist" or "Read src/a.go".
	Label string `json:"label"`
	// Risk is the part's risk level.
	Risk string `json:"risk"`
	// Decision and Reason are what the engine concluded for this part.
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Reads, Writes and Deletes are resolved paths (real paths, with
	// symlinks followed); Hosts are the hosts the part contacts.
	Reads   []string `json:"reads,omitempty"`
	Writes  []string `json:"writes,omitempty"`
	Deletes []string `json:"deletes,omitempty"`
	Hosts   []string `json:"hosts,omitempty"`
}

// Kind is what the person decided.
type Kind string

// The answers a person can give.
const (
	// AllowOnce allows this call only.
	AllowOnce Kind = "allow_once"
	// AllowSession allows calls like this one for the rest of the session.
	AllowSession Kind = "allow_session"
	// AllowProject always allows calls like this one in this project.
	AllowProject Kind = "allow_project"
	// AllowUser always allows calls like this one for this user.
	AllowUser Kind = "allow_user"
	// Deny refuses the call; Answer.Message may say why, for the model.
	Deny Kind = "deny"
)

// Allows reports whether k is one of the allow answers.
func (k Kind) Allows() bool {
	switch k {
	case AllowOnce, AllowSession, AllowProject, AllowUser:
		return true
	}
	return false
}

// Remembered reports whether k asks for the approval to outlive this call.
func (k Kind) Remembered() bool {
	return k == AllowSession || k == AllowProject || k == AllowUser
}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool { return k == Deny || k.Allows() }

// Answer is a person's reply to a [Request].
type Answer struct {
	// Kind is the decision.
	Kind Kind `json:"kind"`
	// Message is an optional note; for a deny it is passed on to the model.
	Message string `json:"message,omitempty"`
	// Rule is the rule text to remember for a remembered allow, as the
	// person edited it; empty means the suggested rule.
	Rule string `json:"rule,omitempty"`
	// Confirm is what the person typed to confirm a destructive call; an
	// allow of a destructive call is taken only if [Request.Confirmed]
	// accepts it.
	Confirm string `json:"confirm,omitempty"`
	// ID tells this answer apart from the others given to the same
	// question (a server taking an answer from the shared log sets the id
	// of its event); the gate records it on permission.resolved as
	// answerId, so whoever gave an answer can tell whether it was taken.
	ID string `json:"id,omitempty"`
	// Via is where the person answered: "terminal", "page" (the web
	// approval page), "link" (an answer link of a notification), "api",
	// "command" (a [Command]'s program) or "webhook" (an [HTTP]
	// approver's hook); empty when unknown. [Command] and [HTTP] set it
	// themselves, whatever their program or hook said. The gate records it
	// on permission.resolved; it decides nothing.
	Via string `json:"via,omitempty"`
}

// ConfirmWord is what a person must type to allow r when it is
// destructive: its ConfirmTarget with control characters and escapes
// neutralised (as every approver shows it), or "yes" when it has none. A
// target shorter than three characters (as a question recorded by an
// older gate may hold) is typed after "yes, ", so that no confirmation is
// a keystroke.
func (r *Request) ConfirmWord() string {
	t := strings.TrimSpace(clean(r.ConfirmTarget))
	switch {
	case t == "":
		return confirmWord
	case utf8.RuneCountInString(t) < 3:
		return confirmWord + ", " + t
	}
	return t
}

// Confirmed reports whether typed confirms req: it is the request's
// [Request.ConfirmWord], ignoring surrounding blanks.
func (r *Request) Confirmed(typed string) bool {
	return strings.TrimSpace(typed) == r.ConfirmWord()
}

// Validate reports whether a is a well-formed answer.
func (a Answer) Validate() error {
	if !a.Kind.Valid() {
		return fmt.Errorf("approval: unknown answer kind %q (want allow_once, allow_session, allow_project, allow_user or deny)", a.Kind)
	}
	return nil
}
