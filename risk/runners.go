package risk

import "strings"

// runnerOption returns why the words of a program that toolgate has no
// spec for (build and test runners, package managers, ssh and rsync) make
// it run a program other than the one a rule for the command allows, or
// "": an option that names a shell, a wrapper, a proxy command or a
// plugin, configuration that may name one, or a make variable set on the
// command line, which the recipes may run. The words after "--" go to the
// script or program the runner starts, not to the runner.
//
// npm, make and pytest take unambiguous abbreviations of their long
// options (npm's --script-sh, make's --ev, pytest's --pyarg): a long word
// that begins one of the options named here is read as that option.
func runnerOption(base string, args []string) string {
	sub := false
	for i, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		switch base {
		case "npm", "npx", "yarn", "pnpm", "bun":
			switch {
			case abbrev(name, "--script-shell", "--node-options", "--userconfig", "--globalconfig", "--shell",
				"--editor", "--browser", "--call", "--config"), name == "-c", strings.HasPrefix(name, "--config."):
				return base + " " + name + " names a program or configuration that runs programs"
			case abbrev(name, "--prefix", "--dir", "--cwd", "--workspace", "--workspaces", "--filter", "--recursive"),
				name == "-C", name == "-w", name == "-ws", name == "-F", name == "-r":
				return base + " " + name + " runs the scripts of another package than the one in the directory it runs in"
			}
			if !sub && !strings.HasPrefix(a, "-") {
				sub = true
				switch a {
				case "exec", "x", "dlx":
					return base + " " + a + " runs the program it is given, which may be any package's"
				}
			}
		case "ssh", "scp", "sftp":
			if why := sshOption(base, args, i); why != "" {
				return why
			}
		case "rsync":
			v, ok := "", false
			switch {
			case a == "-e" || a == "--rsh":
				if i+1 < len(args) {
					v, ok = args[i+1], true
				}
			case strings.HasPrefix(a, "--rsh="):
				v, ok = a[len("--rsh="):], true
			case strings.HasPrefix(a, "-e") && len(a) > 2 && !strings.HasPrefix(a, "--"):
				v, ok = a[2:], true
			}
			if f := strings.Fields(v); ok && (len(f) == 0 || f[0] != "ssh" || runnerOption("ssh", f[1:]) != "" || strings.ContainsAny(v, "'\"\\$`;|&<>()")) {
				return "rsync " + name + " names the program rsync runs to reach the other side"
			}
		case "cargo":
			switch {
			case name == "--config", strings.HasPrefix(a, "-Z"):
				return "cargo " + name + " sets configuration, which may name a runner or a compiler wrapper that cargo runs"
			}
		case "make", "gmake":
			switch {
			case abbrev(name, "--eval"), strings.HasPrefix(a, "-E"):
				return "make " + name + " evaluates make code, which may run commands"
			case !strings.HasPrefix(a, "-") && strings.Contains(a, "=") && (i == 0 || !makeValueFlag(args[i-1])):
				return "make " + name + "= overrides a variable, which changes the commands the recipes run"
			}
		case "pytest", "py.test":
			switch {
			case a == "-p" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "no:"),
				strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(strings.TrimPrefix(a[2:], "="), "no:"):
				return "pytest -p loads a plugin, which is code from outside the project"
			case abbrev(name, "--pyargs", "--rootdir", "--confcutdir", "--config-file", "--override-ini"), name == "-c",
				name == "-o", strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
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

// inertSSHOptions are the ssh -o keys (lower case) that name no program,
// library or configuration file: any other (ProxyCommand, LocalCommand,
// KnownHostsCommand, PKCS11Provider, Include, …) may run one.
var inertSSHOptions = map[string]bool{
	"stricthostkeychecking": true, "batchmode": true, "connecttimeout": true, "serveraliveinterval": true,
	"serveralivecountmax": true, "port": true, "user": true, "loglevel": true, "compression": true,
	"identitiesonly": true, "passwordauthentication": true, "pubkeyauthentication": true,
	"connectionattempts": true, "tcpkeepalive": true, "addressfamily": true, "requesttty": true,
	"checkhostip": true, "hashknownhosts": true, "updatehostkeys": true, "visualhostkey": true,
	"preferredauthentications": true, "kbdinteractiveauthentication": true, "numberofpasswordprompts": true,
}

// sshOption returns why the option of ssh, scp or sftp in args[i] makes it
// run a program or read configuration that may name one, or "".
func sshOption(base string, args []string, i int) string {
	a := args[i]
	if len(a) < 2 || a[0] != '-' || strings.HasPrefix(a, "--") {
		return ""
	}
	var opt string
	switch {
	case a == "-o" && i+1 < len(args):
		opt = args[i+1]
	case strings.HasPrefix(a, "-o") && len(a) > 2:
		opt = a[2:]
	case a == "-F" || strings.HasPrefix(a, "-F"):
		return base + " -F reads a configuration file, which may name programs to run"
	case a == "-I" || strings.HasPrefix(a, "-I") && base == "ssh":
		return base + " -I loads a PKCS#11 library"
	case base != "ssh" && (a == "-S" || strings.HasPrefix(a, "-S") || a == "-D" && base == "sftp"):
		return base + " " + a[:2] + " names the program it runs to reach the other side"
	default:
		return ""
	}
	key, val, ok := strings.Cut(opt, "=")
	if !ok {
		key, val, _ = strings.Cut(strings.TrimSpace(opt), " ")
	}
	key = strings.ToLower(strings.TrimSpace(key))
	if key == "userknownhostsfile" && strings.TrimSpace(val) == "/dev/null" {
		return ""
	}
	if !inertSSHOptions[key] {
		return base + " -o " + key + " is not known to be inert: it may run a program or read one's configuration"
	}
	return ""
}

// abbrev reports whether name, a long option as written, is one of full
// or an abbreviation of one that getopt_long, nopt or argparse would take
// for it: at least two letters after the dashes.
func abbrev(name string, full ...string) bool {
	for _, f := range full {
		if name == f || len(name) >= 4 && strings.HasPrefix(name, "--") && strings.HasPrefix(f, name) {
			return true
		}
	}
	return false
}
