package approval

import (
	"net/url"
	"path"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// subcommandPrograms are programs whose first argument is a subcommand, so
// that "PROGRAM SUBCOMMAND:*" is a meaningful, bounded rule.
var subcommandPrograms = map[string]bool{
	"git": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "npx": true,
	"go": true, "cargo": true, "rustup": true, "docker": true, "podman": true,
	"kubectl": true, "helm": true, "terraform": true, "gh": true, "make": true,
	"just": true, "pip": true, "pip3": true, "uv": true, "poetry": true, "deno": true,
	"dotnet": true, "mvn": true, "gradle": true, "brew": true, "composer": true,
	"bundle": true, "rake": true, "mix": true, "swift": true, "tox": true, "nox": true,
}

// scriptRunners are programs whose "run" subcommand names a script; the
// script name is kept in the rule, so "npm run test" gives
// "Bash(npm run test:*)", not "Bash(npm run:*)".
var scriptRunners = map[string]bool{"npm": true, "pnpm": true, "yarn": true, "bun": true}

// Suggest returns the narrowest rule that would allow this call next time,
// or "" when no single rule would without being broader than the call's
// program and subcommand. tool is the tool name in any alias; arg is the
// shell command line for a shell tool, the path for a file tool, the URL
// for a fetch, and ignored for an MCP tool.
//
// For a shell command the rule is, in order of preference:
// "Bash(PROGRAM SUBCOMMAND:*)" for a program known to take subcommands
// (with the script name kept for "npm run SCRIPT" and the like),
// "Bash(PATH:*)" for a program named by path (a project script such as
// ./build.sh), and otherwise the exact command. Compound lines, pipes,
// redirections, substitutions, variable assignments, quoting and glob
// characters give "", because one prefix rule would not describe them
// exactly. Paths give Read(PATH), Edit(PATH) or Write(PATH) for that one
// file; a bare name is anchored to the project root as ./NAME, since a
// bare name in a rule matches at any depth.
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
	if strings.Contains(prog, "=") {
		return ""
	}
	if strings.Contains(prog, "/") {
		return "Bash(" + prog + ":*)"
	}
	if subcommandPrograms[prog] && len(words) >= 2 && isSubcommand(words[1]) {
		spec := prog + " " + words[1]
		if scriptRunners[prog] && words[1] == "run" {
			if len(words) < 3 || !isSubcommand(words[2]) {
				return ""
			}
			spec += " " + words[2]
		}
		return "Bash(" + spec + ":*)"
	}
	return "Bash(" + strings.Join(words, " ") + ")"
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
