package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policy"
)

// lookupWait bounds how long a request about an approval waits for a call
// the gate is still deciding, or for the gate's final decision.
const lookupWait = 5 * time.Second

// maxMessage bounds the note a person sends with an answer.
const maxMessage = 8 << 10

// answerRequest is the body of POST /v1/approvals/{id}.
type answerRequest struct {
	Answer  approval.Kind `json:"answer"`
	Message string        `json:"message"`
	Rule    string        `json:"rule"`
	Confirm string        `json:"confirm"`
	// Via is where the person answered, for the audit: "terminal" or
	// "api" (the default). An answer from the web page is "page"
	// whatever it says.
	Via string `json:"via"`
}

// respondRequest is the body of POST /v1/sessions/{id}/respond.
type respondRequest struct {
	Kind       string `json:"kind"`
	Decision   string `json:"decision"`
	ToolCallID string `json:"tool_call_id"`
	Message    string `json:"message"`
	Confirm    string `json:"confirm"`
}

func pathID(r *http.Request, what string) (string, error) {
	id := r.PathValue("id")
	if err := checkID(what, id); err != nil {
		return "", errorf(http.StatusBadRequest, "%v", err)
	}
	return id, nil
}

// handleListApprovals: GET /v1/approvals?state=&session=.
func (s *Server) handleListApprovals(w http.ResponseWriter, r *http.Request, p principal) error {
	q := r.URL.Query()
	state := q.Get("state")
	switch state {
	case "", "all":
		state = ""
	case StatePending, StateResolved:
	default:
		return errorf(http.StatusBadRequest, "query parameter \"state\" must be pending, resolved or all, not %q", clip(state, 40))
	}
	session := q.Get("session")
	if session != "" {
		if err := checkID(`query parameter "session"`, session); err != nil {
			return errorf(http.StatusBadRequest, "%v", err)
		}
		if err := s.readable(r.Context(), p, session); err != nil {
			return err
		}
	}
	list := append(s.broker.List(state, session), s.remoteList(r.Context(), state, session)...)
	sortApprovals(list)
	if p.role != RoleApprover && session == "" {
		mine := s.ownedSessions(p)
		kept := list[:0]
		for _, a := range list {
			if mine[a.Session] {
				kept = append(kept, a)
			}
		}
		list = kept
	}
	if list == nil {
		list = []Approval{}
	}
	for i := range list {
		list[i] = shownTo(p, list[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
	return nil
}

// shownTo is a as principal p may see it: an agent does not get the
// files a question carries, which the server read as itself; through its
// own question, an agent could read a file its sandbox keeps from it.
func shownTo(p principal, a Approval) Approval {
	if p.role != RoleApprover {
		a.Files = nil
	}
	return a
}

// handleGetApproval: GET /v1/approvals/{id}.
func (s *Server) handleGetApproval(w http.ResponseWriter, r *http.Request, p principal) error {
	id, err := pathID(r, "approval id")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), lookupWait)
	defer cancel()
	a, err := s.lookup(ctx, id)
	if err != nil {
		return brokerError(err)
	}
	if err := s.readable(r.Context(), p, a.Session); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, shownTo(p, a))
	return nil
}

// lookup returns approval id, held here or by another server sharing the
// log.
func (s *Server) lookup(ctx context.Context, id string) (Approval, error) {
	a, err := s.broker.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		if ra, ok := s.remote(ctx, id); ok {
			return ra, nil
		}
	}
	return a, err
}

// handleAnswer: POST /v1/approvals/{id} (approver).
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request, p principal) error {
	id, err := pathID(r, "approval id")
	if err != nil {
		return err
	}
	var body answerRequest
	if err := decodeBody(w, r, &body); err != nil {
		return err
	}
	if body.Answer == "" {
		return errorf(http.StatusBadRequest, `field "answer" is required: allow_once, allow_session, allow_project, allow_user or deny`)
	}
	if err := checkReply(body.Answer, body.Message, body.Rule); err != nil {
		return err
	}
	via, err := answeredVia(p, body.Via)
	if err != nil {
		return err
	}
	return s.answer(w, r, id, Reply{Answer: body.Answer, Message: body.Message, Rule: body.Rule, Confirm: body.Confirm, Via: via})
}

// answeredVia is where an answer of p came from: "page" for the web
// page's browser session, else what the client says it is ("terminal"
// or "api", the default).
func answeredVia(p principal, said string) (string, error) {
	if p.web != nil {
		return approval.ViaPage, nil
	}
	switch said {
	case "", approval.ViaAPI:
		return approval.ViaAPI, nil
	case approval.ViaTerminal:
		return said, nil
	}
	return "", errorf(http.StatusBadRequest, "field \"via\" must be \"terminal\" or \"api\", not %q", clip(said, 40))
}

// checkReply validates the parts of an answer the broker does not.
func checkReply(kind approval.Kind, message, rule string) error {
	if !kind.Valid() {
		return errorf(http.StatusBadRequest, "field \"answer\" must be allow_once, allow_session, allow_project, allow_user or deny, not %q", clip(string(kind), 40))
	}
	if len(message) > maxMessage {
		return errorf(http.StatusBadRequest, "field \"message\" is %d bytes long; the limit is %d", len(message), maxMessage)
	}
	if rule != "" {
		if !kind.Remembered() {
			return errorf(http.StatusBadRequest, "field \"rule\" is only for allow_session, allow_project and allow_user answers")
		}
		if _, err := policy.ParseRule(rule, policy.Allow, policy.Position{File: "rule"}); err != nil {
			return errorf(http.StatusBadRequest, "field \"rule\": %v", err)
		}
	}
	return nil
}

// answer gives approval id the reply and writes the approval once the
// gate has recorded its decision.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, id string, reply Reply) error {
	a, code, err := s.answerID(r.Context(), id, reply)
	if err != nil {
		return err
	}
	writeJSON(w, code, a)
	return nil
}

// answerID gives approval id the reply and returns the approval once the
// gate has recorded its decision, with 200; or, when another server holds
// the question and has not acted on it yet, still pending with 202.
func (s *Server) answerID(ctx context.Context, id string, reply Reply) (Approval, int, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupWait)
	defer cancel()
	s.broker.awaitInflight(ctx, id)
	_, err := s.broker.Answer(id, reply)
	if errors.Is(err, ErrNotFound) {
		// Perhaps another server sharing the log holds the question.
		if ra, ok := s.remote(ctx, id); ok {
			a, err := s.answerRemote(ctx, ra, reply)
			if err != nil {
				return Approval{}, 0, brokerError(err)
			}
			code := http.StatusOK
			if a.State == StatePending {
				code = http.StatusAccepted // the holder has not acted on it yet
			}
			return a, code, nil
		}
	}
	if err != nil {
		return Approval{}, 0, brokerError(err)
	}
	a, err := s.broker.Wait(ctx, id)
	if err != nil {
		return Approval{}, 0, brokerError(err)
	}
	return a, http.StatusOK, nil
}

// respondAnswer is the response to POST /v1/sessions/{id}/respond: the
// approval answered, and, in Answered, which call that was — the same
// whether or not the request named it — so that a person's client can
// tell the call it answered from the one it showed.
type respondAnswer struct {
	Approval
	Answered answeredCall `json:"answered"`
}

// answeredCall names the call a respond answered.
type answeredCall struct {
	ToolCallID string `json:"tool_call_id"`
	Summary    string `json:"summary,omitempty"`
	// Chosen is "named" when the request gave tool_call_id, "only
	// pending" when the server took the session's one pending approval.
	Chosen string `json:"chosen"`
}

// handleRespond: POST /v1/sessions/{id}/respond (approver), the form of
// spec 004. The approval is the one named by tool_call_id, or, without
// it, the session's only pending approval, if this server holds it and no
// other was pending beside it since it was asked; otherwise the id is
// required (400). The response names the call answered.
func (s *Server) handleRespond(w http.ResponseWriter, r *http.Request, p principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	var body respondRequest
	if err := decodeBody(w, r, &body); err != nil {
		return err
	}
	if body.Kind != "permission" {
		return errorf(http.StatusBadRequest, "field \"kind\" must be \"permission\", not %q", clip(body.Kind, 40))
	}
	var kind approval.Kind
	switch body.Decision {
	case "approved":
		kind = approval.AllowOnce
	case "rejected":
		kind = approval.Deny
	default:
		return errorf(http.StatusBadRequest, "field \"decision\" must be \"approved\" or \"rejected\", not %q", clip(body.Decision, 40))
	}
	if err := checkReply(kind, body.Message, ""); err != nil {
		return err
	}
	id, chosen := body.ToolCallID, "named"
	if id != "" {
		if err := checkID(`field "tool_call_id"`, id); err != nil {
			return errorf(http.StatusBadRequest, "%v", err)
		}
		ctx, cancel := context.WithTimeout(r.Context(), lookupWait)
		a, err := s.lookup(ctx, id)
		cancel()
		if err != nil {
			return brokerError(err)
		}
		if a.Session != session {
			return errorf(http.StatusNotFound, "approval %s is not in session %s", id, session)
		}
	} else {
		// Without an id, the answer goes to the session's pending
		// approval only when there is exactly one: with more, "the
		// oldest" is whatever the agent left pending at this moment —
		// it could drop the question the person is reading and have the
		// answer land on another.
		pending := s.pendingIDs(r.Context(), session)
		switch len(pending) {
		case 0:
			return errorf(http.StatusNotFound, "session %s has no pending approval", session)
		case 1:
			// The one pending now may not be the one the person read: the
			// agent may have dropped that one since. Only a question that
			// was never pending beside another, and did not follow one
			// dropped unanswered, can be meant without its id.
			switch alone, known := s.broker.Alone(pending[0]); {
			case !known:
				// Another server holds it: only that one saw what was
				// pending beside it.
				return errorf(http.StatusBadRequest, "field \"tool_call_id\" is required: approval %s of session %s is held by another server, which alone knows whether it was pending beside others; name it", pending[0], session)
			case !alone:
				return errorf(http.StatusBadRequest, "field \"tool_call_id\" is required: approval %s of session %s was pending beside others, or followed one withdrawn unanswered, so an answer that does not name it may be meant for another", pending[0], session)
			}
			id, chosen = pending[0], "only pending"
		default:
			return errorf(http.StatusBadRequest, "field \"tool_call_id\" is required: session %s has %d pending approvals (%s); name the one you answer",
				session, len(pending), strings.Join(pending, ", "))
		}
	}
	via, _ := answeredVia(p, "")
	a, code, err := s.answerID(r.Context(), id, Reply{Answer: kind, Message: body.Message, Confirm: body.Confirm, Via: via})
	if err != nil {
		return err
	}
	named := answeredCall{ToolCallID: a.ID, Chosen: chosen}
	if a.Request != nil {
		named.Summary = a.Request.Summary
	}
	writeJSON(w, code, respondAnswer{Approval: a, Answered: named})
	return nil
}

// pendingIDs returns the ids of session's pending approvals, here or on
// another server sharing the log, oldest first.
func (s *Server) pendingIDs(ctx context.Context, session string) []string {
	list := append(s.broker.List(StatePending, session), s.remoteList(ctx, StatePending, session)...)
	sortApprovals(list)
	ids := make([]string, 0, len(list))
	for _, a := range list {
		if !slices.Contains(ids, a.ID) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// forbiddenAnswer records an agent token's attempt to answer an approval.
func (s *Server) forbiddenAnswer(r *http.Request) {
	id := r.PathValue("id")
	if !validID(id) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), lookupWait)
	defer cancel()
	a, err := s.lookup(ctx, id)
	if err != nil {
		return
	}
	s.forbiddenEvent(r, a.Session, "answer", id)
}

// forbiddenSession returns a function that records an agent token's
// attempt at action on the session of the path.
func (s *Server) forbiddenSession(action string) func(*http.Request) {
	return func(r *http.Request) {
		if id := r.PathValue("id"); validID(id) {
			s.forbiddenEvent(r, id, action, "")
		}
	}
}

// brokerError maps the broker's errors to HTTP statuses.
func brokerError(err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return errorf(http.StatusNotFound, "%v", err)
	case errors.Is(err, ErrResolved):
		return errorf(http.StatusConflict, "%v", err)
	case errors.Is(err, ErrBadAnswer):
		return errorf(http.StatusBadRequest, "%v", err)
	}
	return err
}
