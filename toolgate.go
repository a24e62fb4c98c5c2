// Package toolgate is the permission gate for AI agents' tool calls.
//
// An agent framework builds an [Engine] once, then puts every tool call to
// it before running it:
//
//	eng, err := toolgate.NewEngine(toolgate.Options{Policy: toolgate.PolicyFromFiles("", "")})
//	d := eng.Check(ctx, &toolgate.Request{
//		Tool:  "Bash",
//		Input: map[string]any{"command": "git status && rm -rf /"},
//		Cwd:   "/home/me/project",
//	})
//	switch d.Decision {
//	case toolgate.Allow: // run it
//	case toolgate.Ask:   // ask a person
//	case toolgate.Deny:  // tell the model why (d.Message)
//	}
//
// A decision depends only on the tool, its arguments, the working
// directory and workspace, the policy and the approval history. Shell
// command lines are split into every simple command they run and each is
// judged on its own: the line is allowed only if every command is, and denied
// if any is. Paths are judged by where they really lead. See DESIGN.md in
// the repository for the pipeline and its invariants.
//
// A framework that wants the gate to run the calls too builds a [Gate]:
// [Gate.Run] decides a call, asks its [Approver] when a person must
// answer, runs the call under the operating system's sandbox when it is
// allowed, and records every step in the event log. The user hooks a
// policy defines ([[hooks]]) are run by the Gate, never by Engine.Check;
// a framework that decides with the Engine alone finds them in
// Decision.Hooks and must not run a call one of them would judge.
package toolgate

import (
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
)

// Request is one tool call put to the gate.
type Request = engine.Request

// Decision is the gate's answer, with a typed reason, the risk, the stage
// that decided and the matching rule with its file and line.
type Decision = engine.Decision

// Reason is a typed reason code, such as rule_deny or outside_workspace.
type Reason = engine.Reason

// Source is the kind of pipeline stage that decided.
type Source = engine.Source

// Trace is every pipeline step behind a decision, filled by Explain.
type Trace = engine.Trace

// Options configure an engine.
type Options = engine.Options

// Engine decides tool calls; it is safe for use by multiple goroutines.
type Engine = engine.Engine

// PriorApprovals lets an approval store tell the engine that a person
// already approved a call.
type PriorApprovals = engine.PriorApprovals

// Call is the normalized call given to PriorApprovals.
type Call = engine.Call

// The three answers, ordered Allow < Ask < Deny.
const (
	Allow = policy.Allow
	Ask   = policy.Ask
	Deny  = policy.Deny
)

// NewEngine returns an engine; Options.Policy is required.
func NewEngine(opts Options) (*Engine, error) { return engine.New(opts) }

// FixedPolicy returns a policy source that gives set for every project.
func FixedPolicy(set *policy.Set) func(string) (*policy.Set, error) { return engine.Fixed(set) }

// PolicyFromFiles returns a policy source that reads the standard policy
// layers of each project root (managed, user, project, local), with extra
// layers such as CLI flags merged in. Empty paths mean the default places.
// An engine reads the files again when they change: an edit counts from
// the next decision on.
func PolicyFromFiles(managed, user string, extra ...*policy.File) func(string) (*policy.Set, error) {
	return engine.FromFiles(managed, user, extra...)
}

// DecodeRequest decodes one JSON request; unknown fields are errors.
func DecodeRequest(data []byte) (*Request, error) { return engine.DecodeRequest(data) }
