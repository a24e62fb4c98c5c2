// Package tools runs toolgate's built-in tools (read, write, edit, list,
// search, patch, fetch and shell) behind one [Executor], after the gate
// has allowed the call. The executor checks each call's arguments against
// the tool's JSON Schema and refuses a path outside the workspace itself,
// whatever the gate decided; it stores every run's full output as a
// content-addressed artifact, snapshots every file a write, edit or patch
// changes so that [Rollback] can restore it, and in plan mode offers and
// runs only the read-only tools.
package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/argschema"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/webfetch"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// MaxOutput is the most output a read, list or search returns; what is cut
// is said at the end of the output.
const MaxOutput = 256 << 10

// ShellRunner runs an allowed shell command line in directory cwd (a real
// path inside the workspace) with environment env, and returns its exit
// code and output. It must stop the command when ctx is done and return
// ctx's error then. It is where sandboxing belongs: the executor runs no
// process itself and adds no confinement. A non-zero exit is a Result
// with that ExitCode and a nil error; the error is for a command that
// could not be run (or was stopped).
type ShellRunner func(ctx context.Context, command, cwd string, env []string) (gate.Result, error)

// Options configure an [Executor].
type Options struct {
	// StateDir holds artifacts (StateDir/artifacts) and snapshots
	// (StateDir/snapshots). Required.
	StateDir string
	// Shell runs the shell tool; nil leaves the shell tool out.
	Shell ShellRunner
	// Env is the environment given to Shell.
	Env []string
	// Fetch configures the fetch tool's fetcher (see [gate.Gate.Fetch]).
	Fetch webfetch.Options
	// Workspace is the root calls are confined to when the call names
	// none (Call.Workspace, from engine.Request.Workspace): fixed by
	// whoever runs the executor, as the engine's Options.Project is.
	// "" finds it from the call's cwd as the engine does
	// ([engine.FindRoot]: the nearest .toolgate/ or .git above it).
	Workspace string
	// Home is the directory a path's "~" stands for, as the engine's
	// Options.Home; "" is the user's home (os.UserHomeDir).
	Home string
	// Mode is the permission mode; in [policy.ModePlan] the write and
	// execute tools are neither offered nor run. A request's own mode
	// "plan" has the same effect for that call.
	Mode policy.Mode
}

// Call is one tool call as the executor runs it.
type Call struct {
	// ID is the tool call id; snapshots are kept under it.
	ID string
	// Tool is the tool's name as the agent spells it (Read, apply_patch…).
	Tool string
	// Input is the arguments.
	Input map[string]any
	// Cwd is the absolute directory relative paths are resolved against.
	Cwd string
	// Workspace is the root no path may leave; "" means the executor's
	// Options.Workspace, "/" means no workspace (every path is refused).
	Workspace string
}

// Tool describes a tool offered to a model.
type Tool struct {
	Name        policy.Tool     `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
	// ReadOnly tools are the ones offered in plan mode.
	ReadOnly bool `json:"read_only"`
}

// spec is a registered tool.
type spec struct {
	Tool
	aliases map[string]string // argument alias -> canonical field
	schema  *argschema.Schema
	// check, when set, checks what the schema cannot say well.
	check func(args map[string]any) error
	run   func(ctx context.Context, x *Executor, c *call) (gate.Result, error)
}

// call is a Call with its arguments normalized and the workspace resolved.
type call struct {
	*Call
	args map[string]any
	root string // real path of the workspace
	cwd  string // real path of the cwd
	home string // what "~" stands for; "" unknown
}

// Executor runs built-in tools. It is safe for concurrent use; calls that
// touch the same files are not serialized against each other.
type Executor struct {
	opts      Options
	reg       map[policy.Tool]*spec
	artifacts *Blobs
	snaps     *Snapshots
}

// New returns an executor with every built-in tool registered (shell only
// when opts.Shell is set).
func New(opts Options) (*Executor, error) {
	if opts.StateDir == "" {
		return nil, errors.New("tools: a state directory is required")
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	x := &Executor{
		opts:      opts,
		reg:       map[policy.Tool]*spec{},
		artifacts: NewBlobs(filepath.Join(opts.StateDir, "artifacts")),
		snaps:     NewSnapshots(filepath.Join(opts.StateDir, "snapshots")),
	}
	for _, s := range builtins() {
		if s.Name == policy.ToolShell && opts.Shell == nil {
			continue
		}
		if err := x.register(s); err != nil {
			return nil, err
		}
	}
	return x, nil
}

func (x *Executor) register(s *spec) error {
	var err error
	if s.schema, err = argschema.Compile(s.Schema); err != nil {
		return fmt.Errorf("tools: schema of %s: %w", s.Name, err)
	}
	x.reg[s.Name] = s
	return nil
}

// Artifacts returns the store of full outputs.
func (x *Executor) Artifacts() *Blobs { return x.artifacts }

// Snapshots returns the store of snapshots.
func (x *Executor) Snapshots() *Snapshots { return x.snaps }

// planMode reports whether mode (or the executor's own) is plan.
func (x *Executor) planMode(mode string) bool {
	return x.opts.Mode == policy.ModePlan || policy.Mode(mode) == policy.ModePlan
}

// Tools lists the tools to offer a model in mode, sorted by name: in plan
// mode only the read-only ones.
func (x *Executor) Tools(mode policy.Mode) []Tool {
	plan := x.planMode(string(mode))
	var out []Tool
	for _, s := range x.reg {
		if plan && !s.ReadOnly {
			continue
		}
		out = append(out, s.Tool)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrPlanMode is returned (wrapped) for a write or execute tool called in
// plan mode.
var ErrPlanMode = errors.New("plan mode offers only read-only tools")

// lookup returns the registered tool for an agent's tool name.
func (x *Executor) lookup(name string, mode string) (*spec, error) {
	t, ok := policy.Canonical(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	s, ok := x.reg[t]
	if !ok {
		return nil, fmt.Errorf("tool %q (%s) is not a built-in tool of this executor", name, t)
	}
	if !s.ReadOnly && x.planMode(mode) {
		return nil, fmt.Errorf("%s: %w", name, ErrPlanMode)
	}
	return s, nil
}

// prepare checks c's arguments and workspace and returns the call to run.
func (x *Executor) prepare(s *spec, c *Call) (*call, error) {
	args, err := normalize(s, c.Input)
	if err != nil {
		return nil, err
	}
	if err := validate(s, args); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(c.Cwd) {
		return nil, fmt.Errorf("cwd %q is not an absolute path", c.Cwd)
	}
	ws := cmp.Or(c.Workspace, x.opts.Workspace)
	if ws == "" {
		ws, _ = engine.FindRoot(c.Cwd)
	}
	cc := &call{Call: c, args: args, home: x.opts.Home}
	if ws != "/" {
		if cc.root, err = filepath.EvalSymlinks(ws); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	if cc.cwd, err = filepath.EvalSymlinks(c.Cwd); err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	}
	return cc, nil
}

// Exec runs c directly, without asking the gate: for callers that have
// already had the call allowed (as [Executor.Run] does). The tool's full
// stdout is stored as an artifact whose id is in the result. fetch is run
// only through [Executor.Run], which gives it the gate's redirect checks.
func (x *Executor) Exec(ctx context.Context, c *Call, mode string) (gate.Result, error) {
	s, err := x.lookup(c.Tool, mode)
	if err != nil {
		return gate.Result{}, err
	}
	cc, err := x.prepare(s, c)
	if err != nil {
		return gate.Result{}, err
	}
	return x.exec(ctx, s, cc)
}

func (x *Executor) exec(ctx context.Context, s *spec, cc *call) (gate.Result, error) {
	if err := ctx.Err(); err != nil {
		return gate.Result{}, err
	}
	res, err := s.run(ctx, x, cc)
	if err != nil {
		return res, err
	}
	return x.store(res)
}

// store keeps the full output of a run as artifacts.
func (x *Executor) store(res gate.Result) (gate.Result, error) {
	id, err := x.artifacts.Put(res.Stdout)
	if err != nil {
		return res, fmt.Errorf("the tool ran but its output could not be stored: %w", err)
	}
	res.Artifact = id
	if len(res.Stderr) > 0 {
		eid, err := x.artifacts.Put(res.Stderr)
		if err != nil {
			return res, fmt.Errorf("the tool ran but its output could not be stored: %w", err)
		}
		if res.Detail == nil {
			res.Detail = map[string]any{}
		}
		res.Detail["stderrArtifact"] = eid
	}
	return res, nil
}

// Run puts req to g and, only when g allows it, runs it with the built-in
// tool req.Tool names, through [gate.Gate.Run]: the events are
// tool.started then tool.completed (with the output's artifact id) or
// tool.failed. Before asking the gate it refuses, recorded as a deny
// through [gate.Gate.Refuse], a call it could not run: an unknown or
// unregistered tool (reason unknown_tool), a write or execute tool in plan
// mode (plan_mode), arguments the tool's schema rejects or a patch that
// touches a path its headers do not name (invalid_arguments). A path
// outside the workspace fails the run (tool.failed) even when allowed.
func (x *Executor) Run(ctx context.Context, g *gate.Gate, req *engine.Request, turn string) (*engine.Decision, gate.Result, error) {
	s, err := x.lookup(req.Tool, req.Mode)
	if err != nil {
		reason := engine.ReasonUnknownTool
		if errors.Is(err, ErrPlanMode) {
			reason = engine.ReasonModePlan
		}
		d, rerr := g.Refuse(ctx, req, turn, reason, err.Error())
		return d, gate.Result{}, rerr
	}
	c := &Call{Tool: req.Tool, Input: req.Input, Cwd: req.Cwd, Workspace: req.Workspace}
	args, err := normalize(s, req.Input)
	if err == nil {
		err = validate(s, args)
	}
	if err == nil && s.Name == policy.ToolPatch {
		_, err = patchPaths(args["patch"].(string))
	}
	if err != nil {
		d, rerr := g.Refuse(ctx, req, turn, engine.ReasonInvalidArguments, err.Error())
		return d, gate.Result{}, rerr
	}
	exec := func(ctx context.Context) (gate.Result, error) {
		cc := *c
		cc.ID = gate.CallID(ctx)
		call, err := x.prepare(s, &cc)
		if err != nil {
			return gate.Result{}, err
		}
		return x.exec(ctx, s, call)
	}
	if s.Name == policy.ToolFetch {
		fetch := g.Fetch(req, x.opts.Fetch)
		exec = func(ctx context.Context) (gate.Result, error) {
			res, err := fetch(ctx)
			if err != nil {
				return res, err
			}
			return x.store(res)
		}
	}
	return g.Run(ctx, req, turn, exec)
}

// normalize maps the argument aliases agents use (file_path, cmd, …) to
// the tool's own field names. Two fields for the same argument is an
// error naming both.
func normalize(s *spec, in map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(in))
	from := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		name := k
		if a, ok := s.aliases[k]; ok {
			name = a
		}
		if prev, dup := from[name]; dup {
			return nil, fmt.Errorf("input.%s: conflicts with input.%s: give one of them", k, prev)
		}
		from[name] = k
		out[name] = in[k]
	}
	return out, nil
}

// validate checks args against the tool's schema, then its own check;
// the error names the field: "read: input.offset: got string, want
// integer".
func validate(s *spec, args map[string]any) error {
	if err := s.schema.Validate(args); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	if s.check != nil {
		return s.check(args)
	}
	return nil
}

// resolve returns the real path p (relative to the call's cwd) stands
// for, as the engine resolves it ([pathres.Resolve]: "~" expanded, each
// ".." taken after the links before it, as the kernel does), refusing one
// outside the workspace. field names the argument.
func (c *call) resolve(field, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("input.%s: must not be empty", field)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("input.%s: must not contain a NUL byte", field)
	}
	if c.root == "" {
		return "", fmt.Errorf("input.%s: %s is outside the workspace: this call has none", field, p)
	}
	r, err := pathres.Resolve(c.cwd, c.home, p)
	if err != nil {
		return "", fmt.Errorf("input.%s: %s: %w", field, p, err)
	}
	if r.Unknown {
		return "", fmt.Errorf("input.%s: %s names a home directory that is not known: not run", field, p)
	}
	if !pathres.Within(c.root, r.Real) {
		how := ""
		if r.Real != r.Abs {
			how = " (it resolves to " + r.Real + ")"
		}
		return "", fmt.Errorf("input.%s: %s is outside the workspace %s%s", field, p, c.root, how)
	}
	return r.Real, nil
}

// str returns a string argument ("" when absent).
func (c *call) str(name string) string {
	s, _ := c.args[name].(string)
	return s
}

// num returns an integer argument, or def when absent. The schema has
// made it an integer, which a decoder may spell 2.0 or 2e0; one beyond
// an int is the nearest int.
func (c *call) num(name string, def int) int {
	var f float64
	switch v := c.args[name].(type) {
	case int:
		return v
	case float64:
		f = v
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 0); err == nil {
			return int(n)
		}
		var err error
		if f, err = strconv.ParseFloat(string(v), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return def
		}
	default:
		return def
	}
	switch {
	case math.IsNaN(f):
		return def
	case f >= math.MaxInt:
		return math.MaxInt
	case f <= math.MinInt:
		return math.MinInt
	}
	return int(f)
}

// flag returns a boolean argument.
func (c *call) flag(name string) bool {
	b, _ := c.args[name].(bool)
	return b
}

// NoShell is a [ShellRunner] that runs nothing: it fails every call. It
// lets a caller list the shell tool (as `toolgate tools` does) before a
// sandboxed runner is installed.
func NoShell(context.Context, string, string, []string) (gate.Result, error) {
	return gate.Result{}, errors.New("no shell runner is installed")
}
