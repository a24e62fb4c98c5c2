package gate

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// grantRecord is the payload of a lease.granted event: all that a gate
// reading the log needs to hold the same grant. A session approval has the
// call's fields (ToolCallID to Resources), a lease the path's (Path to
// From). Sig signs the rest under Options.LogKey.
type grantRecord struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Agent      string     `json:"agent"`
	Parent     string     `json:"parentAgent,omitempty"`
	Tool       string     `json:"tool,omitempty"`
	Summary    string     `json:"summary,omitempty"`
	ArgsHash   string     `json:"argsHash,omitempty"`
	Resources  []Resource `json:"resources,omitempty"`
	Path       string     `json:"path,omitempty"`
	Capability Capability `json:"capability,omitempty"`
	Version    string     `json:"version,omitempty"`
	Expires    *time.Time `json:"expires,omitempty"`
	From       string     `json:"from,omitempty"`
	Granted    time.Time  `json:"granted"`
	Actor      Actor      `json:"actor"`
	Sig        string     `json:"sig,omitempty"`
}

// grantSig is the signature of rec, a grant of session, under key.
func grantSig(key []byte, session string, rec grantRecord) string {
	rec.Sig = ""
	return logSig(key, "toolgate grant v1", session, rec)
}

// questionSig is the signature of p, a question of session, under key.
func questionSig(key []byte, session string, p PermissionRequested) string {
	p.Sig = ""
	return logSig(key, "toolgate question v1", session, p)
}

// logSig is an HMAC-SHA256 under key of what (the kind of record), the
// session, and v as JSON. v is decoded from the log and encoded again to
// be checked: encoding/json gives the same bytes for what it decoded from
// its own encoding.
func logSig(key []byte, what, session string, v any) string {
	b, _ := json.Marshal(v)
	m := hmac.New(sha256.New, key)
	var n [8]byte
	m.Write([]byte(what))
	binary.BigEndian.PutUint64(n[:], uint64(len(session)))
	m.Write(n[:])
	m.Write([]byte(session))
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// signQuestion returns the signature of p under the gate's LogKey, or ""
// without one.
func (g *Gate) signQuestion(session string, p PermissionRequested) string {
	if g.opts.LogKey == nil {
		return ""
	}
	return questionSig(g.opts.LogKey, session, p)
}

// VerifyQuestion decodes payload, a permission.requested event of session
// read from the log, and checks that it is a question asked of a person
// by a gate with this gate's LogKey: signed, and the signature verifies.
// Another server lists only such questions, so a question written into the
// log by whoever has no key is never shown to a person.
func (g *Gate) VerifyQuestion(session string, payload []byte) (PermissionRequested, error) {
	var p PermissionRequested
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber() // as requests are decoded: numbers keep their text
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("unreadable question: %v", err)
	}
	switch {
	case p.AskedOf != ActorUser:
		return p, fmt.Errorf("question %s is asked of %s, not of a person", p.ToolCallID, p.AskedOf)
	case g.opts.LogKey == nil:
		return p, errors.New("this gate has no key to check questions with")
	case p.Sig == "":
		return p, fmt.Errorf("question %s is not signed", p.ToolCallID)
	case !hmac.Equal([]byte(p.Sig), []byte(questionSig(g.opts.LogKey, session, p))):
		return p, fmt.Errorf("the signature of question %s does not verify (forged, or signed under another approver token)", p.ToolCallID)
	}
	return p, nil
}

// signGrant returns rec, its secrets redacted, signed under the gate's
// LogKey, if it has one: what is signed is what the log holds. The grant
// held here keeps the record as it was.
func (g *Gate) signGrant(session string, rec grantRecord) grantRecord {
	if red, changed, err := redactJSON(g.redact, rec); err == nil && changed {
		rec = red
	}
	if g.opts.LogKey != nil {
		rec.Sig = grantSig(g.opts.LogKey, session, rec)
	}
	return rec
}

// AdoptWindow is how old a session approval read from the log may be and
// still be adopted by [Gate.Adopt]. Session ids come from the agent, so
// an approval must not wait for long for any agent to take its session's
// name up again. A lease is adopted until it expires.
const AdoptWindow = 12 * time.Hour

// Adopt applies a lease.granted or lease.revoked event read from the
// event log, written by this gate or by another one sharing the log and
// the LogKey: the grant it records is held here too, or ends here too.
// It reports whether e changed what this gate holds.
//
// A grant is adopted only if its signature verifies under the gate's
// LogKey, it has not ended here already, and it is current: a lease not
// expired, whose parent lease (if delegated) is held; a session approval
// granted within [AdoptWindow], later than any revoked approval of the
// same call and than the one held for it. Whoever can
// write to the log but does not know the key can end grants, never make
// one. Events of other types are ignored. The error says why a grant
// event was not adopted.
func (g *Gate) Adopt(e eventlog.Event) (bool, error) {
	switch e.Type {
	case eventlog.TypeLeaseRevoked:
		var p struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.ID == "" {
			return false, fmt.Errorf("lease.revoked event %d: no grant id", e.ID)
		}
		// A revocation of a grant not held here is ignored: the grant was
		// never taken up, or has ended already, and noting every id a log
		// writer makes up would let them crowd out the real ones.
		gr := g.grants
		gr.mu.Lock()
		defer gr.mu.Unlock()
		if sa, ok := gr.byID[p.ID]; ok {
			gr.revokeApproval(sa)
			return true, nil
		}
		if ls, ok := gr.leases[p.ID]; ok {
			gr.dropLease(ls)
			return true, nil
		}
		return false, nil
	case eventlog.TypeLeaseGranted:
	default:
		return false, nil
	}
	var rec grantRecord
	dec := json.NewDecoder(bytes.NewReader(e.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return false, fmt.Errorf("lease.granted event %d: unreadable: %v", e.ID, err)
	}
	now := g.opts.Clock()
	switch {
	case g.opts.LogKey == nil:
		return false, fmt.Errorf("lease.granted event %d: this gate has no key to check grants with", e.ID)
	case rec.Sig == "":
		return false, fmt.Errorf("lease.granted event %d: %s is not signed", e.ID, rec.ID)
	case !hmac.Equal([]byte(rec.Sig), []byte(grantSig(g.opts.LogKey, e.Session, rec))):
		return false, fmt.Errorf("lease.granted event %d: the signature of %s does not verify (forged, or signed under another approver token)", e.ID, rec.ID)
	case rec.Granted.After(now.Add(time.Minute)):
		return false, fmt.Errorf("lease.granted event %d: %s is granted in the future (%s)", e.ID, rec.ID, rec.Granted)
	}
	gr := g.grants
	gr.mu.Lock()
	defer gr.mu.Unlock()
	if _, ended := gr.ended[rec.ID]; ended {
		return false, nil
	}
	switch rec.Kind {
	case KindSessionApproval:
		if _, ok := gr.byID[rec.ID]; ok {
			return false, nil
		}
		if now.Sub(rec.Granted) > AdoptWindow {
			return false, fmt.Errorf("lease.granted event %d: session approval %s was granted more than %s ago", e.ID, rec.ID, AdoptWindow)
		}
		if rec.ArgsHash == "" {
			return false, fmt.Errorf("lease.granted event %d: session approval %s names no call", e.ID, rec.ID)
		}
		return gr.holdApproval(approvalFromRecord(e.Session, rec)), nil
	case KindLease:
		if _, ok := gr.leases[rec.ID]; ok {
			return false, nil
		}
		if rec.Expires == nil || !rec.Expires.After(now) {
			return false, nil // over
		}
		if rec.Path == "" || (rec.Capability != CapRead && rec.Capability != CapWrite) {
			return false, fmt.Errorf("lease.granted event %d: lease %s has no path or capability", e.ID, rec.ID)
		}
		if parent, ok := gr.leases[rec.From]; rec.From != "" && (!ok || parent.Session != e.Session) {
			// A delegated lease holds only while the lease it came from does.
			return false, fmt.Errorf("lease.granted event %d: lease %s is delegated from %s, which is not held here", e.ID, rec.ID, rec.From)
		}
		gr.leases[rec.ID] = &Lease{
			ID: rec.ID, Session: e.Session, Agent: rec.Agent, Path: rec.Path, Capability: rec.Capability,
			Version: rec.Version, Expires: *rec.Expires, From: rec.From, Granted: rec.Granted,
		}
		return true, nil
	}
	return false, fmt.Errorf("lease.granted event %d: unknown kind %q", e.ID, rec.Kind)
}

// Grant is a session approval or a lease, as [Gate.Grants] lists it.
type Grant struct {
	ID string `json:"id"`
	// Kind is KindSessionApproval or KindLease.
	Kind    string `json:"kind"`
	Session string `json:"session"`
	// Agent is the agent the grant is for; a subagent is written as its
	// parent and its name, joined by " > ".
	Agent   string    `json:"agent,omitempty"`
	Granted time.Time `json:"granted"`
	// A session approval: the call it was given for, and the paths that
	// call touched, whose change ends it.
	ToolCallID string     `json:"toolCallId,omitempty"`
	Tool       string     `json:"tool,omitempty"`
	Summary    string     `json:"summary,omitempty"`
	Resources  []Resource `json:"resources,omitempty"`
	// A lease: the real path, what it lets calls do, when it expires and
	// the lease it was delegated from.
	Path       string     `json:"path,omitempty"`
	Capability Capability `json:"capability,omitempty"`
	Expires    *time.Time `json:"expires,omitempty"`
	From       string     `json:"from,omitempty"`
}

// Grants returns the session approvals and live leases of session, oldest
// first, with the secrets of what they show redacted.
func (g *Gate) Grants(session string) []Grant {
	now := g.opts.Clock()
	gr := g.grants
	gr.mu.Lock()
	defer gr.mu.Unlock()
	var out []Grant
	for _, sa := range gr.byID {
		if sa.session == session {
			out = append(out, Grant{
				ID: sa.id, Kind: KindSessionApproval, Session: sa.session, Agent: agentName(sa.agent),
				Granted: sa.rec.Granted, ToolCallID: sa.rec.ToolCallID, Tool: sa.rec.Tool,
				Summary: sa.rec.Summary, Resources: slices.Clone(sa.resources),
			})
		}
	}
	for _, ls := range gr.leases {
		if ls.Session == session && now.Before(ls.Expires) {
			out = append(out, ls.Grant())
		}
	}
	slices.SortFunc(out, func(a, b Grant) int {
		if c := a.Granted.Compare(b.Granted); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	// Shown as the log shows them: without secrets. The grants held keep
	// what they match calls on.
	for i := range out {
		if red, changed, err := redactJSON(g.redact, out[i]); err == nil && changed {
			out[i] = red
		}
	}
	return out
}

// Grant is the lease as [Gate.Grants] lists it.
func (ls Lease) Grant() Grant {
	exp := ls.Expires
	return Grant{
		ID: ls.ID, Kind: KindLease, Session: ls.Session, Agent: agentName(ls.Agent), Granted: ls.Granted,
		Path: ls.Path, Capability: ls.Capability, Expires: &exp, From: ls.From,
	}
}

// agentName is an agent key as a person reads it.
func agentName(key string) string {
	return strings.ReplaceAll(key, "\x00", " > ")
}

// Ended is what a gate knows has ended, as [Gate.EndedGrants] returns it
// and [Gate.RestoreEnded] takes it back.
type Ended struct {
	// Grants maps the id of each grant held here that ended to the time
	// until which a copy of it read from the log could still be adopted.
	Grants map[string]time.Time `json:"grants"`
	// Calls maps each call whose session approval was revoked or went
	// stale to the latest such approval.
	Calls map[string]RevokedCall `json:"calls"`
}

// RevokedCall is the latest revoked session approval of one call: no
// approval of that call granted at or before it (by time, then id) is
// held again.
type RevokedCall struct {
	Granted time.Time `json:"granted"`
	ID      string    `json:"id"`
	// Until is when approvals that old can no longer be adopted anyway.
	Until time.Time `json:"until"`
}

// EndedGrants returns what has ended here, still current, and a count
// that changes whenever it does ([Gate.EndedVersion]). A server keeps it
// outside the log and gives it back with RestoreEnded at its next start,
// so that a revocation deleted from the log does not bring its grant back.
func (g *Gate) EndedGrants() (Ended, uint64) {
	gr := g.grants
	gr.mu.Lock()
	defer gr.mu.Unlock()
	now := g.opts.Clock()
	out := Ended{Grants: make(map[string]time.Time, len(gr.ended)), Calls: make(map[string]RevokedCall, len(gr.revoked))}
	for id, h := range gr.ended {
		if !h.Before(now) {
			out.Grants[id] = h
		}
	}
	for key, r := range gr.revoked {
		if !r.Until.Before(now) {
			out.Calls[key] = r
		}
	}
	return out, gr.endedVersion
}

// Merge adds to e what other holds that is still current at now and
// later than what e holds, and returns e.
func (e Ended) Merge(other Ended, now time.Time) Ended {
	if e.Grants == nil {
		e.Grants = map[string]time.Time{}
	}
	if e.Calls == nil {
		e.Calls = map[string]RevokedCall{}
	}
	for id, h := range other.Grants {
		if h.After(now) && h.After(e.Grants[id]) {
			e.Grants[id] = h
		}
	}
	for key, r := range other.Calls {
		if cur, ok := e.Calls[key]; r.Until.After(now) && (!ok || after(r.Granted, r.ID, cur.Granted, cur.ID)) {
			e.Calls[key] = r
		}
	}
	return e
}

// EndedVersion returns the count EndedGrants returns, without copying.
func (g *Gate) EndedVersion() uint64 {
	g.grants.mu.Lock()
	defer g.grants.mu.Unlock()
	return g.grants.endedVersion
}

// RestoreEnded notes what ended before this gate started, as
// [Gate.EndedGrants] returned it: Adopt takes none of it up, and what is
// held of it ends. Call it before adopting from the log.
func (g *Gate) RestoreEnded(e Ended) {
	gr := g.grants
	gr.mu.Lock()
	defer gr.mu.Unlock()
	for id, h := range e.Grants {
		if sa, ok := gr.byID[id]; ok {
			gr.dropApproval(sa)
		} else if ls, ok := gr.leases[id]; ok {
			gr.dropLease(ls)
		}
		gr.endLocked(id, h)
	}
	for key, r := range e.Calls {
		gr.revokeCall(key, r)
		if sa, ok := gr.sessions[key]; ok && !r.endsBefore(sa.rec) {
			gr.dropApproval(sa)
		}
	}
}

// ErrNoGrant is returned by [Gate.Revoke] for an id that names no live
// lease or session approval.
var ErrNoGrant = errors.New("no such lease or session approval")
