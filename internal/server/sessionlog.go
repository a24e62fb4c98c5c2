package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/fslock"
	"github.com/toolgate/toolgate/policy"
)

// sessionChange is the payload of the policy.changed event that a switch
// of a session's settings writes. N counts the session's switches, this
// one included, and Sig signs the session, N and both settings under the
// approver token: a server applies only the changes it can verify, each
// counted later than the last it applied, so an event forged or replayed
// by whoever can write to
// the log (a --db file an agent can reach, a leaked PostgreSQL password)
// does not loosen a session, and two servers that switch one session at
// once cannot both win: the first in the log does.
type sessionChange struct {
	Scope   string                 `json:"scope"` // always "session"
	Actor   string                 `json:"actor"`
	Changed []string               `json:"changed"`
	Before  engine.SessionSettings `json:"before"`
	After   engine.SessionSettings `json:"after"`
	N       int                    `json:"n"`
	At      time.Time              `json:"at"`
	Sig     string                 `json:"sig"`
}

// signChange returns the signature of c for session.
func (s *Server) signChange(session string, c sessionChange) string {
	before, _ := json.Marshal(c.Before)
	after, _ := json.Marshal(c.After)
	return mac(s.opts.Tokens.Approver, "toolgate session settings v3", session, strconv.Itoa(c.N),
		c.At.UTC().Format(time.RFC3339Nano), string(before), string(after))
}

// restoreSessions sets the settings each session was last switched to,
// as the policy.changed events of the log record them, so that a restarted
// server keeps what people chose: a session made stricter stays stricter.
// It returns how many sessions have settings. A change it cannot verify —
// unsigned, signed under another approver token, or counted no later than
// one applied — is skipped with a warning; a session whose applied changes
// (Options.SessionHeads) the log no longer all holds asks for every call;
// a loosening switched long ago is left out (withoutLoosening). An error is
// returned only when the log or the counts cannot be read.
func (s *Server) restoreSessions(ctx context.Context) (int, error) {
	if s.opts.Sessions == nil {
		return 0, nil
	}
	s.sessionPolicyMu.Lock()
	defer s.sessionPolicyMu.Unlock()
	heads, err := s.loadHeads()
	if err != nil {
		return 0, err
	}
	s.heads = maps.Clone(heads)
	// The counts are written once the whole log is read: a restore that
	// fails half way must not lower them.
	s.restoring = true
	defer func() { s.restoring = false }()
	for e, err := range s.store.Query(ctx, eventlog.Filter{Types: []eventlog.Type{eventlog.TypePolicyChanged}}) {
		if err != nil {
			return 0, fmt.Errorf("restore session settings: %w", err)
		}
		s.applySessionLocked(e)
		s.restoredTo = e.ID
	}
	now := s.clock()
	for session, want := range heads {
		if s.sessionN[session] < want {
			// This server applied changes the log no longer holds: it
			// fails closed, and a person is asked for every call.
			always := policy.ApprovalAlways
			s.opts.Sessions.Set(session, engine.SessionSettings{Approval: &always})
			s.log.Error("session settings changes are missing from the event log; the session asks for every call until a person switches it",
				"session", session, "applied", want, "in the log", s.sessionN[session])
			s.sessionN[session] = want
		}
	}
	for session := range s.sessionN {
		v, _ := s.opts.Sessions.Get(session)
		if t := s.sessionTime[session]; !t.IsZero() && now.Sub(t) > restoreLooseAfter {
			if tight := withoutLoosening(v); !tight.Equal(v) {
				s.opts.Sessions.Set(session, tight)
				s.log.Info("session settings that loosen the policy not restored: switched too long ago", "session", session, "switched", t)
			}
		}
	}
	s.saveHeadsLocked()
	n := 0
	for session := range s.sessionN {
		if v, ok := s.opts.Sessions.Get(session); ok && v != (engine.SessionSettings{}) {
			n++
		}
	}
	return n, nil
}

// restoreLooseAfter is how old a switch that loosens a session (bypass,
// acceptEdits, approval never, no sandbox, network) may be and still be
// restored at start. Session ids come from the agent, so a loosened session
// must not wait for any agent to take its name up again; a tightened one
// stays tight however old.
const restoreLooseAfter = 12 * time.Hour

// withoutLoosening returns v without the settings that loosen the policy.
func withoutLoosening(v engine.SessionSettings) engine.SessionSettings {
	if v.Mode != nil && (*v.Mode == policy.ModeBypass || *v.Mode == policy.ModeAcceptEdits) {
		v.Mode = nil
	}
	if v.Approval != nil && *v.Approval == policy.ApprovalNever {
		v.Approval = nil
	}
	if v.Sandbox != nil && *v.Sandbox == policy.SandboxFullAccess {
		v.Sandbox = nil
	}
	if v.Network != nil && *v.Network {
		v.Network = nil
	}
	// A workspace may be wider than the one the session would be bound to.
	v.Workspace = nil
	return v
}

// loadHeads reads the count of changes this server applied to each
// session, as it last wrote them (Options.SessionHeads).
func (s *Server) loadHeads() (map[string]int, error) {
	heads := map[string]int{}
	if s.opts.SessionHeads == "" {
		return heads, nil
	}
	raw, err := os.ReadFile(s.opts.SessionHeads)
	if errors.Is(err, fs.ErrNotExist) {
		return heads, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session settings: %w", err)
	}
	if err := json.Unmarshal(raw, &heads); err != nil {
		return nil, fmt.Errorf("session settings: %s is not a JSON object of counts (%v); remove it to start over", s.opts.SessionHeads, err)
	}
	return heads, nil
}

// saveHeadsLocked writes the count of changes applied to each session:
// the largest of what the file holds (another server on this state
// directory may have written it) and what this server applied, so a count
// never goes down. It writes a temporary file of its own, syncs it and
// renames it over the file. A failure is logged: the settings apply anyway.
func (s *Server) saveHeadsLocked() {
	path := s.opts.SessionHeads
	if path == "" {
		return
	}
	// Another server on this state directory merges into the same file:
	// one at a time, or one could write over what the other just added.
	unlock, err := fslock.Dir(filepath.Dir(path))
	if err != nil {
		s.log.Error("write the session settings counts", "file", path, "err", err)
		return
	}
	defer unlock()
	merged := map[string]int{}
	if raw, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(raw, &merged)
	}
	for session, n := range s.heads {
		merged[session] = max(merged[session], n)
	}
	raw, _ := json.Marshal(merged)
	if err := writeFileSynced(path, raw); err != nil {
		s.log.Error("write the session settings counts", "file", path, "err", err)
	}
}

// writeFileSynced replaces the file at path with data: it writes a
// temporary file of its own beside it, syncs it, renames it over path and
// syncs the directory, so a crash leaves the old file or the new one.
func writeFileSynced(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// applySessionEvent applies a session settings change the follower read,
// made here or by another server sharing the log: every server applies the
// changes in the order of the log, so they agree.
func (s *Server) applySessionEvent(e eventlog.Event) {
	if s.opts.Sessions == nil {
		return
	}
	s.sessionPolicyMu.Lock()
	defer s.sessionPolicyMu.Unlock()
	if e.ID <= s.restoredTo {
		return // read by the restore already
	}
	s.applySessionLocked(e)
}

// applySessionLocked applies the change e if it is a session's and
// verifies, and notes the outcome.
func (s *Server) applySessionLocked(e eventlog.Event) {
	var scope struct {
		Scope string `json:"scope"`
	}
	if json.Unmarshal(e.Payload, &scope) != nil || scope.Scope != "session" {
		return // a rule written to a file, which the file holds
	}
	why := s.checkChange(e)
	if why == "" {
		var c sessionChange
		_ = json.Unmarshal(e.Payload, &c)
		s.opts.Sessions.Set(e.Session, c.After)
		s.sessionN[e.Session] = c.N
		s.sessionTime[e.Session] = c.At
		if c.N > s.heads[e.Session] {
			s.heads[e.Session] = c.N
			if !s.restoring {
				s.saveHeadsLocked()
			}
		}
	} else {
		s.log.Warn("session settings change not applied", "event", e.ID, "session", e.Session, "seq", e.Seq, "why", why)
	}
	s.changeOutcome[e.ID] = why
	s.changeOrder = append(s.changeOrder, e.ID)
	if len(s.changeOrder) > peerKeep {
		delete(s.changeOutcome, s.changeOrder[0])
		s.changeOrder = s.changeOrder[1:]
	}
}

// changeApplied returns whether the change written as event id was
// applied, and why not.
func (s *Server) changeApplied(id int64) (bool, string) {
	s.sessionPolicyMu.Lock()
	defer s.sessionPolicyMu.Unlock()
	why, ok := s.changeOutcome[id]
	if !ok {
		return false, "its outcome is no longer known"
	}
	return why == "", why
}

// checkChange says why the session change e cannot be restored over the
// settings current, or "".
func (s *Server) checkChange(e eventlog.Event) string {
	var c sessionChange
	dec := json.NewDecoder(bytes.NewReader(e.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return "unreadable: " + err.Error()
	}
	if err := validSettings(c.After); err != nil {
		return "unknown setting: " + err.Error()
	}
	want := s.signChange(e.Session, c)
	switch {
	case c.Sig == "":
		return "not signed"
	case !hmac.Equal([]byte(c.Sig), []byte(want)):
		return "the signature does not verify (forged, or signed under another approver token)"
	case c.N <= s.sessionN[e.Session]:
		// A change is counted after the ones applied; an old one written
		// again would undo a later one.
		return fmt.Sprintf("change %d, where change %d was applied already (replayed, or made at the same time as that one)", c.N, s.sessionN[e.Session])
	}
	return ""
}
