package risk

import (
	"fmt"
	"strings"
	"sync"
)

// runnerEffect adds to e what the words of a build or test runner, a
// package manager, ssh or rsync do by their values and operands, once
// their spec has read them (specs_runners.go): a package the words name
// that the runner runs, an ssh -o key not known to be inert, a plugin
// pytest loads, a make variable set on the command line (the recipes then
// run other commands), the commands yarn, pnpm and bun run, and the
// compiler flags cargo clippy hands on.
func runnerEffect(base string, args []string, dyn []bool, p *Parsed, e *Effect) {
	run := func(why string) {
		e.Level, e.Known = Max(e.Level, Execute), false
		if e.Exec == "" {
			e.Exec = why
		}
	}
	if (base == "npm" || base == "cargo") && p.Sub == nil && len(p.Operands) > 0 {
		// npm -- exec: the command after a "--", which the program still
		// reads as its command.
		e.Level, e.Known, e.UnknownOption = Max(e.Level, Execute), false, args[p.Operands[0]]
		return
	}
	switch base {
	case "npm":
		switch p.SubName {
		case "exec", "x":
			run("npm " + p.SubName + " runs the program it is given, which may be any package's")
		case "audit", "outdated":
			e.Network = true
		}
	case "sftp":
		// Without -b sftp reads its commands from its input, with it from
		// a file: "!cmd" runs a local shell, "get" writes any local file.
		run("sftp runs the commands its input gives it, and \"!\" among them runs a local shell")
	case "ssh", "scp":
		for _, v := range p.Values("-o") {
			if why := sshOptionValue(base, v); why != "" {
				run(why)
				break
			}
		}
	case "pytest", "py.test":
		if at := pytestArgFile(args, p); at != "" {
			e.Level, e.Known, e.UnknownOption = Max(e.Level, Execute), false, at
			return
		}
		if why := pytestPlugins(args, dyn, p); why != "" {
			run(why)
		}
		e.Reads = append(e.Reads, pytestPaths(args, p)...)
	case "rsync":
		for _, v := range p.Values("-f") {
			if !inertRsyncFilter(v) {
				e.Level, e.Known, e.UnknownOption = Max(e.Level, Execute), false, "--filter="+v
				break
			}
		}
	case "make", "gmake":
		for _, v := range p.Values("-f") {
			// "-" is standard input; /dev/stdin, /dev/fd/N and
			// /proc/self/fd/N are it or another descriptor.
			if v = strings.TrimPrefix(v, "="); v == "-" || strings.HasPrefix(v, "/dev/") || strings.HasPrefix(v, "/proc/") {
				run(base + " -f " + v + " reads a makefile from standard input or a descriptor: the recipes it runs are not in the words")
				break
			}
		}
		if p.Has("-p") {
			// The data base holds every variable, those make took from
			// the environment among them.
			e.Level, e.Secret = Max(e.Level, Credential), "prints the environment, which holds secrets"
		}
		for _, i := range p.Operands {
			if i < len(dyn) && dyn[i] {
				e.Problem, e.Unknown = fmt.Sprintf("the operand %s of %s is not known until the line runs: it may set a variable the recipes run", args[i], base), true
				continue
			}
			if name, _, ok := strings.Cut(args[i], "="); ok {
				run(base + " " + name + "= overrides a variable, which changes the commands the recipes run")
			}
		}
	case "cargo":
		if p.Sub == nil {
			return
		}
		for _, v := range p.Sub.Values("--target") {
			if !cargoTargetName(v) {
				// A target spec file names the linker and other programs
				// the compiler runs.
				run("cargo --target " + v + " reads a target spec, which names the programs the build runs")
				break
			}
		}
		var sp *Spec
		switch p.SubName {
		case "clippy":
			sp = clippyArgs()
		case "fmt":
			sp = fmtArgs()
		case "test", "t", "bench":
			sp = libtestArgs()
		}
		if sp == nil {
			return
		}
		for i := range args {
			if args[i] == "--" && static(dyn, i) && !isValueIndex(p.Sub, i) {
				var restDyn []bool
				if i+1 < len(dyn) {
					restDyn = dyn[i+1:]
				}
				q := sp.Parse(args[i+1:], restDyn)
				if q.Unknown == "" && sp == clippyArgs() && len(q.Operands) > 0 {
					// The compiler reads a free word as a file to
					// compile, and @FILE as more of its arguments.
					q.Unknown = args[i+1+q.Operands[0]]
				}
				if q.Unknown != "" {
					e.Level, e.Known, e.UnknownOption, e.Spec = Max(e.Level, Execute), false, q.Unknown, sp.Program
				} else if q.Problem != "" {
					e.Problem, e.Unknown = q.Problem, true
				}
				break
			}
		}
	case "yarn", "pnpm", "bun":
		if len(p.Operands) == 0 {
			return
		}
		i := p.Operands[0]
		if !static(dyn, i) {
			e.Problem, e.Unknown = fmt.Sprintf("the command %s of %s is not known until the line runs", args[i], base), true
			return
		}
		if base == "bun" && args[i] == "test" {
			// bun test runs the test files below the paths it is given
			// (a word with a slash; any other filters names).
			for _, k := range p.Operands[1:] {
				if strings.Contains(args[k], "/") {
					e.Reads = append(e.Reads, args[k])
				}
			}
		}
		switch runnerCommands()[base][args[i]] {
		case cmdRuns:
			run(base + " " + args[i] + " runs the program it is given, which may be any package's")
		case cmdUnknown:
			e.Level, e.Known, e.UnknownOption = Max(e.Level, Execute), false, args[i]
		}
	}
}

// cargoTargetName reports whether v, the value of cargo's --target, is a
// target's name: letters, digits, "-", "_" and "." (x86_64-unknown-linux-gnu),
// not ending in ".json". rustc loads any other value as a target spec, a
// file that names the linker the build runs: a NAME.json path, and also a
// NAME that is not built in, which it looks up as a file (NAME, or
// NAME.json below each directory of RUST_TARGET_PATH, whose empty default
// makes /tmp/evil mean /tmp/evil.json). A bare name is looked up in the
// working directory only, where the project's build scripts are too.
func cargoTargetName(v string) bool {
	if v == "" || strings.HasSuffix(v, ".json") {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// isValueIndex reports whether word i is the value of an option of p.
func isValueIndex(p *Parsed, i int) bool {
	for _, o := range p.Options {
		if o.ValueIndex == i {
			return true
		}
	}
	return false
}

// pytestPlugins returns why pytest loads code the words name, or "".
// Before it reads its options, pytest looks through every word, those
// after "--" and the values of other options too, for "-p NAME" and
// "-pNAME", and imports the plugin NAME, which is code from outside the
// project; -p no:NAME turns one off. A -p inside a cluster (-vp NAME)
// is checked as the option the spec reads. -W ACTION:MESSAGE:CATEGORY
// imports the module of a CATEGORY spelled MODULE.CLASS; a builtin
// warning class (no dot) imports nothing.
//
// A word not known until the line runs that may start with "-" may be
// such a -p, wherever it stands: it is reported too.
func pytestPlugins(args []string, dyn []bool, p *Parsed) string {
	names := p.Values("-p")
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case !static(dyn, i) && mayBeOption(a):
			return "pytest reads -p PLUGIN from every word, and " + a + " is not known until the line runs"
		case a == "-p" && i+1 < len(args):
			i++
			names = append(names, args[i])
		case strings.HasPrefix(a, "-p"):
			names = append(names, a[2:])
		}
	}
	for _, v := range names {
		if !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(v, "=")), "no:") {
			return "pytest -p " + v + " loads a plugin, which is code from outside the project"
		}
	}
	for _, v := range p.Values("-W") {
		if f := strings.Split(v, ":"); len(f) > 2 && strings.Contains(f[2], ".") {
			return "pytest -W " + v + " imports the module of its warning category"
		}
	}
	return ""
}

// pytestArgFile returns the first operand of pytest that starts with "@",
// or "": pytest (8.2 and later) reads more options from the file it
// names, which the words do not show (-c, --basetemp, -p).
func pytestArgFile(args []string, p *Parsed) string {
	for _, i := range p.Operands {
		if strings.HasPrefix(args[i], "@") {
			return args[i]
		}
	}
	return ""
}

// pytestPaths returns the files and directories pytest collects, the
// operands without a "::" node id: it runs the test code and conftest.py
// files it finds there, so they are read as the command's own.
func pytestPaths(args []string, p *Parsed) []string {
	out := make([]string, 0, len(p.Operands))
	for _, i := range p.Operands {
		path, _, _ := strings.Cut(args[i], "::")
		if path != "" {
			out = append(out, path)
		}
	}
	return out
}

// inertRsyncFilter reports whether v, the value of rsync -f, is a rule
// that includes, excludes, hides, shows, protects or clears by a pattern:
// a merge or dir-merge rule (".", ":", merge, dir-merge) reads its rules
// from a file the words name as no operand, and an error quotes that
// file's lines.
func inertRsyncFilter(v string) bool {
	v = strings.TrimLeft(v, " ")
	head := v
	if i := strings.IndexAny(v, " _"); i >= 0 {
		head = v[:i]
	}
	name, _, _ := strings.Cut(head, ",")
	switch name {
	case "exclude", "include", "hide", "show", "protect", "risk", "clear":
		return true
	}
	return name != "" && strings.IndexByte("-+PHSR!", name[0]) >= 0 && strings.Trim(name[1:], "/!Csrpx-+") == ""
}

// pytestModule is the effect of python -m pytest ARGS on e: ARGS read by
// pytest's spec, and what runnerEffect finds in them.
func pytestModule(args []string, dyn []bool, e *Effect) {
	sp := Lookup("pytest")
	p := sp.Parse(args, dyn)
	switch {
	case p.Unknown != "":
		e.Level, e.Known, e.UnknownOption, e.Spec = Max(e.Level, Execute), false, p.Unknown, sp.Program
	case p.Problem != "":
		e.Problem, e.Unknown = p.Problem, true
	default:
		runnerEffect("pytest", args, dyn, p, e)
	}
}

// The kinds of a first operand of yarn, pnpm and bun.
const (
	cmdScript  = iota // not one of the program's commands: a script or binary of the project
	cmdKnown          // a command the table knows
	cmdRuns           // a command that runs the package or program it is given
	cmdUnknown        // one of the program's commands that the table does not know
)

// runnerCommands holds, for yarn (1 and 4), pnpm and bun, every command
// the program has: a first operand that is none of them names a script of
// the project (yarn build), which the program runs as run would. Knowing
// them all is what tells a script from a command the table does not know.
var runnerCommands = sync.OnceValue(func() map[string]map[string]int {
	m := map[string]map[string]int{}
	for prog, lists := range map[string][3]string{
		"yarn": {
			"install add run test list why",
			"dlx exec node create",
			"access audit autoclean bin cache check config constraints dedupe explain generate-lock-entry " +
				"global help import info init licenses link login logout npm outdated owner pack patch " +
				"patch-commit plugin policies publish rebuild remove search set stage tag team unlink unplug up " +
				"upgrade upgrade-interactive version versions workspace workspaces sdks",
		},
		"pnpm": {
			"install i add update up upgrade run run-script test t tst start list ls ll la why",
			"exec dlx create",
			"remove rm uninstall un link ln unlink import rebuild rb prune fetch install-test it patch " +
				"patch-commit patch-remove audit outdated licenses publish pack recursive multi m server store " +
				"root bin setup init deploy doctor config c get set env cat-file cat-index find-hash self-update " +
				"approve-builds ignored-builds dedupe catalog sbom access adduser bugs deprecate dist-tag docs " +
				"edit info login logout owner ping prefix profile pkg repo s se search set-script show star " +
				"stars team token unpublish unstar v version view whoami xmas",
		},
		"bun": {
			"run test install i add a",
			"x exec create c repl",
			"remove rm update outdated link unlink pm build init upgrade completions discord help publish " +
				"patch patch-commit audit info why feedback",
		},
	} {
		cmds := map[string]int{}
		for k, list := range lists {
			for _, c := range strings.Fields(list) {
				cmds[c] = cmdKnown + k
			}
		}
		m[prog] = cmds
	}
	return m
})

// sshWords returns ssh's words as its spec reads them. ssh reads options
// up to the host and, after it, again up to the first word of the remote
// command, whose words are the command's: a "--" is put before that word,
// and a "--" ssh takes as the end of either run of options is left out.
func sshWords(args []string, dyn []bool, sp *Spec) ([]string, []bool) {
	h, hEnd := sshOptionsEnd(args, dyn, sp, 0)
	if h < 0 || h >= len(args) {
		return args, dyn // an option the spec does not know, or no host
	}
	c, cEnd := sshOptionsEnd(args, dyn, sp, h+1)
	if (c < 0 || c >= len(args)) && hEnd < 0 && cEnd < 0 {
		return args, dyn
	}
	out, outDyn := make([]string, 0, len(args)+1), make([]bool, 0, len(args)+1)
	for i, a := range args {
		if i == hEnd || i == cEnd {
			continue
		}
		if i == c {
			out, outDyn = append(out, "--"), append(outDyn, false)
		}
		out, outDyn = append(out, a), append(outDyn, i < len(dyn) && dyn[i])
	}
	return out, outDyn
}

// sshOptionsEnd reads ssh's options from word i as BSD getopt does, and
// returns the index of the first operand (len(args) if none) and that of
// the "--" that ended them, or -1. An option the spec does not know gives
// -1 for the first: what it takes is not known, and the parse of the
// words reports it.
func sshOptionsEnd(args []string, dyn []bool, sp *Spec, i int) (int, int) {
	for ; i < len(args); i++ {
		a := args[i]
		if !static(dyn, i) || a == "-" || len(a) < 2 || a[0] != '-' {
			return i, -1
		}
		if a == "--" {
			return i + 1, i
		}
		for j := 1; j < len(a); j++ {
			o := sp.short[a[j]]
			if o == nil {
				return -1, -1
			}
			if o.Value != ValNone {
				if j+1 == len(a) {
					i++ // the value is the next word
				}
				break
			}
		}
	}
	return len(args), -1
}

// inertRsh reports whether v, the value of rsync -e, is ssh with options
// the spec knows that name no program and no file.
func inertRsh(v string) bool {
	f := strings.Fields(v)
	if len(f) == 0 || f[0] != "ssh" || strings.ContainsAny(v, "'\"\\$`;|&<>()") {
		return false
	}
	p := Lookup("ssh").Parse(f[1:], nil)
	if p.Unknown != "" || p.Problem != "" || len(p.Operands) > 0 {
		return false
	}
	for _, o := range p.Options {
		if o.Option.Value != ValNone && o.Option.Value != ValInert {
			return false
		}
	}
	for _, o := range p.Values("-o") {
		if sshOptionValue("ssh", o) != "" {
			return false
		}
	}
	return true
}

// lazySpec returns a function that parses src, one spec, at its first
// call. A spec that does not load is a programming error (TestSpecsParse
// loads them all): every call panics with its error.
func lazySpec(name, src string) func() *Spec {
	return sync.OnceValue(func() *Spec {
		list, err := ParseSpecs(name, src)
		if err == nil && len(list) != 1 {
			err = fmt.Errorf("%s: want one spec, got %d", name, len(list))
		}
		if err != nil {
			panic(err)
		}
		return list[0]
	})
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

// sshOptionValue returns why opt, the value of an -o option of ssh, scp
// or sftp, may make it run a program or read configuration that may name
// one, or "": a key of inertSSHOptions (keys are case-insensitive, and
// take their value after "=" or a space), or UserKnownHostsFile=/dev/null.
func sshOptionValue(base, opt string) string {
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
