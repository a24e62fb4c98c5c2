package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/hookinstall"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

func initCmd() *cobra.Command {
	var force, hooks bool
	var dir string
	c := &cobra.Command{
		Use:   "init",
		Short: "Write a commented project policy for the project here, and set up the agent clients found",
		Long: `init writes .toolgate/policy.toml at the project root (the top of the git
work tree holding the current directory, or the current directory; --dir
names another) with allow rules for the project's test, build and lint
commands, found from its build files: go.mod, package.json scripts (npm,
pnpm, yarn or bun by lockfile or packageManager), Cargo.toml,
pyproject.toml and requirements.txt (pytest, uv, ruff, mypy), and the
Makefile's test, check, build, lint and vet targets.
It never allows installs or anything that fetches packages: they keep
asking. The file's comments say what a project policy can and cannot do.

An existing policy file is left alone unless --force is given. What is
written is parsed again with the policy parser, as the engine will read it.

init then lists the agent clients it finds (claude, gemini and codex on
PATH, or their settings directories) and the command that installs
toolgate's hooks for each; --hooks runs them (the user's settings).`,
		Example: `  cd ~/src/myproject && toolgate init
  toolgate init --hooks          # also install the hooks of the agent clients found
  toolgate init --dir ../other --force`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, err := projectDir(dir)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				return usageError("--dir %s is not a directory", dir)
			}
			if home, err := os.UserHomeDir(); err == nil && sameDir(root, home) {
				return usageError("%s is your home directory, not a project: its policy would govern every directory below it without a .git of its own; run init in a project, or name one with --dir", root)
			}
			return runInit(c.OutOrStdout(), root, force, hooks)
		},
	}
	c.Flags().BoolVar(&force, "force", false, "replace an existing .toolgate/policy.toml")
	c.Flags().BoolVar(&hooks, "hooks", false, "install toolgate's hooks for every agent client found (user settings)")
	c.Flags().StringVar(&dir, "dir", "", "the project root (default: the git work tree or the current directory)")
	return c
}

func runInit(out io.Writer, root string, force, hooks bool) error {
	kinds := detectProject(root)
	text := renderPolicy(kinds)
	path := filepath.Join(root, filepath.FromSlash(policy.ProjectFile))
	// The text is parsed before anything is written: a file the engine
	// would refuse is never left behind.
	want, err := policy.ParseFile(path, text, policy.LayerProject)
	if err != nil {
		return fmt.Errorf("internal error: the policy init made does not parse (%v); nothing was written", err)
	}
	if err := writePolicy(path, text, force); err != nil {
		return err
	}
	got, err := policy.LoadFile(path, policy.LayerProject)
	if err != nil || got == nil {
		return fmt.Errorf("%s was written but does not read back as a policy: %v", path, err)
	}
	if len(got.Rules) != len(want.Rules) {
		return fmt.Errorf("%s was written but reads back with %d rules, not %d: another program changed it", path, len(got.Rules), len(want.Rules))
	}
	p := func(format string, args ...any) { fmt.Fprintf(out, format, termtext.Args(args...)...) }

	var found []string
	test := ""
	for _, k := range kinds {
		found = append(found, k.Name+" ("+k.Found+")")
		if test == "" {
			test = k.Test
		}
	}
	if len(found) == 0 {
		p("wrote %s: no build file recognized, so no allow rules\n", tildePath(path))
	} else {
		p("wrote %s: %d allow rule(s) for %s\n", tildePath(path), len(got.Rules), strings.Join(found, ", "))
	}
	p("checked: it parses as a project policy (toolgate policy lint reads it the same way)\n")
	if test != "" {
		p("test command: %s\n", test)
	}

	p("\nagent clients:\n")
	var toInstall []hookinstall.Client
	self, _ := os.Executable()
	for _, ac := range findClients() {
		if !ac.found() {
			p("  %-12s not found\n", ac.client)
			continue
		}
		st, err := hookinstall.Installed(ac.options(self))
		switch {
		case err != nil:
			p("  %-12s found (%s); its settings cannot be read: %v\n", ac.client, ac.where(), err)
			continue
		case st.Installed():
			p("  %-12s found (%s); hooks installed in %s\n", ac.client, ac.where(), tildePath(st.Path))
			continue
		case !hooks:
			p("  %-12s found (%s); install its hooks: toolgate hook install %s\n", ac.client, ac.where(), ac.client)
			toInstall = append(toInstall, ac.client)
			continue
		}
		p("  %-12s found (%s); installing its hooks: toolgate hook install %s\n", ac.client, ac.where(), ac.client)
		if self == "" {
			return errors.New("cannot tell where the toolgate binary is, so its hooks cannot be installed: run toolgate hook install with --command")
		}
		res, err := hookinstall.Install(ac.options(self))
		if err != nil {
			return fmt.Errorf("toolgate hook install %s: %w", ac.client, err)
		}
		for _, ch := range res.Changes {
			p("    %s %s\n", ch.Action, tildePath(ch.Path))
		}
		for _, n := range res.Notes {
			p("    note: %s\n", n)
		}
	}

	user := policy.DefaultLocations("").User
	if projectTrusted(root) {
		p("\nThe project is trusted (trusted_projects), so its allow rules count.\n")
	} else {
		p("\nIts allow rules count once you trust the project: add it to your user policy\n")
		p("(%s):\n  trusted_projects = [%q]\n", tildePath(user), tildePath(root))
	}
	p("\nnext:\n")
	p("  toolgate policy lint\n")
	if test == "" {
		test = "git status"
	}
	p("  echo '{\"tool\":\"Bash\",\"input\":{\"command\":%q},\"cwd\":\"'\"$PWD\"'\"}' | toolgate explain\n", test)
	if len(toInstall) > 0 {
		p("  toolgate hook install %s\n", toInstall[0])
	} else {
		p("  toolgate doctor\n")
	}
	return nil
}

// projectTrusted reports whether the user or managed policy trusts the
// project at root; a policy that cannot be read trusts nothing.
func projectTrusted(root string) bool {
	rroot := pathres.Real(root)
	files, err := policy.Load(policy.DefaultLocations(rroot))
	if err != nil {
		return false
	}
	home, _ := os.UserHomeDir()
	return policy.Trusted(files, rroot, home)
}

// writePolicy writes text to path, creating its directory. An existing
// file is replaced only with force, through a rename, so a reader never
// sees half a file.
//
// The .toolgate directory must be the project's own: a repository that
// ships .toolgate as a symbolic link (to ~/.config/toolgate, say) would
// otherwise have init write its rules into the user's own policy.
func writePolicy(path string, text []byte, force bool) error {
	dir := filepath.Dir(path)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return &exitError{1, fmt.Errorf("%s is a symbolic link; nothing was written: init writes only into the project's own .toolgate directory", dir)}
	case !fi.IsDir():
		return &exitError{1, fmt.Errorf("%s is not a directory; nothing was written", dir)}
	}
	if !force {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return &exitError{1, fmt.Errorf("%s already exists; nothing was changed (give --force to replace it)", path)}
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(text); err != nil {
			f.Close()
			os.Remove(path)
			return err
		}
		return f.Close()
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory; nothing was changed", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".policy.toml.tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

const policyHeader = `# toolgate policy for this project (.toolgate/policy.toml), written by
# toolgate init. It is committed with the repository and applies to everyone
# who works on it with toolgate.
#
# What a project policy can do:
#   - make the gate stricter, always: its deny and ask rules, credential_paths
#     and protected_paths count whether or not you trust the project.
#   - allow the commands below, once you trust the project: your own user
#     policy (~/.config/toolgate/policy.toml) must list this checkout in
#     trusted_projects = ["/path/to/this/checkout"].
#
# What it cannot do:
#   - loosen anything before it is trusted: until then its allow rules,
#     writable_roots and trusted_mcp_servers are ignored, and its mode,
#     approval, sandbox and network settings apply only where they are at
#     least as strict as your own.
#   - override a deny rule of your user policy or of the managed policy
#     (/etc/toolgate/managed.toml), even when trusted: rules of every layer
#     are pooled and deny beats ask beats allow; the managed policy's locks
#     hold against every other layer.
#   - unlock credentials, silence the questions on protected paths (this file
#     is one), or reuse an approval for a destructive command.
#
# A rule is Tool or Tool(specifier): "Bash(go test:*)" allows go test with any
# arguments; a compound line ("go test && curl ...") runs only when every
# command in it is allowed. Check this file with: toolgate policy lint
# Personal rules go to .toolgate/policy.local.toml, which is not committed.
`

// renderPolicy writes the commented policy file for kinds.
func renderPolicy(kinds []projectKind) []byte {
	var b strings.Builder
	b.WriteString(policyHeader)
	b.WriteString("\n[permissions]\n")
	b.WriteString("# Test, build and lint commands only. Installs and whatever fetches packages\n")
	b.WriteString("# (go get, npm install, pip install, cargo add, ...) are not allowed here: they\n")
	b.WriteString("# keep asking.\n")
	seen := map[string]bool{}
	var lines []string
	for _, k := range kinds {
		for _, r := range k.Rules {
			if seen[r.Rule] {
				continue
			}
			seen[r.Rule] = true
			lines = append(lines, fmt.Sprintf("  # %s (%s): %s\n  %s,\n", k.Name, k.Found, r.Why, tomlString(r.Rule)))
		}
	}
	if len(lines) == 0 {
		b.WriteString("# No build file was recognized (go.mod, package.json, Cargo.toml,\n")
		b.WriteString("# pyproject.toml, requirements.txt, a Makefile with a test target): add the\n")
		b.WriteString("# project's test command, e.g. \"Bash(make test)\".\n")
		b.WriteString("allow = []\n")
	} else {
		b.WriteString("allow = [\n")
		for _, l := range lines {
			b.WriteString(l)
		}
		b.WriteString("]\n")
	}
	b.WriteString("# Rules that always hold, trusted or not, for example:\n")
	b.WriteString("# deny = [\"Read(./secrets/**)\"]\n")
	b.WriteString("# ask = [\"Bash(git push:*)\"]\n")
	return []byte(b.String())
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// sameDir reports whether a and b are the same directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// tildePath writes p with the home directory as ~, for display.
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~/" + rest
	}
	return p
}
