package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/claudeimport"
	"github.com/toolgate/toolgate/internal/termtext"
)

func policyImportCmd() *cobra.Command {
	c := &cobra.Command{Use: "import", Short: "Translate another tool's permission settings into a toolgate policy file",
		Long:    "import translates another tool's permission settings into a toolgate policy file; see its subcommands.",
		Example: "  toolgate policy import claude-code -o .toolgate/policy.toml"}
	c.AddCommand(importClaudeCmd())
	return c
}

func importClaudeCmd() *cobra.Command {
	var output string
	var force bool
	c := &cobra.Command{
		Use:   "claude-code [FILE]",
		Short: "Translate Claude Code's permissions into a toolgate policy file",
		Long: `claude-code reads the permissions of a Claude Code settings file (FILE, or
./.claude/settings.json, else ~/.claude/settings.json): allow, ask and deny
rules, additionalDirectories and defaultMode, and writes the toolgate policy
file they translate to on stdout (or to --output), each entry commented with
where it came from. What it cannot translate is listed on stderr with the
reason, and so is every rule toolgate reads differently from Claude Code.
When a deny or ask rule cannot be translated the policy is still written,
and the command exits 1: that policy is looser than the settings.`,
		Example: `  # the project's Claude Code settings, into the project's policy
  toolgate policy import claude-code -o .toolgate/policy.toml

  # a given file, to stdout
  toolgate policy import claude-code ~/.claude/settings.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			file, source, err := claudeSettingsFile(args)
			if err != nil {
				return err
			}
			src, err := readInput(file, "Claude Code settings file")
			if err != nil {
				return err
			}
			o := claudeimport.Options{Source: source}
			abs, _ := filepath.Abs(file)
			if home, _ := os.UserHomeDir(); filepath.Base(filepath.Dir(abs)) == ".claude" && filepath.Dir(filepath.Dir(abs)) != home {
				o.ProjectDir = filepath.Dir(filepath.Dir(abs))
			}
			res, err := claudeimport.Convert(file, src, o)
			if err != nil {
				return err
			}
			stderr := c.ErrOrStderr()
			for _, s := range res.Skipped {
				fmt.Fprintf(stderr, "not translated: %s\n", termtext.Escape(s.String()))
			}
			for _, s := range res.Notes {
				fmt.Fprintf(stderr, "note: %s\n", termtext.Escape(s.String()))
			}
			// A deny or ask rule left out makes the written policy looser
			// than the settings it came from: the policy is still written,
			// and the command fails so that a script notices.
			looser := 0
			for _, s := range res.Skipped {
				if strings.HasPrefix(s.Where, "permissions.deny") || strings.HasPrefix(s.Where, "permissions.ask") {
					looser++
				}
			}
			done := func() error {
				if looser > 0 {
					return &exitError{1, fmt.Errorf("%d deny or ask rule(s) could not be translated: the policy is looser than %s", looser, source)}
				}
				return nil
			}
			if output == "" {
				if _, err := c.OutOrStdout().Write(res.Policy); err != nil {
					return err
				}
				return done()
			}
			flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(output, flag, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s exists: give --force to overwrite it", output)
			}
			if err != nil {
				return err
			}
			if _, err := f.Write(res.Policy); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s\n", termtext.Escape(output))
			return done()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "write the policy to this file instead of stdout")
	c.Flags().BoolVar(&force, "force", false, "overwrite the --output file if it exists")
	return c
}

// claudeSettingsFile returns the settings file to read and how to name it.
func claudeSettingsFile(args []string) (file, source string, err error) {
	if len(args) == 1 {
		return args[0], args[0], nil
	}
	local := filepath.Join(".claude", "settings.json")
	if _, err := os.Stat(local); err == nil {
		return local, local, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", "", fmt.Errorf("no %s here and no home directory: give FILE", local)
	}
	user := filepath.Join(home, ".claude", "settings.json")
	if _, err := os.Stat(user); err != nil {
		return "", "", fmt.Errorf("neither %s nor %s exists: give FILE", local, user)
	}
	return user, "~/.claude/settings.json", nil
}
