package risk

import "strings"

// runnerOption returns why the words of a build or test runner that toolgate
// has no spec for make it run a program other than the one a rule for the
// command allows, or "": an option that names a shell, a wrapper or a
// plugin, configuration that may name one, or a make variable set on the
// command line, which the recipes may run. The words after "--" go to the
// script or program the runner starts, not to the runner.
func runnerOption(base string, args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		switch base {
		case "npm", "npx", "yarn", "pnpm", "bun":
			switch {
			case name == "--script-shell", name == "--node-options", name == "--userconfig", name == "--globalconfig",
				name == "--shell", name == "--editor", name == "--browser", name == "--call", name == "-c",
				strings.HasPrefix(name, "--config."), name == "--config":
				return base + " " + name + " names a program or configuration that runs programs"
			case name == "--prefix", name == "-C", name == "--dir", name == "--cwd", name == "--workspace", name == "-w",
				name == "--workspaces", name == "-ws", name == "--filter", name == "-F", name == "--recursive", name == "-r":
				return base + " " + name + " runs the scripts of another package than the one in the directory it runs in"
			}
			if i == 0 {
				switch a {
				case "exec", "x", "dlx":
					return base + " " + a + " runs the program it is given, which may be any package's"
				}
			}
		case "cargo":
			switch {
			case name == "--config", strings.HasPrefix(a, "-Z"):
				return "cargo " + name + " sets configuration, which may name a runner or a compiler wrapper that cargo runs"
			}
		case "make", "gmake":
			switch {
			case name == "--eval", strings.HasPrefix(a, "-E"):
				return "make " + name + " evaluates make code, which may run commands"
			case !strings.HasPrefix(a, "-") && strings.Contains(a, "=") && (i == 0 || !makeValueFlag(args[i-1])):
				return "make " + name + "= overrides a variable, which changes the commands the recipes run"
			}
		case "pytest", "py.test":
			switch {
			case a == "-p" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "no:"),
				strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(strings.TrimPrefix(a[2:], "="), "no:"):
				return "pytest -p loads a plugin, which is code from outside the project"
			case name == "--pyargs", name == "--rootdir", name == "--confcutdir", name == "-c", name == "--config-file",
				name == "--override-ini", name == "-o", strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
				return "pytest " + name + " changes which configuration and code pytest loads"
			}
		}
	}
	return ""
}

// makeValueFlag reports whether a make option takes the next word as its
// value, so that the word is not read as a variable assignment.
func makeValueFlag(a string) bool {
	switch a {
	case "-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir", "-o", "--old-file",
		"-W", "--what-if", "--new-file", "--assume-new", "-j", "--jobs", "-l", "--load-average":
		return true
	}
	return false
}

// inertGitConfigKeys are the git configuration keys that change only how
// git shows what it shows: git -c with one of them runs nothing. Any
// other key may name a program (core.pager, core.sshCommand, diff.external,
// alias.x=!cmd) or a file git reads configuration from (include.path).
var inertGitConfigKeys = map[string]bool{
	"color.ui": true, "color.diff": true, "color.status": true, "color.branch": true, "color.grep": true,
	"color.decorate": true, "color.showbranch": true, "core.quotepath": true, "core.abbrev": true,
	"log.date": true, "log.decorate": true, "log.abbrevcommit": true, "user.name": true, "user.email": true,
	"init.defaultbranch": true, "column.ui": true, "diff.noprefix": true, "diff.renames": true,
	"diff.mnemonicprefix": true, "diff.algorithm": true, "diff.colormoved": true, "merge.conflictstyle": true,
	"status.short": true, "status.branch": true, "status.showuntrackedfiles": true,
	"i18n.logoutputencoding": true, "i18n.commitencoding": true, "advice.detachedhead": true,
}

// inertGitConfig reports whether KEY=VALUE, the value of git -c, sets a key
// of inertGitConfigKeys (keys are case-insensitive) to a value that names
// no file.
func inertGitConfig(kv string) bool {
	k, v, _ := strings.Cut(kv, "=")
	return inertGitConfigKeys[strings.ToLower(k)] && !strings.ContainsAny(v, "/!$`")
}
