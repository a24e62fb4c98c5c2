package server

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/gate"
)

// handleGrants: GET /v1/sessions/{id}/grants — the session approvals and
// live leases of a session.
func (s *Server) handleGrants(w http.ResponseWriter, r *http.Request, p principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	if !s.mayRead(p, session) {
		return errSessionForbidden(session)
	}
	grants := s.gate.Grants(session)
	if grants == nil {
		grants = []gate.Grant{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"grants": grants})
	return nil
}

// leaseRequest is the body of POST /v1/sessions/{id}/leases.
type leaseRequest struct {
	Path       string          `json:"path"`
	Cwd        string          `json:"cwd"`
	Capability gate.Capability `json:"capability"`
	TTL        string          `json:"ttl"`
	Agent      string          `json:"agent"`
}

// maxLeaseTTL bounds the TTL of a lease granted through the API.
const maxLeaseTTL = 24 * time.Hour

// handleGrantLease: POST /v1/sessions/{id}/leases (approver) — grant the
// session's agent a lease on a path.
func (s *Server) handleGrantLease(w http.ResponseWriter, r *http.Request, _ principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	var req leaseRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	switch {
	case req.Path == "":
		return errorf(http.StatusBadRequest, `"path" is required`)
	case len(req.Path) > 4096 || strings.ContainsRune(req.Path, 0):
		return errorf(http.StatusBadRequest, `"path" must be a path of at most 4096 bytes without NUL`)
	case req.Cwd != "" && (!filepath.IsAbs(req.Cwd) || strings.ContainsRune(req.Cwd, 0)):
		return errorf(http.StatusBadRequest, `"cwd" must be an absolute directory, got %q`, clip(req.Cwd, 80))
	case !filepath.IsAbs(req.Path) && req.Path != "~" && !strings.HasPrefix(req.Path, "~/") && req.Cwd == "":
		return errorf(http.StatusBadRequest, `"path" %q is relative: give "cwd" too`, clip(req.Path, 80))
	case req.Capability != gate.CapRead && req.Capability != gate.CapWrite:
		return errorf(http.StatusBadRequest, `"capability" must be %q or %q, not %q`, gate.CapRead, gate.CapWrite, clip(string(req.Capability), 40))
	case len(req.Agent) > 128:
		return errorf(http.StatusBadRequest, `"agent" must be at most 128 bytes`)
	}
	ttl := gate.DefaultLeaseTTL
	if req.TTL != "" {
		ttl, err = time.ParseDuration(req.TTL)
		if err != nil || ttl <= 0 || ttl > maxLeaseTTL {
			return errorf(http.StatusBadRequest, `"ttl" must be a duration such as "15m", above 0 and at most %s, not %q`, maxLeaseTTL, clip(req.TTL, 40))
		}
	}
	ctx, cancel := s.appendContext()
	defer cancel()
	ls, err := s.gate.GrantLease(ctx, gate.LeaseSpec{
		Session: session, Agent: req.Agent, Path: req.Path, Cwd: req.Cwd,
		Capability: req.Capability, TTL: ttl, Granter: gate.ActorUser,
	})
	if err != nil {
		return errorf(http.StatusInternalServerError, "the lease was not granted: %v", err)
	}
	for _, g := range s.gate.Grants(session) {
		if g.ID == ls.ID {
			writeJSON(w, http.StatusCreated, g)
			return nil
		}
	}
	return errorf(http.StatusInternalServerError, "lease %s was granted but is no longer live", ls.ID)
}

// handleRevokeGrant: DELETE /v1/sessions/{id}/grants/{grant} (approver) —
// end a session approval or a lease, and the leases delegated from it.
func (s *Server) handleRevokeGrant(w http.ResponseWriter, r *http.Request, _ principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	id := r.PathValue("grant")
	if err := checkID("grant id", id); err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	held := false
	for _, g := range s.gate.Grants(session) {
		held = held || g.ID == id
	}
	if !held {
		return errorf(http.StatusNotFound, "session %s holds no live lease or session approval %q", session, id)
	}
	ctx, cancel := s.appendContext()
	defer cancel()
	if err := s.gate.Revoke(ctx, id); err != nil {
		if errors.Is(err, gate.ErrNoGrant) {
			return errorf(http.StatusNotFound, "session %s holds no live lease or session approval %q", session, id)
		}
		return errorf(http.StatusInternalServerError, "the revocation was not recorded: %v", err)
	}
	writeJSON(w, http.StatusOK, map[string]string{"revoked": id})
	return nil
}
