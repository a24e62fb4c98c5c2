package risk

import (
	"net/url"
	"slices"
	"strings"
)

// gitNetSubs are the git subcommands that talk to another host whatever
// their options, and the position among their operands of the repository
// or URL they reach (-1 when no operand names it).
var gitNetSubs = map[string]int{
	"fetch": 0, "pull": 0, "push": 0, "clone": 0, "ls-remote": 0, "send-pack": 0, "fetch-pack": 0,
	"request-pull": 1, "svn": -1, "p4": -1, "send-email": -1, "imap-send": -1, "http-fetch": -1,
	"http-push": -1, "daemon": -1, "cvsimport": -1, "archimport": -1, "cvsexportcommit": -1,
}

// gitRemote is what a git subcommand does beyond the repository: whether it
// talks to a remote, the hosts its words name, and why it runs a program or
// reads stored credentials.
type gitRemote struct {
	network bool
	hosts   []string
	exec    string
	secret  string
}

// gitRemoteEffect judges git subcommand sub with its words rest, operands
// ops and flags.
func gitRemoteEffect(sub string, rest, ops []string, flags map[string]bool) gitRemote {
	var r gitRemote
	op := func(k int) string {
		if k >= 0 && k < len(ops) {
			return ops[k]
		}
		return ""
	}
	// repo is the address to read a host from: an operand that is not a
	// URL (URL operands are read by the generic host scan), or the value
	// of --remote.
	repo := ""
	if k, ok := gitNetSubs[sub]; ok {
		r.network = true
		repo = op(k)
	}
	switch {
	case sub == "archive":
		for k, a := range rest {
			if v, ok := strings.CutPrefix(a, "--remote="); ok {
				r.network, repo = true, v
			} else if a == "--remote" && k+1 < len(rest) {
				r.network, repo = true, rest[k+1]
			}
		}
	case sub == "remote":
		switch op(0) {
		case "update", "prune":
			r.network = true
		case "show":
			r.network = !flags["-n"]
		case "set-head":
			r.network = flags["-a"] || flags["--auto"]
		case "add":
			if flags["-f"] || flags["--fetch"] {
				r.network, repo = true, op(2)
			}
		}
	case sub == "submodule":
		r.network = true
		if op(0) == "foreach" {
			r.exec = "git submodule foreach runs a shell command in every submodule"
		}
	case sub == "maintenance":
		switch op(0) {
		case "run":
			r.network = true // the prefetch task fetches from every remote
		case "start", "register":
			r.exec = "git maintenance " + op(0) + " schedules git to run in the background"
		}
	case sub == "lfs":
		switch op(0) {
		case "fetch", "pull", "push", "clone":
			r.network = true
		}
	case sub == "bisect" && op(0) == "run":
		r.exec = "git bisect run runs the command it is given"
	case sub == "difftool" || sub == "mergetool":
		r.exec = "git " + sub + " runs the configured diff or merge tool"
	case sub == "rebase" && (slices.Contains(rest, "-x") || slices.Contains(rest, "--exec") ||
		slices.ContainsFunc(rest, func(a string) bool { return strings.HasPrefix(a, "-x") && !strings.HasPrefix(a, "--") })):
		r.exec = "git rebase --exec runs a shell command after each commit"
	case sub == "instaweb":
		r.exec = "git instaweb starts a web server of the caller's choosing"
	case sub == "remote-ext":
		r.exec = "git remote-ext runs the command its address names"
	case strings.HasPrefix(sub, "remote-"):
		r.network = true
	case strings.HasPrefix(sub, "credential"):
		r.secret = sub + " reads or stores credentials"
	}
	if sub == "clone" || sub == "init" {
		for _, a := range rest {
			if a == "-u" || a == "-c" || a == "--config" || strings.HasPrefix(a, "--template") ||
				strings.HasPrefix(a, "-c") && len(a) > 2 {
				r.exec = "git " + sub + " " + a + " runs programs the repository or a setting names"
			}
		}
	}
	if sub == "send-email" {
		for _, a := range rest {
			if strings.HasSuffix(strings.SplitN(a, "=", 2)[0], "-cmd") || strings.HasPrefix(a, "--smtp-server=/") {
				r.exec = "git send-email " + a + " runs a program"
			}
		}
	}
	if r.network && repo != "" {
		if strings.Contains(repo, "://") && sub != "archive" {
			repo = "" // an operand URL: the generic host scan reads it
		}
		host, helper := gitRepoHost(repo)
		if helper != "" {
			r.exec = helper
		}
		if host != "" {
			r.hosts = append(r.hosts, host)
		}
	}
	return r
}

// gitRepoHost returns the host a repository address reaches when the
// address is not a URL the generic host scan reads ([user@]host:path, or
// --remote=URL), and why it runs a program (a transport::address remote
// helper, ext:: above all), "" if it does not.
func gitRepoHost(addr string) (host, exec string) {
	if i := strings.Index(addr, "::"); i > 0 && transportName(addr[:i]) {
		transport := strings.ToLower(addr[:i])
		switch transport {
		case "http", "https", "ftp", "ftps":
			addr = addr[i+2:]
		case "ext":
			return "", "the ext:: transport runs the command its address names"
		default:
			return "", "the " + transport + ":: transport runs the program git-remote-" + transport
		}
	}
	if strings.Contains(addr, "://") {
		if u, err := url.Parse(addr); err == nil && u.Hostname() != "" {
			return strings.ToLower(u.Hostname()), ""
		}
		return "", ""
	}
	// scp-like [user@]host:path, with its colon before any slash; an
	// IPv6 address or a host with a port is in brackets ([::1]:path,
	// [user@host:22]:path).
	if open := strings.IndexByte(addr, '['); open >= 0 && !strings.Contains(addr[:open], "/") {
		end := strings.IndexByte(addr[open:], ']')
		if end < 0 || !strings.HasPrefix(addr[open+end+1:], ":") {
			return "", ""
		}
		h := addr[open+1 : open+end]
		if at := strings.LastIndexByte(h, '@'); at >= 0 {
			h = h[at+1:]
		}
		if strings.Count(h, ":") == 1 {
			h, _, _ = strings.Cut(h, ":") // host:port
		}
		if strings.Contains(h, "/") {
			return "", ""
		}
		return strings.ToLower(h), ""
	}
	colon := strings.IndexByte(addr, ':')
	if colon <= 0 || strings.Contains(addr[:colon], "/") {
		return "", ""
	}
	h := addr[:colon]
	if at := strings.LastIndexByte(h, '@'); at >= 0 {
		h = h[at+1:]
	}
	h = strings.Trim(h, "[]")
	if len(h) == 1 {
		return "", "" // a drive letter (C:\repo)
	}
	return strings.ToLower(h), ""
}

// transportName reports whether s can name a git remote helper, as in
// transport::address.
func transportName(s string) bool {
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}
