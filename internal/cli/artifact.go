package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/internal/tools"
	"github.com/toolgate/toolgate/policy"
)

// The commands of the built-in tools: artifact, rollback and tools. They
// read the state directory (--state-dir, default $XDG_STATE_HOME/toolgate)
// where the executor keeps artifacts and snapshots.

func stateFlag(c *cobra.Command, dir *string) {
	c.Flags().StringVar(dir, "state-dir", server.DefaultStateDir(), "state directory holding artifacts and snapshots")
}

func executorAt(dir string) (*tools.Executor, error) {
	if dir == "" {
		return nil, usageError("no state directory: give --state-dir or set $XDG_STATE_HOME")
	}
	return tools.New(tools.Options{StateDir: dir})
}

func artifactCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "artifact ID",
		Short: "Print the full output of a tool run",
		Long: `artifact prints, byte for byte, the full output stored under ID: the id
a tool.completed event records under "artifact". It fails for an unknown id
and for stored bytes that no longer hash to their id.`,
		Example: `  # the id is in the tool.completed event of the call
  toolgate audit --events --type tool.completed --json
  toolgate artifact sha256-1f2e3d…`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			x, err := executorAt(dir)
			if err != nil {
				return err
			}
			if !tools.ValidID(args[0]) {
				return usageError("%q is not an artifact id: want 64 lower-case hex digits", args[0])
			}
			data, err := x.Artifacts().Get(args[0])
			if err != nil {
				return err
			}
			_, err = c.OutOrStdout().Write(data)
			return err
		},
	}
	stateFlag(c, &dir)
	return c
}

func rollbackCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "rollback CALL_ID",
		Short: "Undo the file changes of one tool call",
		Long: `rollback restores every file the write, edit or patch call CALL_ID changed
to its content before the call (removing the files it created), but only if
each file still holds exactly what the call wrote. Otherwise it prints how
each file differs from what the call left, changes nothing, and exits 1.`,
		Example: `  toolgate rollback tc_4f1c2a9b0d3e5f67`,
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			x, err := executorAt(dir)
			if err != nil {
				return err
			}
			done, err := x.Snapshots().Rollback(args[0])
			var ce *tools.ConflictError
			if errors.As(err, &ce) {
				printOutput(c.OutOrStdout(), ce.Diff)
				return &exitError{1, err}
			}
			if err != nil {
				return err
			}
			for _, p := range done {
				fmt.Fprintln(c.OutOrStdout(), "restored", termtext.Escape(p))
			}
			return nil
		},
	}
	stateFlag(c, &dir)
	return c
}

func toolsCmd() *cobra.Command {
	var dir, mode string
	var asJSON bool
	c := &cobra.Command{
		Use:   "tools",
		Short: "List the built-in tools to offer a model",
		Long: `tools lists the built-in tools with their descriptions and argument
schemas. With --mode plan only the read-only ones are listed: in plan mode the
write and execute tools (write, edit, patch, shell) are not offered, and the
executor refuses a call to one.`,
		Example: `  toolgate tools
  toolgate tools --mode plan --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			m := policy.ModeDefault
			if mode != "" {
				var err error
				if m, err = policy.ParseMode(mode); err != nil {
					return usageError("--mode: %v", err)
				}
			}
			x, err := tools.New(tools.Options{StateDir: dir, Shell: tools.NoShell})
			if err != nil {
				return err
			}
			list := x.Tools(m)
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, t := range list {
				fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Description)
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVar(&mode, "mode", "", "permission mode the tools are offered in (plan lists only read-only tools)")
	c.Flags().BoolVar(&asJSON, "json", false, "print name, description and input_schema of each tool as JSON")
	c.Flags().StringVar(&dir, "state-dir", "-", "unused: listing reads no state")
	_ = c.Flags().MarkHidden("state-dir")
	return c
}
