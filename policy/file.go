package policy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// File is one parsed policy file (or the flags of one layer). A nil pointer
// setting means the layer leaves it to the layers below.
type File struct {
	// Path is the file the policy came from, "" for flags and sessions.
	Path  string
	Layer Layer
	// Version names the content the file was loaded from (the first 12
	// hex digits of its SHA-256); "" for a File parsed from bytes given
	// to [ParseFile], flags and sessions.
	Version string

	Mode          *Mode
	Approval      *Approval
	Sandbox       *Sandbox
	Network       *bool
	WritableRoots []string
	// WritableRootsSet reports whether the layer set writable_roots, even
	// to an empty list.
	WritableRootsSet bool
	// WrapHooks, when set, says whether `toolgate hook` hands an allowed
	// shell command back wrapped in `toolgate sandbox` (the default) or
	// as it is.
	WrapHooks *bool
	// MCPElicitation, when set, says whether `toolgate mcp` may ask the
	// person about a call through the MCP client (elicitation) when no
	// toolgate serve is in use (the default) or never does.
	MCPElicitation *bool
	// TrustedMCPServers names MCP servers whose tools are not flagged as
	// untrusted.
	TrustedMCPServers []string
	// TrustedProjects lists project roots whose committed policy may
	// loosen settings. Only read from the user and managed layers.
	TrustedProjects []string
	// CredentialPaths and ProtectedPaths add path patterns (rule syntax)
	// to the built-in credential and protected classes.
	CredentialPaths, ProtectedPaths []*Rule

	// DisableBypass forbids bypassPermissions in every layer. Only
	// honoured in the managed layer.
	DisableBypass bool
	// ManagedRulesOnly makes the engine ignore allow rules of every other
	// layer. Only honoured in the managed layer.
	ManagedRulesOnly bool

	// Hooks are the file's [[hooks]] entries in the order written.
	Hooks []*Hook
	// Rules are the file's rules in the order written: deny, ask, allow.
	Rules []*Rule
	// Tests are the file's examples: calls and the decision the policy
	// must give them (toolgate policy test).
	Tests []Test
	// Pos records where each setting was written, by key ("mode",
	// "sandbox", ...).
	Pos map[string]Position

	notes     []string      // lists Distrust dropped
	ignored   []IgnoredRule // allow rules Distrust set aside
	untrusted string        // why Distrust was applied, "" if it was not
}

// fileDoc is the TOML schema of a policy file.
type fileDoc struct {
	Mode              *string  `toml:"mode"`
	Approval          *string  `toml:"approval"`
	Sandbox           *string  `toml:"sandbox"`
	Network           *bool    `toml:"network"`
	WritableRoots     []string `toml:"writable_roots"`
	WrapHooks         *bool    `toml:"wrap_hooks"`
	MCPElicitation    *bool    `toml:"mcp_elicitation"`
	TrustedMCPServers []string `toml:"trusted_mcp_servers"`
	TrustedProjects   []string `toml:"trusted_projects"`
	CredentialPaths   []string `toml:"credential_paths"`
	ProtectedPaths    []string `toml:"protected_paths"`
	Permissions       struct {
		Allow []string `toml:"allow"`
		Ask   []string `toml:"ask"`
		Deny  []string `toml:"deny"`
	} `toml:"permissions"`
	Test []struct {
		Tool   string         `toml:"tool"`
		Input  map[string]any `toml:"input"`
		Cwd    string         `toml:"cwd"`
		Mode   string         `toml:"mode"`
		Expect string         `toml:"expect"`
		Reason string         `toml:"reason"`
	} `toml:"test"`
	Hooks   []hookDoc `toml:"hooks"`
	Managed *struct {
		DisableBypass    bool `toml:"disable_bypass_mode"`
		ManagedRulesOnly bool `toml:"allow_managed_rules_only"`
	} `toml:"managed"`
}

// ParseFile parses a policy file's contents. filename is used in errors and
// rule positions. Any problem — bad TOML, an unknown key, a bad value, a
// rule that does not parse — is an [*Error] naming the file, line and
// column; a file is never half-read.
func ParseFile(filename string, src []byte, layer Layer) (*File, error) {
	var doc fileDoc
	dec := toml.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, tomlError(filename, err)
	}
	pos, err := positions(filename, src)
	if err != nil {
		return nil, err
	}
	f := &File{Path: filename, Layer: layer, Pos: map[string]Position{}}
	for k, v := range pos.keys {
		f.Pos[k] = v
	}
	at := func(key string) Position {
		if p, ok := pos.keys[key]; ok {
			return p
		}
		return Position{File: filename}
	}
	if doc.Mode != nil {
		m, err := ParseMode(*doc.Mode)
		if err != nil {
			return nil, &Error{Pos: at("mode"), Msg: err.Error()}
		}
		f.Mode = &m
	}
	if doc.Approval != nil {
		a, err := ParseApproval(*doc.Approval)
		if err != nil {
			return nil, &Error{Pos: at("approval"), Msg: err.Error()}
		}
		f.Approval = &a
	}
	if doc.Sandbox != nil {
		s, err := ParseSandbox(*doc.Sandbox)
		if err != nil {
			return nil, &Error{Pos: at("sandbox"), Msg: err.Error()}
		}
		f.Sandbox = &s
	}
	f.Network = doc.Network
	f.WrapHooks = doc.WrapHooks
	f.MCPElicitation = doc.MCPElicitation
	if doc.WritableRoots != nil {
		f.WritableRootsSet = true
		for i, r := range doc.WritableRoots {
			if !filepath.IsAbs(r) && !strings.HasPrefix(r, "~/") {
				return nil, &Error{Pos: pos.elem("writable_roots", i, at("writable_roots")), Msg: fmt.Sprintf("writable root %q must be absolute (or start with ~/)", r)}
			}
			if c := filepath.Clean(r); c == "/" || c == "~" || r == "~/" {
				return nil, &Error{Pos: pos.elem("writable_roots", i, at("writable_roots")), Msg: fmt.Sprintf("writable root %q opens the whole file system or home directory: use sandbox = \"danger-full-access\" if that is meant", r)}
			}
			f.WritableRoots = append(f.WritableRoots, r)
		}
	}
	f.TrustedMCPServers = doc.TrustedMCPServers
	if doc.TrustedProjects != nil {
		if layer != LayerUser && layer != LayerManaged {
			return nil, &Error{Pos: at("trusted_projects"), Msg: "trusted_projects is only read from the user or managed policy: a project cannot trust itself"}
		}
		for i, p := range doc.TrustedProjects {
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
				return nil, &Error{Pos: pos.elem("trusted_projects", i, at("trusted_projects")), Msg: fmt.Sprintf("trusted project %q must be absolute (or start with ~/)", p)}
			}
		}
		f.TrustedProjects = doc.TrustedProjects
	}
	if doc.Managed != nil {
		if layer != LayerManaged {
			return nil, &Error{Pos: at("managed"), Msg: "a [managed] table is only honoured in the managed policy file; remove it from this " + layer.String() + " policy"}
		}
		f.DisableBypass = doc.Managed.DisableBypass
		f.ManagedRulesOnly = doc.Managed.ManagedRulesOnly
	}
	for _, g := range []struct {
		key  string
		list []string
		dst  *[]*Rule
	}{{"credential_paths", doc.CredentialPaths, &f.CredentialPaths}, {"protected_paths", doc.ProtectedPaths, &f.ProtectedPaths}} {
		for i, pat := range g.list {
			p := pos.elem(g.key, i, at(g.key))
			if p.Column > 0 {
				p.Column++
			}
			r, err := ParseRule("Read("+pat+")", Deny, p)
			if err != nil {
				return nil, &Error{Pos: p, Msg: fmt.Sprintf("%s: %q is not a path pattern", g.key, pat)}
			}
			r.Layer = layer
			*g.dst = append(*g.dst, r)
		}
	}
	for i, tc := range doc.Test {
		p := pos.elem("test", i, at("test"))
		var want Decision
		if err := want.UnmarshalText([]byte(tc.Expect)); err != nil {
			return nil, &Error{Pos: p, Msg: fmt.Sprintf("test %d: expect must be allow, ask or deny, got %q", i+1, tc.Expect)}
		}
		if tc.Tool == "" {
			return nil, &Error{Pos: p, Msg: fmt.Sprintf("test %d: tool is required", i+1)}
		}
		if tc.Mode != "" {
			if _, err := ParseMode(tc.Mode); err != nil {
				return nil, &Error{Pos: p, Msg: fmt.Sprintf("test %d: %v", i+1, err)}
			}
		}
		f.Tests = append(f.Tests, Test{Pos: p, Tool: tc.Tool, Input: tc.Input, Cwd: tc.Cwd, Mode: tc.Mode, Expect: want, Reason: tc.Reason})
	}
	for i, hd := range doc.Hooks {
		entry := pos.elem("hooks", i, at("hooks"))
		h, err := parseHook(hd, layer, func(key string) Position {
			if p, ok := pos.keys[fmt.Sprintf("hooks#%d.%s", i, key)]; ok && key != "" {
				return p
			}
			return entry
		})
		if err != nil {
			return nil, err
		}
		f.Hooks = append(f.Hooks, h)
	}
	for _, list := range []struct {
		key   string
		rules []string
		eff   Decision
	}{
		{"permissions.deny", doc.Permissions.Deny, Deny},
		{"permissions.ask", doc.Permissions.Ask, Ask},
		{"permissions.allow", doc.Permissions.Allow, Allow},
	} {
		for i, text := range list.rules {
			p := pos.elem(list.key, i, at(list.key))
			// The column points inside the quotes.
			if p.Column > 0 {
				p.Column++
			}
			r, err := ParseRule(text, list.eff, p)
			if err != nil {
				return nil, err
			}
			r.Layer = layer
			f.Rules = append(f.Rules, r)
		}
	}
	return f, nil
}

// Distrust sets aside whatever in the file could loosen the gate. The
// engine applies it to the project layer of a project whose root no user or
// managed policy lists in trusted_projects, and to a local layer that came
// with the repository (see [ApplyTrust]): a cloned repository, or a package
// that ships a .toolgate directory, can make the gate stricter but cannot
// switch it off. Allow rules are set aside (Merge lists them in
// [Set.Ignored]), hooks (which run programs), writable_roots and
// trusted_mcp_servers are dropped, and
// Merge applies the file's mode, approval, sandbox and network settings only
// where they are at least as strict as what the layers below it set. Deny
// and ask rules and credential_paths and protected_paths additions stay.
// It returns a note for each list it dropped; the ignored rules and
// settings are reported by Merge.
func (f *File) Distrust() []string {
	return f.DistrustBecause("the project is not in the user policy's trusted_projects")
}

// DistrustBecause is [File.Distrust] with why as the reason given in every
// note and for every ignored rule.
func (f *File) DistrustBecause(why string) []string {
	if f.untrusted != "" {
		return nil
	}
	f.untrusted = why
	var notes []string
	drop := func(key, what string) {
		notes = append(notes, fmt.Sprintf("%s from %s ignored: %s", what, f.origin(key), why))
	}
	if f.WritableRootsSet {
		drop("writable_roots", "writable_roots")
		f.WritableRoots, f.WritableRootsSet = nil, false
	}
	if len(f.TrustedMCPServers) > 0 {
		drop("trusted_mcp_servers", "trusted_mcp_servers")
		f.TrustedMCPServers = nil
	}
	if len(f.Hooks) > 0 {
		for _, h := range f.Hooks {
			notes = append(notes, fmt.Sprintf("%s ignored: hooks run programs, so a project's policy may define them only once the user trusts it; %s", h, why))
		}
		f.Hooks = nil
	}
	kept := f.Rules[:0:0]
	for _, r := range f.Rules {
		if r.Effect == Allow {
			f.ignored = append(f.ignored, IgnoredRule{Rule: r, Reason: why})
			continue
		}
		kept = append(kept, r)
	}
	f.Rules = kept
	f.notes = append(f.notes, notes...)
	return notes
}

// Untrusted returns why [File.Distrust] set the file's loosening parts
// aside, or "" when it did not.
func (f *File) Untrusted() string { return f.untrusted }

// origin returns where key was set in the file, as file:line, or the file
// or layer name.
func (f *File) origin(key string) string {
	if p, ok := f.Pos[key]; ok && p.Line > 0 {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if f.Path != "" {
		return f.Path
	}
	return f.Layer.String()
}

// Test is an example call written in a policy file with the decision the
// effective policy must give it.
type Test struct {
	Pos   Position
	Tool  string
	Input map[string]any
	// Cwd is relative to the project root ("" is the root).
	Cwd    string
	Mode   string
	Expect Decision
	// Reason, when set, must equal the decision's reason code.
	Reason string
}

// LoadFile reads and parses a policy file. A file that does not exist gives
// (nil, nil): an absent layer is not an error. Any other read error is.
func LoadFile(filename string, layer Layer) (*File, error) {
	src, err := os.ReadFile(filename)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("policy: reading %s layer: %w", layer, err)
	}
	f, err := ParseFile(filename, src, layer)
	if err != nil {
		return nil, err
	}
	f.Version = contentVersion(src)
	return f, nil
}

func tomlError(filename string, err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		e := sm.Errors[0]
		row, col := e.Position()
		key := strings.Join(e.Key(), ".")
		if strings.HasPrefix(key, "hooks.") {
			return &Error{Pos: Position{File: filename, Line: row, Column: col}, Msg: fmt.Sprintf("unknown key %q in [[hooks]]: expected event, matcher, type, command, url or timeout", strings.TrimPrefix(key, "hooks."))}
		}
		return &Error{Pos: Position{File: filename, Line: row, Column: col}, Msg: fmt.Sprintf("unknown key %q: expected mode, approval, sandbox, network, writable_roots, wrap_hooks, trusted_mcp_servers, trusted_projects (user file), credential_paths, protected_paths, [permissions] allow/ask/deny, [[test]], [[hooks]], or [managed] (managed file only)", key)}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return &Error{Pos: Position{File: filename, Line: row, Column: col}, Msg: strings.TrimPrefix(de.Error(), "toml: ")}
	}
	return &Error{Pos: Position{File: filename}, Msg: err.Error()}
}

// filePositions records where keys and array elements were written.
type filePositions struct {
	keys  map[string]Position
	elems map[string][]Position
}

func (p *filePositions) elem(key string, i int, fallback Position) Position {
	if e := p.elems[key]; i < len(e) {
		return e[i]
	}
	return fallback
}

func positions(filename string, src []byte) (*filePositions, error) {
	out := &filePositions{keys: map[string]Position{}, elems: map[string][]Position{}}
	var p unstable.Parser
	p.Reset(src)
	var table []string
	arrayIdx := -1 // index of the current [[table]] element, -1 outside one
	toPos := func(r unstable.Range) Position {
		s := p.Shape(r)
		return Position{File: filename, Line: s.Start.Line, Column: s.Start.Column}
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = table[:0]
			it := e.Key()
			var first *unstable.Node
			for it.Next() {
				if first == nil {
					first = it.Node()
				}
				table = append(table, string(it.Node().Data))
			}
			if len(table) > 0 && first != nil {
				key := strings.Join(table, ".")
				p := toPos(first.Raw)
				p.Column = 1
				out.keys[key] = p
				arrayIdx = -1
				if e.Kind == unstable.ArrayTable {
					out.elems[key] = append(out.elems[key], p)
					arrayIdx = len(out.elems[key]) - 1
				}
			}
		case unstable.KeyValue:
			parts := append([]string{}, table...)
			it := e.Key()
			var first *unstable.Node
			for it.Next() {
				if first == nil {
					first = it.Node()
				}
				parts = append(parts, string(it.Node().Data))
			}
			key := strings.Join(parts, ".")
			switch {
			case e.Raw.Length > 0:
				out.keys[key] = toPos(e.Raw)
			case first != nil:
				out.keys[key] = toPos(first.Raw)
			}
			if arrayIdx >= 0 && len(table) > 0 {
				// Keys of one element of an array of tables, such as
				// "hooks#2.command".
				out.keys[fmt.Sprintf("%s#%d.%s", strings.Join(table, "."), arrayIdx, strings.Join(parts[len(table):], "."))] = out.keys[key]
			}
			if v := e.Value(); v.Kind == unstable.Array {
				ch := v.Children()
				for ch.Next() {
					out.elems[key] = append(out.elems[key], toPos(ch.Node().Raw))
				}
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, &Error{Pos: Position{File: filename}, Msg: err.Error()}
	}
	return out, nil
}
