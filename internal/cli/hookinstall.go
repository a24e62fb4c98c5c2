package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/hookinstall"
	"github.com/toolgate/toolgate/internal/termtext"
)

// hookInstallCmds returns the install and uninstall subcommands of
// "toolgate hook".
func hookInstallCmds() []*cobra.Command {
	return []*cobra.Command{hookInstallCmd(true), hookInstallCmd(false)}
}

func hookInstallCmd(install bool) *cobra.Command {
	var project, user bool
	var command, dir string
	verb := "install"
	short := "Add toolgate's hooks to an agent client's settings"
	long := `install adds toolgate's PreToolUse and PostToolUse hooks (BeforeTool and
AfterTool for Gemini CLI) to the client's settings file, so every tool call
the client makes is checked by toolgate first and recorded after:

  claude-code  ~/.claude/settings.json, or <project>/.claude/settings.json
  gemini       ~/.gemini/settings.json, or <project>/.gemini/settings.json
  codex        $CODEX_HOME/hooks.json (default ~/.codex), or
               <project>/.codex/hooks.json, and [features] hooks = true in
               the config.toml beside it

--user (the default) edits your own settings, --project the project's. The
hook runs the toolgate binary you are running now, by its absolute path,
unless --command names another. Every other setting keeps its place and
text (comments too); installing twice changes nothing, and uninstall gives
back the file as it was. A settings file that does not parse is reported
with its line and left alone.`
	if !install {
		verb = "uninstall"
		short = "Remove toolgate's hooks from an agent client's settings"
		long = `uninstall removes the hook entries install wrote (any toolgate binary's),
leaving every other hook and setting as it was, and removes the file when
install created it. A hook entry that runs toolgate together with other
hooks is reported and left in place.`
	}
	c := &cobra.Command{
		Use:       verb + " claude-code|gemini|codex",
		Short:     short,
		Long:      long,
		Example:   "  toolgate hook " + verb + " claude-code\n  toolgate hook " + verb + " gemini --project",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"claude-code", "gemini", "codex"},
		RunE: func(c *cobra.Command, args []string) error {
			client := hookinstall.Client(args[0])
			if !slices.Contains(hookinstall.Clients, client) {
				return fmt.Errorf("unknown client %q: expected claude-code, gemini or codex", args[0])
			}
			if project && user {
				return errors.New("--project and --user exclude each other")
			}
			o := hookinstall.Options{Client: client, Scope: hookinstall.User, CodexHome: os.Getenv("CODEX_HOME")}
			home, err := os.UserHomeDir()
			if err == nil {
				o.Home = home
			}
			if project {
				o.Scope = hookinstall.Project
				if o.ProjectDir, err = projectDir(dir); err != nil {
					return err
				}
			}
			if command == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("cannot tell where the toolgate binary is (%v): give --command", err)
				}
				command = exe
			}
			if strings.ContainsAny(command, "\n\r") {
				return errors.New("--command must be one line")
			}
			o.Command = command
			var res *hookinstall.Result
			if install {
				res, err = hookinstall.Install(o)
			} else {
				res, err = hookinstall.Uninstall(o)
			}
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			for _, ch := range res.Changes {
				fmt.Fprintf(out, "%s %s\n", termtext.Args(ch.Action, ch.Path)...)
			}
			if install {
				fmt.Fprintf(out, "hook command: %s\n", termtext.Escape(hookinstall.HookCommand(o)))
			}
			for _, n := range res.Notes {
				fmt.Fprintf(out, "note: %s\n", termtext.Escape(n))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&user, "user", false, "edit your own settings (the default)")
	c.Flags().BoolVar(&project, "project", false, "edit the project's settings")
	c.Flags().StringVar(&dir, "dir", "", "the project directory for --project (default: the git work tree or the current directory)")
	c.Flags().StringVar(&command, "command", "", "the toolgate program the hook runs (default: this binary's absolute path)")
	return c
}

// projectDir returns dir made absolute, or the top of the git work tree
// holding the current directory, or the current directory.
func projectDir(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return wd, nil
		}
	}
}
