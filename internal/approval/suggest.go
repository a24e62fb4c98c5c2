package approval

import (
	"net/url"
	"path"
	"strings"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
	"github.com/toolgate/toolgate/shell"
)

// subcommandPrograms are programs whose first argument is a subcommand, so
// that "PROGRAM SUBCOMMAND:*" is a meaningful, bounded rule — when the risk
// tables also say that the command runs nothing its words name (see
// [boundedBySubcommand]).
var subcommandPrograms = map[string]bool{
	"git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "npx": true,
	"go": true, "cargo": true, "rustup": true, "docker": true, "podman": true,
	"kubectl": true, "helm": true, "terraform": true, "gh": true, "make": true,
	"just": true, "pip": true, "pip3": true, "uv": true, "poetry": true, "deno": true,
	"dotnet": true, "mvn": true, "gradle": true, "brew": true, "composer": true,
	"bundle": true, "rake": true, "mix": true, "swift": true, "tox": true, "nox": true,
}

// Suggest returns the narrowest rule that would allow this call next time,
// or "" when no single rule would without being broader than the call. tool
// is the tool name in any alias; arg is the shell command line for a shell
// tool, the path for a file tool, the URL for a fetch, and ignored for an
// MCP tool.
//
// A suggestion never covers more than the person was shown. For a shell
// command it is the exact command, "Bash(LINE)", which allows only that
// line: with its flags where they stand and run directly, not through a
// wrapper (see [policy.Rule.MatchCommand]). Only a program known to take
// subcommands, whose command the risk tables class as running nothing its
// words name and reaching no host (git status, git commit), gets
// "Bash(PROGRAM SUBCOMMAND:*)". Every program that runs what its arguments
// name — containers (docker run), build and script runners (go run, npm,
// make, uv run), interpreters, scripts named by path (./deploy.sh),
// programs the tables do not know — and every command that reaches the
// network (git push, gh) gets the exact command, since "Bash(docker
// run:*)" would also allow "docker run --privileged -v /:/host …".
// Compound lines, pipes, redirections, substitutions, variable
// assignments, wrappers (sudo, env, timeout, xargs…), quoting and glob
// characters give "", because no rule would describe them exactly. Paths
// give Read(PATH), Edit(PATH) or Write(PATH) for that one file; a bare
// name is anchored to the project root as ./NAME, since a bare name in a
// rule matches at any depth.
func Suggest(tool, arg string) string {
	var rule string
	canon, ok := policy.Canonical(tool)
	if !ok {
		return ""
	}
	switch canon {
	case policy.ToolShell:
		rule = suggestShell(arg)
	case policy.ToolRead:
		rule = suggestPath("Read", arg)
	case policy.ToolEdit:
		rule = suggestPath("Edit", arg)
	case policy.ToolWrite:
		rule = suggestPath("Write", arg)
	case policy.ToolFetch:
		rule = suggestFetch(arg)
	case policy.ToolMCP:
		server, name := policy.SplitMCPName(tool)
		if server != "" && name != "" {
			rule = tool
		}
	}
	if rule == "" {
		return ""
	}
	if _, err := policy.ParseRule(rule, policy.Allow, policy.Position{}); err != nil {
		return ""
	}
	return rule
}

func suggestShell(line string) string {
	words, ok := plainWords(line)
	if !ok || len(words) == 0 {
		return ""
	}
	prog := words[0]
	if strings.Contains(prog, "=") || shell.IsWrapper(prog) {
		// An assignment or a wrapper changes what the program does; a
		// rule cannot name either.
		return ""
	}
	if subcommandPrograms[prog] && len(words) >= 2 && isSubcommand(words[1]) && boundedBySubcommand(prog, words[1:]) {
		return "Bash(" + prog + " " + words[1] + ":*)"
	}
	return "Bash(" + strings.Join(words, " ") + ")"
}

// boundedBySubcommand reports whether a prefix rule on prog's subcommand
// stays within what the person saw: the risk tables know the command, it
// only reads or writes files (which the engine still judges path by path),
// it executes nothing (no program, script or code named by its
// arguments), no option of it runs one, and it reaches no host. Every
// other command is suggested exactly.
func boundedBySubcommand(prog string, args []string) bool {
	if risk.Interpreter(prog) {
		return false
	}
	e := risk.Command(prog, args, nil)
	if !e.Known || e.Exec != "" || e.UnknownOption != "" || e.Unknown || e.Destructive != "" {
		return false
	}
	// A command that reaches the network is suggested exactly too: a
	// prefix on git push would cover pushing to any host.
	return e.Level == risk.Read || e.Level == risk.Write
}

// plainWords splits a command line into words when every word is plain:
// letters, digits and . / _ - + = , @ % : only. Anything else (quotes,
// operators, $, globs, redirections) makes it report false.
func plainWords(line string) ([]string, bool) {
	words := strings.Fields(line)
	for _, w := range words {
		for _, r := range w {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			case strings.ContainsRune("./_-+=,@%:", r):
			default:
				return nil, false
			}
		}
	}
	return words, true
}

func isSubcommand(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == ':':
		default:
			return false
		}
	}
	return true
}

func suggestPath(tool, p string) string {
	if p == "" || strings.ContainsAny(p, "*?[]{}()\\\n\t ") {
		return ""
	}
	clean := path.Clean(p)
	for _, seg := range strings.Split(clean, "/") {
		if seg == ".." {
			return ""
		}
	}
	if clean == "." || clean == "/" || clean == "~" {
		return ""
	}
	if !strings.Contains(clean, "/") {
		clean = "./" + clean
	}
	return tool + "(" + clean + ")"
}

// SuggestIn is [Suggest] for a call made in directory cwd of the project
// at root (both absolute; root may be empty). A path that lies inside
// root is suggested relative to it — Edit(src/main.go), Read(./go.mod) —
// so that a rule kept in the project's policy travels with the
// repository; a path outside root is suggested absolute. The two name the
// same file in this project: a relative path rule is anchored to the
// project root. The path is taken as written, joined to cwd and cleaned,
// not resolved through links. For a rule that outlives the project (the
// user's own policy) use [SuggestAbsolute]. Other tools get what
// [Suggest] gives.
func SuggestIn(tool, arg, cwd, root string) string {
	abs, ok := pathArg(tool, arg, cwd)
	if !ok {
		return Suggest(tool, arg)
	}
	if root != "" && strings.HasPrefix(abs, strings.TrimSuffix(root, "/")+"/") {
		// A relative form that is no rule (a name starting with ~) keeps
		// the absolute one.
		if rule := Suggest(tool, strings.TrimPrefix(abs, strings.TrimSuffix(root, "/")+"/")); rule != "" {
			return rule
		}
	}
	return Suggest(tool, abs)
}

// SuggestAbsolute is [SuggestIn] with every path absolute, for a rule
// kept where it applies to every project (the user's policy), in which a
// project-relative rule would name that file in each of them.
func SuggestAbsolute(tool, arg, cwd string) string {
	if abs, ok := pathArg(tool, arg, cwd); ok {
		return Suggest(tool, abs)
	}
	return Suggest(tool, arg)
}

// pathArg returns the absolute, cleaned path of arg for a file tool.
func pathArg(tool, arg, cwd string) (string, bool) {
	canon, ok := policy.Canonical(tool)
	if !ok || (canon != policy.ToolRead && canon != policy.ToolEdit && canon != policy.ToolWrite) || arg == "" {
		return "", false
	}
	if strings.HasPrefix(arg, "~") {
		return "", false
	}
	if !path.IsAbs(arg) {
		if !path.IsAbs(cwd) {
			return "", false
		}
		arg = path.Join(cwd, arg)
	}
	return path.Clean(arg), true
}

func suggestFetch(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if strings.ContainsAny(host, "*()") {
		return ""
	}
	return "WebFetch(domain:" + host + ")"
}
