package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// DefaultLeaseTTL is how long a lease lasts when its TTL is not given.
const DefaultLeaseTTL = 15 * time.Minute

// Capability is what a lease lets a call do with its path.
type Capability string

// The capabilities. A write lease also covers reading the path.
const (
	CapRead  Capability = "read"
	CapWrite Capability = "write"
)

// Grant kinds, as recorded in lease.granted and lease.revoked events.
const (
	KindLease           = "lease"
	KindSessionApproval = "session_approval"
)

// Lease is a temporary grant: calls of one session and agent may read (or
// write) one real path while it keeps the version it had when granted,
// until the lease expires or is revoked.
type Lease struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	// Agent is the agent the lease is for; a subagent has none of its
	// parent's leases unless one is delegated to it.
	Agent      string     `json:"agent,omitempty"`
	Path       string     `json:"path"`
	Capability Capability `json:"capability"`
	Version    string     `json:"version"`
	Expires    time.Time  `json:"expires"`
	// From is the lease this one was delegated from, if any.
	From string `json:"from,omitempty"`
	// Granted is when the lease was granted.
	Granted time.Time `json:"granted"`
}

// LeaseSpec asks for a lease with [Gate.GrantLease].
type LeaseSpec struct {
	Session string
	Agent   string
	// Path is absolute, or relative to Cwd; "~" is the user's home.
	Path, Cwd  string
	Capability Capability
	// TTL is how long the lease lasts; zero means DefaultLeaseTTL.
	TTL time.Duration
	// Granter is recorded as the actor; default ActorUser.
	Granter Actor
}

// sessionApproval is an "allow for this session" answer: it covers exactly
// the same normalized call, by the same agent, while the resources it
// touched keep their versions. rec is how the log records it.
type sessionApproval struct {
	id, session, agent, key string
	resources               []Resource
	rec                     grantRecord
}

// grants holds the session approvals and leases a gate knows.
type grants struct {
	g        *Gate
	mu       sync.Mutex
	sessions map[string]*sessionApproval // by session+agent+argsHash
	byID     map[string]*sessionApproval
	leases   map[string]*Lease
	// ended holds the ids of the grants held here that ended (revoked,
	// stale, expired, or replaced by a later approval of the same call),
	// each until the time past which Adopt would refuse the grant anyway:
	// a grant read from the log again after it ended is not taken up.
	ended map[string]time.Time
	// revoked holds, for each call (approvalKey) whose session approval
	// was revoked or went stale, the latest such approval: none granted
	// at or before it is held again, whatever order a gate reads the log
	// in.
	revoked map[string]RevokedCall
	// endedVersion counts the changes to ended and revoked (EndedGrants).
	endedVersion uint64
}

func newGrants(g *Gate) *grants {
	return &grants{g: g, sessions: map[string]*sessionApproval{}, byID: map[string]*sessionApproval{},
		leases: map[string]*Lease{}, ended: map[string]time.Time{}, revoked: map[string]RevokedCall{}}
}

// agentKey names the agent a call is made by. A subagent's key includes
// its parent, so it never equals the key of a top-level agent.
func agentKey(req *engine.Request) string {
	return agentKeyOf(req.Parent, req.Agent)
}

func agentKeyOf(parent, agent string) string {
	if parent == "" {
		return agent
	}
	return parent + "\x00" + agent
}

func approvalKey(session, agent, hash string) string {
	return session + "\x00" + agent + "\x00" + hash
}

// revocation is a grant ended during a lookup, recorded afterwards.
type revocation struct {
	session, id, kind, why string
}

// lookup is the gate's engine.PriorApprovals for one decision. Grants that
// are found stale are ended and recorded after the decision.
type lookup struct {
	gr      *grants
	revoked []revocation
}

// Lookup implements engine.PriorApprovals.
func (l *lookup) Lookup(_ context.Context, c *engine.Call) (engine.Grant, bool) {
	gr := l.gr
	req := c.Request
	if req.Session == "" {
		return engine.Grant{}, false
	}
	agent := agentKey(req)
	now := gr.g.opts.Clock()
	res := resources(c)

	gr.mu.Lock()
	defer gr.mu.Unlock()
	key := approvalKey(req.Session, agent, argsHash(c))
	if sa, ok := gr.sessions[key]; ok {
		if r := stale(sa.resources, res); r != nil || len(res) != len(sa.resources) {
			why := "the call's resources changed since it was approved"
			if r != nil {
				why = fmt.Sprintf("%s changed since the call was approved for the session", r.Path)
			}
			gr.revokeApproval(sa)
			l.revoked = append(l.revoked, revocation{req.Session, sa.id, KindSessionApproval, why})
		} else {
			return engine.Grant{Reason: engine.ReasonPriorApproval, ID: sa.id,
				Message: "allowed for this session by an earlier approval (" + sa.id + ")"}, true
		}
	}

	// Leases: every unit that asks must do nothing but touch paths, and
	// each path must be covered by a live lease or be a read inside the
	// workspace.
	var used []string
	asked := false
	for _, u := range c.Units {
		if u.Decision == policy.Allow {
			continue
		}
		asked = true
		if !u.PathsOnly() {
			return engine.Grant{}, false
		}
		for _, set := range []struct {
			facts []engine.PathFact
			need  Capability
		}{{u.Reads, CapRead}, {u.Writes, CapWrite}} {
			for _, p := range set.facts {
				if set.need == CapRead && p.Inside {
					continue
				}
				id, ok := l.cover(req.Session, agent, p.Real, set.need, now)
				if !ok {
					return engine.Grant{}, false
				}
				used = append(used, id)
			}
		}
	}
	if !asked || len(used) == 0 {
		return engine.Grant{}, false
	}
	return engine.Grant{Reason: engine.ReasonLease, ID: used[0],
		Message: fmt.Sprintf("allowed by lease %s", joinIDs(used))}, true
}

// cover finds a live lease of session and agent for path with need; it
// ends the leases it finds expired or changed. gr.mu is held.
func (l *lookup) cover(session, agent, path string, need Capability, now time.Time) (string, bool) {
	for id, ls := range l.gr.leases {
		if ls.Session != session || ls.Agent != agent || ls.Path != path {
			continue
		}
		why := ""
		if !now.Before(ls.Expires) {
			why = "expired"
		} else if v := version(path); v != ls.Version {
			why = path + " changed since the lease was granted"
		}
		if why != "" {
			for i, eid := range l.gr.dropLease(ls) {
				if i > 0 {
					why = "the lease it was delegated from ended"
				}
				l.revoked = append(l.revoked, revocation{session, eid, KindLease, why})
			}
			continue
		}
		if need == CapRead || ls.Capability == CapWrite {
			return id, true
		}
	}
	return "", false
}

// stale returns the first resource of an approved call that is not as it
// was: a path it read in another version, or any path it touched that the
// call no longer resolves to. A path it writes may change (the approved
// call itself changes it); where it leads may not.
func stale(approved, now []Resource) *Resource {
	cur := map[string]string{}
	for _, r := range now {
		cur[r.Path] = r.Version
	}
	for i, r := range approved {
		v, ok := cur[r.Path]
		if !ok || (r.Access == "read" && v != r.Version) {
			return &approved[i]
		}
	}
	return nil
}

func joinIDs(ids []string) string {
	seen := map[string]bool{}
	out := ""
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if out != "" {
			out += ", "
		}
		out += id
	}
	return out
}

// dropApproval ends sa. gr.mu is held.
func (gr *grants) dropApproval(sa *sessionApproval) {
	delete(gr.sessions, sa.key)
	delete(gr.byID, sa.id)
	gr.endLocked(sa.id, sa.rec.Granted.Add(AdoptWindow))
}

// revokeApproval ends sa, revoked or gone stale, and with it every
// approval of the same call granted no later. gr.mu is held.
func (gr *grants) revokeApproval(sa *sessionApproval) {
	gr.dropApproval(sa)
	gr.revokeCall(sa.key, RevokedCall{Granted: sa.rec.Granted, ID: sa.id, Until: sa.rec.Granted.Add(AdoptWindow)})
}

// revokeCall notes that the approvals of the call key granted up to r
// have ended. gr.mu is held.
func (gr *grants) revokeCall(key string, r RevokedCall) {
	if old, ok := gr.revoked[key]; ok && !after(r.Granted, r.ID, old.Granted, old.ID) {
		return
	}
	gr.revoked[key] = r
	gr.endedVersion++
}

// delegatedFrom returns the id of ls and of the leases delegated from
// it, without ending any. gr.mu is held.
func (gr *grants) delegatedFrom(ls *Lease) []string {
	ids := []string{ls.ID}
	for i := 0; i < len(ids); i++ {
		for cid, c := range gr.leases {
			if c.From == ids[i] {
				ids = append(ids, cid)
			}
		}
	}
	return ids
}

// dropLease ends the lease ls and the leases delegated from it, and
// returns the ids of those. gr.mu is held.
func (gr *grants) dropLease(ls *Lease) []string {
	delete(gr.leases, ls.ID)
	gr.endLocked(ls.ID, ls.Expires)
	ended := []string{ls.ID}
	for i := 0; i < len(ended); i++ {
		for cid, c := range gr.leases {
			if c.From == ended[i] {
				delete(gr.leases, cid)
				gr.endLocked(cid, c.Expires)
				ended = append(ended, cid)
			}
		}
	}
	return ended
}

// endLocked notes that the grant id has ended; a copy of it could be
// adopted until horizon. gr.mu is held.
func (gr *grants) endLocked(id string, horizon time.Time) {
	now := gr.g.opts.Clock()
	if len(gr.ended)%256 == 0 {
		for old, h := range gr.ended {
			if h.Before(now) {
				delete(gr.ended, old)
			}
		}
		for key, r := range gr.revoked {
			if r.Until.Before(now) {
				delete(gr.revoked, key)
			}
		}
	}
	if h, ok := gr.ended[id]; !ok || h.Before(horizon) {
		gr.ended[id] = horizon
		gr.endedVersion++
	}
}

// holdApproval holds sa unless it has ended, or an approval of the same
// call granted no earlier was revoked. Of two approvals of the same call,
// every gate holds the one granted later (by time, then id), so that gates
// that read them in different orders agree; the other ends. It reports
// whether sa is held. gr.mu is held.
func (gr *grants) holdApproval(sa *sessionApproval) bool {
	if _, ended := gr.ended[sa.id]; ended {
		return false
	}
	if r, ok := gr.revoked[sa.key]; ok && !r.endsBefore(sa.rec) {
		gr.endLocked(sa.id, sa.rec.Granted.Add(AdoptWindow))
		return false
	}
	if old, ok := gr.sessions[sa.key]; ok && old.id != sa.id {
		if later(old.rec, sa.rec) {
			gr.endLocked(sa.id, sa.rec.Granted.Add(AdoptWindow))
			return false
		}
		gr.dropApproval(old)
	}
	gr.sessions[sa.key] = sa
	gr.byID[sa.id] = sa
	return true
}

// later reports whether grant a was granted after b (by time, then id).
func later(a, b grantRecord) bool { return after(a.Granted, a.ID, b.Granted, b.ID) }

// after reports whether the grant (t1, id1) was granted after (t2, id2):
// by time, then by id.
func after(t1 time.Time, id1 string, t2 time.Time, id2 string) bool {
	if c := t1.Compare(t2); c != 0 {
		return c > 0
	}
	return id1 > id2
}

// endsBefore reports whether rec was granted after r, so that r's
// revocation does not end it.
func (r RevokedCall) endsBefore(rec grantRecord) bool {
	return after(rec.Granted, rec.ID, r.Granted, r.ID)
}

// newSessionApproval is the allow-for-session answer for call c, granted
// at now under id. It binds what the person was asked about: the
// normalized arguments and the resource versions of bound, the receipt
// made when the question was asked, never the files as they are when the
// answer comes.
func newSessionApproval(c *engine.Call, bound *Receipt, id, toolCallID, summary string, now time.Time) *sessionApproval {
	req := c.Request
	rec := grantRecord{
		ID: id, Kind: KindSessionApproval, ToolCallID: toolCallID, Agent: req.Agent, Parent: req.Parent,
		Tool: req.Tool, Summary: summary, ArgsHash: bound.ArgsHash, Resources: slices.Clone(bound.Resources),
		Granted: now.UTC(), Actor: ActorUser,
	}
	return approvalFromRecord(req.Session, rec)
}

// approvalFromRecord is the session approval rec records in session.
func approvalFromRecord(session string, rec grantRecord) *sessionApproval {
	sa := &sessionApproval{id: rec.ID, session: session, agent: agentKeyOf(rec.Parent, rec.Agent), resources: rec.Resources, rec: rec}
	sa.key = approvalKey(session, sa.agent, rec.ArgsHash)
	return sa
}

// keep holds sa, an approval just granted here (holdApproval).
func (gr *grants) keep(sa *sessionApproval) {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	gr.holdApproval(sa)
}

func revokedPayload(r revocation) map[string]any {
	return map[string]any{"id": r.id, "kind": r.kind, "reason": r.why, "actor": ActorSystem}
}

// GrantLease grants a lease and records lease.granted. The path is
// resolved to its real path now; the lease holds while that path keeps
// its current version.
func (g *Gate) GrantLease(ctx context.Context, spec LeaseSpec) (Lease, error) {
	if spec.Session == "" {
		return Lease{}, errors.New("gate: a lease needs a session")
	}
	if spec.Capability != CapRead && spec.Capability != CapWrite {
		return Lease{}, fmt.Errorf("gate: lease capability must be %q or %q, got %q", CapRead, CapWrite, spec.Capability)
	}
	home := g.engineHome()
	abs, ok := pathres.Absolute(spec.Cwd, home, spec.Path)
	if !ok || !filepath.IsAbs(abs) {
		return Lease{}, fmt.Errorf("gate: lease path %q is not absolute and no cwd was given", spec.Path)
	}
	if spec.TTL <= 0 {
		spec.TTL = DefaultLeaseTTL
	}
	if spec.Granter == "" {
		spec.Granter = ActorUser
	}
	real := pathres.Real(abs)
	now := g.opts.Clock()
	ls := Lease{
		ID: "ls_" + randomHex(), Session: spec.Session, Agent: spec.Agent, Path: real,
		Capability: spec.Capability, Version: version(real), Expires: now.Add(spec.TTL).UTC(), Granted: now.UTC(),
	}
	return ls, g.addLease(ctx, ls, spec.Granter)
}

// addLease records ls and, once the log holds it, keeps it.
func (g *Gate) addLease(ctx context.Context, ls Lease, actor Actor) error {
	rec := grantRecord{
		ID: ls.ID, Kind: KindLease, Agent: ls.Agent, Path: ls.Path, Capability: ls.Capability,
		Version: ls.Version, Expires: &ls.Expires, From: ls.From, Granted: ls.Granted, Actor: actor,
	}
	if err := g.record(ctx, ls.Session, "", eventlog.TypeLeaseGranted, g.signGrant(ls.Session, rec)); err != nil {
		return err
	}
	g.grants.mu.Lock()
	defer g.grants.mu.Unlock()
	if _, ended := g.grants.ended[ls.ID]; ended {
		return fmt.Errorf("gate: lease %s was revoked as it was granted", ls.ID)
	}
	if _, ok := g.grants.leases[ls.From]; ls.From != "" && !ok {
		return fmt.Errorf("gate: lease %s ended as %s was delegated from it", ls.From, ls.ID)
	}
	g.grants.leases[ls.ID] = &ls
	return nil
}

// Leases returns the live leases of session.
func (g *Gate) Leases(session string) []Lease {
	now := g.opts.Clock()
	g.grants.mu.Lock()
	defer g.grants.mu.Unlock()
	var out []Lease
	for _, ls := range g.grants.leases {
		if ls.Session == session && now.Before(ls.Expires) {
			out = append(out, *ls)
		}
	}
	return out
}

// Revoke ends a lease or a session approval by id, as the person asked,
// and records lease.revoked with actor user. The leases delegated from a
// lease end with it. Revoking an unknown id is an error wrapping
// [ErrNoGrant].
//
// The revocations are recorded first, in one append: when that fails,
// Revoke returns the error and the grant still holds here, as it does on
// every other server sharing the log, so the revocation can be retried.
func (g *Gate) Revoke(ctx context.Context, id string) error {
	g.grants.mu.Lock()
	var session, kind string
	ended := []string{id}
	if ls, ok := g.grants.leases[id]; ok {
		session, kind = ls.Session, KindLease
		ended = g.grants.delegatedFrom(ls)
	} else if sa, ok := g.grants.byID[id]; ok {
		session, kind = sa.session, KindSessionApproval
	}
	g.grants.mu.Unlock()
	if kind == "" {
		return fmt.Errorf("gate: %w: %q", ErrNoGrant, id)
	}
	if err := g.recordRevoked(ctx, session, kind, ended, false); err != nil {
		return err
	}
	g.grants.mu.Lock()
	var more []string
	if ls, ok := g.grants.leases[id]; ok {
		for _, eid := range g.grants.dropLease(ls) {
			if !slices.Contains(ended, eid) {
				more = append(more, eid) // delegated meanwhile
			}
		}
	} else if sa, ok := g.grants.byID[id]; ok {
		g.grants.revokeApproval(sa)
	}
	g.grants.mu.Unlock()
	if len(more) > 0 {
		return g.recordRevoked(ctx, session, kind, more, true)
	}
	return nil
}

// recordRevoked records lease.revoked for the grants ids of session, in
// one append: all of them, or none. The first id is the one the person
// revoked, and the others were delegated from it; all of them were when
// delegated is set.
func (g *Gate) recordRevoked(ctx context.Context, session, kind string, ids []string, delegated bool) error {
	drafts := make([]eventlog.Draft, len(ids))
	for i, eid := range ids {
		why := "revoked by the user"
		if i > 0 || delegated {
			why = "the lease it was delegated from was revoked"
		}
		raw, err := json.Marshal(map[string]any{"id": eid, "kind": kind, "reason": why, "actor": ActorUser})
		if err == nil {
			raw, err = g.redact.Payload(raw)
		}
		if err != nil {
			return fmt.Errorf("gate: encode %s: %w", eventlog.TypeLeaseRevoked, err)
		}
		drafts[i] = eventlog.Draft{Time: g.opts.Clock(), Type: eventlog.TypeLeaseRevoked, Payload: raw}
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	if _, err := g.store.Append(actx, session, drafts...); err != nil {
		return fmt.Errorf("gate: record %s: %w", eventlog.TypeLeaseRevoked, err)
	}
	return nil
}

// Delegate passes lease id down to a subagent: the new lease is for agent
// (a subagent of the lease's agent, named as in its requests' "agent"
// field), for the same path, with capability at most the original's and
// an expiry no later than it. It is recorded as lease.granted with "from".
func (g *Gate) Delegate(ctx context.Context, id, agent string, capability Capability, ttl time.Duration) (Lease, error) {
	g.grants.mu.Lock()
	parent, ok := g.grants.leases[id]
	var ls Lease
	if ok {
		ls = *parent
	}
	g.grants.mu.Unlock()
	if !ok {
		return Lease{}, fmt.Errorf("gate: no lease %q to delegate", id)
	}
	if capability == "" {
		capability = ls.Capability
	}
	if capability == CapWrite && ls.Capability != CapWrite {
		return Lease{}, fmt.Errorf("gate: lease %s grants %s; a delegated lease cannot grant %s", id, ls.Capability, capability)
	}
	if capability != CapRead && capability != CapWrite {
		return Lease{}, fmt.Errorf("gate: lease capability must be %q or %q, got %q", CapRead, CapWrite, capability)
	}
	expires := ls.Expires
	if ttl > 0 {
		if e := g.opts.Clock().Add(ttl); e.Before(expires) {
			expires = e
		}
	}
	child := Lease{
		ID: "ls_" + randomHex(), Session: ls.Session, Agent: ls.Agent + "\x00" + agent, Path: ls.Path,
		Capability: capability, Version: ls.Version, Expires: expires.UTC(), From: id, Granted: g.opts.Clock().UTC(),
	}
	return child, g.addLease(ctx, child, ActorUser)
}
