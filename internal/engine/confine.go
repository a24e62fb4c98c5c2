package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// Confinement is what a shell call may do structurally, as the policy and
// the session's settings say for it, and the command line it runs: what a
// runner sets the operating system's sandbox up with.
type Confinement struct {
	// Sandbox is the sandbox axis: read-only, workspace-write or
	// danger-full-access (plan mode is read-only).
	Sandbox policy.Sandbox
	// Network reports whether the network is allowed.
	Network bool
	// Workspace is the real path of the project root the call is judged
	// against, "" when the call has none (the file system root or the
	// home directory).
	Workspace string
	// WritableRoots are the policy's further writable directories,
	// absolute.
	WritableRoots []string
	// WrapHooks reports whether the policy lets `toolgate hook` hand the
	// call back wrapped in `toolgate sandbox` (wrap_hooks, on by default).
	WrapHooks bool
	// Command is the command line exactly as the engine judges it (an
	// argv vector quoted word by word) and Dir the real directory it runs
	// in: the request's cwd, or its directory field resolved against it.
	Command, Dir string
}

// Confinement returns the Confinement of a shell request. It fails for a
// request that is not a shell call or cannot be judged (the same requests
// the engine denies as invalid): such a call must not run.
func (e *Engine) Confinement(req *Request) (Confinement, error) {
	if req == nil || req.Cwd == "" || !filepath.IsAbs(req.Cwd) || strings.ContainsRune(req.Cwd, 0) {
		return Confinement{}, errors.New(`request "cwd" must be an absolute directory`)
	}
	tool, ok := policy.Canonical(req.Tool)
	if !ok || tool != policy.ToolShell {
		return Confinement{}, fmt.Errorf("%q is not a shell tool", req.Tool)
	}
	c := &call{req: req, tool: tool, meta: tools[tool], input: req.Input}
	if c.input == nil {
		c.input = map[string]any{}
	}
	if err := c.meta.parse(c.input, c); err != nil {
		return Confinement{}, err
	}
	fs := e.view()
	cwd, err := fs.RealDir(req.Cwd)
	if err != nil {
		return Confinement{}, fmt.Errorf("the working directory cannot be resolved: %w", err)
	}
	root, from, err := e.rootOf(req, fs, cwd)
	if err != nil {
		return Confinement{}, err
	}
	set, err := e.policyFor(root)
	if err != nil {
		return Confinement{}, fmt.Errorf("policy cannot be loaded: %w", err)
	}
	st := &state{e: e, set: set, call: c}
	if err := st.settle(req); err != nil {
		return Confinement{}, err
	}
	out := Confinement{Sandbox: st.sandbox, Network: st.network, Command: c.command, Dir: cwd, WrapHooks: !set.NoHookWrap}
	if !e.noWorkspace(root, from) {
		if out.Workspace, err = fs.RealDir(root); err != nil {
			return Confinement{}, fmt.Errorf("the workspace %s cannot be resolved: %w", root, err)
		}
	}
	if c.dir != "" {
		abs, ok := pathres.Absolute(cwd, e.opts.Home, c.dir)
		if !ok {
			return Confinement{}, fmt.Errorf("the directory %q cannot be resolved", c.dir)
		}
		if out.Dir, err = fs.RealDir(abs); err != nil {
			return Confinement{}, fmt.Errorf("the directory %q cannot be resolved: %w", c.dir, err)
		}
	}
	out.WritableRoots = writableRoots(fs, set.WritableRoots, e.opts.Home)
	return out, nil
}

// MCPElicitation reports whether the policy that governs cwd lets the MCP
// proxy ask the person about a call through its MCP client
// (mcp_elicitation, on by default). An error — a cwd that is not an
// absolute directory, a policy that does not load — means it may not.
func (e *Engine) MCPElicitation(cwd string) (bool, error) {
	if cwd == "" || !filepath.IsAbs(cwd) || strings.ContainsRune(cwd, 0) {
		return false, errors.New(`"cwd" must be an absolute directory`)
	}
	fs := e.view()
	real, err := fs.RealDir(cwd)
	if err != nil {
		return false, fmt.Errorf("the working directory cannot be resolved: %w", err)
	}
	root, _, err := e.rootOf(&Request{Cwd: cwd}, fs, real)
	if err != nil {
		return false, err
	}
	set, err := e.policyFor(root)
	if err != nil {
		return false, fmt.Errorf("policy cannot be loaded: %w", err)
	}
	return !set.NoMCPElicitation, nil
}
