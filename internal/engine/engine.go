package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
	"github.com/toolgate/toolgate/shell"
)

// PriorApprovals is the seam for approvals a person already gave: a later
// stage of the pipeline consults it for calls that would otherwise ask. It is
// never consulted for destructive calls, nor for a call whose code depends
// on files the analysis cannot name ([Call.UnseenDependency]).
// Implementations must be safe for use by multiple goroutines.
type PriorApprovals interface {
	// Lookup reports whether an earlier approval or a lease covers this
	// exact call, and which.
	Lookup(ctx context.Context, c *Call) (Grant, bool)
}

// Grant is what a [PriorApprovals] found to cover a call.
type Grant struct {
	// Reason is ReasonPriorApproval or ReasonLease.
	Reason Reason
	// ID identifies the approval or lease; Message describes it for the
	// decision message.
	ID, Message string
}

// Call is the normalized form of a request given to [PriorApprovals].
type Call struct {
	Request *Request
	// Tool is the canonical tool.
	Tool policy.Tool
	// Root is the project root the call was judged against; empty when
	// the call was made outside any project (nothing counts as inside a
	// workspace then).
	Root string
	// Cwd is the real path of the request's working directory.
	Cwd string
	// Units are the parts of the call with their resolved effects.
	Units []*Unit
	// dialect is the shell a shell tool's line was read in.
	dialect dialect
}

// Options configure an [Engine]. The zero value of each field means its
// default.
type Options struct {
	// Policy returns the effective policy for a project root. Required.
	// Its result (a Set or an error) is kept per root, unless NoCache, for
	// as long as the Set's Watch (or the Watch of a [*policy.LoadError])
	// reports no change: every decision checks it first, so an edit of a
	// policy file counts from the next decision on. A Set without a Watch
	// is kept until [Engine.Forget]; an error without one is not kept.
	Policy func(root string) (*policy.Set, error)
	// NoCache makes every request load the policy again.
	NoCache bool
	// Logger, when set, is told once when a project's policy cannot be
	// loaded (the engine denies everything there until it is fixed) and
	// once when it is loaded again after a change.
	Logger *slog.Logger
	// Project, when set, is the project root for every request instead of
	// the one found from the request's cwd.
	Project string
	// Home is the user's home directory; default os.UserHomeDir.
	Home string
	// Prior is consulted for calls that would ask; nil means none.
	Prior PriorApprovals
	// Sessions holds settings switched per session; nil means none.
	Sessions *Sessions
	// NoPathCache makes every decision resolve its paths and look for
	// project roots afresh. By default an engine that decides more than
	// one request keeps real paths and project markers in the process's
	// [pathres.Cache], which forgets them as soon as anything they depend
	// on may have changed; a single decision only remembers within
	// itself.
	NoPathCache bool
}

// Engine decides tool calls. It is safe for use by multiple goroutines.
type Engine struct {
	opts Options
	// load serializes loading, so that a change seen by many decisions
	// at once is loaded once.
	load  sync.Mutex
	mu    sync.RWMutex // guards cache
	cache map[string]*loaded
	// decided counts the views begun, so that the first decision (a
	// one-shot check) sets up no path cache.
	decided atomic.Int64
}

// view begins a request's view of the file system: every change
// completed before it is begun is seen through it.
func (e *Engine) view() *pathres.View {
	if e.opts.NoPathCache || e.decided.Add(1) == 1 {
		return (*pathres.Cache)(nil).Begin()
	}
	return pathres.Shared().Begin()
}

// loaded is the policy of one root as last loaded: a Set or the error that
// kept it from loading, and the Watch that says when to load it again.
type loaded struct {
	set   *policy.Set
	err   error
	watch *policy.Watch
}

// current reports whether l still stands: nothing it was loaded from has
// changed.
func (l *loaded) current() bool {
	if l == nil || (l.err != nil && l.watch == nil) {
		return false
	}
	return !l.watch.Changed()
}

// New returns an engine. It fails when opts.Policy is nil.
func New(opts Options) (*Engine, error) {
	if opts.Policy == nil {
		return nil, errors.New("engine: Options.Policy is required")
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.Home != "" {
		opts.Home = pathres.Real(opts.Home)
	}
	if opts.Project != "" {
		opts.Project = pathres.Real(opts.Project)
	}
	return &Engine{opts: opts, cache: map[string]*loaded{}}, nil
}

// Fixed returns a Policy function that gives set for every root.
func Fixed(set *policy.Set) func(string) (*policy.Set, error) {
	return func(string) (*policy.Set, error) { return set, nil }
}

// FromFiles returns a Policy function that loads the standard layer files
// for each root and merges them with extra (CLI or session) layers. What
// the project's committed policy could loosen counts only when the user or
// managed policy trusts the root ([policy.ApplyTrust]). Its Sets carry a
// Watch of the files (and of where files may appear), and its errors are
// [*policy.LoadError]s carrying one, so an engine loads them again when
// they change.
func FromFiles(managed, user string, extra ...*policy.File) func(string) (*policy.Set, error) {
	return func(root string) (*policy.Set, error) {
		l := policy.DefaultLocations(root)
		if managed != "" {
			l.Managed = managed
		}
		if user != "" {
			l.User = user
		}
		home, _ := os.UserHomeDir()
		return policy.LoadSet(l, home, extra...)
	}
}

// policyFor returns the policy for root: the one kept, while nothing it
// was loaded from has changed, else a fresh load. A change completed
// before policyFor is called is always seen.
func (e *Engine) policyFor(root string) (*policy.Set, error) {
	if e.opts.NoCache {
		return e.opts.Policy(root)
	}
	e.mu.RLock()
	had := e.cache[root]
	e.mu.RUnlock()
	if had.current() {
		return had.set, had.err
	}
	e.load.Lock()
	defer e.load.Unlock()
	e.mu.RLock()
	now := e.cache[root]
	e.mu.RUnlock()
	if now != had && now.current() {
		// Loaded by another decision since this one looked, and its
		// stat was made after this one began.
		return now.set, now.err
	}
	l := &loaded{}
	l.set, l.err = e.opts.Policy(root)
	switch {
	case l.err != nil:
		var le *policy.LoadError
		if errors.As(l.err, &le) {
			l.watch = le.Watch
		}
	case l.set == nil:
		l.err = errors.New("no policy")
	default:
		l.watch = l.set.Watch
	}
	e.mu.Lock()
	e.cache[root] = l
	e.mu.Unlock()
	e.logLoad(root, now, l)
	return l.set, l.err
}

// logLoad tells the Logger of a policy that broke, or that was loaded
// again after a change, once per change.
func (e *Engine) logLoad(root string, was, now *loaded) {
	log := e.opts.Logger
	if log == nil || was == nil && now.err == nil {
		return
	}
	switch {
	case now.err != nil:
		if was == nil || was.err == nil || was.err.Error() != now.err.Error() {
			log.Error("policy cannot be loaded: every call in the project is denied until it is fixed", "project", root, "err", now.err)
		}
	case was.err != nil:
		log.Info("policy loaded again: it is valid", "project", root, "version", now.set.Version)
	case was.set.Version != now.set.Version:
		log.Info("policy changed", "project", root, "version", now.set.Version, "was", was.set.Version)
	}
}

// Check decides a request. It never returns nil and never fails: bad input
// is a deny with reason invalid_request or invalid_arguments.
func (e *Engine) Check(ctx context.Context, req *Request) *Decision {
	d, _ := e.decide(ctx, req, false, nil)
	return d
}

// Explain decides a request and returns the decision with its full trace.
func (e *Engine) Explain(ctx context.Context, req *Request) *Decision {
	d, t := e.decide(ctx, req, true, nil)
	d.Trace = t
	return d
}

// Decide is [Engine.Check] that consults prior (instead of
// Options.Prior, when prior is not nil) and also returns the call in its
// normalized form: the canonical tool, the project root and the units with
// their resolved effects. The call is nil when the request was refused
// before it could be analysed (bad input, unknown tool, policy error).
func (e *Engine) Decide(ctx context.Context, req *Request, prior PriorApprovals) (*Decision, *Call) {
	d, t := e.decide(ctx, req, false, prior)
	if t.call == nil {
		return d, nil
	}
	return d, t.call
}

// Home returns the home directory the engine resolves "~" against.
func (e *Engine) Home() string { return e.opts.Home }

// Forget drops the kept policy of every project, so the next decision
// loads it again. Policies from [FromFiles] need no Forget (an edit of
// their files is seen at the next decision); a Policy function whose Sets
// carry no Watch does.
func (e *Engine) Forget() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.cache)
}

// FindRoot returns the project root for cwd and what marked it: the
// nearest directory at or above cwd holding .toolgate/, else the nearest
// holding .git, else cwd itself. .toolgate/ is looked for first so that a
// nested repository (a submodule, a vendored checkout) does not take the
// project's policy away.
func FindRoot(cwd string) (string, string) {
	return findRoot(nil, cwd)
}

// findRoot is [FindRoot] seen through fs.
func findRoot(fs *pathres.View, cwd string) (string, string) {
	for _, m := range []string{".toolgate", ".git"} {
		for dir, clean := cwd, false; ; clean = true {
			if fs.Lstat(dir, m) != pathres.Absent {
				return dir, m
			}
			// Parent's answer is clean, and so is each one above it.
			parent := up(dir)
			if !clean {
				parent = pathres.Parent(dir)
			}
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return cwd, "cwd"
}

// up returns the directory above dir, a clean absolute path: what
// pathres.Parent returns for it, without looking at the rest of the path;
// "/" for "/".
func up(dir string) string {
	i := strings.LastIndexByte(dir, '/')
	if i <= 0 {
		return "/"
	}
	return dir[:i]
}

// frame holds what one decision makes: its trace, the call, the state of
// its pass through the pipeline and its environment.
type frame struct {
	trace Trace
	call  call
	state state
	env   env
}

// toolFrame holds what a decision of a tool other than the shell makes
// besides: its one unit, the unit's first reasons, reads and writes, and
// the call's first path. A slice that outgrows its array here moves out
// of it as any does.
type toolFrame struct {
	unit          Unit
	units         [1]*Unit
	paths         [1]pathArg
	why           [2]string
	reads, writes [1]PathFact
}

func deny(reason Reason, msg string) *Decision {
	return &Decision{Decision: policy.Deny, Reason: reason, Message: msg, Risk: risk.Execute, Source: SourceTool}
}

func (e *Engine) decide(ctx context.Context, req *Request, explain bool, prior PriorApprovals) (d *Decision, t *Trace) {
	defer func() {
		// A fault in the analysis is a deny, never a crash: a hook
		// client runs the tool when its hook dies.
		if r := recover(); r != nil {
			d, t = deny(ReasonInvalidRequest, fmt.Sprintf("the analysis failed on this request (%v): toolgate denies what it cannot judge", r)), nil
		}
	}()
	if prior == nil {
		prior = e.opts.Prior
	}
	if req == nil {
		return deny(ReasonInvalidRequest, "no request"), &Trace{}
	}
	early := func() *Trace { return &Trace{Tool: req.Tool, Cwd: req.Cwd} }
	if req.Tool == "" {
		return deny(ReasonInvalidRequest, `request has no "tool": name the tool called, such as "tool":"Bash"`), early()
	}
	if req.Cwd == "" {
		return deny(ReasonInvalidRequest, `request has no "cwd": give the absolute directory the call runs in, such as "cwd":"/home/you/project"`), early()
	}
	if !filepath.IsAbs(req.Cwd) || strings.ContainsRune(req.Cwd, 0) {
		return deny(ReasonInvalidRequest, fmt.Sprintf(`request "cwd" is %q: it must be an absolute directory, such as "/home/you/project"`, req.Cwd)), early()
	}
	tool, ok := policy.Canonical(req.Tool)
	if !ok {
		return deny(ReasonUnknownTool, fmt.Sprintf("unknown tool %q: toolgate denies tools it does not know", req.Tool)), early()
	}
	// What one decision makes is made at once: one allocation, not one
	// per part.
	var f *frame
	var tf *toolFrame
	if tool == policy.ToolShell {
		f = &frame{}
	} else {
		b := &struct {
			frame
			toolFrame
		}{}
		f, tf = &b.frame, &b.toolFrame
	}
	f.trace = Trace{Tool: req.Tool, Cwd: req.Cwd, Canonical: string(tool)}
	t = &f.trace
	f.call = call{req: req, tool: tool, meta: tools[tool], input: req.Input}
	c := &f.call
	if tf != nil {
		c.paths = tf.paths[:0]
	}
	if tool == policy.ToolMCP {
		c.mcpName = req.Tool
	}
	if req.Input == nil {
		c.input = map[string]any{}
	}
	// The tool's own checks name the field precisely; the schema then
	// checks every other field the tool declares.
	if err := c.meta.parse(c.input, c); err != nil {
		return deny(ReasonInvalidArguments, err.Error()), t
	}
	if err := validateSchema(tool, c.input); err != nil {
		return deny(ReasonInvalidArguments, err.Error()), t
	}
	fs := e.view()
	cwd, err := fs.RealDir(req.Cwd)
	if err != nil {
		return deny(ReasonInvalidRequest, "the working directory cannot be resolved: "+err.Error()), t
	}
	root, from, err := e.rootOf(req, fs, cwd)
	if err != nil {
		return deny(ReasonInvalidRequest, err.Error()), t
	}
	t.Root, t.RootFrom = root, from
	set, err := e.policyFor(root)
	if err != nil {
		d := deny(ReasonPolicyError, "policy cannot be loaded, so nothing is allowed: "+err.Error())
		return d, t
	}
	t.Version = set.Version
	for _, f := range set.Files {
		if explain && f.Path != "" {
			t.Files = append(t.Files, f.Layer.String()+" "+f.Path+" "+cmp.Or(f.Version, "(not from disk)"))
		}
	}
	defer func() {
		if d != nil {
			d.PolicyVersion = set.Version
			d.Hooks = set.Hooks
		}
	}()
	if explain {
		for _, h := range set.Hooks {
			if h.Matches(req.Tool) {
				t.Hooks = append(t.Hooks, fmt.Sprintf("%s, time limit %s", h, h.Timeout))
			}
		}
	}
	if tool == policy.ToolMCP {
		server, _ := policy.SplitMCPName(c.mcpName)
		c.mcpTrusted = slices.Contains(set.TrustedMCPServers, server) || (req.MCP != nil && req.MCP.Trusted)
	}
	f.state = state{e: e, set: set, idx: set.Index(), call: c, explain: explain}
	st := &f.state
	if err := st.settle(req); err != nil {
		return deny(ReasonInvalidRequest, err.Error()), t
	}
	f.env = env{cwd: cwd, root: root, home: e.opts.Home, ctx: ctx, fs: fs}
	env := &f.env
	switch ShellOf(req) {
	case "bash":
	case "powershell":
		env.dialect = powerShell
	case "cmd":
		env.dialect = cmdExe
	default:
		return deny(ReasonInvalidRequest, fmt.Sprintf(`request "shell" must be bash, powershell or cmd, got %q`, req.Shell)), t
	}
	if e.noWorkspace(root, from) {
		// No project around: the file system root or the home directory is
		// no workspace, so nothing counts as inside one.
		env.root = ""
		if from == "session" {
			t.Notes = append(t.Notes, "the session is bound to no workspace: nothing is inside one")
		} else {
			t.Notes = append(t.Notes, "no project found above "+cwd+": nothing is inside the workspace")
		}
	}
	env.roots = writableRoots(fs, set.WritableRoots, e.opts.Home)
	env.match = policy.MatchContext{Root: env.root, Home: e.opts.Home}
	env.credentialPaths, env.protectedPaths = set.CredentialPaths, set.ProtectedPaths
	st.env = env
	if explain {
		// What only an explanation shows is not built for a decision.
		t.Policy = fmt.Sprintf("mode=%s approval=%s sandbox=%s network=%t", st.mode, st.approval, st.sandbox, st.network)
		for _, k := range []string{"mode", "approval", "sandbox", "network", "writable_roots"} {
			if f, ok := set.From[k]; ok {
				t.From = append(t.From, k+" from "+f)
			}
		}
		// The notes on the workspace above come after the policy's.
		t.Notes = append(append(append([]string{}, set.Notes...), st.notes...), t.Notes...)
		for _, ig := range set.Ignored {
			t.Notes = append(t.Notes, fmt.Sprintf("%s rule %s from %s ignored: %s", ig.Rule.Effect, ig.Rule.Text, ig.Rule.Origin(), ig.Reason))
		}
	}

	var units []*Unit
	if tool == policy.ToolShell {
		units, err = env.shellUnits(c)
		switch {
		case err != nil && errors.Is(err, shell.ErrTooComplex):
			// Past the analysis's limits nothing is known about the line,
			// and asking would put an unreadable line to a person.
			d := deny(ReasonTooComplex, "the command is too complex to judge: "+err.Error())
			return st.wrap(ctx, d, t, true), t
		case err != nil && ctx.Err() != nil:
			d := deny(ReasonApprovalCancelled, "the request was cancelled while its command was analyzed: "+err.Error())
			return st.wrap(ctx, d, t, true), t
		case err != nil:
			d := &Decision{Decision: policy.Ask, Reason: ReasonUnknownCommand, Risk: risk.Execute, Source: SourceTool,
				Message: "the command cannot be parsed, so it cannot be judged: " + err.Error()}
			return st.wrap(ctx, d, t, true), t
		}
	} else {
		u := &tf.unit
		u.RiskWhy, u.Reads, u.Writes = tf.why[:0], tf.reads[:0], tf.writes[:0]
		env.toolUnit(c, u)
		tf.units[0] = u
		units = tf.units[:]
	}
	for _, u := range units {
		env.escalate(u)
		st.judge(u)
	}
	t.Units = units
	d = st.aggregate(units)
	t.call = &Call{Request: req, Tool: tool, Root: env.root, Cwd: cwd, Units: units, dialect: env.dialect}
	unseen := anyUnseen(units)
	if unseen != "" && d.Decision == policy.Ask && prior != nil {
		t.Steps = append(t.Steps, Step{"prior approval", "skipped", "no earlier approval covers the call: " + unseen})
	}
	if d.Decision == policy.Ask && prior != nil && d.Risk != risk.Destructive && !anyHard(units) && unseen == "" {
		if g, ok := prior.Lookup(ctx, t.call); ok {
			if g.Reason == "" {
				g.Reason = ReasonPriorApproval
			}
			d = &Decision{Decision: policy.Allow, Reason: g.Reason, Risk: d.Risk, Source: SourcePrior, Message: g.Message, Grant: g.ID}
			t.Steps = append(t.Steps, Step{"prior approval", "allow", g.Message})
		}
	}
	return st.wrap(ctx, d, t, anyHard(units)), t
}

// writableRoots returns the real paths of the policy's writable roots,
// seen through fs. A root that cannot be resolved (an unknown home, a link
// loop) is left out: nothing is writable through it.
func writableRoots(fs *pathres.View, roots []string, home string) []string {
	var out []string
	for _, r := range roots {
		abs, ok := pathres.Absolute("/", home, r)
		if !ok {
			continue
		}
		if real, err := fs.RealDir(abs); err == nil {
			out = append(out, real)
		}
	}
	return out
}

// rootOf returns the project root req is judged against, whose policy
// applies, and what set it; cwd is req.Cwd's real path, seen through fs.
func (e *Engine) rootOf(req *Request, fs *pathres.View, cwd string) (root, from string, err error) {
	root, from = e.opts.Project, "--project"
	switch {
	case req.Workspace != "":
		if !filepath.IsAbs(req.Workspace) || strings.ContainsRune(req.Workspace, 0) {
			return "", "", fmt.Errorf("the session's workspace must be an absolute directory, got %q", req.Workspace)
		}
		root, from = filepath.Clean(req.Workspace), "session"
	case root == "":
		// cwd is a real path, so each directory above it is one too.
		start, err := rootStart(fs, req.Cwd, req.Project, cwd, e.opts.Home)
		if err != nil {
			return "", "", err
		}
		root, from = findRoot(fs, start)
	}
	return root, from, nil
}

// rootStart returns the real directory the project root of a call made
// in cwd (as written; real is its real path) is looked up from: the real
// path of project when the call would otherwise leave the client's
// project, else real. project is the client's project directory
// ([Request.Project]); "" for none. A call leaves the project when cwd as
// written lies inside project but real leads out of project's real path
// (through a link in the project), or when real lies outside the project
// root found from project, that root being a workspace (not / or the home
// directory, which a client started there gives): an agent cannot make a
// directory of its choosing the workspace by naming it its working
// directory (Codex's workdir).
func rootStart(fs *pathres.View, cwd, project, real, home string) (string, error) {
	if project == "" || project == cwd {
		return real, nil
	}
	if !filepath.IsAbs(project) || strings.ContainsRune(project, 0) {
		return "", fmt.Errorf("the client's project directory must be an absolute directory, got %q", project)
	}
	preal, err := fs.RealDir(project)
	if err != nil {
		return "", fmt.Errorf("the client's project directory %s cannot be resolved: %v", project, err)
	}
	if pathres.Within(preal, real) {
		return real, nil
	}
	// Within compares the paths as written, cleaned: a ".." after a
	// link in cwd is judged by the real paths above.
	if pathres.Within(project, cwd) {
		return preal, nil
	}
	if root, _ := findRoot(fs, preal); !aboveHome(root, home) && !pathres.Within(root, real) {
		return preal, nil
	}
	return real, nil
}

// aboveHome reports whether dir is / or home (a clean absolute path; ""
// when unknown) or a directory above it: no workspace.
func aboveHome(dir, home string) bool {
	return dir == "/" || home != "" && (dir == home || strings.HasPrefix(home, dir+"/"))
}

// FindRootFrom is [FindRoot] for a call made in cwd (an absolute
// directory, as written) by a client whose project directory is project
// ([Request.Project], "" for none) and whose home directory is home ("" if
// unknown), as the engine looks it up: from the project directory's real
// path when the call would leave the client's project (see rootStart),
// else from cwd's real path ([pathres.Real]). An error says why project
// cannot be resolved.
func FindRootFrom(cwd, project, home string) (string, string, error) {
	start, err := rootStart(nil, cwd, project, pathres.Real(cwd), home)
	if err != nil {
		return "", "", err
	}
	root, from := findRoot(nil, start)
	return root, from, nil
}

// noWorkspace reports whether root, set by from, is no workspace at all:
// the file system root or the home directory found from the cwd or bound
// to the session.
func (e *Engine) noWorkspace(root, from string) bool {
	return (from == "cwd" || from == "session") && (root == "/" || root == e.opts.Home)
}

func anyHard(units []*Unit) bool {
	for _, u := range units {
		if u.hard && u.Decision == policy.Ask {
			return true
		}
	}
	return false
}

// ShellOf returns the shell a shell call's command is judged in: "bash",
// "powershell" (asked for, or implied by a tool named PowerShell or pwsh)
// or "cmd"; "" for a "shell" field naming none of them, which the engine
// denies. A caller that runs the command itself must run it in this shell.
func ShellOf(req *Request) string {
	switch strings.ToLower(req.Shell) {
	case "", "bash", "sh", "zsh":
		if lt := strings.ToLower(req.Tool); lt == "powershell" || lt == "pwsh" {
			return "powershell"
		}
		return "bash"
	case "powershell", "pwsh":
		return "powershell"
	case "cmd", "cmd.exe":
		return "cmd"
	}
	return ""
}
