package server

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/secrets"
)

// TypeSessionBound is the event the server writes when a session is first
// seen: which token started it (a hash, never the token) and, once the
// session made its first check, the workspace it is bound to. It is signed
// under the approver token; the first such event of a session that
// verifies holds, on every server sharing the log and across restarts.
const TypeSessionBound eventlog.Type = "session.bound"

// NoWorkspace is the workspace of a session bound to none: nothing is
// inside a workspace for its calls (engine.Request.Workspace).
const NoWorkspace = "/"

// boundPayload is the payload of a session.bound event.
type boundPayload struct {
	// Owner identifies the token that started the session: "approver",
	// or "agent:" and the start of the SHA-256 of the agent token.
	Owner string `json:"owner"`
	// Workspace is the workspace the session's first check bound it to,
	// NoWorkspace for none; empty when the session has made no check yet.
	Workspace string `json:"workspace,omitempty"`
	Sig       string `json:"sig"`
}

func (s *Server) signBound(session string, b boundPayload) string {
	return mac(s.opts.Tokens.Approver, "toolgate session bound v1", session, b.Owner, b.Workspace)
}

// systemTrees are the directories inside which no workspace is ever bound:
// the system's own files.
var systemTrees = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
	"/sbin", "/sys", "/usr", "/System", "/Library", "/private/etc",
}

// systemDirs are directories that are never a workspace themselves,
// though a project below them may be.
var systemDirs = []string{
	"/", "/home", "/Users", "/root", "/opt", "/srv", "/mnt", "/media", "/tmp", "/var", "/var/tmp",
	"/private", "/private/tmp", "/private/var", "/snap", "/nix", "/Volumes", "/Applications",
}

// NeverWorkspace says why dir (an absolute, clean, real path) can never be
// a session's workspace, or "": the file system root, the system's own
// trees (/usr, /etc, /bin, /lib*, /proc, ...), the directories that hold
// everyone's projects (/home, /tmp, /var, /opt, ...), the home directory
// home and every directory above it. A workspace there would put the
// whole machine, or all of a person's files, inside the workspace.
func NeverWorkspace(dir, home string) string {
	for _, t := range systemTrees {
		if dir == t || strings.HasPrefix(dir, t+"/") {
			return dir + " is a system directory"
		}
	}
	for _, d := range systemDirs {
		if dir == d {
			return dir + " holds more than one project"
		}
	}
	if home != "" && (dir == home || strings.HasPrefix(home, dir+"/")) {
		return dir + " is the home directory or above it"
	}
	return ""
}

// WorkspaceFor returns the workspace that a session whose first check was
// made from cwd, by a client whose project directory is project ("" when
// not known), is bound to: the project root the engine judges the call
// against (engine.FindRootFrom: above cwd's real path, or above the
// project directory's when cwd leads out of the client's project), or
// NoWorkspace when that is a directory that is never a workspace
// ([NeverWorkspace]) or when project cannot be resolved.
func WorkspaceFor(cwd, project, home string) string {
	root, _, err := engine.FindRootFrom(cwd, project, home)
	if err != nil || NeverWorkspace(root, home) != "" {
		return NoWorkspace
	}
	return root
}

// loaded returns what the server knows of session, reading its
// session.bound events from the log when it has not seen it before (it
// was started on another server sharing the log, or before a restart).
// The copy it returns is a snapshot.
func (s *Server) loaded(ctx context.Context, session string) (sessionInfo, error) {
	s.mu.Lock()
	if info := s.known[session]; info != nil && info.loaded {
		v := *info
		s.mu.Unlock()
		return v, nil
	}
	s.mu.Unlock()
	owner, ws, err := s.readBound(ctx, session)
	if err != nil {
		return sessionInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.infoLocked(session)
	if !info.loaded {
		info.loaded = true
		info.owner, info.workspace = owner, ws
	}
	return *info, nil
}

// readBound returns the owner and the workspace of session as the first
// verified session.bound events of the log record them.
func (s *Server) readBound(ctx context.Context, session string) (owner, workspace string, err error) {
	for e, err := range s.store.Query(ctx, eventlog.Filter{Session: session, Types: []eventlog.Type{TypeSessionBound}}) {
		if err != nil {
			return "", "", fmt.Errorf("read the session's binding from the event log: %w", err)
		}
		var b boundPayload
		if json.Unmarshal(e.Payload, &b) != nil || b.Sig == "" || !hmac.Equal([]byte(b.Sig), []byte(s.signBound(session, b))) {
			s.log.Warn("session.bound event ignored: its signature does not verify", "event", e.ID, "session", session)
			continue
		}
		if owner == "" {
			owner = b.Owner
		}
		if workspace == "" && b.Workspace != "" {
			workspace = b.Workspace
		}
		if owner != "" && workspace != "" {
			break
		}
	}
	return owner, workspace, nil
}

// infoLocked returns the entry of session, making it (s.mu held).
func (s *Server) infoLocked(session string) *sessionInfo {
	info := s.known[session]
	if info == nil {
		if len(s.known) >= maxKnownSessions {
			for k := range s.known {
				delete(s.known, k)
				break
			}
		}
		info = &sessionInfo{}
		s.known[session] = info
	}
	return info
}

// claim makes sure p may act in session and returns the workspace its
// first check bound it to. A session belongs to the token that started
// it: another agent token gets 403 (the approver acts in every session).
// A session not yet owned becomes p's; one that has made no check yet is
// bound, when cwd is not "", to [WorkspaceFor] cwd and the client's
// project directory (project, "" when not known). Both are recorded in a
// session.bound event, and the first such event in the log holds.
func (s *Server) claim(ctx context.Context, session string, p principal, cwd, project string) (string, error) {
	info, err := s.loaded(ctx, session)
	if err != nil {
		return "", err
	}
	if info.owner != "" && info.owner != p.id && p.role != RoleApprover {
		return "", errorf(http.StatusForbidden, "session %q was started with another agent token: a token acts only in its own sessions", session)
	}
	need := boundPayload{Owner: info.owner}
	if need.Owner == "" {
		need.Owner = p.id
	}
	if cwd != "" && info.workspace == "" {
		need.Workspace = WorkspaceFor(cwd, project, s.opts.Engine.Home())
		if secrets.Contains(need.Workspace) {
			// Recorded as it is, it would put the secret at rest; redacted,
			// it would name no directory. No workspace fails closed.
			need.Workspace = NoWorkspace
		}
	}
	if need.Owner == info.owner && need.Workspace == "" {
		s.noteCwd(session, cwd)
		return info.workspace, nil
	}
	// One binding at a time: two first calls of a session agree.
	s.bindMu.Lock()
	defer s.bindMu.Unlock()
	owner, ws, err := s.readBound(ctx, session)
	if err != nil {
		return "", err
	}
	write := owner == ""
	if !write && ws == "" && need.Workspace != "" && (owner == p.id || p.role == RoleApprover) {
		need.Owner, write = owner, true
	}
	if write {
		need.Sig = s.signBound(session, need)
		payload, _ := json.Marshal(need)
		actx, cancel := s.appendContext()
		_, err := s.store.Append(actx, session, eventlog.Draft{Time: s.clock(), Type: TypeSessionBound, Payload: payload})
		cancel()
		if err != nil {
			return "", fmt.Errorf("the event log could not be written, so the session was not started: %w", err)
		}
		if owner, ws, err = s.readBound(ctx, session); err != nil {
			return "", err
		}
	}
	s.mu.Lock()
	in := s.infoLocked(session)
	in.loaded, in.owner, in.workspace = true, owner, ws
	if cwd != "" {
		in.cwd = cwd
	}
	s.mu.Unlock()
	if owner != p.id && p.role != RoleApprover {
		return "", errorf(http.StatusForbidden, "session %q was started with another agent token: a token acts only in its own sessions", session)
	}
	return ws, nil
}

// noteCwd records the working directory of session's latest call.
func (s *Server) noteCwd(session, cwd string) {
	if cwd == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.infoLocked(session).cwd = cwd
}

// workspaceOf returns the workspace a call of session is judged against:
// the server's (Options.Workspace), else the one a person set for the
// session, else bound, the one its first check bound it to.
func (s *Server) workspaceOf(session, bound string) string {
	if s.opts.Workspace != "" {
		return s.opts.Workspace
	}
	if v, ok := s.opts.Sessions.Get(session); ok && v.Workspace != nil {
		return *v.Workspace
	}
	if bound == "" {
		return NoWorkspace
	}
	return bound
}

// checkWorkspace validates a workspace a person gives (--workspace, or a
// session's setting): an absolute directory that is not one that is never
// a workspace. It returns its real path.
func checkWorkspace(dir, home string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) || strings.ContainsRune(dir, 0) {
		return "", fmt.Errorf("the workspace must be an absolute directory, got %q", clip(dir, 200))
	}
	real := pathres.Real(dir)
	if why := NeverWorkspace(real, home); why != "" {
		return "", fmt.Errorf("%s cannot be a workspace: %s", dir, why)
	}
	return real, nil
}

// mayRead reports whether p may read session: the approver always, an
// agent token only the sessions it started.
func (s *Server) mayRead(ctx context.Context, p principal, session string) (bool, error) {
	if p.role == RoleApprover {
		return true, nil
	}
	info, err := s.loaded(ctx, session)
	if err != nil {
		return false, err
	}
	return info.owner != "" && info.owner == p.id, nil
}

// ownedSessions returns the sessions p started, as far as this server
// knows.
func (s *Server) ownedSessions(p principal) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for k, v := range s.known {
		if v.owner == p.id {
			out[k] = true
		}
	}
	return out
}

// ownerOf returns who started session, "" when this server does not know.
func (s *Server) ownerOf(session string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if info := s.known[session]; info != nil {
		return info.owner
	}
	return ""
}

// readable returns errSessionForbidden unless p may read session.
func (s *Server) readable(ctx context.Context, p principal, session string) error {
	ok, err := s.mayRead(ctx, p, session)
	if err != nil {
		return err
	}
	if !ok {
		return errSessionForbidden(session)
	}
	return nil
}
