package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// handleGetSessionPolicy: GET /v1/sessions/{id}/policy.
func (s *Server) handleGetSessionPolicy(w http.ResponseWriter, r *http.Request, p principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	if err := s.readable(r.Context(), p, session); err != nil {
		return err
	}
	v, _ := s.opts.Sessions.Get(session)
	info, err := s.loaded(r.Context(), session)
	if err != nil {
		return err
	}
	view := sessionPolicyView{SessionSettings: v}
	if s.opts.Workspace != "" || v.Workspace != nil || info.workspace != "" {
		view.BoundWorkspace = s.workspaceOf(session, info.workspace)
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

// sessionPolicyView is the answer to GET /v1/sessions/{id}/policy: the
// settings a person switched, and the workspace the session's calls are
// judged against ("/" for none; absent before its first check).
type sessionPolicyView struct {
	engine.SessionSettings
	BoundWorkspace string `json:"bound_workspace,omitempty"`
}

// handlePutSessionPolicy: PUT /v1/sessions/{id}/policy (approver). A
// field left out stays as it is; null hands it back to the policy files.
func (s *Server) handlePutSessionPolicy(w http.ResponseWriter, r *http.Request, _ principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	if s.opts.Sessions == nil {
		return errorf(http.StatusNotImplemented, "this server keeps no session settings")
	}
	var fields map[string]json.RawMessage
	if err := decodeBody(w, r, &fields); err != nil {
		return err
	}
	// One change at a time here; across servers, the log orders them.
	s.putMu.Lock()
	defer s.putMu.Unlock()
	s.sessionPolicyMu.Lock()
	n := s.sessionN[session] + 1
	old, _ := s.opts.Sessions.Get(session)
	s.sessionPolicyMu.Unlock()
	next := old
	var changed []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		raw := fields[k]
		var err error
		switch k {
		case "mode":
			err = setSetting(&next.Mode, raw, k, policy.ParseMode)
		case "approval":
			err = setSetting(&next.Approval, raw, k, policy.ParseApproval)
		case "sandbox":
			err = setSetting(&next.Sandbox, raw, k, policy.ParseSandbox)
		case "network":
			err = setSetting(&next.Network, raw, k, nil)
		case "workspace":
			err = s.setWorkspace(&next.Workspace, raw)
		default:
			err = errorf(http.StatusBadRequest, "unknown field %q: the settings are mode, approval, sandbox, network and workspace", clip(k, 40))
		}
		if err != nil {
			return err
		}
		changed = append(changed, k)
	}
	cwd := r.URL.Query().Get("cwd")
	if cwd == "" {
		cwd = s.sessionCwd(session)
	}
	if cwd == "" {
		cwd = "/"
	}
	if !filepath.IsAbs(cwd) {
		return errorf(http.StatusBadRequest, "query parameter \"cwd\" must be an absolute directory, got %q", clip(cwd, 200))
	}
	// Only the settings being set are checked: one already in place stays
	// as it is (the engine ignores a setting the policy locks).
	var check engine.SessionSettings
	for _, k := range changed {
		switch k {
		case "mode":
			check.Mode = next.Mode
		case "approval":
			check.Approval = next.Approval
		case "sandbox":
			check.Sandbox = next.Sandbox
		case "network":
			check.Network = next.Network
		}
	}
	if err := s.opts.Engine.Locked(cwd, check); err != nil {
		return errorf(http.StatusConflict, "%v", err)
	}
	if !next.Equal(old) {
		// The change goes to the log first; it applies when the follower
		// reads it back, in the log's order, here as on every server
		// sharing the log, and a restarted server restores it from there.
		c := sessionChange{Scope: "session", Actor: "user", Changed: changed, Before: old, After: next, N: n, At: s.clock().UTC()}
		c.Sig = s.signChange(session, c)
		payload, _ := json.Marshal(c)
		ctx, cancel := s.appendContext()
		defer cancel()
		stored, err := s.store.Append(ctx, session, eventlog.Draft{Time: s.clock(), Type: eventlog.TypePolicyChanged, Payload: payload})
		if err != nil {
			return fmt.Errorf("the event log could not be written, so the session setting was not changed: %w", err)
		}
		wctx, wcancel := context.WithTimeout(r.Context(), lookupWait)
		defer wcancel()
		if !s.waitFollowedPolicy(wctx, stored[0].ID) {
			return fmt.Errorf("the change was recorded (event %d) and applies once it is read back from the log, which has not happened yet; GET the session's policy to see when", stored[0].ID)
		}
		if ok, why := s.changeApplied(stored[0].ID); !ok {
			now, _ := s.opts.Sessions.Get(session)
			return errorf(http.StatusConflict, "the change was not applied: %s; another change of this session came first, and its settings are now %s", why, mustMarshal(now))
		}
	}
	writeJSON(w, http.StatusOK, next)
	return nil
}

// setWorkspace sets *dst from raw, the field "workspace" of PUT
// /v1/sessions/{id}/policy: an absolute directory that can be a workspace
// (its real path is kept), or null to bind the session to the workspace
// of its first check again.
func (s *Server) setWorkspace(dst **string, raw json.RawMessage) error {
	if s.opts.Workspace != "" {
		return errorf(http.StatusConflict, "workspace cannot be changed for a session: the server binds every session to %s (--workspace)", s.opts.Workspace)
	}
	if err := setSetting(dst, raw, "workspace", nil); err != nil || *dst == nil {
		return err
	}
	ws, err := checkWorkspace(**dst, s.opts.Engine.Home())
	if err != nil {
		return errorf(http.StatusBadRequest, "field \"workspace\": %v", err)
	}
	*dst = &ws
	return nil
}

// setSetting sets *dst from raw, a field of PUT /v1/sessions/{id}/policy:
// null hands the setting back to the policy files (nil); a value is a
// string that parse reads, or, with parse nil, a JSON value of T.
func setSetting[T any](dst **T, raw json.RawMessage, key string, parse func(string) (T, error)) error {
	*dst = nil
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	var v T
	if parse == nil {
		if err := json.Unmarshal(raw, &v); err != nil {
			return errorf(http.StatusBadRequest, "field %q must be %T or null", key, v)
		}
	} else {
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return errorf(http.StatusBadRequest, "field %q must be a string or null", key)
		}
		var err error
		if v, err = parse(str); err != nil {
			return errorf(http.StatusBadRequest, "field %q: %v", key, err)
		}
	}
	*dst = &v
	return nil
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// validSettings checks that each setting of v is one the engine knows.
func validSettings(v engine.SessionSettings) error {
	if v.Mode != nil {
		if _, err := policy.ParseMode(string(*v.Mode)); err != nil {
			return err
		}
	}
	if v.Approval != nil {
		if _, err := policy.ParseApproval(string(*v.Approval)); err != nil {
			return err
		}
	}
	if v.Sandbox != nil {
		if _, err := policy.ParseSandbox(string(*v.Sandbox)); err != nil {
			return err
		}
	}
	if v.Workspace != nil && (!filepath.IsAbs(*v.Workspace) || filepath.Clean(*v.Workspace) != *v.Workspace) {
		return fmt.Errorf("workspace %q is not an absolute, clean path", clip(*v.Workspace, 200))
	}
	return nil
}

// effectivePolicy is the answer to GET /v1/policy.
type effectivePolicy struct {
	Cwd  string `json:"cwd"`
	Root string `json:"root"`
	// Version names the contents of the policy files, as decisions
	// made under them carry it in policy_version.
	Version  string            `json:"version,omitempty"`
	Settings policySettings    `json:"settings"`
	From     map[string]string `json:"from"`
	Files    []policyFile      `json:"files"`
	Rules    []policyRule      `json:"rules"`
	Ignored  []policyRule      `json:"ignored"`
	Notes    []string          `json:"notes"`
}

type policySettings struct {
	Mode              policy.Mode     `json:"mode"`
	Approval          policy.Approval `json:"approval"`
	Sandbox           policy.Sandbox  `json:"sandbox"`
	Network           bool            `json:"network"`
	WritableRoots     []string        `json:"writable_roots"`
	TrustedMCPServers []string        `json:"trusted_mcp_servers"`
	DisableBypass     bool            `json:"disable_bypass"`
	ManagedRulesOnly  bool            `json:"managed_rules_only"`
	NetworkLocked     bool            `json:"network_locked"`
}

type policyFile struct {
	Layer   policy.Layer `json:"layer"`
	Path    string       `json:"path,omitempty"`
	Version string       `json:"version,omitempty"`
}

type policyRule struct {
	Rule   string          `json:"rule"`
	Effect policy.Decision `json:"effect"`
	Layer  policy.Layer    `json:"layer"`
	File   string          `json:"file,omitempty"`
	Line   int             `json:"line,omitempty"`
	Column int             `json:"column,omitempty"`
	Origin string          `json:"origin"`
	Reason string          `json:"reason,omitempty"`
}

func toPolicyRule(r *policy.Rule) policyRule {
	return policyRule{Rule: r.Text, Effect: r.Effect, Layer: r.Layer, File: r.Pos.File, Line: r.Pos.Line, Column: r.Pos.Column, Origin: r.Origin()}
}

// handlePolicy: GET /v1/policy?cwd=DIR (approver).
func (s *Server) handlePolicy(w http.ResponseWriter, r *http.Request, _ principal) error {
	if s.opts.PolicyFor == nil {
		return errorf(http.StatusNotImplemented, "this server cannot show the policy")
	}
	cwd := r.URL.Query().Get("cwd")
	if cwd == "" {
		return errorf(http.StatusBadRequest, `query parameter "cwd" is required: the project directory whose policy to show`)
	}
	if !filepath.IsAbs(cwd) {
		return errorf(http.StatusBadRequest, "query parameter \"cwd\" must be an absolute directory, got %q", clip(cwd, 200))
	}
	set, root, err := s.opts.PolicyFor(filepath.Clean(cwd))
	if err != nil {
		return errorf(http.StatusUnprocessableEntity, "the policy for %s cannot be loaded, so every call there is denied: %v", cwd, err)
	}
	out := effectivePolicy{
		Cwd: cwd, Root: root, Version: set.Version, From: set.From, Notes: set.Notes,
		Settings: policySettings{
			Mode: set.Mode, Approval: set.Approval, Sandbox: set.Sandbox, Network: set.Network,
			WritableRoots: set.WritableRoots, TrustedMCPServers: set.TrustedMCPServers,
			DisableBypass: set.DisableBypass, ManagedRulesOnly: set.ManagedRulesOnly, NetworkLocked: set.NetworkLocked,
		},
		Files: []policyFile{}, Rules: []policyRule{}, Ignored: []policyRule{},
	}
	if out.From == nil {
		out.From = map[string]string{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for _, f := range set.Files {
		out.Files = append(out.Files, policyFile{Layer: f.Layer, Path: f.Path, Version: f.Version})
	}
	for _, rule := range set.Rules {
		out.Rules = append(out.Rules, toPolicyRule(rule))
	}
	for _, ig := range set.Ignored {
		pr := toPolicyRule(ig.Rule)
		pr.Reason = ig.Reason
		out.Ignored = append(out.Ignored, pr)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
