package risk

import "strings"

// What other processes' command lines and environments show is a
// credential: programs are started with tokens, passwords and webhook URLs
// in their arguments (curl -H "Authorization: …", a server's --notify
// URL, a database URL with its password) and in their environments. The
// readings below let through only the forms of ps, pgrep and top known to
// show no more than process names and numbers; every other form — a
// full-format option, a wide listing, a format naming the arguments, a
// BSD option (whose formats show the arguments), or one not known — is
// a credential read.

// cmdlineSecret is the reason given for a command that shows command
// lines.
const cmdlineSecret = "prints the command lines of processes, which may hold secrets"

// envSecret is the reason given for a command that shows environments.
const envSecret = "prints the environment of processes"

// psSafeFields are the ps format fields that show no command line or
// environment.
var psSafeFields = map[string]bool{
	"pid": true, "ppid": true, "pgid": true, "pgrp": true, "sid": true, "sess": true, "tid": true, "lwp": true,
	"spid": true, "tgid": true, "comm": true, "ucmd": true, "ucomm": true, "fname": true, "user": true,
	"euser": true, "ruser": true, "suser": true, "fuser": true, "uname": true, "uid": true, "euid": true,
	"ruid": true, "suid": true, "fuid": true, "group": true, "egroup": true, "rgroup": true, "gid": true,
	"egid": true, "rgid": true, "%cpu": true, "pcpu": true, "%mem": true, "pmem": true, "rss": true,
	"rssize": true, "rsz": true, "vsz": true, "vsize": true, "sz": true, "size": true, "stat": true,
	"state": true, "s": true, "tty": true, "tt": true, "tname": true, "time": true, "cputime": true,
	"cputimes": true, "etime": true, "etimes": true, "start": true, "start_time": true, "stime": true,
	"lstart": true, "bsdstart": true, "bsdtime": true, "nice": true, "ni": true, "pri": true,
	"priority": true, "psr": true, "nlwp": true, "thcount": true, "wchan": true, "flags": true, "f": true,
	"c": true, "cp": true, "cls": true, "class": true, "policy": true, "sched": true, "rtprio": true,
	"maj_flt": true, "min_flt": true, "majflt": true, "minflt": true, "pss": true, "uss": true,
	"drs": true, "trs": true, "label": true,
}

// psFormatSafe reports whether a ps format list (-o pid,comm=NAME) or sort
// list (--sort=-etime,+pid) names only safe fields.
func psFormatSafe(list string) bool {
	if strings.TrimSpace(list) == "" {
		return false
	}
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		name, _, _ := strings.Cut(f, "=")
		name, _, _ = strings.Cut(name, ":")
		name = strings.TrimLeft(name, "+-")
		if !psSafeFields[strings.ToLower(name)] {
			return false
		}
	}
	return true
}

// psSecret returns why ps with args shows secrets, or "" when it shows
// only what psSafeFields name.
func psSecret(args []string) string {
	const (
		flags  = "eAadNHjlyMZLTVh" // UNIX options that change no column to a command line
		values = "pqsuUgGCtoO"     // UNIX options that take a value
	)
	longFlags := map[string]bool{"--no-headers": true, "--no-heading": true, "--headers": true, "--forest": true,
		"--deselect": true, "--help": true, "--version": true}
	longValues := map[string]bool{"--pid": true, "--ppid": true, "--quick-pid": true, "--user": true, "--User": true,
		"--group": true, "--Group": true, "--sid": true, "--tty": true, "--sort": true, "--format": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			continue
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a, "=")
			switch {
			case longFlags[name] && !hasVal:
			case longValues[name]:
				if !hasVal {
					if i+1 >= len(args) {
						return cmdlineSecret
					}
					i++
					val = args[i]
				}
				// Sorting by a command line tells it too: the order of
				// one's own processes around another's spells it out.
				if (name == "--format" || name == "--sort") && !psFormatSafe(val) {
					return cmdlineSecret
				}
			default:
				return cmdlineSecret
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.Contains(a, "x") {
				// procps reads a dashed cluster with x in it as BSD
				// options (ps -aux, ps -auxe).
				if strings.Contains(a[1:], "e") {
					return envSecret
				}
				return cmdlineSecret
			}
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch {
				case strings.IndexByte(values, c) >= 0:
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return cmdlineSecret
						}
						i++
						val = args[i]
					}
					if (c == 'o' || c == 'O') && !psFormatSafe(val) {
						return cmdlineSecret
					}
					j = len(a)
				case c == 'E':
					return envSecret
				case strings.IndexByte(flags, c) < 0:
					// -f, -F (full format), -w (wide), or unknown.
					return cmdlineSecret
				}
			}
		default:
			// A BSD option cluster: e shows the environment; every BSD
			// format (a, x, u, …) shows the command line.
			if strings.Contains(a, "e") {
				return envSecret
			}
			return cmdlineSecret
		}
	}
	return ""
}

// pgrepSecret returns why pgrep with args shows or matches command lines:
// -a and -l list them (or the names), and -f matches the pattern against
// them, so its exit status tells a secret a character at a time.
func pgrepSecret(args []string) string {
	const values = "dgGPstuUFOr" // options that take a value
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "--"):
			name, _, hasVal := strings.Cut(a, "=")
			switch name {
			case "--list-full", "--list-name", "--full", "--env", "--ns", "--nslist", "--cgroup":
				return cmdlineSecret
			case "--delimiter", "--pgroup", "--group", "--parent", "--session", "--terminal", "--euid", "--uid",
				"--pidfile", "--older", "--signal", "--runstates":
				if !hasVal {
					i++
				}
			case "--count", "--ignore-case", "--inverse", "--lightweight", "--newest", "--oldest", "--exact",
				"--logpidfile", "--require-handler", "--ignore-ancestors", "--help", "--version":
			default:
				return cmdlineSecret
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch {
				case c == 'a' || c == 'l' || c == 'f':
					return cmdlineSecret
				case strings.IndexByte(values, c) >= 0:
					if j == len(a)-1 {
						i++
					}
					j = len(a)
				case strings.IndexByte("cinovwxhVAL", c) < 0:
					return cmdlineSecret
				}
			}
		}
	}
	return ""
}

// topShowsCmdlines reports whether top with args may show command lines:
// -c (--cmdline-toggle) switches its COMMAND column to them, and an option
// not known here is taken to as well.
func topShowsCmdlines(args []string) bool {
	const (
		flags  = "bHiSs1hvVO" // options that take no value
		values = "deEnopuU"   // options that take a value
	)
	longFlags := map[string]bool{"--batch-mode": true, "--threads-show": true, "--idle-toggle": true,
		"--secure-mode": true, "--accum-time-toggle": true, "--single-cpu-toggle": true, "--list-fields": true,
		"--help": true, "--version": true}
	longValues := map[string]bool{"--delay": true, "--scale-task-mem": true, "--scale-summary-mem": true,
		"--iterations": true, "--sort-override": true, "--pid": true, "--filter-only-euser": true,
		"--filter-any-user": true}
	// -w and --width take a number when one follows.
	number := func(i int) bool {
		return i < len(args) && args[i] != "" && strings.Trim(args[i], "0123456789") == ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--"):
			name, _, hasVal := strings.Cut(a, "=")
			switch {
			case longFlags[name] && !hasVal:
			case longValues[name]:
				if !hasVal {
					i++
				}
			case name == "--width":
				if !hasVal && number(i+1) {
					i++
				}
			default:
				return true
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
		cluster:
			for j := 1; j < len(a); j++ {
				switch c := a[j]; {
				case strings.IndexByte(values, c) >= 0:
					if j == len(a)-1 {
						i++
					}
					break cluster
				case c == 'w':
					if j == len(a)-1 && number(i+1) {
						i++
					}
					break cluster
				case strings.IndexByte(flags, c) < 0:
					// -c, or an option not known.
					return true
				}
			}
		default:
			return true
		}
	}
	return false
}
