package engine

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// state is one request's pass through the pipeline.
type state struct {
	e        *Engine
	set      *policy.Set
	idx      *policy.Index
	call     *call
	env      *env
	mode     policy.Mode
	sandbox  policy.Sandbox
	approval policy.Approval
	network  bool
	notes    []string
	explain  bool
	// others holds the policies of other projects (enclosing or nested)
	// this decision consulted, so that it consults each once, in one
	// version.
	others map[string]loadResult
	// enclosing are the directories above the workspace root holding a
	// .toolgate/ directory, nearest first, once looked for; nested are,
	// per path, those between the path and the root.
	enclosing    []string
	enclosingSet bool
	nested       []nestedDirs
	nestedBuf    [1]nestedDirs
}

// nestedDirs are the directories holding a .toolgate/ directory between
// a path and the workspace root, nearest first.
type nestedDirs struct {
	path string
	dirs []string
}

// nestedOf returns the directories between real, a path inside the
// workspace, and the workspace root that hold a .toolgate/ directory,
// nearest first; they are looked for once per decision.
func (st *state) nestedOf(real string) []string {
	for _, n := range st.nested {
		if n.path == real {
			return n.dirs
		}
	}
	if st.nested == nil {
		st.nested = st.nestedBuf[:0]
	}
	var dirs []string
	root := st.env.root
	// A clean path within a clean root reaches it going up, and every
	// directory on the way is within it.
	clean := pathres.Clean(root) == root && pathres.Clean(real) == real
	within, parent := func(dir string) bool { return pathres.Within(root, dir) }, pathres.Parent
	if clean {
		within, parent = func(dir string) bool { return len(dir) > len(root) }, up
	}
	for dir := parent(real); dir != root && within(dir); dir = parent(dir) {
		if st.env.hasPolicyDir(dir) {
			dirs = append(dirs, dir)
		}
	}
	st.nested = append(st.nested, nestedDirs{real, dirs})
	return dirs
}

// enclosingOf returns the directories above the workspace root that hold
// a .toolgate/ directory, nearest first; they are looked for once per
// decision.
func (st *state) enclosingOf() []string {
	if st.enclosingSet || st.env.root == "" {
		return st.enclosing
	}
	st.enclosingSet = true
	// Parent's answer is clean, and so is each one above it.
	for dir := pathres.Parent(st.env.root); ; dir = up(dir) {
		if st.env.hasPolicyDir(dir) {
			st.enclosing = append(st.enclosing, dir)
		}
		if up(dir) == dir {
			return st.enclosing
		}
	}
}

type loadResult struct {
	set *policy.Set
	err error
}

// policyOf returns the policy of the project at dir for this decision.
func (st *state) policyOf(dir string) (*policy.Set, error) {
	if r, ok := st.others[dir]; ok {
		return r.set, r.err
	}
	set, err := st.e.policyFor(dir)
	if st.others == nil {
		st.others = map[string]loadResult{}
	}
	st.others[dir] = loadResult{set, err}
	return set, err
}

// settle fixes the mode and the axes for this request: the policy's, then
// the session's settings, then the mode the request reports.
func (st *state) settle(req *Request) error {
	st.mode, st.sandbox, st.approval, st.network = st.set.Mode, st.set.Sandbox, st.set.Approval, st.set.Network
	sessionMode := false
	if v, ok := st.e.opts.Sessions.Get(req.Session); ok && req.Session != "" {
		for _, key := range v.keys() {
			if why := locked(st.set, key, v); why != "" {
				st.notes = append(st.notes, fmt.Sprintf("session %s ignored: %s", key, why))
				continue
			}
			switch key {
			case "mode":
				st.mode, sessionMode = *v.Mode, true
			case "approval":
				st.approval = *v.Approval
			case "sandbox":
				st.sandbox = *v.Sandbox
			case "network":
				st.network = *v.Network
			}
			st.notes = append(st.notes, "session "+key+" set for session "+req.Session)
		}
	}
	if req.Mode != "" && sessionMode {
		if _, err := policy.ParseMode(req.Mode); err != nil {
			return fmt.Errorf(`request "mode": %v`, err)
		}
		st.notes = append(st.notes, fmt.Sprintf("request mode %s ignored: the session's mode is %s", req.Mode, st.mode))
	} else if req.Mode != "" {
		m, err := policy.ParseMode(req.Mode)
		if err != nil {
			return fmt.Errorf(`request "mode": %v`, err)
		}
		if why := cmp.Or(st.set.SettingLock("mode"), st.set.ModeLock(m)); why != "" {
			if m != st.mode {
				st.notes = append(st.notes, fmt.Sprintf("request mode %s ignored: %s", m, why))
			}
		} else if req.ModeNoLooser && !atLeastAsStrict(m, st.mode) {
			st.notes = append(st.notes, fmt.Sprintf("request mode %s ignored: it is not as strict as the mode %s, and the caller may not loosen its own gate", m, st.mode))
		} else {
			st.mode = m
		}
	}
	// Every source of the mode was checked against the locks on its way
	// in; this checks the outcome once more, whatever set it, unless the
	// managed policy chose that mode itself.
	if why := st.set.ModeLock(st.mode); why != "" && !(st.set.ModeSet && st.set.ModeLayer == policy.LayerManaged && st.mode == st.set.Mode) {
		st.notes = append(st.notes, fmt.Sprintf("mode %s ignored: %s", st.mode, why))
		st.mode = policy.ModeDefault
	}
	if st.mode == policy.ModePlan {
		st.sandbox = policy.SandboxReadOnly
	}
	return nil
}

// atLeastAsStrict reports whether mode m lets through no more than mode
// than: bypassPermissions, then acceptEdits, then default each let
// through more than the next, and plan, dontAsk and strict less than
// default but each something the others do not, so one of them is as
// strict only as itself.
func atLeastAsStrict(m, than policy.Mode) bool {
	rank := func(m policy.Mode) int {
		switch m {
		case policy.ModeBypass:
			return 0
		case policy.ModeAcceptEdits:
			return 1
		case policy.ModeDefault:
			return 2
		}
		return 3
	}
	return m == than || rank(m) > rank(than)
}

func (st *state) step(u *Unit, stage, result, detail string) {
	if st.explain {
		u.Steps = append(u.Steps, Step{stage, result, detail})
	}
}

// ruleStep records a stage decided by rule r, named as ruleRef names it.
func (st *state) ruleStep(u *Unit, stage, result string, r *policy.Rule) {
	if st.explain {
		u.Steps = append(u.Steps, Step{stage, result, ruleRef(r)})
	}
}

// decide records the unit's outcome.
func (st *state) decide(u *Unit, d policy.Decision, reason Reason, src Source, r *policy.Rule, msg string) {
	u.Decision, u.Reason, u.Source, u.Rule, u.Message = d, reason, src, r, msg
}

func ruleRef(r *policy.Rule) string {
	return r.Text + " (" + r.Origin() + ")"
}

// judge runs one unit through the stages in order.
func (st *state) judge(u *Unit) {
	c := st.call
	// 1. Deny rules: any aspect of the unit matching is enough.
	r := st.matchRule(u, policy.Deny)
	if r == nil {
		var err error
		if r, err = st.nestedRule(u, policy.Deny); err != nil {
			msg := "a nested project's policy cannot be loaded, so its files are not touched: " + err.Error()
			st.step(u, "deny rules", "deny", msg)
			st.decide(u, policy.Deny, ReasonPolicyError, SourceRule, nil, msg)
			return
		}
	}
	if r == nil {
		var err error
		if r, err = st.enclosingRule(u, policy.Deny); err != nil {
			msg := "the policy of a project enclosing " + st.env.root + " cannot be loaded, so nothing is allowed: " + err.Error()
			st.step(u, "deny rules", "deny", msg)
			st.decide(u, policy.Deny, ReasonPolicyError, SourceRule, nil, msg)
			return
		}
	}
	if r != nil {
		st.ruleStep(u, "deny rules", "deny", r)
		st.decide(u, policy.Deny, ReasonRuleDeny, SourceRule, r, "denied by rule "+r.Text+" ("+r.Origin()+")")
		return
	}
	st.step(u, "deny rules", "pass", "")

	// 2. Sandbox: structural, no approval or mode overrides it.
	if reason, src, msg := st.sandboxCheck(u); msg != "" {
		st.step(u, "sandbox", "deny", msg)
		st.decide(u, policy.Deny, reason, src, nil, msg)
		return
	}
	st.step(u, "sandbox", "pass", string(st.sandbox))

	// 3. Credentials and private network targets: only an explicit allow
	// rule unlocks them.
	if msg, reason := st.credentialCheck(u); msg != "" {
		st.step(u, "credentials", "deny", msg)
		st.decide(u, policy.Deny, reason, SourceSafety, nil, msg)
		return
	}
	st.step(u, "credentials", "pass", "")

	// 4. Ask rules: bypass-immune.
	r = st.matchRule(u, policy.Ask)
	if r == nil {
		r, _ = st.nestedRule(u, policy.Ask) // a load error already denied
	}
	if r == nil {
		r, _ = st.enclosingRule(u, policy.Ask)
	}
	if r != nil {
		st.ruleStep(u, "ask rules", "ask", r)
		st.decide(u, policy.Ask, ReasonRuleAsk, SourceRule, r, "rule "+r.Text+" ("+r.Origin()+") asks")
		u.hard = true
		return
	}
	st.step(u, "ask rules", "pass", "")

	// 5. The tool's own check: what cannot be judged statically, code that
	// the words do not show, and untrusted MCP servers set a floor of ask.
	// Only bypass mode lifts a hard floor; an allow rule also lifts a soft
	// one.
	floor, floorReason, floorHard, floorImmune := "", ReasonUnknownCommand, false, false
	switch {
	case u.unknown != "":
		// What cannot be judged statically asks in every mode: no rule or
		// mode can know what it will do.
		floor, floorHard, floorImmune = u.unknown, true, true
	case u.exec != "":
		floor, floorHard, floorReason = u.exec, true, ReasonExecute
		if u.unknownOption != "" {
			// The option nobody listed is the first thing to fix.
			floorReason = ReasonUnknownOption
		}
	case u.unknownOption != "":
		// Knowledge of options is an allow-list: an option nobody listed
		// may run a program or write a file, which a rule for the command
		// does not cover.
		floor, floorHard, floorReason = fmt.Sprintf("%s is not known to take %s: it may do anything", u.view.Name, u.unknownOption), true, ReasonUnknownOption
	case u.secretVar != "":
		floor, floorHard, floorReason = u.secretVar, true, ReasonCredential
	case uncontained(c.req.Containment, u) != "":
		floor, floorHard, floorReason = uncontained(c.req.Containment, u), true, ReasonUncontained
	case u.opaque != "":
		floor = u.opaque
	case c.tool == policy.ToolMCP:
		server, _ := policy.SplitMCPName(c.mcpName)
		if !c.mcpTrusted {
			floor, floorReason = "MCP server "+server+" is not trusted: its tools may do anything", ReasonUntrustedMCP
		}
	}
	if u.secretVar != "" && floor != "" && floor != u.secretVar {
		// A secret-named variable is the reason a person should see.
		floor, floorReason = u.secretVar+"; "+floor, ReasonCredential
	}
	if floor != "" && u.destructive != "" {
		// A destructive effect is the weightier reason to ask.
		floor, floorReason = u.destructive, ReasonDestructive
	}
	if floor != "" {
		st.step(u, "tool check", "ask", floor)
	} else {
		st.step(u, "tool check", "pass", "")
	}

	// 6. Safety checks: protected paths always ask, in every mode.
	for _, w := range u.Writes {
		if w.Class == "protected" {
			msg := fmt.Sprintf("%s is a protected path: writing it always asks", pathAs(w.Requested, w.Real))
			st.step(u, "safety", "ask", msg)
			st.decide(u, policy.Ask, ReasonProtectedPath, SourceSafety, nil, msg)
			u.hard = true
			return
		}
	}
	st.step(u, "safety", "pass", "")

	// 7. Mode fast path. Destructive effects and what cannot be judged are
	// not lifted by a mode.
	if floorImmune {
		st.step(u, "mode", "pass", "no mode lifts this: "+floor)
		st.step(u, "default", "ask", floor)
		st.decide(u, policy.Ask, floorReason, SourceTool, nil, floor)
		u.hard = true
		return
	}
	switch mode := st.mode; {
	case mode == policy.ModeBypass && u.destructive != "":
		st.step(u, "mode", "pass", "bypassPermissions does not cover destructive effects")
	case mode == policy.ModeBypass && (u.inline != "" || u.exec != ""):
		st.step(u, "mode", "pass", "bypassPermissions does not cover code that cannot be judged: "+cmp.Or(u.inline, u.exec))
	case mode == policy.ModeBypass && u.opaque != "":
		// An archive or a copied tree may write a protected path, which
		// asks in every mode.
		st.step(u, "mode", "pass", "bypassPermissions does not cover writes the words do not name: "+u.opaque)
	case mode == policy.ModeBypass:
		st.step(u, "mode", "allow", "bypassPermissions")
		st.decide(u, policy.Allow, ReasonModeBypass, SourceMode, nil, "allowed by bypassPermissions mode")
		return
	case mode == policy.ModeAcceptEdits:
		if st.editInWorkspace(u) {
			st.step(u, "mode", "allow", "acceptEdits: a file edit inside the workspace")
			st.decide(u, policy.Allow, ReasonModeAcceptEdits, SourceMode, nil, "acceptEdits mode allows file edits inside the workspace")
			return
		}
	}
	st.step(u, "mode", "pass", string(st.mode))

	// 8. Allow rules.
	if floorHard {
		st.step(u, "allow rules", "pass", "no allow rule covers this: "+floor)
	} else if r, why := st.allowRule(u); r != nil {
		st.ruleStep(u, "allow rules", "allow", r)
		st.decide(u, policy.Allow, ReasonRuleAllow, SourceRule, r, "allowed by rule "+r.Text+" ("+r.Origin()+")")
		return
	} else if ig := st.ignoredAllow(u); ig != "" {
		st.step(u, "allow rules", "pass", ig)
	} else if why != "" {
		st.step(u, "allow rules", "pass", why)
	} else {
		st.step(u, "allow rules", "pass", "")
	}

	// 9. Default table by risk, or deny in strict mode.
	if st.mode == policy.ModeStrict && !u.navigation {
		msg := "strict mode denies what no allow rule matches: " + u.Label
		st.step(u, "default", "deny", msg)
		st.decide(u, policy.Deny, ReasonStrict, SourceMode, nil, msg)
		return
	}
	if floor != "" {
		st.step(u, "default", "ask", floor)
		st.decide(u, policy.Ask, floorReason, SourceTool, nil, floor)
		u.hard = u.hard || floorHard
		return
	}
	d, reason, msg := st.defaultTable(u)
	if st.explain {
		st.step(u, "default", d.String(), fmt.Sprintf("%s risk: %s", u.Risk, msg))
	}
	st.decide(u, d, reason, SourceDefault, nil, msg)
	if u.Risk == risk.Destructive {
		u.hard = true
	}
}

func (st *state) defaultTable(u *Unit) (policy.Decision, Reason, string) {
	why := strings.Join(u.RiskWhy, "; ")
	switch u.Risk {
	case risk.Read:
		switch st.call.tool {
		case policy.ToolAgentState:
			return policy.Allow, ReasonReadOnly, st.call.req.Tool + " changes only the agent's own state"
		}
		return policy.Allow, ReasonReadOnly, "reads inside the workspace are allowed"
	case risk.Credential:
		return policy.Deny, ReasonCredential, why
	case risk.Destructive:
		return policy.Ask, ReasonDestructive, why + ": asks with a stronger confirmation, never remembered"
	}
	switch {
	case u.escape:
		return policy.Ask, ReasonSymlinkEscape, why
	case u.outside:
		return policy.Ask, ReasonOutsideWorkspace, why
	}
	switch u.Risk {
	case risk.Write:
		return policy.Ask, ReasonWrite, why
	case risk.Network:
		return policy.Ask, ReasonNetwork, why
	}
	if u.unknownOption != "" {
		return policy.Ask, ReasonUnknownOption, why
	}
	if u.exec != "" {
		return policy.Ask, ReasonExecute, why
	}
	if !u.known {
		return policy.Ask, ReasonUnknownCommand, why
	}
	return policy.Ask, ReasonExecute, why
}

// sandboxCheck applies the sandbox axis and plan mode.
func (st *state) sandboxCheck(u *Unit) (Reason, Source, string) {
	c := st.call
	if st.mode == policy.ModePlan {
		offered := c.meta.readOnly
		switch {
		case c.tool == policy.ToolMCP && c.mcpTrusted:
			offered = c.req.MCP != nil && c.req.MCP.ReadOnly
		case c.tool == policy.ToolMCP:
			// An untrusted server's word is worth nothing: only a tool an
			// allow rule names is offered.
			r, _ := st.allowRule(u)
			offered = r != nil
		}
		if c.tool == policy.ToolShell {
			offered = u.known && u.Risk <= risk.Write && len(u.Writes) == 0 && !u.network && u.destructive == "" && u.unknown == "" && u.base == risk.Read
		}
		if !offered {
			return ReasonModePlan, SourceMode, "plan mode offers only read-only tools: " + u.Label
		}
	}
	if u.network && st.set.NetworkLocked {
		return ReasonSandbox, SourceSandbox, "the managed policy turns network access off: " + u.Label
	}
	if st.sandbox == policy.SandboxFullAccess {
		return "", "", ""
	}
	if st.sandbox == policy.SandboxReadOnly {
		if len(u.Writes) > 0 || c.tool.PathFamily() == "write" {
			return ReasonSandbox, SourceSandbox, "the read-only sandbox permits no writes: " + u.Label
		}
	}
	for _, w := range u.Writes {
		if !w.Unknown && !w.Inside {
			return ReasonSandbox, SourceSandbox, fmt.Sprintf("the %s sandbox permits writes only inside the workspace %s and writable roots, not to %s", st.sandbox, st.env.root, pathAs(w.Requested, w.Real))
		}
	}
	if u.network && (st.sandbox == policy.SandboxReadOnly || !st.network) {
		return ReasonSandbox, SourceSandbox, fmt.Sprintf("the %s sandbox has network access off: %s; %s", st.sandbox, u.Label, st.networkHint())
	}
	return "", "", ""
}

// networkHint says how the person turns network access on, for a call the
// sandbox denies because it is off: a flag or the managed policy that set
// it, else the session's switch on toolgate's page and the policy line.
func (st *state) networkHint() string {
	if why := st.set.SettingLock("network"); why != "" {
		return "network access stays off here: " + why
	}
	if st.sandbox == policy.SandboxReadOnly {
		if why := st.set.SettingLock("sandbox"); why != "" {
			return "the read-only sandbox stays here: " + why
		}
		return `to turn network on for this session, a person sets Sandbox to workspace-write and Network to on in the session's settings on toolgate's page (Policy); for every session, sandbox = "workspace-write" and network = true in the user policy (~/.config/toolgate/policy.toml)`
	}
	return "to turn it on for this session, a person sets Network to on in the session's settings on toolgate's page (Policy); for every session, network = true in the user policy (~/.config/toolgate/policy.toml)"
}

// credentialCheck denies credential paths, environment dumps and private
// network targets that no explicit allow rule names.
func (st *state) credentialCheck(u *Unit) (string, Reason) {
	ctx := &st.env.match
	explicit := func(family, p string) bool { return st.pathAllow(family, p, true) != nil }
	for _, g := range []struct {
		family string
		paths  []PathFact
	}{{"read", u.Reads}, {"write", u.Writes}} {
		for _, p := range g.paths {
			if p.Class == "credential" && !explicit(g.family, p.Real) {
				return fmt.Sprintf("%s holds credentials; only an allow rule naming it explicitly, such as %s(%s), unlocks it", pathAs(p.Requested, p.Real), map[string]string{"read": "Read", "write": "Edit"}[g.family], p.Real), ReasonCredential
			}
		}
	}
	if len(u.Secrets) > 0 {
		return fmt.Sprintf("%s sends what looks like a secret (%s); secrets in outgoing data are denied", u.Label, strings.Join(u.Secrets, ", ")), ReasonCredential
	}
	if u.secret != "" {
		ok := false
		for _, rs := range st.idx.Shell(policy.Allow, &u.view) {
			for _, r := range rs {
				ok = ok || r.IsExactCommand() && r.MatchCommand(&u.view, ctx, false)
			}
		}
		if !ok {
			return u.view.Name + " " + u.secret + "; only an exact allow rule for this command unlocks it", ReasonCredential
		}
	}
	for _, h := range u.Hosts {
		if h.Private == "" {
			continue
		}
		ok := false
		for _, r := range st.idx.Hosts(policy.Allow) {
			ok = ok || r.Explicit() && r.MatchHost(h.Host)
		}
		if !ok {
			return fmt.Sprintf("%s is a %s address; only an allow rule naming it, such as WebFetch(domain:%s), unlocks it", h.Host, h.Private, h.Host), ReasonPrivateNetwork
		}
	}
	return "", ""
}

// editInWorkspace reports whether acceptEdits covers the unit: an edit tool,
// or a known file command, writing only inside the workspace.
func (st *state) editInWorkspace(u *Unit) bool {
	c := st.call
	if u.unknown != "" || u.exec != "" || u.opaque != "" || u.destructive != "" || u.network || u.outside {
		return false
	}
	switch {
	case c.tool.PathFamily() == "write":
	case c.tool == policy.ToolShell && u.known && len(u.Writes) > 0:
		if u.base > risk.Write {
			return false
		}
	default:
		return false
	}
	for _, w := range u.Writes {
		if !w.Inside || w.Unknown {
			return false
		}
	}
	return true
}

// matchRule returns the first deny or ask rule that matches any aspect of
// the unit, matching conservatively: unknown words may match, and path
// patterns are tried on both the spelled and the real path.
func (st *state) matchRule(u *Unit, eff policy.Decision) *policy.Rule {
	c := st.call
	ctx := &st.env.match
	x := st.idx
	var best *policy.Rule
	consider := func(r *policy.Rule, ok bool) {
		if ok && (best == nil || x.Order(r) < x.Order(best)) {
			best = r
		}
	}
	for _, r := range x.Bare(eff) {
		consider(r, r.AppliesToTool(c.tool, c.mcpName))
	}
	if u.Command != nil {
		best = x.Earlier(best, x.FirstCommand(eff, &u.view, ctx, true))
	}
	if c.tool == policy.ToolMCP {
		for _, r := range x.MCP(eff) {
			consider(r, r.MatchMCP(c.mcpName, c.input, true))
		}
	}
	for _, h := range u.Hosts {
		for _, r := range x.Hosts(eff) {
			consider(r, r.MatchHost(h.Host))
		}
	}
	for _, g := range []struct {
		family string
		paths  []PathFact
	}{{"read", u.Reads}, {"write", u.Writes}} {
		for _, p := range g.paths {
			for i, abs := range [2]string{p.Real, p.abs} {
				if i == 1 && abs == p.Real {
					break
				}
				best = x.Earlier(best, x.FirstPath(eff, g.family, abs, ctx, true))
				if p.Recursive {
					// Reading a whole tree reads what a rule names below it.
					for _, r := range x.PathRules(eff, g.family) {
						consider(r, r.MatchBelow(abs, ctx))
					}
				}
			}
		}
	}
	return best
}

// nestedRule returns the first deny or ask rule of a nested project — a
// directory with its own .toolgate/ between a path and the workspace root —
// that matches one of the unit's paths. A project's deny rules hold
// whichever directory the agent calls from.
// A nested policy that cannot be loaded is an error: the caller denies,
// as it does for its own policy.
func (st *state) nestedRule(u *Unit, eff policy.Decision) (*policy.Rule, error) {
	for _, g := range []struct {
		family string
		paths  []PathFact
	}{{"read", u.Reads}, {"write", u.Writes}} {
		for _, p := range g.paths {
			if p.Unknown || !pathres.Within(st.env.root, p.Real) {
				continue
			}
			for _, dir := range st.nestedOf(p.Real) {
				set, err := st.policyOf(dir)
				if err != nil {
					return nil, err
				}
				ctx := &policy.MatchContext{Root: dir, Home: st.env.home}
				x := set.Index()
				var hit *policy.Rule
				x.EachPath(eff, g.family, p.Real, ctx, func(r *policy.Rule) {
					if hit == nil && r.MatchPath(g.family, p.Real, ctx, true) {
						hit = r
					}
				})
				if hit != nil {
					return hit, nil
				}
			}
		}
	}
	return nil, nil
}

// enclosingRule returns the first deny or ask rule of a project enclosing
// the workspace root — a directory above it with its own .toolgate/ — that
// matches any aspect of the unit, each project's rules matched against its
// own root. A package that ships a .toolgate/ directory (under
// node_modules/, say) becomes a project of its own when the agent calls
// from inside it; it must not shed the enclosing project's deny and ask
// rules that way. A policy that cannot be loaded is an error: the caller
// denies.
func (st *state) enclosingRule(u *Unit, eff policy.Decision) (*policy.Rule, error) {
	for _, dir := range st.enclosingOf() {
		set, err := st.policyOf(dir)
		if err != nil {
			return nil, err
		}
		alt, env := *st, *st.env
		env.match = policy.MatchContext{Root: dir, Home: st.env.home}
		alt.env, alt.set, alt.idx = &env, set, set.Index()
		if r := alt.matchRule(u, eff); r != nil {
			return r, nil
		}
	}
	return nil, nil
}

// pathAllow returns the first allow rule of the family matching the real
// path; with explicitOnly, only rules that name the path explicitly count.
func (st *state) pathAllow(family, real string, explicitOnly bool) *policy.Rule {
	ctx := &st.env.match
	x := st.idx
	var best *policy.Rule
	x.EachPath(policy.Allow, family, real, ctx, func(r *policy.Rule) {
		if (!explicitOnly || r.Explicit()) && r.MatchPath(family, real, ctx, false) && (best == nil || x.Order(r) < x.Order(best)) {
			best = r
		}
	})
	return best
}

// allowRule returns the allow rule that covers the whole unit, or nil and
// why none does.
func (st *state) allowRule(u *Unit) (*policy.Rule, string) {
	c := st.call
	ctx := &st.env.match
	x := st.idx
	var why string
	var best *policy.Rule
	consider := func(r *policy.Rule, ok bool) {
		if ok && (best == nil || x.Order(r) < x.Order(best)) {
			best = r
		}
	}
	switch {
	case u.Command != nil:
		for _, rs := range x.Shell(policy.Allow, &u.view) {
			for _, r := range rs {
				if !r.MatchCommand(&u.view, ctx, false) {
					continue
				}
				if u.destructive != "" && !(ruleIsDestructive(r) && r.CoversFlags(&u.view)) {
					why = fmt.Sprintf("%s matches, but the command is destructive and the rule does not name a destructive form", ruleRef(r))
					continue
				}
				if p := st.uncoveredOutside(u); p != "" {
					why = fmt.Sprintf("%s matches, but %s is outside the workspace and no Read or Edit rule allows it", ruleRef(r), p)
					continue
				}
				consider(r, true)
			}
		}
		for _, r := range x.Bare(policy.Allow) {
			consider(r, r.Tool == policy.ToolShell && u.destructive == "" && st.uncoveredOutside(u) == "")
		}
	case c.tool == policy.ToolMCP:
		for _, r := range x.MCP(policy.Allow) {
			consider(r, r.MatchMCP(c.mcpName, c.input, false))
		}
	default:
		for _, r := range x.Bare(policy.Allow) {
			consider(r, r.AppliesToTool(c.tool, c.mcpName))
		}
		if c.tool == policy.ToolFetch || c.tool == policy.ToolWebSearch {
			for _, r := range x.Hosts(policy.Allow) {
				consider(r, len(u.Hosts) > 0 && r.MatchHost(u.Hosts[0].Host))
			}
		}
	}
	if best != nil || c.tool == policy.ToolMCP || c.tool == policy.ToolFetch || c.tool == policy.ToolWebSearch {
		return best, why
	}
	// A known file command, or a file tool, whose every path an allow rule
	// covers.
	if u.Command != nil && (!u.known || u.network || u.destructive != "" || u.unknown != "" ||
		u.base > risk.Write) {
		return nil, why
	}
	var first *policy.Rule
	for _, g := range []struct {
		family string
		paths  []PathFact
	}{{"read", u.Reads}, {"write", u.Writes}} {
		for _, p := range g.paths {
			if g.family == "read" && c.tool == policy.ToolShell && p.Inside && p.Class == "ordinary" {
				continue // reads inside the workspace need no rule
			}
			r := st.pathAllow(g.family, p.Real, false)
			if r == nil {
				return nil, why
			}
			if first == nil {
				first = r
			}
		}
	}
	return first, why
}

// ignoredAllow names, for an explanation, an ignored allow rule (of an
// untrusted project, or set aside by a managed lock) that would have
// allowed the unit, with its origin and why it does not count; "" when
// none would or when not explaining.
func (st *state) ignoredAllow(u *Unit) string {
	if !st.explain || len(st.set.Ignored) == 0 {
		return ""
	}
	alt := *st
	alt.idx = st.set.IgnoredIndex()
	r, _ := alt.allowRule(u)
	if r == nil {
		return ""
	}
	for _, ig := range st.set.Ignored {
		if ig.Rule == r {
			return fmt.Sprintf("%s would allow this but is ignored: %s", ruleRef(r), ig.Reason)
		}
	}
	return ""
}

// uncoveredOutside returns a path of the unit outside the workspace that
// no Read (or Edit) allow rule covers, or "": a rule for a command does not
// stretch to files beyond the workspace.
func (st *state) uncoveredOutside(u *Unit) string {
	for _, g := range []struct {
		family string
		paths  []PathFact
	}{{"read", u.Reads}, {"write", u.Writes}} {
		for _, p := range g.paths {
			if !p.Unknown && !p.Inside && st.pathAllow(g.family, p.Real, false) == nil {
				return p.Requested
			}
		}
	}
	return ""
}

// ruleIsDestructive reports whether a shell rule itself names a destructive
// form, such as Bash(rm -rf dist): only such a rule allows destructive
// commands.
func ruleIsDestructive(r *policy.Rule) bool {
	w := r.CommandWords()
	if len(w) == 0 {
		return false
	}
	return risk.Command(w[0], w[1:], nil).Destructive != ""
}

// aggregate combines the units: deny if any denies, ask if any asks,
// allow only if all allow.
func (st *state) aggregate(units []*Unit) *Decision {
	if len(units) == 0 {
		return &Decision{Decision: policy.Allow, Reason: ReasonNothingToRun, Risk: risk.Read, Source: SourceDefault, Message: "the command line runs no command"}
	}
	lvl := risk.Read
	for _, u := range units {
		lvl = risk.Max(lvl, u.Risk)
	}
	pick := func(d policy.Decision) *Unit {
		var best *Unit
		for _, u := range units {
			if u.Decision != d {
				continue
			}
			if best == nil || (u.hard && !best.hard) {
				best = u
			}
		}
		return best
	}
	u := pick(policy.Deny)
	if u == nil {
		u = pick(policy.Ask)
	}
	if u == nil {
		u = units[0]
		for _, v := range units {
			if v.Source == SourceRule {
				u = v
				break
			}
		}
	}
	d := &Decision{Decision: u.Decision, Reason: u.Reason, Message: u.Message, Risk: lvl, Source: u.Source}
	if len(units) > 1 && u.Command != nil {
		d.Message = fmt.Sprintf("%s [in %q]", u.Message, u.Label)
		if d.Decision == policy.Allow {
			d.Message = fmt.Sprintf("all %d commands are allowed; %s", len(units), u.Message)
		}
	}
	if u.Rule != nil {
		d.Rule, d.RuleOrigin = u.Rule.Text, u.Rule.Origin()
	}
	return d
}

// wrap applies the approval axis and dontAsk to an aggregated decision.
// A hard ask — an ask rule, a protected path, a destructive effect, a line
// that cannot be parsed or judged — is never turned into an allow.
func (st *state) wrap(_ context.Context, d *Decision, t *Trace, hard bool) *Decision {
	defer func() { d.Hard = hard && d.Decision == policy.Ask }()
	if st.approval == policy.ApprovalAlways && d.Decision == policy.Allow {
		d.Decision, d.Reason, d.Source = policy.Ask, ReasonPolicyAlways, SourceMode
		d.Message = "approval is set to always: every call asks (" + d.Message + ")"
		t.Steps = append(t.Steps, Step{"approval axis", "ask", "always"})
	}
	if st.mode == policy.ModeDontAsk && d.Decision == policy.Ask {
		d.Decision, d.Source = policy.Deny, SourceMode
		d.Message = "dontAsk mode denies what would ask: " + d.Message
		t.Steps = append(t.Steps, Step{"mode", "deny", "dontAsk"})
		return d
	}
	switch st.approval {
	case policy.ApprovalNever:
		if d.Decision != policy.Ask {
			break
		}
		// Only what the sandbox contains runs unasked: writes, programs and
		// network it permits. What cannot be judged, or needs a person's
		// confirmation, is denied: nobody is there to ask.
		switch d.Reason {
		case ReasonWrite, ReasonExecute, ReasonNetwork:
			if !hard {
				d.Decision, d.Source = policy.Allow, SourceMode
				d.Message = "approval is set to never: runs without asking inside the sandbox (" + d.Message + ")"
				t.Steps = append(t.Steps, Step{"approval axis", "allow", "never"})
				return d
			}
		}
		d.Decision, d.Source = policy.Deny, SourceMode
		d.Message = "approval is set to never and this needs a person: " + d.Message
		t.Steps = append(t.Steps, Step{"approval axis", "deny", "never: nobody to confirm"})
	}
	return d
}

// pathAs names a path in a message as it was written and, when that is
// not where it goes, where it really goes: "keys/id_rsa (at
// /home/u/.ssh/id_rsa)", or "/etc" once.
func pathAs(requested, real string) string {
	if requested == "" || requested == real {
		return real
	}
	return requested + " (at " + real + ")"
}
