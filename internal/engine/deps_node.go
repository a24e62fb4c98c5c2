package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/shell"
)

// isNode reports whether name is the Node.js interpreter.
func isNode(name string) bool { return name == "node" || name == "nodejs" }

// nodeBuiltins are Node's own modules: require and import load them
// before any file, so they depend on no file of the project.
var nodeBuiltins = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`assert assert/strict async_hooks buffer child_process cluster console
		constants crypto dgram diagnostics_channel dns dns/promises domain events fs fs/promises http
		http2 https inspector inspector/promises module net os path path/posix path/win32 perf_hooks
		process punycode querystring readline readline/promises repl stream stream/consumers
		stream/promises stream/web string_decoder sys timers timers/promises tls trace_events tty url
		util util/types v8 vm wasi worker_threads zlib`) {
		nodeBuiltins[n] = true
	}
}

// nodeValueOpts are node's options that take the next word as their
// value (when not written --opt=value).
var nodeValueOpts = map[string]bool{
	"--input-type": true, "--title": true, "-C": true, "--conditions": true,
	"--stack-size": true, "--max-old-space-size": true, "--inspect-port": true,
	"--experimental-default-type": true, "--diagnostic-dir": true, "--report-dir": true,
}

// nodeSafeFlags are node's options known to load no code of their own
// and to take no value of the next word.
var nodeSafeFlags = map[string]bool{
	"-c": true, "--check": true, "-i": true, "--interactive": true, "-v": true, "--version": true, "-h": true,
	"--help": true, "--enable-source-maps": true, "--expose-gc": true, "--preserve-symlinks": true,
	"--preserve-symlinks-main": true, "--no-deprecation": true, "--throw-deprecation": true,
	"--pending-deprecation": true, "--no-warnings": true, "--abort-on-uncaught-exception": true,
	"--frozen-intrinsics": true, "--jitless": true, "--no-addons": true, "--no-global-search-paths": true,
	"--experimental-strip-types": true, "--experimental-transform-types": true, "--no-experimental-strip-types": true,
	"--experimental-detect-module": true, "--no-experimental-detect-module": true, "--experimental-require-module": true,
	"--no-experimental-require-module": true, "--experimental-permission": true, "--permission": true,
	"--watch": true, "--watch-preserve-output": true, "--zero-fill-buffers": true, "--use-openssl-ca": true,
	"--use-bundled-ca": true, "--force-fips": true, "--enable-fips": true, "--experimental-websocket": true,
	"--experimental-global-webcrypto": true, "--experimental-fetch": true, "--experimental-modules": true,
	"--experimental-json-modules": true, "--experimental-wasm-modules": true, "--experimental-top-level-await": true,
}

// nodeSafePrefixes begin node's options, written --name or --name=value,
// known to load no code of their own.
var nodeSafePrefixes = []string{
	"--inspect", "--trace-", "--harmony", "--max-old-space-size=", "--max-semi-space-size=", "--stack-size=",
	"--stack-trace-limit=", "--unhandled-rejections=", "--disable-warning=", "--disable-proto=", "--allow-",
	"--input-type=", "--title=", "--conditions=", "--experimental-default-type=", "--diagnostic-dir=",
	"--report-dir=", "--heapsnapshot-signal=", "--dns-result-order=", "--tls-", "--max-http-header-size=",
}

// nodeSafeOption reports whether the option a of node is known to load no
// code of its own and to take no value of the next word.
func nodeSafeOption(a string) bool {
	if nodeSafeFlags[a] {
		return true
	}
	for _, p := range nodeSafePrefixes {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// nodeCommand binds what node run by cmd loads: the script, the modules
// it requires or imports by literal relative paths (resolved as Node
// does, binding the absence of each candidate tried before the one
// found), the files of --require and --import, and what -e or -p code
// requires from the directory node runs in. A module named by a computed
// string, a package of node_modules, a loader, or options read from a
// file are unseen.
func (w *depWalk) nodeCommand(name string, cmd *shell.Command, depth int) {
	if setsNodeOptions(cmd) {
		w.unseen(name + ": NODE_OPTIONS is set on the line, which changes what code runs")
		return
	}
	args := cmd.Args
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func(long string) (string, bool) {
			if strings.HasPrefix(a, long+"=") {
				return a[len(long)+1:], true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "--":
			if i+1 < len(args) {
				w.nodeMain(name, cmd, args[i+1], depth)
			}
			return
		case a == "-" || !strings.HasPrefix(a, "-"):
			if a != "-" {
				w.nodeMain(name, cmd, a, depth)
			}
			return
		case a == "-e" || a == "-p" || a == "-pe" || a == "-ep" || a == "--eval" || a == "--print" ||
			strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--print="):
			long := "--eval"
			if strings.HasPrefix(a, "--print") {
				long = "--print"
			}
			code, ok := value(long)
			if !ok {
				return
			}
			if cmd.Dir == "" {
				w.unseen(name + " " + a + ": the directory it runs in is not known")
				return
			}
			w.nodeSource(name+" "+a, code, cmd.Dir, depth)
			return
		case a == "-r" || a == "--require" || strings.HasPrefix(a, "--require=") ||
			a == "--import" || strings.HasPrefix(a, "--import="):
			long := "--require"
			if strings.HasPrefix(a, "--import") {
				long = "--import"
			}
			spec, ok := value(long)
			if !ok {
				return
			}
			if !nodeRelative(spec) {
				w.unseen(fmt.Sprintf("%s %s %s: only a module given by a relative or absolute path is followed", name, a, spec))
				return
			}
			if cmd.Dir == "" && !filepath.IsAbs(spec) {
				w.unseen(name + " " + a + ": the directory it runs in is not known")
				return
			}
			w.nodeModule(name+" "+a, cmd.Dir, spec, depth)
		case strings.HasPrefix(a, "--loader") || strings.HasPrefix(a, "--experimental-loader") ||
			strings.HasPrefix(a, "--env-file") || strings.HasPrefix(a, "--experimental-config-file") ||
			strings.HasPrefix(a, "--experimental-policy") || strings.HasPrefix(a, "--experimental-vm-modules"):
			w.unseen(name + " " + a + ": the code it loads is not followed")
			return
		case nodeValueOpts[a]:
			i++
		case !nodeSafeOption(a):
			// An option not known to load nothing: it may run other code
			// (--run, --test, --snapshot-blob) or read a file of options.
			w.unseen(name + "'s option " + a + " cannot be read for the code it loads")
			return
		}
		if w.done() {
			return
		}
	}
}

// setsNodeOptions reports whether the line assigns NODE_OPTIONS or
// NODE_PATH for node.
func setsNodeOptions(cmd *shell.Command) bool {
	for _, a := range cmd.Assigns {
		if a.Name == "NODE_OPTIONS" || a.Name == "NODE_PATH" {
			return true
		}
	}
	return false
}

// nodeMain binds the script node runs and what it loads. Node resolves
// the script as it resolves a relative require.
func (w *depWalk) nodeMain(name string, cmd *shell.Command, script string, depth int) {
	if cmd.Dir == "" && !filepath.IsAbs(script) {
		w.unseen(fmt.Sprintf("%s %s: the directory it runs in is not known (a command before it may change it)", name, script))
		return
	}
	if !nodeRelative(script) {
		script = "./" + script
	}
	w.nodeModule(name, cmd.Dir, script, depth)
}

// nodeRelative reports whether the specifier spec names a file by a path
// (./x, ../x, /x) rather than a package.
func nodeRelative(spec string) bool {
	return spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/")
}

// nodeExtensions are the endings Node tries after a file's own name, in
// its order (require tries .js, .json, .node; the others are bound too so
// that creating one is seen).
var nodeExtensions = []string{"", ".js", ".json", ".node", ".mjs", ".cjs"}

// nodeModule binds the module that spec, required or imported by from in
// dir, loads: for a path, the first of the file, the file with each of
// nodeExtensions, the directory's package.json main and its index files,
// with the absence of every candidate tried before it; a built-in module
// binds nothing; a package of node_modules is unseen.
func (w *depWalk) nodeModule(from, dir, spec string, depth int) {
	if w.done() {
		return
	}
	if strings.HasPrefix(spec, "node:") || nodeBuiltins[spec] {
		return
	}
	if !nodeRelative(spec) {
		w.unseen(fmt.Sprintf("%s loads the package %s from node_modules, whose modules are not read", from, spec))
		return
	}
	if strings.ContainsAny(spec, "?#$`*") {
		w.unseen(fmt.Sprintf("%s: module %s cannot be resolved", from, spec))
		return
	}
	base := spec
	if !filepath.IsAbs(spec) {
		base = filepath.Join(dir, spec)
	}
	// try binds the candidate p and reports whether it is a file, which
	// is then the module.
	try := func(p string) (PathFact, bool, bool) {
		f := w.e.pathFact(dir, p)
		if f.Unknown || f.Real == "" {
			w.unseen(fmt.Sprintf("%s: module %s cannot be resolved", from, spec))
			return f, false, false
		}
		w.bind(f)
		fi, err := os.Stat(f.Real)
		return f, err == nil && fi.Mode().IsRegular(), err == nil && fi.IsDir()
	}
	trailing := strings.HasSuffix(spec, "/")
	if !trailing {
		for _, ext := range nodeExtensions {
			f, isFile, _ := try(base + ext)
			if w.done() {
				return
			}
			if isFile {
				w.nodeFile(f.Real, depth+1)
				return
			}
		}
	}
	if _, _, isDir := try(base); !isDir || w.done() {
		return
	}
	pkg, isFile, _ := try(filepath.Join(base, "package.json"))
	if w.done() {
		return
	}
	if isFile {
		src, ok := w.readFile(pkg.Real)
		if !ok {
			return
		}
		var manifest struct {
			Main *string `json:"main"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(src, "\ufeff")), &manifest); err != nil {
			w.unseen(fmt.Sprintf("%s cannot be read for its main module: %v", pkg.Real, err))
			return
		}
		if manifest.Main != nil && *manifest.Main != "" {
			main := filepath.Join(base, *manifest.Main)
			f, isFile, _ := try(main)
			if w.done() {
				return
			}
			if !isFile || !strings.HasPrefix(main, filepath.Clean(base)+string(filepath.Separator)) {
				w.unseen(fmt.Sprintf("%s: the main module %q of %s is not followed", from, *manifest.Main, pkg.Real))
				return
			}
			w.nodeFile(f.Real, depth+1)
			return
		}
	}
	for _, n := range []string{"index.js", "index.json", "index.node"} {
		f, isFile, _ := try(filepath.Join(base, n))
		if w.done() {
			return
		}
		if isFile {
			w.nodeFile(f.Real, depth+1)
			return
		}
	}
}

// nodeFile reads the module at real (bound already) for what it loads; a
// JSON file or a native addon loads nothing more.
func (w *depWalk) nodeFile(real string, depth int) {
	if strings.HasSuffix(real, ".json") || strings.HasSuffix(real, ".node") {
		return
	}
	if src, ok := w.readModule(real, depth); ok {
		w.nodeSource(real, src, filepath.Dir(real), depth)
	}
}

// nodeSource binds the modules the JavaScript src (of from) requires or
// imports, relative to dir.
func (w *depWalk) nodeSource(from, src, dir string, depth int) {
	specs, why := nodeSpecifiers(src)
	if why != "" {
		w.unseen(from + " " + why)
		return
	}
	for _, s := range specs {
		w.nodeModule(from, dir, s, depth)
		if w.done() {
			return
		}
	}
}

// jsToken is a token of JavaScript as nodeSpecifiers reads it: a word
// (identifier or keyword), a string (str; templ for a template with a
// substitution), a regular expression or one character of punctuation.
type jsToken struct {
	word  string
	str   string
	isStr bool
	templ bool
	regex bool
	punct byte
}

// jsLiteralLoad matches, in any text, a require, import or export of a
// literal specifier: require('x'), import('x'), import 'x', from 'x'.
var jsLiteralLoad = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:require|import)\s*\(\s*(?:'([^'\n]*)'|"([^"\n]*)"|` + "`([^`$]*)`" + `)|\b(?:from|import)\s*(?:'([^'\n]*)'|"([^"\n]*)")`)
})

// jsComputedLoad matches, in any text, a call of require or import() on
// something other than a literal, or on a template with a substitution.
var jsComputedLoad = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:require|import)\s*\(\s*(?:[^'"` + "`" + `\s)]|` + "`[^`]*\\$\\{)")
})

// jsTokens splits src into tokens, skipping comments and reading strings,
// templates and regular expressions as single tokens.
func jsTokens(src string) []jsToken {
	var toks []jsToken
	regexOK := func() bool {
		if len(toks) == 0 {
			return true
		}
		t := toks[len(toks)-1]
		switch {
		case t.isStr, t.regex:
			return false
		case t.word != "":
			switch t.word {
			case "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "instanceof", "yield", "await":
				return true
			}
			return false
		}
		return !strings.ContainsRune(")]}", rune(t.punct))
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += end + 4
		case c == '#' && i == 0 && i+1 < len(src) && src[1] == '!':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != c && src[j] != '\n'; j++ {
				if src[j] == '\\' && j+1 < len(src) {
					j++
				}
				b.WriteByte(src[j])
			}
			toks = append(toks, jsToken{isStr: true, str: b.String()})
			i = j + 1
		case c == '`':
			var b strings.Builder
			templ := false
			j := i + 1
			for ; j < len(src) && src[j] != '`'; j++ {
				switch {
				case src[j] == '\\' && j+1 < len(src):
					j++
					b.WriteByte(src[j])
				case src[j] == '$' && j+1 < len(src) && src[j+1] == '{':
					// The substitution's code is read on as tokens of
					// its own: skip to its end, counting braces.
					templ = true
					depth := 0
					for ; j < len(src); j++ {
						if src[j] == '{' {
							depth++
						} else if src[j] == '}' {
							depth--
							if depth == 0 {
								break
							}
						}
					}
				default:
					b.WriteByte(src[j])
				}
			}
			toks = append(toks, jsToken{isStr: true, str: b.String(), templ: templ})
			i = j + 1
		case c == '/' && regexOK():
			j := i + 1
			class := false
			for ; j < len(src) && src[j] != '\n'; j++ {
				if src[j] == '\\' {
					j++
					continue
				}
				if src[j] == '[' {
					class = true
				} else if src[j] == ']' {
					class = false
				} else if src[j] == '/' && !class {
					break
				}
			}
			toks = append(toks, jsToken{regex: true})
			i = j + 1
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80:
			// A word, or a number, which a division may follow.
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9' || src[j] >= 0x80) {
				j++
			}
			toks = append(toks, jsToken{word: src[i:j]})
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			toks = append(toks, jsToken{punct: c})
			i++
		}
	}
	return toks
}

// nodeSpecifiers returns the specifiers of the modules the JavaScript src
// requires or imports (require('x'), import … from 'x', import 'x',
// import('x'), export … from 'x'), or why they cannot all be named: a
// require or import of a computed name, require used other than called.
// What reads as a require or import in a comment or a string counts too:
// binding a file the code does not load only makes more calls ask, and a
// token misread must not hide one.
func nodeSpecifiers(src string) ([]string, string) {
	// The whole text, read without regard to comments and strings, names
	// the literal specifiers a misread token may hide; a call of require
	// or import() on something other than a literal there is taken as
	// computed.
	if jsComputedLoad().MatchString(src) {
		return nil, "requires or imports a module by a name computed when it runs"
	}
	var specs []string
	for _, m := range jsLiteralLoad().FindAllStringSubmatch(src, -1) {
		for _, g := range m[1:] {
			if g != "" {
				specs = append(specs, g)
			}
		}
	}
	toks := jsTokens(src)
	// literal returns the specifier of a call's argument at toks[i], if it
	// is one literal string.
	literal := func(i int) (string, bool) {
		if i+1 < len(toks) && toks[i].isStr && !toks[i].templ && (toks[i+1].punct == ')' || toks[i+1].punct == ',') {
			return toks[i].str, true
		}
		return "", false
	}
	for i, t := range toks {
		next := func(k int) jsToken {
			if i+k < len(toks) {
				return toks[i+k]
			}
			return jsToken{}
		}
		afterDot := i > 0 && toks[i-1].punct == '.'
		switch t.word {
		case "createRequire", "_load", "_resolveFilename", "_compile":
			return nil, "loads modules by a name computed when it runs (" + t.word + ")"
		case "require":
			switch {
			case next(1).punct == '(':
				s, ok := literal(i + 2)
				if !ok {
					return nil, "requires a module by a name computed when it runs"
				}
				specs = append(specs, s)
			case next(1).punct == '.' && (next(2).word == "resolve" || next(2).word == "cache" || next(2).word == "main"):
			case next(1).punct == ':' || afterDot && next(1).punct != '=':
				// A property named require ({require: …}, x.require).
			default:
				return nil, "uses require other than by calling it with a name"
			}
		case "import":
			if afterDot {
				continue
			}
			switch n := next(1); {
			case n.punct == '(':
				s, ok := literal(i + 2)
				if !ok {
					return nil, "imports a module by a name computed when it runs"
				}
				specs = append(specs, s)
			case n.punct == '.': // import.meta
			default:
				// The first string after import is what it imports.
				for k := i + 1; k < len(toks) && k < i+256; k++ {
					if toks[k].isStr {
						if toks[k].templ {
							return nil, "imports a module by a name computed when it runs"
						}
						specs = append(specs, toks[k].str)
						break
					}
				}
			}
		case "export":
			if afterDot {
				continue
			}
			if n := next(1); n.punct != '*' && n.punct != '{' {
				continue
			}
			// export * [as x] from 's', export { … } from 's'.
			k := i + 1
			if toks[k].punct == '{' {
				for k < len(toks) && toks[k].punct != '}' {
					k++
				}
				k++
			} else {
				for k < len(toks) && toks[k].word != "from" && k < i+4 {
					k++
				}
			}
			if k+1 < len(toks) && toks[k].word == "from" && toks[k+1].isStr {
				if toks[k+1].templ {
					return nil, "exports from a module by a name computed when it runs"
				}
				specs = append(specs, toks[k+1].str)
			}
		}
	}
	return specs, ""
}
