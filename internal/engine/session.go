package engine

import (
	"fmt"
	"sync"

	"github.com/toolgate/toolgate/policy"
)

// SessionSettings are the settings a person switched for one session: the
// mode and the two axes. A nil field (null in JSON) leaves the setting to
// the policy files.
// A setting made by the managed policy or a command-line flag is locked: a
// session setting does not override it.
type SessionSettings struct {
	Mode     *policy.Mode     `json:"mode"`
	Approval *policy.Approval `json:"approval"`
	Sandbox  *policy.Sandbox  `json:"sandbox"`
	Network  *bool            `json:"network"`
	// Workspace is the workspace a person bound the session to; the
	// server that keeps it passes it as Request.Workspace, the engine
	// does not read it here.
	Workspace *string `json:"workspace,omitempty"`
}

// Equal reports whether s and o make the same settings.
func (s SessionSettings) Equal(o SessionSettings) bool {
	return sameSetting(s.Mode, o.Mode) && sameSetting(s.Approval, o.Approval) &&
		sameSetting(s.Sandbox, o.Sandbox) && sameSetting(s.Network, o.Network) && sameSetting(s.Workspace, o.Workspace)
}

func sameSetting[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// Sessions holds the [SessionSettings] of each session. It is safe for use
// by multiple goroutines; a change applies to the next decision.
type Sessions struct {
	mu sync.RWMutex
	m  map[string]SessionSettings
}

// NewSessions returns an empty set of session settings.
func NewSessions() *Sessions { return &Sessions{m: map[string]SessionSettings{}} }

// Get returns the settings of session, and whether it has any.
func (s *Sessions) Get(session string) (SessionSettings, bool) {
	if s == nil {
		return SessionSettings{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[session]
	return v, ok
}

// Set replaces the settings of session; the zero value removes them.
func (s *Sessions) Set(session string, v SessionSettings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v == (SessionSettings{}) {
		delete(s.m, session)
		return
	}
	s.m[session] = v
}

// Locked returns an error naming the file for each of v's settings that
// the policy for cwd does not let a session change; nil when all apply.
func (e *Engine) Locked(cwd string, v SessionSettings) error {
	root := e.opts.Project
	if root == "" {
		root, _ = FindRoot(cwd)
	}
	set, err := e.policyFor(root)
	if err != nil {
		return err
	}
	for _, key := range v.keys() {
		if why := locked(set, key, v); why != "" {
			return fmt.Errorf("%s cannot be changed for a session: %s", key, why)
		}
	}
	return nil
}

func (v SessionSettings) keys() []string {
	var k []string
	if v.Mode != nil {
		k = append(k, "mode")
	}
	if v.Approval != nil {
		k = append(k, "approval")
	}
	if v.Sandbox != nil {
		k = append(k, "sandbox")
	}
	if v.Network != nil {
		k = append(k, "network")
	}
	return k
}

// locked says why the setting key of v cannot apply under set, or "".
func locked(set *policy.Set, key string, v SessionSettings) string {
	if why := set.SettingLock(key); why != "" {
		return why
	}
	switch key {
	case "mode":
		return set.ModeLock(*v.Mode)
	case "approval":
		return set.ApprovalLock(*v.Approval)
	case "network":
		return set.NetworkLock(*v.Network)
	}
	return ""
}
