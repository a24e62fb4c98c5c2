package server

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// checkRequest is the body of POST /v1/check: a request as `toolgate
// check` takes it, plus the turn and whether to wait for a person.
type checkRequest struct {
	engine.Request
	Turn string `json:"turn"`
	Wait bool   `json:"wait"`
	// Denied, when set, says the agent's side has denied the call
	// already: the server records it as denied and decides nothing.
	Denied *AgentDenial `json:"denied,omitempty"`
}

// AgentDenial is the "denied" field of POST /v1/check and /v1/run: the
// agent's side (a client's hook, an MCP proxy) denied the call by a
// policy of its own and reports it, so that the server's log holds it.
// The agent can only make its gate stricter, so the server takes the
// deny as it is: it records the request and a permission.resolved deny
// with reason agent_denied and actor system, evaluates nothing, asks no
// one, and answers deny. A call reported so is never allowed.
type AgentDenial struct {
	// Reason is why the agent's side denied the call, as it told its
	// model; at most MaxDenialReason bytes are recorded.
	Reason string `json:"reason"`
	// By names what denied it: one of [DenialSources]. Any other value
	// is recorded as "the agent's side", so that an agent cannot word
	// the log's account of who denied.
	By string `json:"by"`
}

// DenialSources are the values of [AgentDenial.By] the server records as
// they are: toolgate's own hooks and MCP proxy.
var DenialSources = []string{
	"the claude-code hook's policy", "the gemini hook's policy", "the codex hook's policy", "the MCP proxy's policy",
}

// MaxDenialReason bounds the reason of an [AgentDenial] recorded in the
// log; a longer one is cut.
const MaxDenialReason = 2000

// message is what the permission.resolved event of the denial says.
func (a *AgentDenial) message() string {
	by := "the agent's side"
	if slices.Contains(DenialSources, a.By) {
		by = a.By
	}
	msg := "denied by " + by + " before it reached the server"
	if r := strings.TrimSpace(clip(a.Reason, MaxDenialReason)); r != "" {
		msg += ": " + r
	}
	return msg
}

// CheckResponse is the answer to POST /v1/check.
type CheckResponse struct {
	*engine.Decision
	// ToolCallID is the id the call's events carry.
	ToolCallID string `json:"tool_call_id"`
	// ApprovalID and State are set when the call waits for a person and
	// the request did not ask to wait: read the outcome with GET
	// /v1/approvals/{id}.
	ApprovalID string `json:"approval_id,omitempty"`
	State      string `json:"state,omitempty"`
	// Receipt binds an allow to what was allowed: the tool, the hash of
	// the normalized arguments, the real working directory and the
	// resources the call touches with their versions as they were when
	// the call was decided (for an answered call, when the question was
	// asked). A harness checks them again just before it runs the call.
	// It is set only for an allow.
	Receipt *gate.Receipt `json:"receipt,omitempty"`
}

// asyncSlack is how much longer than the approval timeout a check run
// without "wait" may take in all: it covers the engine and the writes.
const asyncSlack = time.Minute

func (c *checkRequest) validate() error {
	if err := checkID(`field "session"`, c.Session); err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	if c.Turn != "" && !validID(c.Turn) {
		return errorf(http.StatusBadRequest, "field \"turn\" %q is not a valid id: use 1 to 128 letters, digits, '_', '.', ':' or '-'", clip(c.Turn, 40))
	}
	if c.Tool == "" {
		return errorf(http.StatusBadRequest, `field "tool" is required`)
	}
	if c.Cwd == "" {
		return errorf(http.StatusBadRequest, `field "cwd" is required: the absolute working directory of the call`)
	}
	if !filepath.IsAbs(c.Cwd) {
		return errorf(http.StatusBadRequest, "field \"cwd\" must be an absolute directory, got %q", clip(c.Cwd, 200))
	}
	return nil
}

// readCall reads the body of POST /v1/check or /v1/run: the call as the
// gate is to judge it, in the session p may use, with the session's
// workspace.
func (s *Server) readCall(w http.ResponseWriter, r *http.Request, p principal) (checkRequest, engine.Request, error) {
	var body checkRequest
	if err := decodeBody(w, r, &body); err != nil {
		return body, engine.Request{}, err
	}
	if err := body.validate(); err != nil {
		return body, engine.Request{}, err
	}
	if p.role == RoleAgent && loosens(body.Mode) {
		return body, engine.Request{}, errorf(http.StatusForbidden, "field \"mode\" %q is not taken from an agent token: it would let the agent loosen its own gate; a person switches a session's mode with PUT /v1/sessions/{id}/policy", body.Mode)
	}
	bound, err := s.claim(r.Context(), body.Session, p, body.Cwd, body.Project)
	if err != nil {
		return body, engine.Request{}, err
	}
	req := body.Request
	// An agent's mode may make its gate stricter, never looser than the
	// policy's and the session's.
	req.ModeNoLooser = p.role == RoleAgent
	// The workspace is the person's choice or the session's first, never
	// this call's: a cwd outside it is outside the workspace.
	req.Workspace = s.workspaceOf(body.Session, bound)
	return body, req, nil
}

// handleCheck decides one call: POST /v1/check.
func (s *Server) handleCheck(w http.ResponseWriter, r *http.Request, p principal) error {
	body, req, err := s.readCall(w, r, p)
	if err != nil {
		return err
	}
	if !s.track() {
		return errorf(http.StatusServiceUnavailable, "the server is shutting down")
	}
	if body.Denied != nil {
		defer s.running.Done()
		writeJSON(w, http.StatusOK, s.refuse(r.Context(), &req, body.Turn, body.Denied))
		return nil
	}
	if body.Wait {
		defer s.running.Done()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(s.base, cancel)
		defer stop()
		resp := s.check(ctx, &req, body.Turn)
		writeJSON(w, http.StatusOK, resp)
		return nil
	}

	// The calls that need no one are decided and answered here; only a
	// question gets a goroutine of its own, to wait for its answer after
	// the client has had the approval id.
	start := time.Now()
	o, q, err := s.gate.BeginCall(s.base, &req, body.Turn)
	id := o.ToolCallID
	if q == nil {
		defer s.running.Done()
		writeJSON(w, http.StatusOK, s.finish(start, &req, o, err))
		return nil
	}
	ctx, cancel := context.WithTimeout(s.base, s.opts.Timeout+asyncSlack)
	asked := make(chan Approval, 1)
	done := make(chan CheckResponse, 1)
	go func() {
		defer s.running.Done()
		defer cancel()
		done <- s.wait(ctx, start, &req, q, id, asked)
	}()
	select {
	case a := <-asked:
		rq := a.Request
		writeJSON(w, http.StatusOK, CheckResponse{
			Decision: &engine.Decision{
				Decision: policy.Ask, Reason: engine.Reason(rq.Reason), Message: rq.Message,
				Rule: rq.Rule, Risk: riskOf(rq.Risk),
			},
			ToolCallID: a.ID, ApprovalID: a.ID, State: StatePending,
		})
	case resp := <-done:
		writeJSON(w, http.StatusOK, resp)
	case <-r.Context().Done():
		// The client went away; the check goes on and is recorded.
	}
	return nil
}

// refuse records a call the agent's side denied, without deciding it,
// and answers deny.
func (s *Server) refuse(ctx context.Context, req *engine.Request, turn string, a *AgentDenial) CheckResponse {
	start := time.Now()
	d, id, err := s.gate.RefuseCall(ctx, req, turn, engine.ReasonAgentDenied, a.message())
	return s.finish(start, req, gate.Outcome{Decision: d, ToolCallID: id}, err)
}

// check runs the gate on req, waiting for a person when it asks, and
// records the outcome.
func (s *Server) check(ctx context.Context, req *engine.Request, turn string) CheckResponse {
	start := time.Now()
	o, q, err := s.gate.BeginCall(ctx, req, turn)
	if q == nil {
		return s.finish(start, req, o, err)
	}
	return s.wait(ctx, start, req, q, o.ToolCallID, nil)
}

// wait asks q's question and waits for the answer. When asked is not nil
// it receives the approval once a person is asked.
func (s *Server) wait(ctx context.Context, start time.Time, req *engine.Request, q *gate.Question, id string, asked chan<- Approval) CheckResponse {
	var once sync.Once
	observe := func() { once.Do(func() { s.met.observeCheck(time.Since(start)) }) }
	ctx = withAgent(ctx, s.gate.Redactor().String(req.Agent))
	ctx = withRegistered(ctx, func(a Approval) {
		observe()
		if asked != nil {
			select {
			case asked <- a:
			default: // only the first question of a call is reported
			}
		}
	})
	o, err := q.WaitCall(ctx)
	observe()
	o.ToolCallID = id
	return s.finish(time.Time{}, req, o, err)
}

// finish counts and logs a decided call; start, unless zero, is when its
// check began.
func (s *Server) finish(start time.Time, req *engine.Request, o gate.Outcome, err error) CheckResponse {
	d, id := o.Decision, o.ToolCallID
	if !start.IsZero() {
		s.met.observeCheck(time.Since(start))
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.Error("check", "session", req.Session, "tool_call_id", id, "err", err)
	}
	s.broker.finish(id, s.redacted(d), o.Receipt)
	s.met.countDecision(d.Decision.String(), string(d.Reason))
	return CheckResponse{Decision: d, ToolCallID: id, Receipt: o.Receipt}
}

// redacted returns d with its message redacted, for the approvals list;
// the caller gets d itself.
func (s *Server) redacted(d *engine.Decision) *engine.Decision {
	if d == nil {
		return nil
	}
	if msg := s.gate.Redactor().String(d.Message); msg != d.Message {
		c := *d
		c.Message = msg
		return &c
	}
	return d
}

// riskOf parses a risk level name; an unknown one counts as execute.
func riskOf(name string) risk.Level {
	l, err := risk.ParseLevel(name)
	if err != nil {
		return risk.Execute
	}
	return l
}

// loosens reports whether the mode a request reports would let more
// through than the policy's own: such a mode is a person's choice, not an
// agent's. An unknown mode is left to the engine, which refuses it.
func loosens(mode string) bool {
	m, err := policy.ParseMode(mode)
	return err == nil && (m == policy.ModeBypass || m == policy.ModeAcceptEdits)
}
