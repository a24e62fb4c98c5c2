package server

import (
	"context"
	"errors"
	"net/http"
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
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
	return nil
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
	writeJSON(w, http.StatusOK, a)
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
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request, _ principal) error {
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
	return s.answer(w, r, id, Reply(body))
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
	ctx, cancel := context.WithTimeout(r.Context(), lookupWait)
	defer cancel()
	s.broker.awaitInflight(ctx, id)
	_, err := s.broker.Answer(id, reply)
	if errors.Is(err, ErrNotFound) {
		// Perhaps another server sharing the log holds the question.
		if ra, ok := s.remote(ctx, id); ok {
			a, err := s.answerRemote(ctx, ra, reply)
			if err != nil {
				return brokerError(err)
			}
			code := http.StatusOK
			if a.State == StatePending {
				code = http.StatusAccepted // the holder has not acted on it yet
			}
			writeJSON(w, code, a)
			return nil
		}
	}
	if err != nil {
		return brokerError(err)
	}
	a, err := s.broker.Wait(ctx, id)
	if err != nil {
		return brokerError(err)
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// handleRespond: POST /v1/sessions/{id}/respond (approver), the form of
// spec 004.
func (s *Server) handleRespond(w http.ResponseWriter, r *http.Request, _ principal) error {
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
	id := body.ToolCallID
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
		var ok bool
		if id, ok = s.oldestPending(r.Context(), session); !ok {
			return errorf(http.StatusNotFound, "session %s has no pending approval", session)
		}
	}
	return s.answer(w, r, id, Reply{Answer: kind, Message: body.Message, Confirm: body.Confirm})
}

// oldestPending returns the id of session's oldest pending approval, here
// or on another server sharing the log.
func (s *Server) oldestPending(ctx context.Context, session string) (string, bool) {
	list := append(s.broker.List(StatePending, session), s.remoteList(ctx, StatePending, session)...)
	if len(list) == 0 {
		return "", false
	}
	sortApprovals(list)
	return list[0].ID, true
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
