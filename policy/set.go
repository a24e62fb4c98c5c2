package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/pathres"
)

// Set is the effective policy: the layers merged. Rules of every layer are
// pooled; each setting comes from the highest layer that sets it; the
// managed layer's locks apply to all others.
type Set struct {
	// Files are the layers that were present, highest first.
	Files []*File
	// Rules are the pooled rules, deny rules first, then ask, then allow,
	// each group in layer order (highest first) and written order.
	Rules []*Rule
	// Ignored are allow rules that do not count, with the reason: rules of
	// an untrusted project (see [File.Distrust]) and rules a managed lock
	// set aside.
	Ignored []IgnoredRule

	Mode Mode
	// ModeLayer is the layer that set Mode; ModeSet is false when no layer
	// did and Mode is the default.
	ModeLayer     Layer
	ModeSet       bool
	Approval      Approval
	Sandbox       Sandbox
	Network       bool
	WritableRoots []string
	// NoHookWrap is set when the highest layer that sets wrap_hooks turns
	// it off: `toolgate hook` then hands shell commands back unwrapped.
	// An untrusted project cannot turn it off.
	NoHookWrap bool
	// NoMCPElicitation is set when the highest layer that sets
	// mcp_elicitation turns it off: `toolgate mcp` then never asks the
	// person through the MCP client. An untrusted project cannot turn it
	// on again.
	NoMCPElicitation bool
	// TrustedMCPServers is the union of every layer's trusted servers,
	// unless the managed layer sets the list, which then stands alone.
	TrustedMCPServers []string
	DisableBypass     bool
	ManagedRulesOnly  bool
	// NetworkLocked is set when the managed policy turns network off: no
	// sandbox setting of a lower layer turns it back on.
	NetworkLocked bool
	// CredentialPaths and ProtectedPaths are every layer's additions to
	// the built-in sensitive path classes (only ever added to).
	CredentialPaths, ProtectedPaths []*Rule
	// Hooks are every layer's user hooks, highest layer first, each
	// layer's in the order written; nil when no layer defines one. Hooks of
	// an untrusted project are not among them ([File.Distrust]). The files
	// a command hook names by an absolute or ~/ path are added to
	// ProtectedPaths, so that an agent cannot rewrite a hook unasked.
	Hooks []*Hook

	// From says which layer set each setting ("mode", "approval",
	// "sandbox", "network", "writable_roots"), as file:line or layer name.
	From map[string]string
	// Layers says which layer set each setting, by the same keys as From.
	Layers map[string]Layer
	// Notes record settings that a lock or a missing trust overrode.
	Notes []string

	// Version names the contents of the policy files merged, by layer:
	// the same files with the same contents give the same Version, any
	// edit another. It is "" when no layer was loaded from a file.
	Version string
	// Watch tells whether the files the Set was loaded from have changed
	// since ([LoadSet] sets it); nil for a Set that is not watched.
	Watch *Watch

	idx, ignoredIdx *Index
}

// Index returns the set's rule index. Sets made by [Merge] hold one; for a
// Set built by hand it is built on each call.
func (s *Set) Index() *Index {
	if s.idx == nil {
		return buildIndex(s.Rules)
	}
	return s.idx
}

// IgnoredIndex returns an index of the ignored rules, so that an
// explanation can say which of them would have matched a call.
func (s *Set) IgnoredIndex() *Index {
	if s.ignoredIdx == nil {
		rules := make([]*Rule, len(s.Ignored))
		for i, ig := range s.Ignored {
			rules[i] = ig.Rule
		}
		return buildIndex(rules)
	}
	return s.ignoredIdx
}

// IgnoredRule is a rule that does not count: a managed lock or a missing
// trust set it aside.
type IgnoredRule struct {
	Rule   *Rule
	Reason string
}

// Merge combines layers into the effective policy. Nil files are skipped;
// the order of files does not matter. A file marked by [File.Distrust]
// sets a mode, approval, sandbox or network only where the value is at
// least as strict as what the layers below it set; its ignored allow rules
// go to Ignored and the settings it could not set to Notes. It fails if two
// files claim the same layer, or if a layer above the files (the CLI) asks
// for bypassPermissions while the managed policy forbids it.
func Merge(files ...*File) (*Set, error) {
	var fs []*File
	for _, f := range files {
		if f != nil {
			fs = append(fs, f)
		}
	}
	slices.SortStableFunc(fs, func(a, b *File) int { return int(a.Layer) - int(b.Layer) })
	var distrust []string
	for _, f := range fs {
		distrust = append(distrust, f.notes...)
	}
	s := &Set{
		Notes:    distrust,
		Files:    fs,
		Mode:     ModeDefault,
		Approval: ApprovalOnRequest,
		Sandbox:  SandboxWorkspaceWrite,
		From:     map[string]string{},
		Layers:   map[string]Layer{},
	}
	var managed *File
	for i, f := range fs {
		if i > 0 && fs[i-1].Layer == f.Layer && f.Layer != LayerSession {
			return nil, fmt.Errorf("policy: two %s layers: %s and %s", f.Layer, fs[i-1].Path, f.Path)
		}
		if f.Layer == LayerManaged {
			managed = f
			s.DisableBypass = f.DisableBypass
			s.ManagedRulesOnly = f.ManagedRulesOnly
			s.NetworkLocked = f.Network != nil && !*f.Network
		}
	}
	// Settings: walk from the lowest layer up so the highest wins. An
	// untrusted file's setting applies only where it is at least as strict
	// as what the layers below it set.
	looser := func(f *File, key, value, below string) {
		s.Notes = append(s.Notes, fmt.Sprintf("%s %s from %s ignored: it is less strict than %s, and %s", key, value, f.origin(key), below, f.untrusted))
	}
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		untrusted := f.untrusted != ""
		if f.Mode != nil {
			if why := s.ModeLock(*f.Mode); why != "" && f.Layer != LayerManaged {
				if f.Layer == LayerCLI && *f.Mode == ModeBypass {
					return nil, fmt.Errorf("policy: %s (%s)", why, managed.Path)
				}
				s.Notes = append(s.Notes, fmt.Sprintf("mode %s from %s ignored: %s (%s)", *f.Mode, f.origin("mode"), why, managed.Path))
			} else if untrusted && !ModeAtLeastAsStrict(*f.Mode, s.Mode) {
				looser(f, "mode", string(*f.Mode), "mode "+string(s.Mode))
			} else {
				s.Mode, s.From["mode"] = *f.Mode, f.origin("mode")
				s.Layers["mode"] = f.Layer
				s.ModeLayer, s.ModeSet = f.Layer, true
			}
		}
		if f.Approval != nil {
			if why := s.ApprovalLock(*f.Approval); why != "" && f.Layer != LayerManaged {
				s.Notes = append(s.Notes, fmt.Sprintf("approval %s from %s ignored: %s (%s)", *f.Approval, f.origin("approval"), why, managed.Path))
			} else if untrusted && approvalRank(*f.Approval) < approvalRank(s.Approval) {
				looser(f, "approval", string(*f.Approval), "approval "+string(s.Approval))
			} else {
				s.Approval, s.From["approval"] = *f.Approval, f.origin("approval")
				s.Layers["approval"] = f.Layer
			}
		}
		if f.Sandbox != nil {
			if untrusted && sandboxRank(*f.Sandbox) < sandboxRank(s.Sandbox) {
				looser(f, "sandbox", string(*f.Sandbox), "sandbox "+string(s.Sandbox))
			} else {
				s.Sandbox, s.From["sandbox"] = *f.Sandbox, f.origin("sandbox")
				s.Layers["sandbox"] = f.Layer
			}
		}
		if f.Network != nil {
			if untrusted && *f.Network && !s.Network {
				looser(f, "network", "= true", "network off")
			} else {
				s.Network, s.From["network"] = *f.Network, f.origin("network")
				s.Layers["network"] = f.Layer
			}
		}
		if f.WrapHooks != nil {
			if untrusted && !*f.WrapHooks && !s.NoHookWrap {
				looser(f, "wrap_hooks", "= false", "wrap_hooks on")
			} else {
				s.NoHookWrap, s.From["wrap_hooks"] = !*f.WrapHooks, f.origin("wrap_hooks")
				s.Layers["wrap_hooks"] = f.Layer
			}
		}
		if f.MCPElicitation != nil {
			if untrusted && *f.MCPElicitation && s.NoMCPElicitation {
				looser(f, "mcp_elicitation", "= true", "mcp_elicitation off")
			} else {
				s.NoMCPElicitation, s.From["mcp_elicitation"] = !*f.MCPElicitation, f.origin("mcp_elicitation")
				s.Layers["mcp_elicitation"] = f.Layer
			}
		}
		if f.WritableRootsSet {
			if managed != nil && managed.Sandbox != nil && !managed.WritableRootsSet && f.Layer != LayerManaged {
				s.Notes = append(s.Notes, fmt.Sprintf("writable_roots from %s ignored: the managed policy %s sets the sandbox", f.origin("writable_roots"), managed.Path))
			} else {
				s.WritableRoots, s.From["writable_roots"] = f.WritableRoots, f.origin("writable_roots")
				s.Layers["writable_roots"] = f.Layer
			}
		}
	}
	for _, f := range fs {
		s.CredentialPaths = append(s.CredentialPaths, f.CredentialPaths...)
		s.ProtectedPaths = append(s.ProtectedPaths, f.ProtectedPaths...)
	}
	for _, f := range fs {
		for _, h := range f.Hooks {
			if s.ManagedRulesOnly && f.Layer != LayerManaged {
				c := *h
				c.NoAllow = "the managed policy " + managed.Path + " allows only managed allow rules"
				h = &c
			}
			s.Hooks = append(s.Hooks, h)
			// What a hook runs is part of the gate: writing it asks,
			// as writing a policy file does.
			s.ProtectedPaths = append(s.ProtectedPaths, h.programs()...)
		}
	}
	if managed != nil && managed.TrustedMCPServers != nil {
		s.TrustedMCPServers = managed.TrustedMCPServers
	} else {
		for _, f := range fs {
			s.TrustedMCPServers = append(s.TrustedMCPServers, f.TrustedMCPServers...)
		}
	}
	for _, f := range fs {
		s.Ignored = append(s.Ignored, f.ignored...)
	}
	for _, eff := range []Decision{Deny, Ask, Allow} {
		for _, f := range fs {
			for _, r := range f.Rules {
				if r.Effect != eff {
					continue
				}
				if eff == Allow && s.ManagedRulesOnly && f.Layer != LayerManaged {
					s.Ignored = append(s.Ignored, IgnoredRule{r, "the managed policy " + managed.Path + " allows only managed allow rules"})
					continue
				}
				s.Rules = append(s.Rules, r)
			}
		}
	}
	s.Version = setVersion(fs)
	s.idx = buildIndex(s.Rules)
	s.ignoredIdx = nil
	s.ignoredIdx = s.IgnoredIndex()
	return s, nil
}

// ModeAtLeastAsStrict reports whether mode m asks or denies at least
// whatever mode below would: bypassPermissions, acceptEdits, default, then
// plan, dontAsk and strict, which are each stricter than default but not
// comparable with one another (plan lets reads through that strict denies;
// strict lets allowed writes through that plan denies).
func ModeAtLeastAsStrict(m, below Mode) bool {
	rank := func(m Mode) int {
		switch m {
		case ModeBypass:
			return 0
		case ModeAcceptEdits:
			return 1
		case ModeDefault:
			return 2
		}
		return 3
	}
	if m == below {
		return true
	}
	return rank(m) > rank(below) && rank(below) < 3
}

func approvalRank(a Approval) int {
	switch a {
	case ApprovalNever:
		return 0
	case ApprovalOnRequest:
		return 1
	}
	return 2
}

func sandboxRank(s Sandbox) int {
	switch s {
	case SandboxFullAccess:
		return 0
	case SandboxWorkspaceWrite:
		return 1
	}
	return 2
}

// AllowsBypass reports whether bypassPermissions may be used.
func (s *Set) AllowsBypass() bool { return !s.DisableBypass }

// The locks of the managed policy on the settings. A setting from below the
// managed layer — a lower policy file, a person's switch for one session or
// the mode an agent reports — applies only when the lock for its key and
// value is "". Merge, the engine's session settings and its request mode
// all ask these, so that a lock is stated once.

// SettingLock says why key ("mode", "approval", "sandbox", "network") can
// be changed by nothing at run time: the managed policy or a command-line
// flag set it. It is "" when the files below them set it, or none did.
func (s *Set) SettingLock(key string) string {
	if l, ok := s.Layers[key]; ok && (l == LayerManaged || l == LayerCLI) {
		return "it is set by " + s.From[key]
	}
	return ""
}

// ModeLock says why mode m cannot apply under the managed policy, or "".
func (s *Set) ModeLock(m Mode) string {
	switch {
	case m == ModeBypass && s.DisableBypass:
		return "bypassPermissions is disabled by the managed policy"
	case s.ManagedRulesOnly && (m == ModeBypass || m == ModeAcceptEdits):
		return "the managed policy allows only its own allow rules"
	}
	return ""
}

// ApprovalLock says why approval a cannot apply under the managed policy,
// or "".
func (s *Set) ApprovalLock(a Approval) string {
	if a == ApprovalNever && s.ManagedRulesOnly {
		return "the managed policy allows only its own allow rules"
	}
	return ""
}

// NetworkLock says why network access cannot be turned on, or "".
func (s *Set) NetworkLock(on bool) string {
	if on && s.NetworkLocked {
		return "the managed policy turns the network off"
	}
	return ""
}

// Locations says where the policy files of each layer live.
type Locations struct {
	// Managed is the managed policy file; default /etc/toolgate/managed.toml
	// or $TOOLGATE_MANAGED_POLICY.
	Managed string
	// User is the user's policy file; default
	// $XDG_CONFIG_HOME/toolgate/policy.toml (~/.config when unset).
	User string
	// Project is the project root; its .toolgate/policy.toml and
	// .toolgate/policy.local.toml are the project and local layers.
	Project string
}

// DefaultLocations returns the standard places for a project root.
func DefaultLocations(projectRoot string) Locations {
	l := Locations{Managed: os.Getenv("TOOLGATE_MANAGED_POLICY"), Project: projectRoot}
	if l.Managed == "" {
		l.Managed = "/etc/toolgate/managed.toml"
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cfg = filepath.Join(home, ".config")
		}
	}
	if cfg != "" {
		l.User = filepath.Join(cfg, "toolgate", "policy.toml")
	}
	return l
}

// ProjectFile and LocalFile are the policy files inside a project root.
const (
	ProjectFile = ".toolgate/policy.toml"
	LocalFile   = ".toolgate/policy.local.toml"
)

// Load reads every file layer that exists at l. It fails on the first file
// that cannot be read or parsed; a missing file is simply absent.
func Load(l Locations) ([]*File, error) {
	files, _, err := LoadWatched(l)
	return files, err
}

// Trusted reports whether a user or managed layer among files lists root
// (an absolute, real path) itself in trusted_projects; home expands ~/. An
// entry for a directory above root does not trust it.
func Trusted(files []*File, root, home string) bool {
	ok, _ := trustedVia(files, root, home)
	return ok
}

// trustedVia is [Trusted], and when root is trusted only by an entry that
// leads to it through a link, that entry (cleaned, ~/ expanded): the
// trust lasts only while the link leads there.
func trustedVia(files []*File, root, home string) (bool, string) {
	var via string
	for _, f := range files {
		if f.Layer != LayerUser && f.Layer != LayerManaged {
			continue
		}
		for _, p := range f.TrustedProjects {
			if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
				p = filepath.Join(home, rest)
			}
			p = filepath.Clean(p)
			if p == root {
				return true, ""
			}
			if via == "" && pathres.Real(p) == root {
				via = p
			}
		}
	}
	return via != "", via
}

// ParseRules parses rule texts given on a command line or through an API
// into a file of the given layer (CLI or session). name labels errors,
// e.g. "--allow".
func ParseRules(layer Layer, allow, ask, deny []string) (*File, error) {
	f := &File{Layer: layer}
	for _, g := range []struct {
		flag  string
		rules []string
		eff   Decision
	}{{"--deny", deny, Deny}, {"--ask", ask, Ask}, {"--allow", allow, Allow}} {
		for _, text := range g.rules {
			r, err := ParseRule(text, g.eff, Position{})
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", g.flag, text, err)
			}
			r.Layer = layer
			f.Rules = append(f.Rules, r)
		}
	}
	return f, nil
}

// String summarizes the effective settings in one line.
func (s *Set) String() string {
	return fmt.Sprintf("mode=%s approval=%s sandbox=%s network=%t writable_roots=[%s] rules=%d",
		s.Mode, s.Approval, s.Sandbox, s.Network, strings.Join(s.WritableRoots, ","), len(s.Rules))
}
