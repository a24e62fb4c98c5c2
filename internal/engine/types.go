// Package engine is toolgate's decision pipeline: it turns a tool call into
// its effects and runs them through deny rules, the sandbox, credential
// checks, ask rules, the tool's own check, safety checks, the mode, allow
// rules, prior approvals and the default risk table, recording every step.
package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/jsonerr"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// Request is one tool call put to the gate.
type Request struct {
	// Tool is the tool name as the agent spells it (Bash, read_file, ...).
	Tool string `json:"tool"`
	// Input is the tool's arguments.
	Input map[string]any `json:"input"`
	// Cwd is the absolute working directory the call is made from.
	Cwd string `json:"cwd"`
	// Session identifies the agent session; optional.
	Session string `json:"session,omitempty"`
	// Project is the absolute directory the client runs its session in,
	// as the client writes it (a hook's own working directory, Claude
	// Code's $CLAUDE_PROJECT_DIR); optional. When Cwd as written lies
	// inside it but Cwd's real path leads out of Project's real path (the
	// agent made a link in the project and named a directory through it),
	// or Cwd lies outside the project root found from Project (unless that
	// is / or the home directory), the project root is looked up from
	// Project, not from Cwd: where Cwd leads is outside the workspace.
	// Otherwise it changes nothing.
	Project string `json:"project,omitempty"`
	// Mode is the agent's current permission mode; optional. It cannot
	// override a mode set by the managed policy or a CLI flag, and
	// bypassPermissions is refused when the managed policy forbids it.
	Mode string `json:"mode,omitempty"`
	// ModeNoLooser, set by whoever runs the gate for a caller that may
	// not loosen its own gate (an agent token of `toolgate serve`), makes
	// Mode count only when it is at least as strict as the mode of the
	// policy and the session: it may turn the default mode into plan,
	// dontAsk or strict, but never strict into default.
	ModeNoLooser bool `json:"-"`
	// Agent names the (sub)agent making the call; optional.
	Agent string `json:"agent,omitempty"`
	// Parent names the agent that started this one, for a subagent's
	// call. A subagent inherits no session approval or lease of its
	// parent's unless one is delegated to it explicitly.
	Parent string `json:"parent_agent,omitempty"`
	// Shell is the shell a shell tool runs its command in: "bash" (the
	// default) or "powershell". A tool named PowerShell or pwsh implies
	// powershell.
	Shell string `json:"shell,omitempty"`
	// Workspace, when set, is the project root the request's session was
	// bound to by whoever runs the gate (`toolgate serve` binds one per
	// session), never by the agent: the call is judged against it, and
	// its policy loaded, whatever the request's cwd, so a cwd outside it
	// makes the call's writes outside the workspace. "/" binds the session
	// to no workspace at all: nothing is inside one. It overrides
	// Options.Project.
	Workspace string `json:"-"`
	// Containment, when set, says which layers of the operating system's
	// sandbox will confine the call when it runs; a runner that runs
	// calls confined sets it from its sandbox's report (see
	// [Containment]). Nil: the caller does not say, and the call is
	// judged by the analysis alone, as for a hook whose client runs the
	// tool itself.
	Containment *Containment `json:"-"`
	// MCP, when set, is what whoever speaks to the MCP server of an
	// mcp__<server>__<tool> call (the MCP proxy) knows of the tool; never
	// the agent. Nil: nothing is known beyond the name.
	MCP *MCPTool `json:"-"`
}

// MCPTool describes the MCP tool a call names, as the server declared it.
// Its annotations set the call's effect only for a trusted server (named in
// the policy's trusted_mcp_servers, or Trusted here); an untrusted server's
// annotations are ignored and its calls ask unless an allow rule names the
// tool.
type MCPTool struct {
	// Trusted trusts the server for this call, as trusted_mcp_servers does.
	Trusted bool
	// ReadOnly is the tool's readOnlyHint: it changes nothing.
	ReadOnly bool
	// Destructive is the tool's destructiveHint (true when absent on a
	// tool that is not read-only): what it changes may not come back.
	Destructive bool
	// OpenWorld is an explicit openWorldHint: the tool reaches beyond the
	// machine.
	OpenWorld bool
}

// DecodeRequest decodes one JSON request. Unknown fields and trailing data
// are errors.
func DecodeRequest(data []byte) (*Request, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return nil, requestError(data, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid request: more than one JSON value at byte %d; send one object such as %s", dec.InputOffset()+1, requestExample)
	}
	return &r, nil
}

// requestExample is a request, for error messages.
const requestExample = `{"tool":"Bash","input":{"command":"ls"},"cwd":"/home/you/project"}`

// requestFields are the fields a request may have.
const requestFields = `tool, input, cwd, session, mode, agent, parent_agent and shell`

// requestError says what is wrong with a request that does not decode:
// where, which field, and what is accepted.
func requestError(data []byte, err error) error {
	what := jsonerr.Describe(data, err, map[string]string{"input": `an object of the tool's arguments, such as {"command":"ls"}`})
	if strings.HasPrefix(what, "unknown field ") {
		return fmt.Errorf("invalid request: %s; a request has the fields %s", what, requestFields)
	}
	if strings.HasPrefix(what, "field ") {
		return fmt.Errorf("invalid request: %s", what)
	}
	return fmt.Errorf("invalid request: %s; send one JSON object such as %s", what, requestExample)
}

// Reason is a typed reason code for a decision.
type Reason string

// The reason codes.
const (
	ReasonRuleDeny         Reason = "rule_deny"
	ReasonRuleAsk          Reason = "rule_ask"
	ReasonRuleAllow        Reason = "rule_allow"
	ReasonSandbox          Reason = "sandbox_rejected"
	ReasonProtectedPath    Reason = "protected_path"
	ReasonDestructive      Reason = "destructive_effect"
	ReasonCredential       Reason = "credential_access"
	ReasonOutsideWorkspace Reason = "outside_workspace"
	ReasonSymlinkEscape    Reason = "symlink_escape"
	ReasonUnknownCommand   Reason = "unknown_command"
	// ReasonUnknownOption: a program's spec does not know one of the
	// options it is given, so the command may do anything.
	ReasonUnknownOption    Reason = "unknown_option"
	ReasonExecute          Reason = "execute_effect"
	ReasonWrite            Reason = "write_effect"
	ReasonReadOnly         Reason = "read_only"
	ReasonNetwork          Reason = "network_request"
	ReasonPrivateNetwork   Reason = "private_network"
	ReasonUntrustedMCP     Reason = "untrusted_mcp_server"
	ReasonUnknownTool      Reason = "unknown_tool"
	ReasonInvalidArguments Reason = "invalid_arguments"
	ReasonInvalidRequest   Reason = "invalid_request"
	ReasonPolicyError      Reason = "policy_error"
	ReasonPriorApproval    Reason = "prior_approval"
	ReasonLease            Reason = "lease"
	ReasonPolicyAlways     Reason = "policy_always"
	ReasonModeBypass       Reason = "mode_bypass"
	ReasonModeAcceptEdits  Reason = "mode_accept_edits"
	ReasonModePlan         Reason = "plan_mode"
	ReasonStrict           Reason = "strict_unmatched"
	ReasonNoApprover       Reason = "no_approver"
	ReasonApprovalTimeout  Reason = "approval_timeout"
	ReasonUserDenied       Reason = "user_denied"
	ReasonUserApproved     Reason = "user_approved"
	ReasonHook             Reason = "hook"
	ReasonNothingToRun     Reason = "nothing_to_run"
	// ReasonTooComplex: the command is too large or too deeply nested to
	// analyze within the gate's limits, so it is denied.
	ReasonTooComplex Reason = "too_complex"
	// ReasonApprovalCancelled: the caller went away while a person was
	// asked, or while the command was analyzed; ReasonApproverError: the
	// approver failed.
	ReasonApprovalCancelled Reason = "approval_cancelled"
	ReasonApproverError     Reason = "approver_error"
	// ReasonReceiptInvalid: the call changed between its approval and its
	// execution (arguments, files, cwd) or the receipt expired.
	ReasonReceiptInvalid Reason = "receipt_invalid"
	// ReasonClassifier: the auto-mode classifier decided.
	ReasonClassifier Reason = "classifier"
	// ReasonHeadless: a headless run had no hook that answered.
	ReasonHeadless Reason = "headless"
	// ReasonUncontained: the call runs code the analysis cannot follow
	// (an interpreter's script or inline code) and a layer of the
	// sandbox that would have contained it is missing, so it asks even
	// under an allow rule.
	ReasonUncontained Reason = "uncontained_code"
	// ReasonAgentDenied: the agent's side (a client's hook, an MCP proxy
	// with a policy of its own) denied the call before it reached the
	// server, and reported it so that it is recorded.
	ReasonAgentDenied Reason = "agent_denied"
)

// Source is the kind of pipeline stage that decided.
type Source string

// The sources.
const (
	SourceDefault Source = "default"
	SourceRule    Source = "rule"
	SourceSandbox Source = "sandbox"
	SourceSafety  Source = "safety"
	SourceMode    Source = "mode"
	SourceTool    Source = "tool"
	SourcePrior   Source = "prior"
	// SourceHook: a user hook decided.
	SourceHook Source = "hook"
)

// Decision is the gate's answer to one request.
type Decision struct {
	Decision   policy.Decision `json:"decision"`
	Reason     Reason          `json:"reason"`
	Message    string          `json:"message"`
	Risk       risk.Level      `json:"risk"`
	Source     Source          `json:"source"`
	Rule       string          `json:"rule,omitempty"`
	RuleOrigin string          `json:"rule_origin,omitempty"`
	// Grant is the id of the session approval or lease that allowed the
	// call, when Reason is prior_approval or lease.
	Grant string `json:"grant,omitempty"`
	// PolicyVersion names the contents of the project's policy files the
	// decision was made under ([policy.Set.Version]); "" when no layer
	// came from a file or the policy could not be loaded.
	PolicyVersion string `json:"policy_version,omitempty"`
	// UpdatedInput, when set, is the input the decision is about: a
	// user hook changed the call's input and the new input was decided
	// from the start. Whoever runs the call must run this input, or not
	// run the call.
	UpdatedInput map[string]any `json:"updated_input,omitempty"`
	// Trace is every step the pipeline took; filled by Explain.
	Trace *Trace `json:"trace,omitempty"`
	// Hard reports an ask that no mode, allow rule or approval = never
	// lifts: an ask rule, a protected path, a destructive effect, what
	// cannot be judged.
	Hard bool `json:"-"`
	// Hooks are the user hooks of the policy the call was judged under
	// (every event and tool; see [policy.Hook.Matches]); nil when it
	// defines none or the policy could not be loaded.
	Hooks []*policy.Hook `json:"-"`
}

// Trace records how a decision was reached, for `toolgate explain`.
type Trace struct {
	Tool      string `json:"tool"`
	Canonical string `json:"canonical"`
	Cwd       string `json:"cwd"`
	Root      string `json:"root"`
	RootFrom  string `json:"root_from"`
	Policy    string `json:"policy"`
	// Version is the policy's [policy.Set.Version]; Files lists each
	// layer read from a file as "layer path version".
	Version string   `json:"version,omitempty"`
	Files   []string `json:"files,omitempty"`
	From    []string `json:"from,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Units   []*Unit  `json:"units"`
	// Hooks are the user hooks that would run for the call, described
	// (see [policy.Hook.String]) with their time limits.
	Hooks []string `json:"hooks,omitempty"`
	Steps []Step   `json:"steps,omitempty"`

	call *Call
}

// Step is one pipeline stage's conclusion.
type Step struct {
	Stage  string `json:"stage"`
	Result string `json:"result"`
	Detail string `json:"detail,omitempty"`
}
