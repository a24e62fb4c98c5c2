// Package cli implements the toolgate command line, one file per verb.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/termtext"
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// usageError is exit code 2: bad input on the command line or stdin.
func usageError(format string, args ...any) error {
	return &exitError{2, fmt.Errorf(format, args...)}
}

// Main runs the command line with os.Args and returns the exit code, for
// a process that exits with it.
func Main() int {
	processExits = true
	return Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// processExits is set when the command line runs as its own process, which
// exits when the command returns (see [Main]); then a hook leaves the event
// log to be closed by the exit (see [leaveLog]).
var processExits bool

// Run runs the command line with the given arguments and streams and
// returns the process exit code: 0 success, 1 failure or findings, 2 bad
// input.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunContext(context.Background(), args, stdin, stdout, stderr)
}

// RunContext is [Run] with a context that ends long-running verbs
// (serve, audit --follow).
func RunContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(args)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if se, ok := err.(silentExit); ok {
		return int(se)
	}
	fmt.Fprintln(stderr, "toolgate:", termtext.EscapeLines(err.Error()))
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// newRoot returns the toolgate command with the subcommands args may run:
// the one it names first, or all of them.
func newRoot(args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "toolgate",
		Short: "The permission gate for AI agents' tool calls",
		Long: `toolgate decides every tool call an AI agent wants to make — a shell
command, a file read or write, a web fetch, an MCP tool — as allow, ask or
deny under your policy, asks you when it asks (on a web page or in a
terminal), and records every decision in an event log.

Start with toolgate serve (the server and its approval page) and toolgate
hook install (for Claude Code, Gemini CLI or Codex); see what was decided
with toolgate audit, and why with toolgate explain.`,
		Example: `  toolgate serve
  toolgate hook install claude-code
  toolgate audit --since 1h`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("toolgate {{.Version}}\n")
	// completion prints a script made from the whole tree.
	if len(args) > 0 && args[0] != "completion" {
		for _, sub := range subcommands {
			if sub.name == args[0] {
				root.AddCommand(sub.make())
				usageErrors(root)
				return root
			}
		}
	}
	for _, sub := range subcommands {
		root.AddCommand(sub.make())
	}
	usageErrors(root)
	return root
}

// subcommands are toolgate's commands in the order help lists them. A
// command line that starts with one's name gets a root with that command
// alone (a hook runs once per tool call, and the flags of twenty commands
// are a measurable part of its start); any other line, help, completion
// and mistyped names included, gets them all.
var subcommands = []struct {
	name string
	make func() *cobra.Command
}{
	{"check", checkCmd}, {"explain", explainCmd}, {"policy", policyCmd}, {"serve", serveCmd},
	{"approve", approveCmd}, {"login-link", loginLinkCmd}, {"audit", auditCmd}, {"replay", replayCmd},
	{"sandbox", sandboxCmd}, {"artifact", artifactCmd}, {"rollback", rollbackCmd}, {"tools", toolsCmd},
	{"run", runCmd}, {"ps", psCmd}, {"kill", killCmd}, {"hook", hookCmd}, {"mcp", mcpCmd},
	{"init", initCmd}, {"doctor", doctorCmd}, {"completion", completionCmd},
}

// readInput reads a file named on the command line; what a missing or
// unreadable one is called says what was expected (a usage error, exit 2).
func readInput(path, what string) ([]byte, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usageError("no %s at %s", what, path)
	case errors.Is(err, fs.ErrPermission):
		return nil, usageError("the %s %s cannot be read: permission denied", what, path)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, usageError("the %s %s cannot be read: %v", what, path, err)
	}
	return data, nil
}

// usageErrors makes a wrong flag or a wrong number of arguments, on any
// command, a usage error (exit 2) that says where the usage is.
func usageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(c *cobra.Command, a []string) error {
				if err := args(c, a); err != nil {
					return usageError("%v (usage: %s)\nRun '%s --help' for more.", err, c.UseLine(), c.CommandPath())
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// version is the module's version as the build recorded it (a tag for
// go install …@vX, "(devel)" for a build in a checkout) and, when known,
// the commit it was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+modified"
		}
	}
	return v
}
