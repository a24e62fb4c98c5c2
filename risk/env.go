package risk

import "strings"

// inertEnv lists the environment variables a program may be given without
// changing what it reads, writes or runs: locale, time zone, colours,
// terminal size, CI markers, build targets, and the like.
var inertEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true,
	"CLICOLOR_FORCE": true, "COLORTERM": true, "TERM": true, "COLUMNS": true, "LINES": true, "CI": true,
	"TIME_STYLE": true, "BLOCK_SIZE": true, "BLOCKSIZE": true, "DU_BLOCK_SIZE": true, "DF_BLOCK_SIZE": true,
	"LS_BLOCK_SIZE": true, "LS_COLORS": true, "GREP_COLORS": true, "GREP_COLOR": true, "QUOTING_STYLE": true,
	"TABSIZE": true, "SOURCE_DATE_EPOCH": true, "NODE_ENV": true, "RUST_BACKTRACE": true, "RUST_LOG": true,
	"GOOS": true, "GOARCH": true, "GOARM": true, "GOAMD64": true, "CGO_ENABLED": true, "GOMAXPROCS": true,
	"GOGC": true, "GOMEMLIMIT": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
	"PYTHONIOENCODING": true, "PYTHONHASHSEED": true, "VERBOSE": true, "DEBIAN_FRONTEND": true,
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true, "GIT_COMMITTER_NAME": true,
	"GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true, "GIT_TERMINAL_PROMPT": true,
	"NPM_CONFIG_LOGLEVEL": true, "CARGO_TERM_COLOR": true, "RUSTFLAGS": false,
}

// InertEnv reports whether the environment variable name, given to a
// program, leaves its effects as its words say: LANG, LC_*, TZ, NO_COLOR,
// CI, and the others of toolgate's list. Any other variable may be one a
// program reads options, code or paths from (RIPGREP_CONFIG_PATH,
// TAR_OPTIONS, AWKPATH, GREP_OPTIONS, LESSOPEN, …): knowledge of the
// environment is an allow-list too.
func InertEnv(name string) bool {
	return inertEnv[name] || strings.HasPrefix(name, "LC_") && len(name) > 3
}

// InertEnvValue reports whether the variable name set to value leaves a
// program's effects as its words say: an inert variable whose value names
// no file. The C library reads a file that TZ=:FILE, TZ=/path or a locale
// name with a slash points to.
//
// GOFLAGS holds options of the go command: it is inert when every one is a
// flag of go test or go build that toolgate knows and that names no
// program and no file (GOFLAGS=-mod=mod, not GOFLAGS=-toolexec=x).
func InertEnvValue(name, value string) bool {
	if name == "GOFLAGS" {
		return inertGoFlags(value)
	}
	return InertEnv(name) && !strings.ContainsAny(value, "/:")
}

func inertGoFlags(value string) bool {
	sp := Lookup("go")
	if sp == nil || sp.Subcommand("test") == nil {
		return false
	}
	words := strings.Fields(value)
	for _, w := range words {
		if !strings.HasPrefix(w, "-") || strings.ContainsAny(w, `'"\`) {
			return false
		}
	}
	words, _ = goWords(words, nil, sp.Subcommand("test"))
	p := sp.Subcommand("test").Parse(words, nil)
	if p.Unknown != "" || p.Problem != "" || len(p.Operands) > 0 {
		return false
	}
	for _, o := range p.Options {
		switch o.Option.Value {
		case ValNone, ValInert, ValPattern:
			if !inertGoToolFlags(o.Name, o.Value) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
