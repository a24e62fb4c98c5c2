package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
)

// sessionChange is the payload of the policy.changed event that a switch
// of a session's settings writes. N counts the session's switches, this
// one included, and Sig signs the session, N and both settings under the
// approver token: a server restores only the changes it can verify, in an
// unbroken count, so an event forged or replayed by whoever can write to
// the log (a --db file an agent can reach, a leaked PostgreSQL password)
// does not loosen a session.
type sessionChange struct {
	Scope   string                 `json:"scope"` // always "session"
	Actor   string                 `json:"actor"`
	Changed []string               `json:"changed"`
	Before  engine.SessionSettings `json:"before"`
	After   engine.SessionSettings `json:"after"`
	N       int                    `json:"n"`
	Sig     string                 `json:"sig"`
}

// signChange returns the signature of c for session.
func (s *Server) signChange(session string, c sessionChange) string {
	before, _ := json.Marshal(c.Before)
	after, _ := json.Marshal(c.After)
	m := hmac.New(sha256.New, []byte(s.opts.Tokens.Approver))
	for _, part := range [][]byte{[]byte("toolgate session settings v1"), []byte(session), []byte(strconv.Itoa(c.N)), before, after} {
		m.Write(part)
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// RestoreSessions sets the settings each session was last switched to, as
// the policy.changed events of the log record them, so that a restarted
// server keeps what people chose: a session made stricter stays stricter.
// Call it before serving. It returns how many sessions have settings. A
// change it cannot verify — unsigned, signed under another approver token,
// out of count or not following from the settings before it — is skipped
// with a warning, and so are the later changes of that session; an error
// is returned only when the log cannot be read.
func (s *Server) RestoreSessions(ctx context.Context) (int, error) {
	if s.opts.Sessions == nil {
		return 0, nil
	}
	s.sessionPolicyMu.Lock()
	defer s.sessionPolicyMu.Unlock()
	last := map[string]engine.SessionSettings{}
	for e, err := range s.store.Query(ctx, eventlog.Filter{Types: []eventlog.Type{eventlog.TypePolicyChanged}}) {
		if err != nil {
			return 0, fmt.Errorf("restore session settings: %w", err)
		}
		var scope struct {
			Scope string `json:"scope"`
		}
		if json.Unmarshal(e.Payload, &scope) != nil || scope.Scope != "session" {
			continue // a rule written to a file, which the file holds
		}
		if why := s.checkChange(e, last[e.Session]); why != "" {
			s.log.Warn("session settings change not restored", "event", e.ID, "session", e.Session, "seq", e.Seq, "why", why)
			continue
		}
		var c sessionChange
		_ = json.Unmarshal(e.Payload, &c)
		last[e.Session] = c.After
		s.sessionN[e.Session] = c.N
	}
	n := 0
	for session, v := range last {
		s.opts.Sessions.Set(session, v)
		if v != (engine.SessionSettings{}) {
			n++
		}
	}
	return n, nil
}

// checkChange says why the session change e cannot be restored over the
// settings current, or "".
func (s *Server) checkChange(e eventlog.Event, current engine.SessionSettings) string {
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
	case c.N != s.sessionN[e.Session]+1:
		return fmt.Sprintf("change %d where %d was due (replayed or out of order)", c.N, s.sessionN[e.Session]+1)
	case !c.Before.Equal(current):
		return "its settings before do not match the session's"
	}
	return ""
}
