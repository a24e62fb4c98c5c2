package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

func policyCmd() *cobra.Command {
	c := &cobra.Command{Use: "policy", Short: "Work with policy files",
		Long: `policy checks and tests the policy files of a project (.toolgate/policy.toml,
.toolgate/policy.local.toml), the user's ($XDG_CONFIG_HOME/toolgate/policy.toml)
and the managed one, and imports other tools' permission settings.`,
		Example: `  toolgate policy lint
  toolgate policy test
  toolgate policy import claude-code > .toolgate/policy.toml`}
	c.AddCommand(lintCmd(), testCmd())
	c.AddCommand(policyImportCmd())
	return c
}

func testCmd() *cobra.Command {
	var pf policyFlags
	c := &cobra.Command{
		Use:   "test",
		Short: "Run the [[test]] examples of the project's policy files",
		Long: `test decides every [[test]] example written in the policy layers of the
current project (managed, user, project, local) under the merged policy, and
reports each whose decision (or reason) differs, with its file and line. It
exits 1 when any fails.`,
		Example: `  # in the project
  toolgate policy test

  # with a rule you are about to add
  toolgate policy test --deny 'Bash(git push:*)'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, files, err := pf.projectFiles()
			if err != nil {
				return err
			}
			pf.project = root
			eng, err := pf.engine(c)
			if err != nil {
				return err
			}
			ran, failed := 0, 0
			for _, f := range files {
				for _, tc := range f.Tests {
					ran++
					req := &engine.Request{Tool: tc.Tool, Input: tc.Input, Cwd: filepath.Join(root, tc.Cwd), Mode: tc.Mode}
					d := eng.Check(c.Context(), req)
					if d.Decision != tc.Expect || (tc.Reason != "" && string(d.Reason) != tc.Reason) {
						failed++
						want := tc.Expect.String()
						if tc.Reason != "" {
							want += " (" + tc.Reason + ")"
						}
						fmt.Fprintf(c.OutOrStdout(), "%s: FAIL %s: got %s (%s: %s), want %s\n", termtext.Args(tc.Pos, tc.Tool, d.Decision, d.Reason, d.Message, want)...)
					}
				}
			}
			if failed > 0 {
				fmt.Fprintf(c.OutOrStdout(), "%d of %d policy tests failed\n", failed, ran)
				return silentExit(1)
			}
			fmt.Fprintf(c.OutOrStdout(), "ok: %d policy tests passed\n", ran)
			return nil
		},
	}
	pf.register(c)
	return c
}

func lintCmd() *cobra.Command {
	var pf policyFlags
	c := &cobra.Command{
		Use:   "lint [FILE...]",
		Short: "Check policy files and report unreachable or shadowed rules",
		Long: `lint parses the policy layers of the current project (or the FILEs
given, each read as a project-layer file) and reports every error with its
file, line and column, then rules that can never decide anything and
settings that are ignored: among them the allow rules and loosening
settings of a project that the user or managed policy does not list in
trusted_projects (a FILE at <root>/.toolgate/policy.toml is judged as that
project's). It exits 1 when it finds anything.`,
		Example: `  # the layers of the project around the current directory
  toolgate policy lint

  # one file, as a project's policy
  toolgate policy lint .toolgate/policy.toml`,
		RunE: func(c *cobra.Command, args []string) error {
			var files []*policy.File
			if len(args) > 0 {
				for _, a := range args {
					src, err := readInput(a, "policy file")
					if err != nil {
						return err
					}
					f, err := policy.ParseFile(a, src, policy.LayerProject)
					if err != nil {
						return &exitError{1, err}
					}
					if err := pf.trustFile(f); err != nil {
						return err
					}
					files = append(files, f)
				}
			} else {
				_, fs, err := pf.projectFiles()
				if err != nil {
					return err
				}
				files = fs
			}
			cli, err := pf.cliLayer(c)
			if err != nil {
				return err
			}
			set, err := mergeForLint(append(files, cli))
			if err != nil {
				return &exitError{1, err}
			}
			findings := policy.Lint(set)
			for _, f := range findings {
				fmt.Fprintln(c.OutOrStdout(), termtext.Args(f)...)
			}
			if len(findings) > 0 {
				fmt.Fprintf(c.OutOrStdout(), "%d finding(s) in %d file(s)\n", len(findings), len(files))
				return silentExit(1)
			}
			fmt.Fprintf(c.OutOrStdout(), "ok: %d file(s), %s\n", termtext.Args(len(files), set)...)
			return nil
		},
	}
	pf.registerFiles(c)
	return c
}

// mergeForLint merges files that may share a layer (several FILE
// arguments) by renumbering them as session layers.
func mergeForLint(files []*policy.File) (*policy.Set, error) {
	seen := map[policy.Layer]bool{}
	for _, f := range files {
		if seen[f.Layer] && f.Layer != policy.LayerCLI {
			f.Layer = policy.LayerSession
		}
		seen[f.Layer] = true
	}
	return policy.Merge(files...)
}

// trustFile applies the trust of the project a FILE argument belongs to,
// when it is a project's .toolgate/policy.toml, as the engine would.
func (f *policyFlags) trustFile(file *policy.File) error {
	abs, err := filepath.Abs(file.Path)
	if err != nil {
		return err
	}
	if filepath.Base(abs) != filepath.Base(policy.ProjectFile) || filepath.Base(filepath.Dir(abs)) != filepath.Dir(policy.ProjectFile) {
		return nil
	}
	root := pathres.Real(filepath.Dir(filepath.Dir(abs)))
	l := policy.DefaultLocations("")
	if f.managed != "" {
		l.Managed = f.managed
	}
	if f.user != "" {
		l.User = f.user
	}
	files, err := policy.Load(l)
	if err != nil {
		return &exitError{1, err}
	}
	home, _ := os.UserHomeDir()
	policy.ApplyTrust(append(files, file), root, home)
	return nil
}

// projectFiles loads the file layers of the project the flags name, or of
// the one around the working directory.
func (f *policyFlags) projectFiles() (string, []*policy.File, error) {
	root := f.project
	if root == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return "", nil, err
		}
		root, _ = engine.FindRoot(cwd)
	}
	l := policy.DefaultLocations(root)
	if f.managed != "" {
		l.Managed = f.managed
	}
	if f.user != "" {
		l.User = f.user
	}
	files, err := policy.Load(l)
	if err != nil {
		return "", nil, &exitError{1, err}
	}
	home, _ := os.UserHomeDir()
	policy.ApplyTrust(files, root, home)
	return root, files, nil
}
