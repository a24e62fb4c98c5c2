package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/toolgate/toolgate/internal/fslock"
	"github.com/toolgate/toolgate/internal/gate"
)

// grantsLookback is how far back in the log the follower starts reading
// grants: as long as a lease granted through the API may last (a session
// approval older than gate.AdoptWindow is not taken up anyway).
const grantsLookback = maxLeaseTTL

// EndedGrantsFile is the name of the file Options.EndedGrants is
// conventionally kept in, in the state directory, for the event log db.
func EndedGrantsFile(db string) string {
	sum := sha256.Sum256([]byte(db))
	return "grants-ended-" + hex.EncodeToString(sum[:6]) + ".json"
}

// restoreEnded gives the gate what ended before this start, as
// Options.EndedGrants holds it.
func (s *Server) restoreEnded() error {
	path := s.opts.EndedGrants
	if path == "" {
		return nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ended grants: %w", err)
	}
	var ended gate.Ended
	if err := json.Unmarshal(raw, &ended); err != nil {
		return fmt.Errorf("ended grants: %s is not what toolgate writes there (%v); remove it to start over", path, err)
	}
	s.gate.RestoreEnded(ended)
	return nil
}

// saveEnded writes what ended to Options.EndedGrants when it changed since
// it last did, with what the file holds that is still current (another
// server on this state directory may have written it). A failure is
// logged; it is tried again at the next poll.
func (s *Server) saveEnded() {
	path := s.opts.EndedGrants
	if path == "" || s.gate.EndedVersion() == s.endedSaved {
		return
	}
	unlock, err := fslock.Dir(filepath.Dir(path)) // see saveHeadsLocked
	if err != nil {
		s.log.Error("write the ended grants", "file", path, "err", err)
		return
	}
	defer unlock()
	ended, v := s.gate.EndedGrants()
	if raw, err := os.ReadFile(path); err == nil {
		var had gate.Ended
		if json.Unmarshal(raw, &had) == nil {
			ended = ended.Merge(had, s.clock())
		}
	}
	raw, _ := json.Marshal(ended)
	if err := writeFileSynced(path, raw); err != nil {
		s.log.Error("write the ended grants", "file", path, "err", err)
		return
	}
	s.endedSaved = v
}

// handleGrants: GET /v1/sessions/{id}/grants — the session approvals and
// live leases of a session.
func (s *Server) handleGrants(w http.ResponseWriter, r *http.Request, p principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	if err := s.readable(r.Context(), p, session); err != nil {
		return err
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

// The bounds of the TTL of a lease granted through the API.
const (
	minLeaseTTL = time.Second
	maxLeaseTTL = 24 * time.Hour
)

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
	case req.Capability != gate.CapRead && req.Capability != gate.CapWrite:
		return errorf(http.StatusBadRequest, `"capability" must be %q or %q, not %q`, gate.CapRead, gate.CapWrite, clip(string(req.Capability), 40))
	case len(req.Agent) > 128 || strings.ContainsFunc(req.Agent, unicode.IsControl):
		return errorf(http.StatusBadRequest, `"agent" must be a name of at most 128 bytes without control characters`)
	}
	if !filepath.IsAbs(req.Path) && req.Path != "~" && !strings.HasPrefix(req.Path, "~/") && req.Cwd == "" {
		// Relative to where the session's agent works.
		if req.Cwd = s.sessionCwd(session); req.Cwd == "" {
			return errorf(http.StatusBadRequest, `"path" %q is relative and session %s has made no call here: give "cwd" too`, clip(req.Path, 80), session)
		}
	}
	ttl := gate.DefaultLeaseTTL
	if req.TTL != "" {
		ttl, err = time.ParseDuration(req.TTL)
		if err != nil || ttl < minLeaseTTL || ttl > maxLeaseTTL {
			return errorf(http.StatusBadRequest, `"ttl" must be a duration such as "15m", from %s to %s, not %q`, minLeaseTTL, maxLeaseTTL, clip(req.TTL, 40))
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
	writeJSON(w, http.StatusCreated, ls.Grant())
	return nil
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
		return errorf(http.StatusInternalServerError, "the revocation could not be written to the event log, so nothing changed: %s still holds, here and on every server sharing the log; try again: %v", id, err)
	}
	writeJSON(w, http.StatusOK, map[string]string{"revoked": id})
	return nil
}
