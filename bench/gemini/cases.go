// Package gemini times toolgate's engine on the calls that
// policy-bench.mjs times Gemini CLI's policy engine on, with equivalent
// rules, so that compare.sh can print their ratio per call.
//
// Both sides load the same rules: allow the commands git status, npm run
// test and tee with any further words, allow writes below src/, deny
// reading .env; Gemini CLI also loads its own default policies (which
// allow its read-only tools), as it does when it runs. The calls use
// Gemini CLI's tool names, which toolgate accepts.
package gemini

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
)

// Case is one call timed on both sides.
type Case struct {
	Name string
	Tool string
	// Path, for read_file and write_file, is relative to the project.
	Path string
	// Command, for run_shell_command, is the command line.
	Command string
}

// Cases are the five calls, in the order policy-bench.mjs prints them.
var Cases = []Case{
	{Name: "read", Tool: "read_file", Path: "src/main.go"},
	{Name: "write", Tool: "write_file", Path: "src/util.go"},
	{Name: "git-status", Tool: "run_shell_command", Command: "git status"},
	{Name: "chained", Tool: "run_shell_command", Command: "git status && npm run test -- --watch | tee test.log"},
	{Name: "wrapped", Tool: "run_shell_command", Command: "bash -c 'git status'"},
}

// Allow, Deny are the toolgate rules of the comparison; gemini-rules.toml
// holds the same for Gemini CLI.
var (
	Allow = []string{"Bash(git status:*)", "Bash(npm run test:*)", "Bash(tee:*)", "Edit(src/**)"}
	Deny  = []string{"Read(.env)"}
)

// Project is a real project directory for the calls: a temporary
// directory holding src/main.go, src/util.go and .env, and a home beside
// it.
type Project struct {
	Dir, Home string
}

// NewProject lays out a project under parent.
func NewProject(parent string) (*Project, error) {
	parent, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return nil, err
	}
	p := &Project{Dir: filepath.Join(parent, "project"), Home: filepath.Join(parent, "home")}
	for _, d := range []string{"project/src", "project/.git", "home"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			return nil, err
		}
	}
	for f, body := range map[string]string{
		"project/src/main.go": "package main\n", "project/src/util.go": "package main\n",
		"project/.env": "KEY=secret\n", "project/go.mod": "module example.com/p\n",
	} {
		if err := os.WriteFile(filepath.Join(parent, f), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Request returns the toolgate request for c in the project.
func (p *Project) Request(c Case) *engine.Request {
	in := map[string]any{}
	switch {
	case c.Command != "":
		in["command"] = c.Command
	case c.Tool == "write_file":
		in["file_path"] = filepath.Join(p.Dir, c.Path)
		in["content"] = "package main\n\nfunc helper() {}\n"
	default:
		in["file_path"] = filepath.Join(p.Dir, c.Path)
	}
	return &engine.Request{Tool: c.Tool, Input: in, Cwd: p.Dir}
}

// Engine returns a toolgate engine with the comparison's rules as the
// project policy.
func (p *Project) Engine() (*engine.Engine, error) {
	f, err := policy.ParseRules(policy.LayerProject, Allow, nil, Deny)
	if err != nil {
		return nil, err
	}
	set, err := policy.Merge(f)
	if err != nil {
		return nil, err
	}
	return engine.New(engine.Options{Policy: engine.Fixed(set), Home: p.Home})
}

// String names a case for messages.
func (c Case) String() string { return fmt.Sprintf("%s (%s)", c.Name, c.Tool) }
