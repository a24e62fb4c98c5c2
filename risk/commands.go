package risk

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
)

// Effect is what one simple command does, as far as its program and words
// tell. Paths are operand words as written; the caller resolves them.
type Effect struct {
	// Level is the command's risk before path and host checks.
	Level Level
	// Known reports whether the program is in the knowledge base; an unknown
	// program may do anything.
	Known bool
	// Reads and Writes are the operands the command reads and writes
	// (deleting is writing).
	Reads, Writes []string
	// Unknown is set when an operand that names a file is not known
	// statically, so the command's effect on files cannot be judged.
	Unknown bool
	// Network reports that the command reaches other hosts.
	Network bool
	// Hosts are the hosts named in its words (URLs, user@host:path).
	Hosts []string
	// Destructive says why the command cannot be undone, "" if it can.
	Destructive string
	// Secret says why the command exposes credentials, "" if it does not.
	Secret string
	// Navigation marks cd, pushd and popd: no effect beyond the shell.
	Navigation bool
	// Exec says why the command runs code that its words do not show (a
	// pager or hook set by an option, awk's system(), sed's e command), ""
	// if it does not. An allow rule for the command does not cover it.
	Exec string
	// Opaque says why the command writes files that its words do not name
	// (an archive's or a directory tree's contents), "" if it does not.
	Opaque string
	// Recursive reports that the command reads whole directory trees
	// below its read operands (grep -r, rg, tar c, cp -r).
	Recursive bool
	// SkipsHidden reports that a recursive read leaves out hidden files
	// and directories, the names starting with a dot (rg, ag without
	// --hidden or -u).
	SkipsHidden bool
	// FollowsLinks reports that a recursive read follows the symbolic
	// links it meets in the tree (grep -R, rg -L, zip -r, tar -h, cp -L).
	FollowsLinks bool
	// NameGlob, when set, limits a recursive read to the files whose name
	// matches it (grep --include=*.go, rg -g '*.go').
	NameGlob string
	// Deletes reports that the paths in Writes are removed.
	Deletes bool
	// Spec names the program spec the words were read with, "" when the
	// program has none.
	Spec string
	// UnknownOption is the first option the program's spec does not know
	// ("--to-command", "-I"); the command is then unknown.
	UnknownOption string
	// Problem says why the words cannot be read statically (a dynamic
	// word where an option may stand), "" if they can.
	Problem string
}

type kind uint8

const (
	kReadAll     kind = iota // every operand is read
	kReadAfter1              // the first operand is a pattern or script, the rest are read
	kList                    // operands are listed (read)
	kNone                    // no file operands
	kWriteAll                // every operand is written
	kCopy                    // all but the last are read, the last is written
	kMove                    // all operands are written
	kWriteAfter1             // the first operand is a mode/owner, the rest are written
	kExec                    // runs code that may do anything
)

// interpreter lists the programs that run a script or code given to them.
var interpreter = map[string]bool{
	"python": true, "python3": true, "python2": true, "node": true, "nodejs": true, "deno": true, "bun": true,
	"perl": true, "ruby": true, "php": true, "lua": true, "Rscript": true, "bash": true, "sh": true, "zsh": true,
	"dash": true, "ksh": true, "fish": true, "eval": true, "source": true, ".": true, "exec": true, "osascript": true,
	"pwsh": true, "powershell": true, "invoke-expression": true,
}

// Known reports whether name is a program of the knowledge base.
func Known(name string) bool {
	_, ok := commands()[name]
	return ok
}

// Interpreter reports whether the program runs code it is given (a script,
// -c or -e text, or standard input).
func Interpreter(name string) bool { return interpreter[name] }

type cmdInfo struct {
	level Level
	kind  kind
}

// commands returns the built-in knowledge of what common programs do,
// built at its first use rather than when a process starts.
var commands = sync.OnceValue(func() map[string]cmdInfo {
	m := map[string]cmdInfo{}
	add := func(level Level, k kind, names ...string) {
		for _, n := range names {
			m[n] = cmdInfo{level, k}
		}
	}
	add(Read, kReadAll, "cat", "head", "tail", "less", "more", "wc", "nl", "od", "xxd", "hexdump", "strings",
		"uniq", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "file", "stat", "diff", "cmp",
		"base64", "tac", "rev", "fold", "fmt", "expand", "unexpand", "column", "paste", "comm", "join", "jq", "yq",
		"readlink", "realpath", "bat", "zcat", "gunzip", "tokei", "cut")
	add(Read, kReadAfter1, "grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk")
	add(Read, kList, "ls", "tree", "du", "find", "fd", "fdfind", "exa", "eza", "dir")
	add(Read, kNone, "echo", "printf", "true", "false", "test", "[", "[[", "((", "let", "pwd", "which", "type",
		"whoami", "id", "uname", "hostname", "date", "cal", "uptime", "basename", "dirname", "seq", "sleep", "wait",
		"yes", "nproc", "tty", "locale", "command", "hash", "help", "history", "jobs", "getconf", "tr",
		"sort", "tput", "clear", "man", "whatis", "apropos", "ps", "top", "free", "df", "lsof", "groups", "arch",
		"shift", "read", "local", "declare", "typeset", "readonly", "unset", "alias", "exit", "return", "trap",
		"shopt", "set", "umask", "ulimit", "mktemp")
	add(Credential, kNone, "env", "printenv")
	add(Read, kNone, "ps", "pgrep")
	add(Write, kWriteAll, "touch", "mkdir", "rmdir", "truncate", "tee", "shred", "rm", "unlink")
	add(Write, kCopy, "cp", "ln", "install", "rsync")
	add(Write, kMove, "mv")
	add(Write, kWriteAfter1, "chmod", "chown", "chgrp", "setfacl")
	add(Write, kNone, "export", "patch", "git", "tar", "sed", "dd", "unzip", "zip", "gzip")
	add(Execute, kExec, "python", "python3", "python2", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
		"lua", "Rscript", "bash", "sh", "zsh", "dash", "ksh", "fish", "eval", "source", ".", "exec", "make",
		"cmake", "ninja", "npm", "npx", "yarn", "pnpm", "pip", "pip3", "uv", "poetry", "cargo", "go", "rustc",
		"gcc", "g++", "cc", "clang", "javac", "java", "mvn", "gradle", "dotnet", "docker", "podman", "kubectl",
		"helm", "terraform", "kill", "pkill", "killall", "crontab", "systemctl", "service", "launchctl", "xdg-open",
		"open", "vim", "vi", "nvim", "nano", "emacs", "code", "ssh-keygen", "gpg", "sudo", "su", "doas", "sqlite3",
		"psql", "mysql", "redis-cli", "mongosh", "osascript", "at", "batch", "nohup", "script", "pytest", "jest",
		"vitest", "tsc", "eslint", "prettier", "ruff", "mypy", "black", "gofmt", "rustfmt",
		// cloc hands archive names to a shell pipeline of its own.
		"cloc")
	add(Network, kNone, "curl", "wget", "ssh", "scp", "sftp", "ftp", "nc", "ncat", "netcat", "telnet", "socat",
		"ping", "dig", "nslookup", "host", "traceroute", "http", "https", "aria2c", "rclone", "gh")
	add(Destructive, kWriteAll, "mkfs", "wipefs", "fdisk", "parted", "sfdisk", "mkswap")
	add(Destructive, kNone, "shutdown", "reboot", "halt", "poweroff")
	for _, n := range []string{"cd", "pushd", "popd", "dirs"} {
		m[n] = cmdInfo{Read, kNone}
	}
	return m
})

// Command returns the effect of one simple command. name is the program as
// the shell analysis names it; dyn marks the words of args whose value is
// not known statically.
//
// A program the gate may call read-only is read against its Spec: an
// option the spec does not list makes the command unknown
// (Effect.UnknownOption), and a program classed read that has no spec is
// unknown too. Options whose values the spec types as files read or
// written, or as programs run, add to the effect.
func Command(name string, args []string, dyn []bool) Effect {
	base := name
	if strings.HasPrefix(name, "mkfs.") {
		base = "mkfs"
	}
	info, ok := commands()[base]
	sp := Lookup(base)
	if !ok {
		return Effect{Level: Execute}
	}
	if sp == nil && info.level <= Read && info.kind != kExec {
		// Knowledge is an allow-list: a program that would pass as a
		// read needs a spec of its options.
		return Effect{Level: Execute}
	}
	var p *Parsed
	if sp != nil {
		if base == "tar" {
			args, dyn = tarOldStyle(args, dyn, sp)
		}
		if base == "go" {
			if flag := goTestBinaryFlag(args, dyn); flag != "" {
				e := command(base, info, args, dyn, nil)
				e.Level, e.Known, e.Spec, e.UnknownOption = Max(e.Level, Execute), false, "go test binary", flag
				return e
			}
			args, dyn = goWords(args, dyn, nil)
		}
		if base == "ssh" {
			args, dyn = sshWords(args, dyn, sp)
		}
		if base == "gh" {
			args, dyn = ghWords(args, dyn)
		}
		p = sp.Parse(args, dyn)
		if p.Unknown != "" {
			// Unknown, but what the words still show stands: a destructive
			// or network effect, the files named, under any allow rule.
			var e Effect
			if base == "curl" || base == "wget" {
				// Their effect reads the options before the unknown one
				// and the words after it that are no options.
				e = command(base, info, args, dyn, p)
				specEffects(base, args, p, &e)
			} else {
				e = command(base, info, args, dyn, nil)
			}
			e.Level, e.Known, e.Spec, e.UnknownOption = Max(e.Level, Execute), false, sp.Program, p.Unknown
			if base == "gh" && !strings.HasPrefix(p.Unknown, "-") {
				e.UnknownOption = strings.Replace(p.Unknown, ".", " ", 1) // gh pr delete, as ghWords joined it
			}
			if shellMode[base] {
				e.Problem, e.Unknown = shellModeProblem(base, p.Unknown), true
			}
			return e
		}
	}
	e := command(base, info, args, dyn, p)
	if p != nil {
		e.Spec = sp.Program
		specEffects(base, args, p, &e)
		runnerEffect(base, args, dyn, p, &e)
		if netTools[base] {
			netToolEffect(base, args, dyn, p, &e)
		}
	}
	return e
}

// specEffects adds to e what the options of a parsed command line do by
// their spec: files read or written, programs run; and what some programs
// do by their operands (date and hostname set the system's clock and
// name, gzip replaces files).
func specEffects(base string, args []string, p *Parsed, e *Effect) {
	if p.Problem != "" {
		e.Problem, e.Unknown = p.Problem, true
	}
	all := p.Options
	if p.Sub != nil {
		all = append(slices.Clone(all), p.Sub.Options...)
	}
	for _, o := range all {
		if !o.HasValue {
			continue
		}
		switch o.Option.Value {
		case ValRead, ValDir:
			if !slices.Contains(e.Reads, o.Value) {
				e.Reads = append(e.Reads, o.Value)
			}
		case ValWrite:
			if !slices.Contains(e.Writes, o.Value) {
				e.Writes = append(e.Writes, o.Value)
			}
			e.Level = Max(e.Level, Write)
		case ValExec, ValCode:
			if o.Option.Value == ValCode && slices.Contains(grammarCode[base], o.Name) {
				continue // the program's own grammar judges this code
			}
			if base == "git" && o.Name == "-c" && inertGitConfig(o.Value) {
				continue // a key that changes only how git shows things
			}
			if base == "rsync" && o.Name == "-e" && inertRsh(o.Value) {
				continue // ssh, with options that run nothing else
			}
			e.Level, e.Known = Max(e.Level, Execute), false
			if e.Exec == "" {
				e.Exec = fmt.Sprintf("%s %s runs the program or code it is given", base, o.Spelled)
			}
		}
	}
	if base == "go" && p.Sub != nil {
		for _, o := range p.Sub.Options {
			if o.HasValue && !inertGoToolFlags(o.Name, o.Value) {
				e.Level, e.Known = Max(e.Level, Execute), false
				if e.Exec == "" {
					e.Exec = fmt.Sprintf("go %s %s passes flags to the compiler or linker that may run a program or write a file", o.Spelled, o.Value)
				}
				break
			}
		}
		switch p.SubName {
		case "generate":
			e.Level, e.Known, e.Exec = Max(e.Level, Execute), false, "go generate runs the commands that the //go:generate lines of the source name"
		case "env":
			if slices.Contains(args, "-w") || slices.Contains(args, "-u") {
				e.Level, e.Known, e.Exec = Max(e.Level, Execute), false, "go env -w writes go's environment file, whose GOFLAGS later go commands read as options"
			}
		}
	}
	var ops []string
	switch base {
	case "date", "hostname", "gzip", "gunzip", "dd":
		ops = p.OperandWords(args)
	}
	switch base {
	case "date":
		for _, o := range ops {
			if !strings.HasPrefix(o, "+") {
				e.Level, e.Known, e.Exec = Execute, false, "date with a time operand sets the system clock"
			}
		}
	case "hostname":
		if len(ops) > 0 {
			e.Level, e.Known, e.Exec = Execute, false, "hostname with an operand sets the host name"
		}
	case "gzip", "gunzip":
		if p.Has("-c", "-t", "-l") {
			e.Level, e.Reads, e.Writes = Read, ops, nil
			break
		}
		decompress := base == "gunzip" || p.Has("-d")
		e.Level, e.Reads, e.Writes, e.Deletes = Write, nil, nil, !p.Has("-k")
		for _, o := range ops {
			out := o + ".gz"
			if decompress {
				out = gzipOutput(o, p.Values("-S"))
			}
			e.Writes = append(e.Writes, o, out)
		}
		if p.Has("-r") || decompress && p.Has("-N") {
			e.Opaque = base + " writes names it reads from the archives or the tree"
		}
	case "set":
		for _, o := range p.Options {
			if o.HasValue && !setOptions[o.Value] {
				e.Level, e.Known, e.UnknownOption = Execute, false, o.Spelled+" "+o.Value
				e.Problem, e.Unknown = shellModeProblem(base, e.UnknownOption), true
				return
			}
		}
	case "shopt":
		if p.Has("-s", "-u") {
			for _, name := range p.OperandWords(args) {
				if !(p.Has("-o") && setOptions[name] || !p.Has("-o") && shoptOptions[name]) {
					e.Level, e.Known, e.UnknownOption = Execute, false, "shopt "+name
					e.Problem, e.Unknown = shellModeProblem(base, name), true
					return
				}
			}
		}
	case "less", "more":
		// +cmd and -p PATTERN are typed as keystrokes: a newline in them
		// ends the command and the next line may be !cmd.
		for _, o := range p.Options {
			if strings.ContainsAny(o.Value, "\n\r") || strings.ContainsAny(o.Spelled, "\n\r") {
				e.Level, e.Known, e.Exec = Execute, false, base+" takes the text of "+o.Spelled+" as keystrokes, which may run a command"
			}
		}
		for _, a := range args {
			if strings.HasPrefix(a, "+") && strings.ContainsAny(a, "\n\r") {
				e.Level, e.Known, e.Exec = Execute, false, base+" takes the text of "+a[:1]+"… as keystrokes, which may run a command"
			}
		}
	case "strings":
		// binutils read the options in @FILE, file names included.
		for _, o := range p.OperandWords(args) {
			if strings.HasPrefix(o, "@") {
				e.Level, e.Known, e.UnknownOption = Execute, false, o
				return
			}
		}
	case "man":
		// A page named by path is formatted with the includes it asks
		// for (.so FILE), any file.
		for _, o := range p.OperandWords(args) {
			if strings.Contains(o, "/") {
				e.Level, e.Known, e.Exec = Execute, false, "man formats a local page, which may include any file"
			}
		}
	case "mktemp":
		for _, o := range p.OperandWords(args) {
			e.Writes = append(e.Writes, o)
			e.Level = Max(e.Level, Write)
		}
	case "grep", "egrep", "fgrep":
		// -d recurse (spelled in full or not) is -r.
		for _, v := range p.Values("-d") {
			if v != "" && strings.HasPrefix("recurse", v) {
				e.Recursive = true
				if len(e.Reads) == 0 {
					e.Reads = []string{"."}
				}
			}
		}
	case "tar":
		// An archive named HOST:FILE is reached through rsh.
		for _, f := range p.Values("-f") {
			if h, _, ok := strings.Cut(f, ":"); ok && !strings.Contains(h, "/") && !p.Has("--force-local") {
				e.Level, e.Known, e.Network = Max(e.Level, Execute), false, true
				e.Exec = "tar -f HOST:FILE runs rsh to reach " + h
				e.Hosts = append(e.Hosts, strings.TrimPrefix(h[strings.LastIndexByte(h, '@')+1:], "@"))
			}
		}
	case "dd":
		for _, o := range ops {
			k, _, ok := strings.Cut(o, "=")
			if !ok || !ddOperands[k] {
				e.Level, e.Known, e.UnknownOption = Execute, false, o
				return
			}
		}
	}
}

// shellMode lists the builtins whose options change how the shell reads
// and runs the rest of the line: an option of theirs the analysis does not
// model leaves the whole line unjudged, in every mode.
var shellMode = map[string]bool{"set": true, "shopt": true}

func shellModeProblem(base, opt string) string {
	return base + " " + opt + " changes how the shell reads or runs what follows, which the analysis does not model"
}

// setOptions are the names set -o and shopt -o take that change nothing
// the analysis relies on: not allexport, keyword, xtrace (PS4 runs),
// history (a history file written), posix, or the like.
var setOptions = map[string]bool{"errexit": true, "nounset": true, "pipefail": true, "noclobber": true,
	"noglob": true, "notify": true, "ignoreeof": true, "monitor": true, "hashall": true, "noexec": true,
	"verbose": true, "physical": true, "errtrace": true, "functrace": true, "emacs": true, "vi": true}

// shoptOptions are the shopt names that change nothing the analysis
// relies on: not the globbing options (dotglob, nocaseglob, extglob,
// globstar), cdable_vars, expand_aliases, extdebug, or the history ones.
var shoptOptions = map[string]bool{"nullglob": true, "failglob": true, "lastpipe": true, "inherit_errexit": true,
	"checkwinsize": true, "checkjobs": true, "huponexit": true, "globasciiranges": true, "xpg_echo": false}

// grammarCode names, per program, the options whose code the program's
// effect reads with a grammar of its language rather than taking it as
// code that may do anything: sed's -e scripts, gawk's -e sources, wget's
// -e wgetrc commands.
var grammarCode = map[string][]string{"sed": {"-e"}, "awk": {"-e"}, "gawk": {"-e"}, "wget": {"-e"}}

// ddOperands are the KEY=VALUE operands of dd.
var ddOperands = map[string]bool{"if": true, "of": true, "bs": true, "ibs": true, "obs": true, "cbs": true,
	"count": true, "skip": true, "seek": true, "iseek": true, "oseek": true, "conv": true, "iflag": true,
	"oflag": true, "status": true}

// gzipOutput is the file gunzip writes for in: in without its suffix.
func gzipOutput(in string, suffixes []string) string {
	for _, s := range append(suffixes, ".gz", "-gz", ".z", "-z", "_z", ".Z") {
		if s != "" && strings.HasSuffix(in, s) && len(in) > len(s) {
			return strings.TrimSuffix(in, s)
		}
	}
	for _, s := range []string{".tgz", ".taz"} {
		if strings.HasSuffix(in, s) {
			return strings.TrimSuffix(in, s) + ".tar"
		}
	}
	return in + ".out"
}

// command is Command's reading of a known program, after its spec, if
// any, parsed its words into p.
func command(base string, info cmdInfo, args []string, dyn []bool, p *Parsed) Effect {
	e := Effect{Level: Execute, Known: true}
	e.Level = info.level
	if info.level == Destructive {
		e.Destructive = base + " cannot be undone"
	}
	if interpreter[base] {
		// An interpreter runs whatever its script says: it may do anything.
		e.Known = false
	}
	switch base {
	case "cd", "pushd", "popd", "dirs":
		e.Navigation = true
		return e
	case "env", "printenv":
		e.Level, e.Secret = Credential, "prints the environment, which holds secrets"
		return e
	case "set", "export", "declare", "typeset":
		dump := true
		for _, a := range args {
			if !strings.HasPrefix(a, "-") || strings.Trim(a, "-pxrgaAfFilntu") != "" {
				dump = false
			}
		}
		if dump {
			e.Level, e.Secret = Credential, "prints the environment, which holds secrets"
			return e
		}
	case "ps":
		if why := psSecret(args); why != "" {
			e.Level, e.Secret = Credential, why
		}
		return e
	case "pgrep":
		if why := pgrepSecret(args); why != "" {
			e.Level, e.Secret = Credential, why
		}
		return e
	case "top":
		if topShowsCmdlines(args) {
			e.Level, e.Secret = Credential, cmdlineSecret
		}
		return e
	}
	var ops []string
	var flags flagSet
	if p != nil {
		ops, flags = specOperands(args, dyn, p, &e)
	} else {
		var m map[string]bool
		ops, m = operands(base, args, dyn, &e)
		flags = flagSet{m: m}
	}
	switch info.kind {
	case kReadAll, kList:
		e.Reads = ops
		if info.kind == kList && len(ops) == 0 {
			// With no operand a lister lists the working directory: it
			// reads what `ls .` reads.
			e.Reads = []string{"."}
		}
	case kReadAfter1:
		if flags.has("-e") || flags.has("-f") || flags.has("--regexp") {
			e.Reads = ops
		} else if len(ops) > 1 {
			e.Reads = ops[1:]
		}
	case kWriteAll, kMove:
		e.Writes = ops
	case kCopy:
		if len(ops) > 0 {
			if t := flagValue(args, "-t", "--target-directory"); t != "" {
				e.Reads, e.Writes = slices.Clone(ops), []string{t}
			} else {
				e.Reads, e.Writes = slices.Clone(ops[:len(ops)-1]), slices.Clone(ops[len(ops)-1:])
			}
		}
	case kWriteAfter1:
		if len(ops) > 1 {
			e.Writes = ops[1:]
		}
	case kExec, kNone:
		// No file operands: an unknown word is only data.
		e.Unknown = false
	}
	switch base {
	case "rm", "rmdir", "unlink", "shred":
		e.Deletes = true
	}
	switch base {
	case "rm":
		if flags.has("-r") || flags.has("-R") || flags.has("--recursive") || flags.has("-f") || flags.has("--force") {
			e.Level, e.Destructive = Destructive, "rm with -r or -f deletes without a way back"
		}
	case "shred":
		e.Level, e.Destructive = Destructive, "shred destroys file contents"
	case "find":
		e.Reads = findPaths(args)
		for i, a := range args {
			switch a {
			case "-fprint", "-fprint0", "-fprintf", "-fls":
				if i+1 < len(args) {
					e.Level, e.Writes = Write, append(e.Writes, args[i+1])
				}
			}
		}
		if flags.has("-delete") {
			e.Level, e.Writes, e.Deletes = Destructive, e.Reads, true
			e.Destructive = "find -delete removes every file it matches"
		}
	case "sort":
		if o := flagValue(args, "-o", "--output"); o != "" {
			e.Level, e.Writes = Write, []string{o}
		}
		e.Reads = ops
		if hasPrefixArg(args, "--compress-program") {
			e.Level, e.Known, e.Exec = Execute, false, "sort --compress-program runs a program"
		}
	case "sed":
		// The script is parsed into its commands (sed.go): e and s///e run
		// commands, w writes files, r reads them.
		sedCommand(args, dyn, &e)
	case "dd":
		e.Level = Read
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "if="); ok {
				e.Reads = append(e.Reads, v)
			}
			if v, ok := strings.CutPrefix(a, "of="); ok {
				e.Writes = append(e.Writes, v)
				e.Level, e.Destructive = Destructive, "dd of= overwrites its target block by block"
			}
		}
	case "curl", "wget":
		e.Network = true
		e.Reads, e.Writes = nil, nil
		if p != nil {
			netEffect(base, args, dyn, p, &e)
		}
	case "scp", "rsync", "sftp":
		// Local operands are read and written; host:path ones are remote.
		e.Reads, e.Writes = nil, nil
		for i, o := range ops {
			remote := strings.Contains(o, ":") && !strings.HasPrefix(o, "/") && !strings.HasPrefix(o, ".")
			if remote {
				e.Network = true
				continue
			}
			if i == len(ops)-1 && len(ops) > 1 {
				e.Writes = append(e.Writes, o)
			} else {
				e.Reads = append(e.Reads, o)
			}
		}
		if base == "rsync" && e.Network {
			e.Level = Network
		}
		if slices.ContainsFunc([]string{"--delete", "--delete-after", "--delete-before", "--delete-during", "--delete-delay",
			"--delete-excluded", "--remove-source-files"}, flags.has) {
			e.Level, e.Destructive = Destructive, base+" --delete removes files at the destination"
		}
	case "psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "clickhouse-client", "cockroach", "duckdb":
		// SQL given on the command line: DROP, TRUNCATE, and DELETE or
		// UPDATE without WHERE cannot be undone.
		var sql []string
		for i, a := range args {
			if (a == "-c" || a == "--command" || a == "-e" || a == "--execute" || a == "-Q" || a == "-q") && i+1 < len(args) {
				sql = append(sql, args[i+1])
			}
			for _, p := range []string{"--command=", "--execute="} {
				if v, ok := strings.CutPrefix(a, p); ok {
					sql = append(sql, v)
				}
			}
		}
		if base == "sqlite3" || base == "duckdb" {
			sql = append(sql, ops...) // sqlite3 DB "SQL"
		}
		if why := destructiveSQL(strings.Join(sql, ";")); why != "" {
			e.Level, e.Destructive = Destructive, why
		}
	case "kubectl", "oc":
		if len(ops) > 0 {
			switch ops[0] {
			case "delete", "drain", "replace", "rollout":
				if ops[0] == "delete" || ops[0] == "drain" || flags.has("--force") {
					e.Level, e.Destructive = Destructive, base+" "+ops[0]+" removes cluster resources"
				}
			case "apply", "create", "patch", "scale", "edit", "set", "label", "annotate":
				e.Level = Execute
			}
		}
		e.Network = true
	case "docker", "podman":
		if len(ops) > 0 {
			switch ops[0] {
			case "rm", "rmi", "kill":
				if flags.has("-f") || flags.has("--force") {
					e.Level, e.Destructive = Destructive, base+" "+ops[0]+" -f removes containers or images by force"
				}
			case "system", "volume", "image", "container", "network", "builder":
				if len(ops) > 1 && (ops[1] == "prune" || ops[1] == "rm") {
					e.Level, e.Destructive = Destructive, base+" "+ops[0]+" "+ops[1]+" deletes data"
				}
			}
		}
	case "terraform", "tofu", "pulumi":
		if len(ops) > 0 && (ops[0] == "destroy" || ops[0] == "apply" && (flags.has("-auto-approve") || flags.has("--auto-approve"))) {
			e.Level, e.Destructive = Destructive, base+" "+ops[0]+" changes real infrastructure"
		}
	case "gh":
		if len(ops) > 0 {
			if g, sub, ok := strings.Cut(ops[0], "."); ok {
				// The table's name of a subcommand (ghWords).
				ops = slices.Concat([]string{g, sub}, ops[1:])
			}
		}
		if len(ops) >= 2 && ops[0] == "repo" && ops[1] == "delete" {
			e.Level, e.Destructive = Destructive, "gh repo delete deletes a repository"
		}
	case "cp":
		if flags.has("-r") || flags.has("-R") || flags.has("-a") || flags.has("--recursive") || flags.has("--archive") {
			e.Opaque = "a recursive copy writes whatever the source tree holds"
			e.Recursive = true
			e.FollowsLinks = flags.has("-L") || flags.has("--dereference")
		}
	case "diff":
		e.Recursive = flags.has("-r") || flags.has("--recursive")
	case "zip":
		// zip ARCHIVE FILE...: the archive is written, the files read.
		if len(ops) > 0 {
			e.Writes, e.Reads = ops[:1], slices.Clone(ops[1:])
		}
		e.Recursive = flags.has("-r") || flags.has("-R") || flags.has("--recurse-paths")
		e.FollowsLinks = !(flags.has("-y") || flags.has("--symlinks"))
		if flags.has("-TT") || hasPrefixArg(args, "--unzip-command") || hasPrefixArg(args, "-TT") {
			e.Level, e.Known, e.Exec = Execute, false, "zip -TT runs the command it is given to test the archive"
		}
	case "unzip":
		e.Level, e.Opaque = Write, "an archive writes whatever it holds"
		if d := flagValue(args, "-d"); d != "" {
			e.Writes = []string{d}
		} else {
			e.Writes = []string{"."}
		}
		if len(ops) > 0 {
			e.Reads = ops[:1]
		}
	case "nc", "ncat", "netcat", "telnet":
		if flags.has("-e") || flags.has("-c") || flags.has("--exec") || flags.has("--sh-exec") || flags.has("--lua-exec") {
			e.Level, e.Known, e.Exec = Execute, false, base+" -e runs a program for the connection"
		}
	case "socat":
		for _, o := range ops {
			if strings.Contains(strings.ToUpper(o), "EXEC:") || strings.Contains(strings.ToUpper(o), "SYSTEM:") {
				e.Level, e.Known, e.Exec = Execute, false, "socat EXEC/SYSTEM runs a program"
			}
		}
	case "git":
		gitEffect(args, dyn, &e)
	case "awk", "gawk":
		// The program is tokenized and judged name by name (awk.go).
		awkCommand(base, args, dyn, &e)
	case "grep", "egrep", "fgrep", "rg", "ag", "ack":
		e.Recursive = base == "rg" || base == "ag" || base == "ack" || flags.has("-r") || flags.has("-R") || flags.has("--recursive") || flags.has("--dereference-recursive")
		if e.Recursive && len(e.Reads) == 0 {
			// With no file operand, a recursive search reads the working
			// directory.
			e.Reads = []string{"."}
		}
		if base == "rg" || base == "ag" {
			// A positive glob on the command line, or an ignore file of
			// the caller's choosing, can bring hidden files back into a
			// ripgrep search, as --hidden does; a type or a negated glob
			// cannot.
			// flags holds every spelling of every option given, however
			// written (rg -n. KEY, rg -iu KEY).
			e.SkipsHidden = !(flags.has("--hidden") || flags.has("-.") || flags.has("--unrestricted") || flags.has("-u") ||
				flags.has("--ignore-file") || slices.ContainsFunc(args, func(a string) bool {
				return a == "--hidden" || a == "-." || strings.HasPrefix(a, "-u") && strings.Trim(a[1:], "u") == "" ||
					strings.HasPrefix(a, "--ignore-file")
			})) && !positiveGlob(args)
		}
		e.FollowsLinks = flags.has("-R") || flags.has("--dereference-recursive") || base != "grep" && base != "egrep" && base != "fgrep" && (flags.has("-L") || flags.has("--follow"))
		e.NameGlob = nameFilter(base, args)
		if f := flagValue(args, "-f", "--file"); f != "" {
			e.Reads = append(e.Reads, f)
		}
		if base == "rg" && (flags.has("--pre") || hasPrefixArg(args, "--pre=")) {
			e.Level, e.Known, e.Exec = Execute, false, "rg --pre runs a program on every file"
		}
	case "jq", "yq":
		// The program is tokenized: env and $ENV read the environment,
		// --rawfile and load() read files, -i writes them (jq.go).
		jqCommand(base, args, dyn, &e)
	case "uniq", "xxd":
		// uniq IN OUT and xxd [-r] IN OUT write their second operand.
		if len(ops) >= 2 {
			e.Level, e.Reads, e.Writes = Write, ops[:1], ops[1:2]
		}
	case "tree":
		if o := flagValue(args, "-o"); o != "" {
			e.Level, e.Writes = Write, []string{o}
		}
	case "fd", "fdfind":
		// fd's first operand is its pattern; the rest are the directories
		// it searches, the working directory when there are none.
		if len(ops) > 1 {
			e.Reads = ops[1:]
		} else {
			e.Reads = []string{"."}
		}
		if flags.has("-x") || flags.has("-X") || flags.has("--exec") || flags.has("--exec-batch") {
			e.Level, e.Known, e.Exec = Execute, false, base+" -x runs a command for every file it finds"
		}
	case "man":
		if flags.has("-P") || flags.has("--pager") || flags.has("-H") || flags.has("--html") || hasPrefixArg(args, "--pager=") {
			e.Level, e.Known, e.Exec = Execute, false, "man -P runs its pager command"
		}
	case "tar":
		tarEffect(args, p, &e)
	case "patch":
		// patch writes the files its diff names, which the words do not.
		e.Opaque = "patch writes the files its diff names"
	case "python", "python3":
		if len(args) > 1 && args[0] == "-m" {
			switch args[1] {
			case "pytest":
				var restDyn []bool
				if len(dyn) > 2 {
					restDyn = dyn[2:]
				}
				pytestModule(args[2:], restDyn, &e)
			case "pip", "pip3":
				if len(args) > 2 {
					switch args[2] {
					case "install", "download", "wheel", "index", "search":
						e.Network = true
					}
				}
			}
		}
	}
	switch base {
	case "npm", "yarn", "pnpm", "bun", "pip", "pip3", "cargo", "go", "uv", "poetry":
		if len(ops) > 0 {
			switch ops[0] {
			case "install", "i", "add", "a", "ci", "get", "download", "update", "up", "upgrade", "fetch", "publish":
				e.Network = true
			}
		}
	case "chmod", "chown":
		// Recursive permission changes over a tree are hard to undo, but
		// stay writes; the paths decide.
	}
	if info.level == Network {
		e.Network = true
	}
	if base != "curl" && base != "wget" {
		e.Hosts = append(e.Hosts, hostsIn(base, args, dyn)...)
	}
	return e
}

// valueFlags lists, per program, the options that take the next word as
// their value, so that value is not mistaken for a file operand.
// It is built at its first use.
var valueFlags = sync.OnceValue(func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for prog, fl := range map[string]string{
		"rg": "-e -f -g -t -T -m -A -B -C -j -r -d -M -E --glob --iglob --type --type-not --max-count --context --after-context --before-context " +
			"--replace --max-depth --max-columns --max-filesize --encoding --type-add --type-clear --sort --sortr --color --colors " +
			"--ignore-file --path-separator --threads --pre-glob --context-separator --field-match-separator --field-context-separator " +
			"--dfa-size-limit --regex-size-limit --engine --file --regexp",
		"sed": "-e -f -l --expression --file", "awk": "-f -v -F", "gawk": "-f -v -F",
		"find": "",
		"ssh":  "-p -i -l -o -F -J -L -R -D -b -c -E -e -m -O -Q -S -W -w",
		"nc":   "-p -s -w -i -q -x -X -e -c -I -O -T -V", "ncat": "-p -s -w -i -e -c --exec --sh-exec -x",
		"netcat": "-p -s -w -i -q -e -c", "telnet": "-l -n -b",
		"scp": "-P -i -o -F -l -S -J -c", "sftp": "-P -i -o -F -l -S -J -c", "rsync": "-e --rsh --exclude --include",
		"git":  "-C -c",
		"zip":  "-b -n -t -tt -x -i -TT -O -P --unzip-command --password --output-file --temp-path --exclude --include",
		"psql": "-c -d -U -h -p -f --command", "mysql": "-e -u -p -h -D -P --execute",
		"kubectl": "-n --namespace --context -l -o -f -c", "docker": "-H -c --context -f", "tree": "-o -L -I -P", "fd": "-e -E -t -d -x -X --exec --exec-batch",
		"man": "-P -M -S --pager", "yq": "-o -p", "jq": "--arg --argjson --slurpfile --rawfile --indent",
	} {
		set := map[string]bool{}
		for _, f := range strings.Fields(fl) {
			set[f] = true
		}
		m[prog] = set
	}
	// Global and subcommand options of tools judged by rule matching.
	for _, e := range []struct{ prog, list string }{
		{"git", "-C -c --git-dir --work-tree --namespace --exec-path"},
		{"kubectl", "-n --namespace --context --kubeconfig --cluster --user -l --selector -o --output -c --container"},
		{"helm", "-n --namespace --kube-context --kubeconfig"},
		{"npm", "--registry --prefix -w --workspace --userconfig --cache"},
		{"yarn", "--cwd"},
		{"pnpm", "-C --dir --filter -F"},
		{"docker", "-H --host --context -c --config -f --file"},
		{"ssh", "-p -i -l -o -F -J -L -R -D"},
		{"gh", "-R --repo"},
		{"cargo", "-p --package --manifest-path"},
		{"go", "-C"},
	} {
		if m[e.prog] == nil {
			m[e.prog] = map[string]bool{}
		}
		for _, f := range strings.Fields(e.list) {
			m[e.prog][f] = true
		}
	}
	return m
})

// TakesValue reports whether flag, given to prog, takes the next word as
// its value (git -C DIR, curl -X METHOD, head -n N). An option the
// program's spec does not know takes one when valueFlags says so (ssh -J
// HOST), so that a rule that names it reads its value as it did before
// the program had a spec.
//
// For a program with subcommands, the options its spec reads before the
// subcommand (npm --loglevel LEVEL, cargo --color WHEN) take a value as
// the spec says, so that npm --loglevel test run deploy is not read as
// npm test; the subcommands' own options fall back to valueFlags.
func TakesValue(prog, flag string) bool {
	if sp := Lookup(prog); sp != nil {
		if _, o, ok := sp.Canonical(flag); ok {
			return o.Value != ValNone && !o.Optional
		}
	}
	return valueFlags()[prog][flag]
}

// longNames lists, per program, its long options, so that an unambiguous
// abbreviation (rm --rec --for) is read as the option it abbreviates, as
// GNU getopt does.
var longNames = map[string][]string{
	"sed":   {"in-place", "expression", "file", "quiet", "silent"},
	"rsync": {"delete", "delete-after", "delete-before", "remove-source-files", "recursive"},
	"git": {"force", "force-with-lease", "force-if-includes", "mirror", "delete", "prune", "hard", "merge", "keep",
		"soft", "mixed", "all", "tags", "no-index", "contents", "output", "staged", "worktree", "expire", "exec-path"},
}

// expandLong returns the long options that name ("--rec") may stand for
// with prog: itself, and every option it abbreviates. An ambiguous
// abbreviation counts as all of them, which is the cautious reading.
func expandLong(prog, name string) []string {
	short := strings.TrimPrefix(name, "--")
	out := []string{name}
	if len(short) < 2 {
		return out
	}
	for _, full := range longNames[prog] {
		if full == short {
			return out
		}
		if strings.HasPrefix(full, short) {
			out = append(out, "--"+full)
		}
	}
	return out
}

// operands returns the words that are not flags (nor values of flags that
// take one), and the flags present. A dynamic operand sets e.Unknown.
func operands(prog string, args []string, dyn []bool, e *Effect) ([]string, map[string]bool) {
	flags := map[string]bool{}
	takes := valueFlags()[prog]
	var ops []string
	end, skip := false, false
	for i, a := range args {
		if skip {
			skip = false
			continue
		}
		if i < len(dyn) && dyn[i] {
			e.Unknown = true
			continue
		}
		if !end && takes[a] {
			flags[a] = true
			skip = true
			continue
		}
		switch {
		case end || a == "-" || !strings.HasPrefix(a, "-"):
			ops = append(ops, a)
		case a == "--":
			end = true
		case strings.HasPrefix(a, "--"):
			n, _, _ := strings.Cut(a, "=")
			for _, f := range expandLong(prog, n) {
				flags[f] = true
			}
		default:
			flags[a] = true
			for _, r := range a[1:] {
				flags["-"+string(r)] = true
			}
		}
	}
	return ops, flags
}

// specOperands is operands for a command line its spec parsed: the
// operand words, and every spelling of every option given. A dynamic
// operand sets e.Unknown.
func specOperands(args []string, dyn []bool, p *Parsed, e *Effect) ([]string, flagSet) {
	ops := make([]string, 0, len(p.Operands))
	for _, i := range p.Operands {
		if i < len(dyn) && dyn[i] {
			e.Unknown = true
			continue
		}
		ops = append(ops, args[i])
	}
	return ops, flagSet{p: p}
}

// flagSet says which options a command line gives, under any of their
// spellings: read from a spec's parse, or from the words as they are for a
// program without a spec.
type flagSet struct {
	p *Parsed
	m map[string]bool
}

// has reports whether the option spelled name was given.
func (f flagSet) has(name string) bool {
	if f.p != nil {
		for q := f.p; q != nil; q = q.Sub {
			for _, o := range q.Options {
				for _, n := range o.Option.Names {
					if n == name {
						return true
					}
				}
			}
		}
		return false
	}
	return f.m[name]
}

// OperandIndexes returns the positions in args of the operands of prog:
// the words that are neither options nor the values of options that take
// one, as the analysis of prog reads them.
func OperandIndexes(prog string, args []string) []int {
	if sp := Lookup(prog); sp != nil && !sp.HasSubcommands() {
		if p := sp.Parse(args, nil); p.Unknown == "" {
			return p.Operands
		}
	}
	takes := valueFlags()[prog]
	var out []int
	end := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !end && takes[a]:
			i++ // the option's value
		case end || a == "-" || !strings.HasPrefix(a, "-"):
			out = append(out, i)
		case a == "--":
			end = true
		}
	}
	return out
}

// NamesOnly reports whether prog, given args, takes the paths among its
// arguments as names and opens none of them: echo, printf, basename,
// dirname, test, and the git commands that list, index or delete paths
// without showing, copying or staging their contents (git status .env,
// git rm --cached .env).
func NamesOnly(prog string, args []string) bool {
	switch prog {
	case "echo", "printf", "basename", "dirname", "test", "[", "[[":
		return true
	case "git":
		ops := OperandIndexes("git", args)
		if len(ops) == 0 {
			return false
		}
		switch args[ops[0]] {
		case "status", "ls-files", "check-ignore", "check-attr", "rm", "restore", "checkout", "clean", "reset":
			return true
		}
	}
	return false
}

// patternOptions are, for each program, the options whose value is a name
// pattern or text, not a file the program opens.
var patternOptions = sync.OnceValue(func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for progs, opts := range map[string]string{
		"grep egrep fgrep rg ag ack": "-e --regexp -g --glob --iglob --include --exclude --exclude-dir --ignore --ignore-dir -G --file-search-regex",
		"find":                       "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname",
		"fd fdfind":                  "-e --extension -E --exclude -g --glob",
		"git":                        "-m --message",
		"tar":                        "--exclude --exclude-tag",
		"zip":                        "-x -i --exclude --include",
		"rsync":                      "--exclude --include --filter -f",
		"eslint prettier stylelint":  "--ignore-pattern",
		"pytest":                     "-k -m",
	} {
		set := map[string]bool{}
		for _, o := range strings.Fields(opts) {
			set[o] = true
		}
		for _, p := range strings.Fields(progs) {
			m[p] = set
		}
	}
	return m
})

// PatternArgs marks the arguments of prog that are patterns or text, not
// files: a search's pattern operand, and the value of an option that takes
// a name pattern or a message (find -name .env, tar --exclude=.env,
// git commit -m "…"). The result is parallel to args.
func PatternArgs(prog string, args []string) []bool {
	out := make([]bool, len(args))
	if i := SearchPattern(prog, args); i >= 0 {
		out[i] = true
	}
	opts := patternOptions()[prog]
	for i, a := range args {
		if i > 0 && opts[args[i-1]] {
			out[i] = true
		}
		if opt, _, ok := strings.Cut(a, "="); ok && opts[opt] {
			out[i] = true
		}
	}
	return out
}

// IsSearch reports whether prog is a search program: grep and its kin,
// ripgrep, ag, ack. Given no file, a recursive one reads the working
// directory.
func IsSearch(prog string) bool {
	switch prog {
	case "grep", "egrep", "fgrep", "rg", "ag", "ack":
		return true
	}
	return false
}

// SearchPattern returns the position in args of the pattern operand of a
// search program (grep, rg, ag, ack), or -1 when it has none: the pattern
// is given with -e or -f, or prog is no search program.
func SearchPattern(prog string, args []string) int {
	if !IsSearch(prog) {
		return -1
	}
	for _, a := range args {
		if a == "-e" || a == "-f" || a == "--regexp" || a == "--file" || strings.HasPrefix(a, "--regexp=") ||
			strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "-e") && len(a) > 2 ||
			a == "--files" || a == "--type-list" || (prog == "ack" && (a == "-f" || a == "-g")) {
			return -1 // no pattern operand: every operand is a path
		}
	}
	if ops := OperandIndexes(prog, args); len(ops) > 0 {
		return ops[0]
	}
	return -1
}

func flagValue(args []string, names ...string) string {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1]
			}
			if strings.HasPrefix(n, "--") && len(a) > len(n) && a[len(n)] == '=' && strings.HasPrefix(a, n) {
				return a[len(n)+1:]
			}
		}
	}
	return ""
}

// nameFilter returns the one file-name glob a search is limited to
// (grep --include, rg -g), or "" when it has none, several, or a negated
// one: then it may read any file of the tree.
func nameFilter(base string, args []string) string {
	var names []string
	switch base {
	case "grep", "egrep", "fgrep":
		names = []string{"--include"}
	case "rg":
		names = []string{"-g", "--glob", "--iglob"}
	default:
		return ""
	}
	var globs []string
	for i, a := range args {
		for _, n := range names {
			switch {
			case a == n && i+1 < len(args):
				globs = append(globs, args[i+1])
			case strings.HasPrefix(a, n+"=") && strings.HasPrefix(n, "--"):
				globs = append(globs, a[len(n)+1:])
			case n == "-g" && strings.HasPrefix(a, "-g") && len(a) > 2:
				globs = append(globs, a[2:])
			}
		}
	}
	if len(globs) != 1 || !SimpleNameGlob(globs[0]) {
		return ""
	}
	return globs[0]
}

// positiveGlob reports whether a ripgrep command line holds a glob that is
// not a negation (-g '*.env', not -g '!vendor').
func positiveGlob(args []string) bool {
	for i, a := range args {
		var g string
		switch {
		case (a == "-g" || a == "--glob" || a == "--iglob") && i+1 < len(args):
			g = args[i+1]
		case strings.HasPrefix(a, "--glob=") || strings.HasPrefix(a, "--iglob="):
			_, g, _ = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-g") && len(a) > 2:
			g = a[2:]
		default:
			continue
		}
		if !strings.HasPrefix(g, "!") {
			return true
		}
	}
	return false
}

// SimpleNameGlob reports whether g is a glob on file names alone that
// path.Match reads as the tools do: no directories, no braces, no
// negation, well formed. Anything else may match files a simple reading
// would miss, so it filters nothing.
func SimpleNameGlob(g string) bool {
	if g == "" || strings.HasPrefix(g, "!") || strings.ContainsAny(g, "/{}\\") {
		return false
	}
	_, err := path.Match(g, "")
	return err == nil
}

func hasPrefixArg(args []string, p string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// destructiveSQL says why SQL text cannot be undone: DROP, TRUNCATE, or a
// DELETE or UPDATE without a WHERE clause. It returns "" otherwise.
func destructiveSQL(sql string) string {
	for _, stmt := range strings.Split(strings.ToUpper(sql), ";") {
		f := strings.Fields(stmt)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "DROP", "TRUNCATE":
			return f[0] + " cannot be undone"
		case "DELETE", "UPDATE":
			if !slices.Contains(f, "WHERE") {
				return f[0] + " without WHERE changes every row"
			}
		case "ALTER":
			if slices.Contains(f, "DROP") {
				return "ALTER … DROP removes data"
			}
		}
	}
	return ""
}

// findPaths returns find's starting points: the words before the first
// expression.
func findPaths(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		out = []string{"."}
	}
	return out
}

func gitEffect(args []string, dyn []bool, e *Effect) {
	// Skip global options to find the subcommand.
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" {
			i += 2
			continue
		}
		if strings.HasPrefix(a, "-") {
			i++
			continue
		}
		break
	}
	i = min(i, len(args)) // git -C with no value: nothing runs
	var repo []string
	for j := 0; j < i; j++ {
		a := args[j]
		if a == "-c" && j+1 < len(args) && inertGitConfig(args[j+1]) {
			j++
			continue
		}
		if a == "-c" || strings.HasPrefix(a, "--exec-path") || strings.HasPrefix(a, "--config-env") {
			// -c core.pager=..., alias.x='!cmd' and friends run commands.
			e.Level, e.Known, e.Exec = Execute, false, "git "+a+" can run any command"
			return
		}
		if (a == "-C" || a == "--git-dir" || a == "--work-tree") && j+1 < len(args) {
			repo = append(repo, args[j+1])
		}
		for _, p := range []string{"--git-dir=", "--work-tree="} {
			if v, ok := strings.CutPrefix(a, p); ok {
				repo = append(repo, v)
			}
		}
	}
	defer func() {
		// The repository another directory names is read (and written by
		// the subcommands that write).
		if e.Level >= Write && e.Level != Network {
			e.Writes = append(e.Writes, repo...)
		} else {
			e.Reads = append(e.Reads, repo...)
		}
	}()
	if i >= len(args) {
		e.Level = Read
		return
	}
	sub, rest := args[i], args[i+1:]
	restDyn := []bool(nil)
	if len(dyn) > i+1 {
		restDyn = dyn[i+1:]
	}
	var tmp Effect
	ops, flags := operands("git", rest, restDyn, &tmp)
	// Subcommands that talk to a remote reach the network, and the hosts
	// their words name are checked (gitnet.go), whatever else they do.
	r := gitRemoteEffect(sub, rest, ops, flags)
	if r.network {
		e.Network = true
		e.Hosts = append(e.Hosts, r.hosts...)
	}
	for _, a := range rest {
		for _, p := range []string{"--output=", "--output-directory="} {
			if v, ok := strings.CutPrefix(a, p); ok {
				e.Writes = append(e.Writes, v)
			}
		}
		if a == "-O" || strings.HasPrefix(a, "--open-files-in-pager") || strings.HasPrefix(a, "-O") ||
			strings.HasPrefix(a, "--upload-pack") || strings.HasPrefix(a, "--receive-pack") || strings.HasPrefix(a, "--exec=") ||
			strings.HasPrefix(a, "--extcmd") || a == "--ext-diff" || strings.HasPrefix(a, "--config=") {
			e.Level, e.Known, e.Exec = max(e.Level, Execute), false, "git "+sub+" "+a+" runs another program"
			if r.network {
				e.Level = Network
			}
			return
		}
	}
	for k, a := range rest {
		if (a == "--output" || a == "-o" && (sub == "format-patch" || sub == "archive")) && k+1 < len(rest) {
			e.Writes = append(e.Writes, rest[k+1])
		}
	}
	// Subcommands whose operands are paths they write: the protected-path
	// and sandbox checks see them in every mode.
	switch {
	case sub == "mv" && len(ops) >= 2:
		e.Writes = append(e.Writes, ops...)
	case sub == "init" && len(ops) >= 1:
		e.Writes = append(e.Writes, ops[len(ops)-1])
	case sub == "clone" && len(ops) >= 2:
		e.Writes = append(e.Writes, ops[len(ops)-1])
	case (sub == "worktree" && len(ops) >= 2 && ops[0] == "add") || (sub == "bundle" && len(ops) >= 2 && ops[0] == "create"):
		e.Writes = append(e.Writes, ops[1])
	case sub == "branch" && (flags["--edit-description"]):
		e.Level, e.Known, e.Exec = max(e.Level, Execute), false, "git branch --edit-description runs the configured editor"
	}
	if len(e.Writes) > 0 && (sub == "diff" || sub == "log" || sub == "show" || sub == "format-patch") {
		defer func() { e.Level = max(e.Level, Write) }()
	}
	switch sub {
	case "grep":
		e.Level = Read
		if flags["--no-index"] || flags["--untracked"] {
			// Files the index does not hold are searched, credentials
			// among them: the tree itself is read.
			e.Recursive = true
			if e.Reads = slices.Clone(ops[min(1, len(ops)):]); len(e.Reads) == 0 {
				e.Reads = []string{"."}
			}
		}
	case "diff", "blame":
		e.Level = Read
		if flags["--no-index"] {
			e.Reads = append(e.Reads, ops...)
		}
		for k, a := range rest {
			if a == "--contents" && k+1 < len(rest) {
				e.Reads = append(e.Reads, rest[k+1])
			}
			if v, ok := strings.CutPrefix(a, "--contents="); ok {
				e.Reads = append(e.Reads, v)
			}
		}
		if sub == "blame" && len(ops) > 0 {
			e.Reads = append(e.Reads, ops[len(ops)-1])
		}
	case "show", "cat-file":
		e.Level = Read
		// REV:path shows a committed file's contents.
		for _, o := range ops {
			if _, p, ok := strings.Cut(o, ":"); ok && p != "" {
				e.Reads = append(e.Reads, p)
			}
		}
	case "status", "log", "rev-parse", "ls-files", "ls-tree", "shortlog",
		"describe", "rev-list", "whatchanged", "help", "version", "name-rev", "merge-base":
		e.Level = Read
	case "rm":
		e.Level = Write
		if flags["-f"] || flags["--force"] {
			e.Level, e.Destructive = Destructive, "git rm -f deletes files even with uncommitted changes"
		}
	case "config":
		e.Level = Read
		set := len(ops) >= 2 || flags["--unset"] || flags["--unset-all"] || flags["--add"] || flags["--replace-all"] ||
			flags["--edit"] || flags["-e"] || flags["--remove-section"] || flags["--rename-section"]
		if flags["--get"] || flags["--get-all"] || flags["--list"] || flags["-l"] || flags["--get-regexp"] {
			set = false
		}
		if set {
			// Settings such as core.hooksPath, core.pager or
			// core.sshCommand run code: the file written is protected.
			e.Level = Write
			file := ""
			for k, a := range rest {
				if (a == "--file" || a == "-f") && k+1 < len(rest) {
					file = rest[k+1]
				}
				if v, ok := strings.CutPrefix(a, "--file="); ok {
					file = v
				}
			}
			switch {
			case file != "":
				e.Writes = []string{file, ".git/config"}
			case flags["--global"]:
				e.Writes = []string{"~/.gitconfig"}
			case flags["--system"]:
				e.Writes = []string{"/etc/gitconfig"}
			default:
				e.Writes = []string{".git/config"}
			}
		}
	case "reflog":
		e.Level = Read
		if len(ops) > 0 && (ops[0] == "expire" || ops[0] == "delete") {
			e.Level, e.Destructive = Destructive, "git reflog "+ops[0]+" removes the records that recover lost commits"
		}
	case "remote", "submodule":
		e.Level = Read
		if sub == "submodule" {
			e.Level, e.Network = Network, true
		}
		if len(ops) > 0 {
			switch ops[0] {
			case "add", "set-url", "rename", "remove", "rm", "set-head", "set-branches", "init", "update", "sync", "deinit":
				// These rewrite .git/config (and .gitmodules), where a URL
				// or an ext:: transport can run code.
				e.Level = max(e.Level, Write)
				e.Writes = append(e.Writes, ".git/config")
				if sub == "submodule" {
					e.Writes = append(e.Writes, ".gitmodules")
				}
			}
		}
	case "branch", "tag", "stash", "worktree":
		e.Level = Read
		if len(ops) > 0 || flags["-d"] || flags["-D"] || flags["-m"] || flags["--delete"] || flags["-f"] {
			e.Level = Write
		}
		if sub == "stash" {
			// A bare git stash is git stash push: it saves the changes into
			// .git and resets the working tree; only list and show read.
			e.Level = Write
			if len(ops) > 0 && (ops[0] == "list" || ops[0] == "show") {
				e.Level = Read
			}
		}
		if sub == "branch" && (flags["-D"] || (flags["-d"] || flags["--delete"]) && (flags["-f"] || flags["--force"])) {
			e.Level, e.Destructive = Destructive, "git branch -D deletes a branch even if it is not merged"
		}
		if sub == "stash" && len(ops) > 0 && (ops[0] == "drop" || ops[0] == "clear") {
			e.Level, e.Destructive = Destructive, "git stash "+ops[0]+" throws stashed work away"
		}
	case "push":
		e.Level, e.Network = Network, true
		if flags["-f"] || flags["--force"] || flags["--force-with-lease"] || flags["--force-if-includes"] || flags["--mirror"] ||
			flags["--delete"] || flags["-d"] || flags["--prune"] {
			e.Level, e.Destructive = Destructive, "git push with force or delete rewrites or removes remote history"
		}
		for _, o := range ops {
			if strings.HasPrefix(o, "+") || strings.HasPrefix(o, ":") {
				e.Level, e.Destructive = Destructive, "git push "+o+" force-updates or deletes a remote ref"
			}
		}
	case "fetch", "pull", "clone", "ls-remote":
		e.Level, e.Network = Network, true
	case "reset":
		e.Level = Write
		if flags["--hard"] || flags["--merge"] || flags["--keep"] {
			e.Level, e.Destructive = Destructive, "git reset --hard discards uncommitted changes"
		}
	case "clean":
		e.Level = Write
		if flags["-f"] || flags["--force"] {
			e.Level, e.Destructive = Destructive, "git clean -f deletes untracked files"
		}
	case "checkout", "restore":
		// Checking out or restoring paths overwrites their uncommitted
		// changes; switching branches does not.
		e.Level = Write
		paths := slices.Contains(rest, "--")
		for _, o := range ops {
			if o == "." || o == "./" || strings.HasPrefix(o, ":") || strings.HasSuffix(o, "/") {
				paths = true
			}
		}
		if sub == "restore" && len(ops) > 0 && !(flags["--staged"] || flags["-S"]) || flags["--worktree"] || flags["-W"] {
			paths = true
		}
		if paths {
			e.Level, e.Destructive = Destructive, "git "+sub+" of paths discards their uncommitted changes"
		}
		if flags["-f"] || flags["--force"] {
			e.Level, e.Destructive = Destructive, "git "+sub+" --force discards uncommitted changes"
		}
	case "filter-branch", "filter-repo":
		e.Level, e.Destructive = Destructive, "git "+sub+" rewrites history"
	default:
		e.Level = Write
	}
	if r.network {
		e.Level = max(e.Level, Network)
	}
	if sub == "send-pack" {
		for _, o := range ops[min(1, len(ops)):] {
			if strings.HasPrefix(o, "+") || strings.HasPrefix(o, ":") || flags["--force"] || flags["-f"] || flags["--mirror"] {
				e.Level, e.Destructive = Destructive, "git send-pack with force or delete rewrites or removes remote history"
			}
		}
	}
	if r.exec != "" {
		e.Level, e.Known, e.Exec = max(e.Level, Execute), false, r.exec
	}
	if r.secret != "" {
		e.Level, e.Secret = max(e.Level, Credential), r.secret
	}
}

// tarEffect is what tar does, from its parsed words: extracting writes
// whatever the archive holds below the target directory; creating,
// appending or updating reads the named trees and writes the archive;
// listing, comparing and testing read the archive.
func tarEffect(args []string, p *Parsed, e *Effect) {
	if p == nil {
		e.Level, e.Known = Execute, false
		return
	}
	files := p.Values("-f")
	file := ""
	if len(files) > 0 {
		file = files[len(files)-1]
	}
	ops := p.OperandWords(args)
	e.Reads, e.Writes = nil, nil
	switch {
	case p.Has("-x"):
		e.Level = Write
		e.Opaque = "an archive writes whatever it holds"
		dirs := p.Values("-C")
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		e.Writes = append(e.Writes, dirs...)
		if file != "" {
			e.Reads = []string{file}
		}
		if p.Has("--to-command", "-O") {
			e.Opaque = ""
		}
	case p.Has("-c", "-r", "-u", "-A", "--delete"):
		e.Level = Write
		e.Recursive = !p.Has("--no-recursion")
		e.FollowsLinks = p.Has("-h")
		if file != "" && file != "-" {
			e.Writes = []string{file}
		}
		if p.Has("-r", "-u", "-A", "--delete") && file != "" && file != "-" {
			e.Reads = append(e.Reads, file)
		}
		// What goes into the archive is read, relative to the last -C.
		dir := ""
		if d := p.Values("-C"); len(d) > 0 {
			dir = d[len(d)-1]
		}
		for _, o := range ops {
			if dir != "" && !strings.HasPrefix(o, "/") {
				o = path.Join(dir, o)
			}
			e.Reads = append(e.Reads, o)
		}
		if p.Has("-A") {
			e.Reads = append(e.Reads, ops...)
		}
	default:
		e.Level = Read
		if file != "" {
			e.Reads = []string{file}
		}
	}
}

// hostsIn returns the hosts named by URLs and scp/rsync/ssh targets.
func hostsIn(name string, args []string, dyn []bool) []string {
	var hosts []string
	for i, a := range args {
		if i < len(dyn) && dyn[i] {
			continue
		}
		if strings.Contains(a, "://") {
			if u, err := url.Parse(a); err == nil && u.Hostname() != "" {
				hosts = append(hosts, strings.ToLower(u.Hostname()))
			}
			continue
		}
		switch path.Base(name) {
		case "nc", "ncat", "netcat", "telnet":
			// The first operand is the host.
			if !strings.HasPrefix(a, "-") && !(i > 0 && TakesValue(path.Base(name), args[i-1])) {
				return append(hosts, strings.ToLower(strings.Trim(a, "[]")))
			}
			continue
		case "socat":
			// ADDRESS-TYPE:host:port, e.g. TCP:169.254.169.254:80.
			parts := strings.Split(a, ":")
			if len(parts) >= 3 && strings.Contains(strings.ToUpper(parts[0]), "TCP") || len(parts) >= 3 && strings.Contains(strings.ToUpper(parts[0]), "UDP") ||
				len(parts) >= 3 && strings.Contains(strings.ToUpper(parts[0]), "SSL") {
				hosts = append(hosts, strings.ToLower(strings.Join(parts[1:len(parts)-1], ":")))
			}
			continue
		case "ssh", "scp", "sftp", "rsync":
			if strings.HasPrefix(a, "-") || (i > 0 && valueFlags()[name][args[i-1]]) {
				continue
			}
			h := a
			if at := strings.LastIndexByte(h, '@'); at >= 0 {
				h = h[at+1:]
			}
			if c := strings.IndexByte(h, ':'); c >= 0 {
				h = h[:c]
			} else if name != "ssh" {
				continue
			}
			if h != "" && !strings.Contains(h, "/") {
				hosts = append(hosts, strings.ToLower(h))
			}
			if name == "ssh" {
				return hosts
			}
		}
	}
	return hosts
}
