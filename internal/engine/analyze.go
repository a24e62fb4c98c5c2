package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/shell"
	"mvdan.cc/sh/v3/syntax"
)

// Unit is one part of a call judged on its own: one simple command of a
// shell line, or the whole call for other tools.
type Unit struct {
	Label   string       `json:"label"`
	Command *CommandFact `json:"command,omitempty"`
	Reads   []PathFact   `json:"reads,omitempty"`
	Writes  []PathFact   `json:"writes,omitempty"`
	Hosts   []HostFact   `json:"hosts,omitempty"`
	// Code lists files whose content decides what the unit does without
	// being named as read: an interpreter's script, a Makefile, a
	// package.json. They do not change the decision; an approval is bound
	// to their versions, so that changing them asks again.
	Code []PathFact `json:"code,omitempty"`
	// CodeUnseen says why the unit's code depends on a file the analysis
	// cannot name (a script sources a computed path, includes nest too
	// deeply); "" when Code holds every such file. No prior approval
	// covers a call with an unseen dependency.
	CodeUnseen string `json:"code_unseen,omitempty"`
	// Secrets lists the kinds of secret found in data the unit sends out.
	Secrets []string   `json:"secrets,omitempty"`
	Risk    risk.Level `json:"risk"`
	RiskWhy []string   `json:"risk_why,omitempty"`
	Steps   []Step     `json:"steps"`

	Decision policy.Decision `json:"decision"`
	Reason   Reason          `json:"reason"`
	Source   Source          `json:"source"`
	Message  string          `json:"message"`
	Rule     *policy.Rule    `json:"-"`

	view  policy.CommandView
	known bool // the program's effects are known
	// inline says why the command runs code given in its words (python3
	// -c, node -e, vim -c), which no mode lifts; "" if it does not.
	inline string
	// interpreter names the interpreter the command runs (python3, sh,
	// node, …), whose script or inline code the analysis does not follow
	// into every effect; "" if it runs none.
	interpreter string
	// unknownOption is the first option of the command that its program's
	// spec does not know, "" if none.
	unknownOption string
	unknown       string // why the effects cannot be judged statically, "" if they can
	destructive   string
	secret        string
	network       bool
	navigation    bool
	base          risk.Level // the command's own level, before paths raise it
	secretVar     string     // expands a variable named like a secret
	exec          string     // runs code its words do not show: no allow rule covers it
	opaque        string     // writes files its words do not name: asks unless a rule allows it
	hard          bool       // an ask that no mode, allow rule or approval=never lifts
	outside       bool       // touches a path outside the workspace and writable roots
	escape        bool       // a link inside the workspace leads out of it

	// wordSecrets are the kinds of secret the command's words hold
	// ([Call.WordSecrets]); nil when they hold none.
	wordSecrets []string
}

// CommandFact describes a simple command for explain output.
type CommandFact struct {
	Name     string   `json:"name"`
	Args     []string `json:"args,omitempty"`
	Wrappers []string `json:"wrappers,omitempty"`
	Via      string   `json:"via,omitempty"`
	Dir      string   `json:"dir,omitempty"`
	// Spec names the program spec the words were read with; UnknownOption
	// is the first option that spec does not know.
	Spec          string `json:"spec,omitempty"`
	UnknownOption string `json:"unknownOption,omitempty"`
}

// PathFact is a path a unit reads or writes, resolved.
type PathFact struct {
	Requested string `json:"requested"`
	Real      string `json:"real,omitempty"`
	Class     string `json:"class"`
	Inside    bool   `json:"inside"`
	Symlink   bool   `json:"symlink,omitempty"`
	Unknown   bool   `json:"unknown,omitempty"`
	// Recursive is set when the whole tree below the path is read.
	Recursive bool `json:"recursive,omitempty"`
	// Delete is set when the path is removed.
	Delete bool `json:"delete,omitempty"`
	// Reason says where the path lies: inside-workspace,
	// outside-workspace, symlink-escape, windows-path or unknown.
	Reason string `json:"reason"`
	// Lookalike is set when the spelled path uses characters that look
	// like others (Cyrillic а for Latin a, fullwidth letters).
	Lookalike bool `json:"lookalike,omitempty"`
	abs       string
	// How a recursive read walks its tree: leaving out hidden names,
	// following links, only the files whose name matches nameGlob, or,
	// with listed, only files a harmless find listed (none of which can
	// be sensitive by name).
	skipHidden, followLinks, listed bool
	nameGlob                        string
}

// HostFact is a host a unit reaches.
type HostFact struct {
	Host    string `json:"host"`
	Private string `json:"private,omitempty"`
}

// dialect is a shell language: each has its analysis and its command
// knowledge.
type dialect uint8

const (
	bash dialect = iota
	powerShell
	cmdExe
)

func (d dialect) String() string { return [...]string{"bash", "PowerShell", "cmd"}[d] }

// maxLine is the longest PowerShell or cmd line analyzed, and maxCommands
// the most commands one line may run; the bash analysis has limits of its
// own of the same size. A line past them is denied as too complex.
const (
	maxLine     = 64 << 10
	maxCommands = 2000
)

func (d dialect) analyze(ctx context.Context, src string, opts *shell.Options) (*shell.Result, error) {
	var res *shell.Result
	var err error
	switch d {
	case powerShell, cmdExe:
		if len(src) > maxLine {
			return nil, fmt.Errorf("%w: the %s line is %d bytes long; at most %d bytes are analyzed", shell.ErrTooComplex, d, len(src), maxLine)
		}
		if d == powerShell {
			res, err = shell.AnalyzePowerShell(src, opts)
		} else {
			res, err = shell.AnalyzeCmd(src, opts)
		}
	default:
		res, err = shell.AnalyzeContext(ctx, src, opts)
	}
	if err == nil && len(res.Commands) > maxCommands {
		return nil, fmt.Errorf("%w: the line runs %d commands; at most %d are analyzed", shell.ErrTooComplex, len(res.Commands), maxCommands)
	}
	return res, err
}

func (d dialect) effect(name string, args []string, dyn []bool) risk.Effect {
	switch d {
	case powerShell:
		return risk.PowerShellCommand(name, args, dyn)
	case cmdExe:
		return risk.CmdCommand(name, args, dyn)
	}
	return risk.Command(name, args, dyn)
}

// env is what analysis needs to know about where the call runs.
type env struct {
	cwd, root, home string
	roots           []string // writable roots, resolved
	match           policy.MatchContext
	// links are symbolic links that earlier commands of the same line
	// create: link path -> target, both absolute.
	links map[string]string
	// fs is the request's view of the file system: each path resolved,
	// and each directory entry looked at, once per request (and, with
	// the process's path cache, kept across requests while nothing it
	// depends on changes). nil resolves everything afresh.
	fs *pathres.View
	// dialect is the shell the command line is written for.
	dialect dialect
	// credentialPaths and protectedPaths are the policy's additions to
	// the sensitive path classes.
	credentialPaths, protectedPaths []*policy.Rule
	// ctx is the request's context: the analysis stops when it is done.
	// nil stands for context.Background().
	ctx context.Context
}

// context returns the request's context.
func (e *env) context() context.Context {
	if e.ctx == nil {
		return context.Background()
	}
	return e.ctx
}

// hasPolicyDir reports whether dir holds a .toolgate/ directory.
func (e *env) hasPolicyDir(dir string) bool {
	return e.fs.Lstat(dir, ".toolgate") == pathres.Dir
}

// inside reports whether a real path is in the workspace or a writable root.
func (e *env) inside(p string) bool {
	if pathres.Within(e.root, p) {
		return true
	}
	for _, r := range e.roots {
		if pathres.Within(r, p) {
			return true
		}
	}
	return false
}

// maxGlob bounds how many files one glob word is expanded to; a word
// matching more is judged as unknown.
const maxGlob = 512

// pathFacts resolves a word of a shell command: a glob word is expanded
// against the file system as the shell would, so .en? is judged as .env.
func (e *env) pathFacts(dir, raw string) []PathFact {
	if !strings.ContainsAny(raw, "*?[") {
		return []PathFact{e.pathFact(dir, raw)}
	}
	abs, ok := pathres.Absolute(dir, e.home, raw)
	if !ok {
		return []PathFact{{Requested: raw, Unknown: true, Class: "unknown"}}
	}
	matches, err := filepath.Glob(e.relink(abs))
	if err != nil || len(matches) == 0 {
		// No match: the shell passes the word on as it is — but by the
		// time the line runs it may match a sensitive file.
		f := e.pathFact(dir, raw)
		if c := risk.ClassifyPattern(abs, e.home); c.String() != "ordinary" && (f.Class == "ordinary" || c == risk.Secret) {
			f.Class = c.String()
		}
		return []PathFact{f}
	}
	if len(matches) > maxGlob {
		return []PathFact{{Requested: raw, Unknown: true, Class: "unknown"}}
	}
	out := make([]PathFact, 0, len(matches))
	for _, m := range matches {
		if strings.HasSuffix(raw, "/") {
			// A pattern ending in "/" matches directories only.
			if fi, err := os.Stat(m); err != nil || !fi.IsDir() {
				continue
			}
		}
		f := e.pathFact(dir, m)
		f.Requested = raw + " (" + m + ")"
		out = append(out, f)
	}
	return out
}

// credentialArgs returns the credential files that the arguments of cmd
// name and that u does not already read or write; risk.NamesOnly and
// risk.PatternArgs say which arguments a program takes as text. Whatever the program is
// — one the analysis knows without declaring that operand, one it does not
// know, an interpreter given a file — a credential it is handed is taken
// as read, so the credential floor holds in every mode: zip out.zip
// ~/.ssh/id_rsa, mytool --key=~/.aws/credentials or python3 -B .env is
// denied as cat ~/.ssh/id_rsa is.
//
// Each argument is looked at whole and, for an option, as the value it
// carries (--in=FILE, -Path:FILE, -iFILE). A word that looks like a path
// (a slash, a leading ~, a dot-name) is resolved to its real path, so a
// symbolic link to a key counts as the key, and a glob to what it matches
// now or could. A dot-name right after an option of a program that takes
// name patterns (find -name .env, --exclude .env) is a pattern. A word
// with a variable in it is judged with the home directory for the
// variable, the place such a word most likely names.
func (e *env) credentialArgs(cmd *shell.Command, u *Unit) []PathFact {
	var out []PathFact
	add := func(facts ...PathFact) {
		for _, f := range facts {
			if f.Class == risk.Secret.String() && !named(u.Reads, f.Requested) && !named(u.Writes, f.Requested) && !named(out, f.Requested) {
				out = append(out, f)
			}
		}
	}
	pattern := risk.PatternArgs(cmd.Name, cmd.Args)
	program := risk.ProgramArgs(cmd.Name, cmd.Args)
	for i, a := range cmd.Args {
		if pattern[i] {
			continue // what a search looks for, or a name pattern: no file
		}
		dynamic := i < len(cmd.ArgDynamic) && cmd.ArgDynamic[i]
		if i < len(program) && program[i] && !dynamic {
			// An awk, sed or jq program: the files it opens are in its
			// effect, read from its grammar.
			continue
		}
		for _, v := range e.argValues(a) {
			if v == "" || len(v) > 4096 || strings.ContainsAny(v, "\n\r\x00") {
				continue
			}
			if dynamic {
				// A dynamic word is its source text, quotes and all; it is
				// judged with each variable as the home directory and as
				// nothing ($X/.aws/credentials, .env$EMPTY).
				src := strings.NewReplacer(`"`, "", `'`, "").Replace(v)
				for _, w := range e.varReadings(src) {
					f := e.pathFact(cmd.Dir, w)
					f.Requested = v
					add(f)
				}
				continue
			}
			pathy := strings.HasPrefix(v, "~") || strings.Contains(v, "/") || e.dialect != bash && strings.Contains(v, `\`)
			if !pathy && !strings.HasPrefix(v, ".") && (u.Command == nil || u.Command.Spec != "" || !e.linkHere(cmd.Dir, v)) {
				// A program read by its spec has its file operands among its
				// reads and writes already; for any other a plain word may
				// name a link.
				continue
			}
			if strings.ContainsAny(v, "*?[") {
				add(e.pathFacts(cmd.Dir, v)...)
			} else {
				add(e.pathFact(cmd.Dir, v))
			}
		}
	}
	return out
}

// movedLink returns a read operand of cp, mv, rsync or install that is a
// symbolic link the command carries over as a link (mv always; cp -P, -d,
// -a, -R; rsync -l, -a), or one the line made earlier: a link whose target
// is relative points elsewhere from its new place, "" when there is none.
func (e *env) movedLink(name string, eff risk.Effect, cmd *shell.Command) string {
	keeps := false
	switch name {
	case "mv":
		keeps = true
	case "cp":
		// Read by cp's spec, so every spelling counts (-P, -d, -a, -r,
		// --no-dereference, --archive, --recursive, --preserve=links).
		if sp := risk.Lookup("cp"); sp != nil {
			p := sp.Parse(cmd.Args, cmd.ArgDynamic)
			keeps = p.Unknown != "" || p.Has("-P", "-d", "-a", "-r")
			for _, v := range p.Values("--preserve") {
				keeps = keeps || strings.Contains(v, "links") || strings.Contains(v, "all")
			}
		}
	case "rsync", "install":
		// No spec: any option may keep links.
		keeps = slices.ContainsFunc(cmd.Args, func(a string) bool { return strings.HasPrefix(a, "-") })
	}
	if !keeps || cmd.Dir == "" {
		return ""
	}
	sources := eff.Reads
	if name == "mv" && len(eff.Writes) > 1 {
		sources = eff.Writes[:len(eff.Writes)-1]
	}
	for _, r := range sources {
		abs, ok := pathres.Absolute(cmd.Dir, e.home, r)
		if !ok {
			continue
		}
		if _, made := e.links[abs]; made {
			return r
		}
		if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(abs); err == nil && !filepath.IsAbs(t) {
				return r
			}
		}
	}
	return ""
}

// otherRepo returns the repository git finds for cmd when it is not the
// project's own: a directory with .git, or laid out as a bare repository
// (HEAD, objects, refs), between the directory git starts from (the
// command's, moved by -C) and the project root. Such a repository's
// configuration (core.fsmonitor, diff.external) runs programs.
func (e *env) otherRepo(cmd *shell.Command) string {
	dir := cmd.Dir
	if dir == "" || e.root == "" {
		return ""
	}
	// git's global options, read by its spec: each -C moves on from the
	// last (git -C a -C b is a/b).
	if sp := risk.Lookup("git"); sp != nil {
		for _, v := range sp.Parse(cmd.Args, cmd.ArgDynamic).Values("-C") {
			if v == "" {
				continue
			}
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, v)
			}
			dir = v
		}
	}
	dir = filepath.Clean(dir)
	if dir == e.root {
		return "" // git starts at the project's own root
	}
	real, err := e.fs.RealDir(dir)
	if err != nil {
		return dir // cannot be resolved: git's repository there is not known
	}
	if !pathres.Within(e.root, real) {
		return real // outside the project: whatever is there
	}
	for d := real; d != e.root && pathres.Within(e.root, d); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if fi, err := os.Stat(filepath.Join(d, "objects")); err == nil && fi.IsDir() {
			if _, err := os.Stat(filepath.Join(d, "HEAD")); err == nil {
				return d
			}
		}
	}
	return ""
}

// globOption returns a pattern among the command's words that the shell
// expands to a file name starting with "-", and that name: the program
// then reads the file name as an option (a file called
// --compress-program=sh in the directory of "sort *").
func globOption(cmd *shell.Command) (string, string) {
	if cmd.Dir == "" {
		return "", ""
	}
	for i, a := range cmd.Args {
		if a == "--" {
			break
		}
		if i < len(cmd.ArgDynamic) && cmd.ArgDynamic[i] || a == "" || !strings.ContainsRune("*?[", rune(a[0])) {
			continue
		}
		matches, err := filepath.Glob(filepath.Join(cmd.Dir, a))
		if err != nil {
			continue
		}
		for _, m := range matches {
			if b := filepath.Base(m); strings.HasPrefix(b, "-") {
				return a, b
			}
		}
	}
	return "", ""
}

// linkHere reports whether name, a plain word, names a symbolic link in
// dir: a plain-named link (notes -> .env) is judged by where it leads,
// whatever the program it is given to.
func (e *env) linkHere(dir, name string) bool {
	if dir == "" || name == "" || len(name) > 255 || strings.ContainsAny(name, "*?[") {
		return false
	}
	return e.fs.Lstat(dir, name) == pathres.Link
}

// argValues returns the words of an argument that may name a file: the
// argument itself, its parts between : , and @ (docker -v ~/.aws:/root,
// user@host:~/.ssh/id_rsa) and, for an option, the value it carries after
// = (or : in PowerShell and cmd), or attached to a one-letter option
// (-iFILE).
func (e *env) argValues(a string) []string {
	vals := []string{a}
	if strings.ContainsAny(a, ":,@") && !strings.Contains(a, "://") {
		for _, part := range strings.FieldsFunc(a, func(r rune) bool { return r == ':' || r == ',' || r == '@' }) {
			if part != a {
				vals = append(vals, part)
			}
		}
	}
	if !strings.HasPrefix(a, "-") && !(e.dialect == cmdExe && strings.HasPrefix(a, "/")) {
		return vals
	}
	if _, v, ok := strings.Cut(a, "="); ok {
		vals = append(vals, v)
	}
	if e.dialect != bash {
		if _, v, ok := strings.Cut(a, ":"); ok {
			vals = append(vals, v)
		}
	}
	if len(a) > 2 && a[1] != '-' && !strings.Contains(a, "=") {
		vals = append(vals, a[2:])
	}
	return vals
}

// shellVars are variables as bash ($X, ${X}), PowerShell ($env:X) and
// cmd (%X%) spell them.
var shellVars = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{?(?i:env:)?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%`)
})

// varReadings returns w with every variable (and $(pwd)) read as the home
// directory, as the working directory and as nothing: the places such a
// word most likely names.
func (e *env) varReadings(w string) []string {
	w = strings.NewReplacer("$(pwd)", e.cwd, "`pwd`", e.cwd, "$PWD", e.cwd, "${PWD}", e.cwd).Replace(w)
	if !shellVars().MatchString(w) {
		return []string{w}
	}
	out := []string{shellVars().ReplaceAllLiteralString(w, "")}
	if e.home != "" {
		out = append(out, shellVars().ReplaceAllLiteralString(w, e.home))
	}
	return out
}

// Bounds of the search for credential files below a directory that a
// command reads whole.
const (
	maxTreeEntries = 20000 // entries looked at
	maxTreeFound   = 8     // credential files reported
)

// bulkyDirs are directories of dependencies and caches that a tree search
// does not enter: large, rebuilt by tools, and not where a person keeps
// keys.
var bulkyDirs = map[string]bool{
	".git": true, "node_modules": true, "bower_components": true, ".venv": true, "venv": true,
	"__pycache__": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true, ".gradle": true,
	"target": true, ".next": true, ".nuxt": true,
}

// credentialsBelow returns the credential files in the tree below dir, as
// read facts (at most maxTreeFound), and whether the whole tree was looked
// at. The walk reads the tree as the command does: a symbolic link counts
// as what it leads to only when the command follows links, hidden names
// are left out when it leaves them out, and a name filter keeps only the
// files it matches. Nothing is found below a path that is not a directory.
func (e *env) credentialsBelow(p PathFact) ([]PathFact, bool) {
	dir := p.Real
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, true
	}
	// A command that leaves hidden files out (rg) still reads one that a
	// "!" line of an ignore file lets back in: the negations of the ignore
	// files above the tree and in it are gathered as the walk goes, and a
	// hidden name is left out only when none of them may match it.
	var negs []negation
	if p.skipHidden {
		for d := dir; ; d = filepath.Dir(d) {
			negs = loadNegations(negs, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	left := func(file string) bool {
		return p.skipHidden && hiddenPath(dir, file) && !slices.ContainsFunc(negs, func(n negation) bool { return n.mayMatch(file) })
	}
	var found []PathFact
	seen := 0
	complete := true
	_ = filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil || file == dir {
			return nil
		}
		if seen++; seen > maxTreeEntries {
			complete = false
			return filepath.SkipAll
		}
		if d.IsDir() {
			if bulkyDirs[d.Name()] || left(file) {
				return filepath.SkipDir
			}
			if p.skipHidden {
				negs = loadNegations(negs, file)
			}
			return nil
		}
		if left(file) {
			return nil
		}
		if p.nameGlob != "" {
			// Without regard to case: stricter than any tool's reading.
			if ok, _ := path.Match(strings.ToLower(p.nameGlob), strings.ToLower(d.Name())); !ok {
				return nil
			}
		}
		cls := risk.ClassifyPath(file, e.home)
		if cls != risk.Secret && p.followLinks && d.Type()&fs.ModeSymlink != 0 {
			if real, err := filepath.EvalSymlinks(file); err == nil {
				cls = max(cls, risk.ClassifyPath(real, e.home))
			}
		}
		if cls == risk.Secret {
			rel, _ := filepath.Rel(e.cwd, file)
			if rel == "" || strings.HasPrefix(rel, "..") {
				rel = file
			}
			f := e.pathFact(e.cwd, file)
			f.Requested = rel + " (in " + dir + ")"
			found = append(found, f)
			if len(found) == maxTreeFound {
				return filepath.SkipAll
			}
		}
		return nil
	})
	return found, complete
}

// ignoreFiles are the files, relative to a directory, whose rules decide
// what a search skips below it.
var ignoreFiles = []string{".gitignore", ".ignore", ".rgignore", filepath.Join(".git", "info", "exclude")}

// negation is a "!" line of an ignore file in base.
type negation struct{ base, pattern string }

// loadNegations adds the negations of the ignore files of dir to negs.
func loadNegations(negs []negation, dir string) []negation {
	for _, n := range ignoreFiles {
		raw, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || len(raw) > 1<<20 {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if pat, ok := strings.CutPrefix(strings.TrimSpace(line), "!"); ok && len(negs) < 1000 {
				negs = append(negs, negation{dir, strings.Trim(pat, "/")})
			}
		}
	}
	return negs
}

// mayMatch reports whether the negation may let file back in: a name or
// a leading path of file below the negation's directory matches it, or
// the pattern names something below that path, or uses **.
func (n negation) mayMatch(file string) bool {
	rel, err := filepath.Rel(n.base, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	if n.pattern == "" || strings.Contains(n.pattern, "**") {
		return true
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, name := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		if ok, _ := path.Match(n.pattern, name); ok {
			return true
		}
		if ok, _ := path.Match(n.pattern, prefix); ok {
			return true
		}
		if strings.HasPrefix(n.pattern, prefix+"/") {
			return true
		}
	}
	return false
}

// hiddenPath reports whether some name of file below dir starts with a dot.
func hiddenPath(dir, file string) bool {
	rel, err := filepath.Rel(dir, file)
	if err != nil {
		return true
	}
	for _, n := range strings.Split(rel, string(filepath.Separator)) {
		if strings.HasPrefix(n, ".") {
			return true
		}
	}
	return false
}

// named reports whether facts hold one requested as raw.
func named(facts []PathFact, raw string) bool {
	for _, f := range facts {
		if f.Requested == raw {
			return true
		}
	}
	return false
}

// operandFacts resolves a path operand of a command. When a cd earlier in
// the line moved the command away from where the line starts, a relative
// path is judged from both places: after "cd x; rm -rf *" a failed cd
// leaves rm running where the line began.
func (e *env) operandFacts(dir, raw string) []PathFact {
	facts := e.pathFacts(dir, raw)
	if dir == "" || dir == e.cwd || filepath.IsAbs(raw) || strings.HasPrefix(raw, "~") {
		return facts
	}
	for _, f := range e.pathFacts(e.cwd, raw) {
		f.Requested += " (if the cd failed)"
		facts = append(facts, f)
	}
	return facts
}

// relink rewrites a path that goes through a link created earlier in the
// same line to the link's target.
func (e *env) relink(abs string) string {
	for i := 0; i < 40 && len(e.links) > 0; i++ {
		changed := false
		for link, target := range e.links {
			if pathres.Within(link, abs) {
				rel, _ := filepath.Rel(link, abs)
				abs = filepath.Join(target, rel)
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return abs
}

// windowsPath matches a drive-letter or UNC path.
func windowsPath(raw string) bool {
	return len(raw) >= 3 && (raw[1] == ':' && (raw[2] == '\\' || raw[2] == '/') && (raw[0]|0x20 >= 'a' && raw[0]|0x20 <= 'z')) ||
		strings.HasPrefix(raw, `\\`)
}

// pathFact resolves raw against dir.
func (e *env) pathFact(dir, raw string) PathFact {
	f := PathFact{Requested: raw}
	if windowsPath(raw) {
		// A Windows drive or share is no part of this workspace; its file
		// names still say what it holds.
		norm := strings.ReplaceAll(raw, `\`, "/")
		f.Real, f.abs, f.Reason = norm, norm, "windows-path"
		f.Class = risk.ClassifyPath("/"+strings.TrimPrefix(norm, "/"), "").String()
		for _, seg := range strings.Split(strings.ToLower(norm), "/") {
			switch seg {
			case ".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker", "credentials":
				f.Class = "credential"
			}
		}
		return f
	}
	if e.dialect != bash {
		raw = strings.ReplaceAll(raw, `\`, "/")
	}
	if abs, ok := pathres.Absolute(dir, e.home, raw); ok && len(e.links) > 0 {
		raw = e.relink(abs)
	}
	f.Lookalike = lookalike(raw)
	p, err := e.fs.Resolve(dir, e.home, raw)
	if err != nil || p.Unknown {
		f.Unknown = true
		f.Class, f.Reason = "unknown", "unknown"
		return f
	}
	f.abs, f.Real, f.Symlink = p.Abs, p.Real, p.Symlink
	f.Inside = e.inside(p.Real)
	switch {
	case f.Inside:
		f.Reason = "inside-workspace"
	case p.Symlink && e.inside(p.Abs):
		f.Reason = "symlink-escape"
	default:
		f.Reason = "outside-workspace"
	}
	// The spelled path is classed too (a link's name may say more than
	// its target); when it is the real path, once is enough.
	c := risk.ClassifyPath(p.Real, e.home)
	if p.Abs != p.Real {
		if lc := risk.ClassifyPath(p.Abs, e.home); lc > c {
			c = lc
		}
	}
	for _, x := range []struct {
		rules []*policy.Rule
		class risk.PathClass
	}{{e.credentialPaths, risk.Secret}, {e.protectedPaths, risk.Protected}} {
		for _, r := range x.rules {
			if c < x.class && (r.MatchPath("read", p.Real, &e.match, true) || p.Abs != p.Real && r.MatchPath("read", p.Abs, &e.match, true)) {
				c = x.class
			}
		}
	}
	f.Class = c.String()
	return f
}

// lookalike reports letters outside ASCII that are easily taken for ASCII
// ones: Cyrillic, Greek, fullwidth forms and the like.
func lookalike(s string) bool {
	for _, r := range s {
		switch {
		case r < 0x80:
		case r >= 0x0370 && r <= 0x03FF, r >= 0x0400 && r <= 0x04FF, r >= 0xFF00 && r <= 0xFFEF,
			r >= 0x2000 && r <= 0x206F, r >= 0x2100 && r <= 0x214F, r == 0x0131, r == 0x0251:
			return true
		}
	}
	return false
}

// downloader names the programs whose option values name files they
// write the contents of, and nothing else (curl -o, wget -O): a device of
// devFiles among them is no file written.
var downloader = map[string]bool{"curl": true, "wget": true}

// devFiles are written to without effect on any file.
var devFiles = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true, "/dev/zero": true}

// shellUnits analyzes a command line into units.
func (e *env) shellUnits(c *call) ([]*Unit, error) {
	dir := e.cwd
	if c.dir != "" {
		abs, ok := pathres.Absolute(e.cwd, e.home, c.dir)
		var err error
		if !ok {
			dir = ""
		} else if dir, err = e.fs.RealDir(abs); err != nil {
			dir = ""
		}
	}
	ctx := e.context()
	res, err := e.dialect.analyze(ctx, c.command, &shell.Options{Dir: dir, Home: e.home})
	if err != nil {
		return nil, err
	}
	var units []*Unit
	// nested are the lines of other dialects the line starts, read
	// line-wide for secrets as the line is.
	type nestedCommands struct {
		src  string
		cmds []shell.Command
	}
	var nested []nestedCommands
	sawNetwork := false
	var found []string // paths the last harmless find lists, for its -exec and xargs
	for i := range res.Commands {
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("analysis stopped: %w", err)
			}
		}
		cmd := &res.Commands[i]
		switch {
		case cmd.Name == "find" && cmd.Via != "find -exec":
			found = harmlessFind(cmd, e.home)
		case (cmd.Via == "find -exec" || cmd.Via == "xargs") && found != nil:
			// Right after the find: its -exec commands, or the xargs it
			// pipes into.
			cmd = substituteFound(cmd, found)
		default:
			found = nil
		}
		u := e.commandUnit(cmd)
		if cmd.Via == "find -exec" || cmd.Via == "xargs" {
			for k := range u.Reads {
				if slices.Contains(found, u.Reads[k].Requested) {
					u.Reads[k].Recursive, u.Reads[k].listed = true, true
				}
			}
		}
		// A download piped or fed into an interpreter runs code nobody saw.
		if sawNetwork && readsScriptFromStdin(cmd) {
			u.destructive = "a download fed into " + cmd.Name + " runs code nobody has read"
			u.Risk = risk.Destructive
			u.RiskWhy = append(u.RiskWhy, u.destructive)
		}
		sawNetwork = sawNetwork || u.network
		e.recordLinks(cmd)
		units = append(units, u)
		if inner := execOption(cmd); inner != nil {
			// fd -x CMD runs CMD for every file found: judge it as a command.
			units = append(units, e.commandUnit(inner))
		}
		// cmd /c, or a PowerShell, started from another shell: judge what it
		// is given in its own dialect.
		if d, src, skip, ok := nestedLine(e.dialect, cmd); ok {
			in, cmds := e.unitsIn(d, src, cmd.Dir, skip)
			units = append(units, in...)
			nested = append(nested, nestedCommands{src, cmds})
		}
	}
	// A network command of a line of another dialect nested in this one
	// counts too: its unit follows the command that starts that line.
	if slices.ContainsFunc(units, func(u *Unit) bool { return u.network }) {
		kinds := lineSecretKinds(c.command, res.Commands)
		for _, n := range nested {
			kinds = appendMissing(kinds, lineSecretKinds(n.src, n.cmds)...)
		}
		if len(kinds) > 0 {
			for _, u := range units {
				// A label that gives them back ($(echo QUtJ… | base64 -d)
				// as written) is recorded in a message: only markers.
				if e.dialect.lineHoldsSecret(u.Label) {
					u.Label = markers(kinds)
				}
				if !u.network {
					continue
				}
				u.Secrets = appendMissing(u.Secrets, kinds...)
				// The line's words hold them: what is recorded of the
				// line must not give them back ([Call.WordSecrets]).
				u.wordSecrets = appendMissing(u.wordSecrets, kinds...)
			}
		}
	}
	for _, p := range res.Problems {
		units = append(units, &Unit{
			Label:   "(unjudgeable)",
			Risk:    risk.Execute,
			RiskWhy: []string{fmt.Sprintf("%d:%d: %s", p.Line, p.Col, p.Msg)},
			unknown: p.Msg,
		})
	}
	return units, nil
}

// harmlessFind returns the start paths of a find whose results are
// restricted by -name or -iname patterns that cannot name a credential or
// protected file, or nil. Its {} (and xargs input) then stands for files
// below those paths; any other find leaves them unknown.
func harmlessFind(cmd *shell.Command, home string) []string {
	var starts []string
	named := false
	for i := 0; i < len(cmd.Args); i++ {
		a := cmd.Args[i]
		if cmd.ArgDynamic[i] {
			return nil
		}
		switch {
		case a == "-name" || a == "-iname":
			if i+1 >= len(cmd.Args) || cmd.ArgDynamic[i+1] {
				return nil
			}
			pat := cmd.Args[i+1]
			if a == "-iname" {
				pat = strings.ToLower(pat)
			}
			if risk.ClassifyPattern("/x/"+pat, home) != risk.Ordinary || risk.ClassifyPath("/x/"+pat, home) != risk.Ordinary {
				return nil
			}
			named = true
			i++
		case a == "-type" || a == "-maxdepth" || a == "-mindepth" || a == "-newer" || a == "-size" || a == "-mtime":
			i++
		case a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir":
			// The rest belongs to the command; find's own words end here.
			i = len(cmd.Args)
		case a == "-print" || a == "-print0" || a == "-o" || a == "-a" || a == "(" || a == ")" || a == "-and" || a == "-or" || a == "-prune":
		case strings.HasPrefix(a, "-"):
			return nil // -path, -regex, -wholename, -not … : not followed here
		case !named && len(starts) == i:
			starts = append(starts, a)
		default:
			return nil
		}
	}
	if !named {
		return nil
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	return starts
}

// substituteFound returns a copy of a command run by find -exec or xargs
// in which the unknown operand that stands for found files is replaced by
// the paths find searched.
func substituteFound(cmd *shell.Command, found []string) *shell.Command {
	c := *cmd
	c.Args, c.ArgDynamic = nil, nil
	for i, a := range cmd.Args {
		if cmd.ArgDynamic[i] && (a == "{}" || strings.Contains(a, "xargs")) {
			for _, f := range found {
				c.Args = append(c.Args, f)
				c.ArgDynamic = append(c.ArgDynamic, false)
			}
			continue
		}
		c.Args = append(c.Args, a)
		c.ArgDynamic = append(c.ArgDynamic, cmd.ArgDynamic[i])
	}
	return &c
}

// nestedLine returns the line a command hands to a shell of another
// dialect — cmd /c LINE, or a pwsh/powershell invocation (whose own
// -Command the PowerShell analysis finds) — and the name of the program
// whose own command heads that line, if any. It reports false for any
// other command. A line that is not static is returned empty.
func nestedLine(from dialect, cmd *shell.Command) (d dialect, src, skip string, ok bool) {
	switch {
	case from != cmdExe && (cmd.Name == "cmd" || cmd.Name == "cmd.exe"):
		for i, a := range cmd.Args {
			if la := strings.ToLower(a); la == "/c" || la == "/k" || la == "/r" {
				if slices.Contains(cmd.ArgDynamic[i+1:], true) {
					return cmdExe, "", "", true
				}
				return cmdExe, strings.Join(cmd.Args[i+1:], " "), "", true
			}
		}
	case from != powerShell && (cmd.Name == "pwsh" || cmd.Name == "powershell" || cmd.Name == "powershell.exe"):
		if slices.Contains(cmd.ArgDynamic, true) {
			return powerShell, "", "", true
		}
		words := make([]string, len(cmd.Args))
		for i, a := range cmd.Args {
			words[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
		}
		return powerShell, "pwsh " + strings.Join(words, " "), "pwsh", true
	}
	return 0, "", "", false
}

// unitsIn judges src, a line of dialect d run in dir, and returns its
// units and its commands; skip names a leading command that was already
// judged. A line that is empty (not static) or does not parse is one unit
// that cannot be judged, and no commands.
func (e *env) unitsIn(d dialect, src, dir, skip string) ([]*Unit, []shell.Command) {
	unjudgeable := func(why string) []*Unit {
		return []*Unit{{Label: "(unjudgeable)", Risk: risk.Execute, unknown: why}}
	}
	if src == "" {
		return unjudgeable("the " + d.String() + " line is not static"), nil
	}
	res, err := d.analyze(e.context(), src, &shell.Options{Dir: dir, Home: e.home})
	if err != nil {
		return unjudgeable(err.Error()), nil
	}
	saved := e.dialect
	e.dialect = d
	defer func() { e.dialect = saved }()
	var units []*Unit
	for k := range res.Commands {
		if k == 0 && skip != "" && res.Commands[k].Name == skip {
			continue
		}
		units = append(units, e.commandUnit(&res.Commands[k]))
	}
	for _, p := range res.Problems {
		units = append(units, unjudgeable(p.Msg)...)
	}
	return units, res.Commands
}

// execOption returns the command that fd -x/-X/--exec runs, or go's -exec
// or -toolexec, as a command of its own, or nil.
func execOption(cmd *shell.Command) *shell.Command {
	if cmd.Name == "go" {
		return goExecOption(cmd)
	}
	if cmd.Name != "fd" && cmd.Name != "fdfind" {
		return nil
	}
	for i, a := range cmd.Args {
		if (a == "-x" || a == "-X" || a == "--exec" || a == "--exec-batch") && i+1 < len(cmd.Args) {
			rest := cmd.Args[i+1:]
			dyn := cmd.ArgDynamic[i+1:]
			name := rest[0]
			if shell.SystemBinDir(filepath.Dir(name)) {
				name = filepath.Base(name)
			}
			return &shell.Command{
				Name: name, NameDynamic: dyn[0], Args: append(rest[1:len(rest):len(rest)], "{}"),
				ArgDynamic: append(dyn[1:len(dyn):len(dyn)], true), Dir: cmd.Dir,
				Wrappers: append(append([]string{}, cmd.Wrappers...), "fd -x"), Via: "fd -x",
				Source: strings.Join(rest, " "), Line: cmd.Line, Col: cmd.Col,
			}
		}
	}
	return nil
}

// goExecOption returns the program that go's -exec or -toolexec runs,
// with the binary or tool it is handed as a word not known until the line
// runs, or nil. go splits the value at spaces; a value with quotes or one
// not known statically is left to the go command's own unit, which asks.
func goExecOption(cmd *shell.Command) *shell.Command {
	for i, a := range cmd.Args {
		if cmd.ArgDynamic[i] {
			continue
		}
		if a == "-args" || a == "--args" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if name != "-exec" && name != "-toolexec" && name != "exec" && name != "toolexec" {
			continue
		}
		if !hasVal {
			if i+1 >= len(cmd.Args) || cmd.ArgDynamic[i+1] {
				return nil
			}
			val = cmd.Args[i+1]
		}
		f := strings.Fields(val)
		if len(f) == 0 || strings.ContainsAny(val, `'"\`) {
			return nil
		}
		prog := f[0]
		if shell.SystemBinDir(filepath.Dir(prog)) {
			prog = filepath.Base(prog)
		}
		args := append(f[1:len(f):len(f)], "{}")
		dyn := make([]bool, len(args))
		dyn[len(dyn)-1] = true
		via := "go " + strings.TrimLeft(name, "-")
		return &shell.Command{
			Name: prog, Args: args, ArgDynamic: dyn, Dir: cmd.Dir,
			Wrappers: append(append([]string{}, cmd.Wrappers...), via), Via: via,
			Source: val, Line: cmd.Line, Col: cmd.Col,
		}
	}
	return nil
}

// varRef finds variable references: $NAME, ${NAME}, and PowerShell's
// $env:NAME.
var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{?(?:env:)?([A-Za-z_][A-Za-z0-9_]*)`) })

// secretVar returns a variable a command expands whose name says it holds
// a secret (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, DB_PASSWORD), or "".
func secretVar(cmd *shell.Command) string {
	for i, a := range cmd.Args {
		if !cmd.ArgDynamic[i] {
			continue
		}
		for _, m := range varRef().FindAllStringSubmatch(a, -1) {
			n := strings.ToUpper(m[1])
			for _, w := range []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "PRIVATE_KEY", "ACCESS_KEY", "CREDENTIAL", "AUTH"} {
				if strings.Contains(n, w) {
					return "$" + m[1]
				}
			}
		}
	}
	return ""
}

// subscriptRuns reports a word that names an array element whose
// subscript holds a command substitution: bash evaluates it when printf
// -v, read or declare assign to it.
func subscriptRuns(cmd *shell.Command) bool {
	switch cmd.Name {
	case "printf", "read", "mapfile", "readarray", "declare", "typeset", "local", "export", "readonly", "unset", "let", "wait", "test", "[":
	default:
		return false
	}
	for _, a := range cmd.Args {
		if i := strings.IndexByte(a, '['); i >= 0 && (strings.Contains(a[i:], "$(") || strings.Contains(a[i:], "`")) {
			return true
		}
		// declare 'x=(…)' parses the quoted value again as a compound
		// assignment, expansions and all.
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(strings.TrimLeft(v, " \t"), "(") &&
			strings.ContainsAny(v, "$`<>") {
			return true
		}
	}
	return false
}

// systemProgram returns the base name of a program named by path when the
// path really leads into a system bin directory, or "".
func systemProgram(dir, name string) string {
	if !strings.Contains(name, "/") {
		return ""
	}
	p, err := pathres.Resolve(dir, "", name)
	if err != nil || p.Unknown || !p.Exists {
		return ""
	}
	// Judge by the directory the path reaches, not by where the binary's
	// own links lead (/usr/bin/python3 -> python3.11).
	parent := pathres.Real(filepath.Dir(p.Abs))
	if shell.SystemBinDir(parent) {
		return filepath.Base(p.Abs)
	}
	return ""
}

// recordLinks notes the links an ln command makes, so that later commands
// of the line are judged through them.
func (e *env) recordLinks(cmd *shell.Command) {
	if cmd.Name != "ln" || cmd.Dir == "" {
		return
	}
	var ops []string
	symbolic := false
	for i, a := range cmd.Args {
		if cmd.ArgDynamic[i] {
			return
		}
		switch {
		case a == "-s" || a == "--symbolic" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "s"):
			symbolic = true
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) < 2 {
		return
	}
	link, ok := pathres.Absolute(cmd.Dir, e.home, ops[len(ops)-1])
	if !ok {
		return
	}
	for _, t := range ops[:len(ops)-1] {
		target := t
		if symbolic && !filepath.IsAbs(t) && !strings.HasPrefix(t, "~") {
			target = filepath.Join(filepath.Dir(link), t) // relative to the link
		}
		abs, ok := pathres.Absolute(cmd.Dir, e.home, target)
		if !ok {
			continue
		}
		l := link
		if fi, err := os.Stat(link); err == nil && fi.IsDir() || len(ops) > 2 {
			l = filepath.Join(link, filepath.Base(t))
		}
		if e.links == nil {
			e.links = map[string]string{}
		}
		e.links[l] = e.relink(abs)
	}
}

// riskyVars change which program runs or what a program runs: an
// assignment to one makes any command unjudgeable.
var riskyVars = map[string]bool{
	"PATH": true, "IFS": true, "ENV": true, "BASH_ENV": true, "PROMPT_COMMAND": true, "PS4": true,
	"SHELLOPTS": true, "BASHOPTS": true, "CDPATH": true, "PAGER": true, "MANPAGER": true, "EDITOR": true,
	"VISUAL": true, "LESSOPEN": true, "LESSCLOSE": true, "PYTHONPATH": true, "PYTHONSTARTUP": true,
	"PYTHONHOME": true, "NODE_OPTIONS": true, "NODE_PATH": true, "PERL5OPT": true, "PERL5LIB": true,
	"PERLLIB": true, "RUBYOPT": true, "RUBYLIB": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true,
	"SSH_ASKPASS": true, "SUDO_ASKPASS": true, "BROWSER": true, "TERMINAL": true, "HOME": true,
	"ZDOTDIR": true, "XDG_CONFIG_HOME": true, "NPM_CONFIG_PREFIX": true, "MAKEFLAGS": true,
	"HISTFILE": true, "HISTCONTROL": true, "HISTIGNORE": true, "PS0": true, "PS1": true, "PS2": true, "PS3": true,
	"GLOBIGNORE": true, "BASH_XTRACEFD": true, "LD_PRELOAD": true, "TMOUT": true, "MAIL": true, "MAILPATH": true,
	"INPUTRC": true, "TERMINFO": true, "LESSKEY": true, "SHELL": true,
	// Often exported already, so that a plain assignment reaches every
	// later command: where its connections go, which certificates it
	// trusts, which libraries it loads.
	"http_proxy": true, "https_proxy": true, "ftp_proxy": true, "all_proxy": true, "no_proxy": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "FTP_PROXY": true, "ALL_PROXY": true, "NO_PROXY": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "CURL_CA_BUNDLE": true, "REQUESTS_CA_BUNDLE": true,
	"NODE_EXTRA_CA_CERTS": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
}

func riskyVar(name string) bool {
	return riskyVars[name] || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") ||
		strings.HasPrefix(name, "GIT_") || strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "npm_config_")
}

// assignedRisky returns a variable the command sets that changes what
// programs run, or "".
func assignedRisky(cmd *shell.Command) string {
	for _, a := range cmd.Assigns {
		if riskyVar(a.Name) {
			return a.Name
		}
	}
	switch cmd.Name {
	case "export", "declare", "typeset", "readonly", "local", "set":
		nameref := false
		for _, a := range cmd.Args {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "n") {
				nameref = true // declare -n r=PATH: r names PATH
			}
			n, v, ok := strings.Cut(a, "=")
			if ok && (riskyVar(n) || nameref && riskyVar(strings.TrimSpace(v))) {
				return n
			}
		}
	}
	// Builtins that assign the variables they are given by name: a special
	// variable set this way (printf -v PATH, read PS4) changes what runs
	// as an assignment does.
	for _, n := range shell.AssignedNames(cmd.Name, cmd.Args) {
		if riskyVar(n) {
			return n
		}
	}
	return ""
}

// inlineFlags are, per program, the options that give it code to run in
// the words of the command line.
var inlineFlags = map[string][]string{
	"python": {"-c"}, "python3": {"-c"}, "python2": {"-c"}, "pypy": {"-c"}, "pypy3": {"-c"},
	"node": {"-e", "-p", "--eval", "--print"}, "nodejs": {"-e", "-p", "--eval", "--print"},
	"deno": {"eval"}, "bun": {"-e", "--eval", "-p", "--print"},
	"perl": {"-e", "-E"}, "ruby": {"-e"}, "php": {"-r", "-B", "-R", "-E", "-F"}, "lua": {"-e"},
	"Rscript": {"-e"}, "osascript": {"-e"}, "tclsh": {"-c"},
	"pwsh": {"-c", "-command", "-encodedcommand", "-ec", "-e"}, "powershell": {"-c", "-command", "-encodedcommand", "-ec", "-e"},
	"vim": {"-c", "--cmd", "+", "-S", "-s"}, "vi": {"-c", "--cmd", "+", "-S", "-s"}, "nvim": {"-c", "--cmd", "+", "-S", "-s", "-l"},
	"ex": {"-c", "--cmd", "+", "-S", "-s"}, "view": {"-c", "--cmd", "+", "-S", "-s"},
	"emacs": {"--eval", "-eval", "-f", "--funcall", "-l", "--load", "--batch", "-batch", "--script", "-x"},
}

// editors are the programs of inlineFlags whose inline code is editor
// commands, not code a rule for the interpreter was written for.
var editors = map[string]bool{"vim": true, "vi": true, "nvim": true, "ex": true, "view": true, "emacs": true}

// inlineCode returns the option with which prog is given code in its
// words (python3 -c, node -e, vim -c or +cmd), or "".
func inlineCode(prog string, args []string) string {
	flags := inlineFlags[prog]
	if flags == nil {
		return ""
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		for _, f := range flags {
			l := strings.ToLower(a)
			switch {
			case f == "+" && strings.HasPrefix(a, "+"):
				return a
			case l == f, !strings.HasPrefix(f, "--") && len(f) == 2 && strings.HasPrefix(a, f) && !strings.HasPrefix(a, "--"),
				strings.HasPrefix(f, "--") && strings.HasPrefix(a, f+"="):
				return f
			case len(a) > 2 && a[0] == '-' && a[1] != '-' && len(f) == 2 && strings.ContainsRune(a[1:], rune(f[1])) && !strings.ContainsAny(a[1:], "=/"):
				// A cluster of short options: python3 -Ic, perl -ne.
				return f
			}
		}
	}
	return ""
}

// assignedUnknownEnv returns a variable the command puts in a program's
// environment that is not known to be inert, or "": a VAR=value prefix of
// a command that runs a program, an env or sudo assignment, or a name
// exported by export, declare -x or typeset -x.
func assignedUnknownEnv(cmd *shell.Command) string {
	if cmd.Name != "" {
		for _, a := range cmd.Assigns {
			if !risk.InertEnvValue(a.Name, a.Value) || a.Dynamic {
				return a.Name
			}
		}
	}
	exported := cmd.Name == "export"
	if cmd.Name == "declare" || cmd.Name == "typeset" || cmd.Name == "local" {
		for _, a := range cmd.Args {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "x") {
				exported = true
			}
		}
	}
	if exported {
		for _, a := range cmd.Args {
			if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") {
				continue
			}
			n, v, _ := strings.Cut(a, "=")
			if !risk.InertEnvValue(n, v) {
				return n
			}
		}
	}
	return ""
}

// readsScriptFromStdin reports an interpreter given no script of its own
// (or "-", /dev/stdin): it runs what it reads from standard input.
func readsScriptFromStdin(c *shell.Command) bool {
	if !risk.Interpreter(c.Name) {
		return false
	}
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if c.ArgDynamic[i] {
			return true // e.g. bash <(curl ...)
		}
		switch {
		case a == "-" || a == "-s" || a == "/dev/stdin" || a == "/dev/fd/0" || a == "/proc/self/fd/0":
			return true
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "-W" || a == "-X":
			i++ // the option's value
		case a == "-m" || a == "-c" || a == "-e" || a == "-E":
			return false // a module or a program given in the words
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			return false // a script file
		}
	}
	return true
}

func (e *env) commandUnit(cmd *shell.Command) *Unit {
	u := &Unit{
		Label: cmd.Source,
		Command: &CommandFact{
			Name: cmd.Name, Args: cmd.Args, Wrappers: cmd.Wrappers, Via: cmd.Via, Dir: cmd.Dir,
		},
		view: policy.CommandView{Name: cmd.Name, Dir: cmd.Dir, Args: cmd.Args, Dynamic: cmd.ArgDynamic, NameDynamic: cmd.NameDynamic, Wrappers: cmd.Wrappers},
	}
	u.view.Prepare()
	if u.Label == "" {
		u.Label = strings.Join(append([]string{cmd.Name}, cmd.Args...), " ")
	}
	u.Label = secrets.RedactQuoted(u.Label)
	redacted := redactAll(cmd.Args)
	if redacted != nil {
		u.Command.Args = redacted
	}
	if redacted != nil || extraWordsHoldSecret(cmd) || commandHoldsSecret(cmd) {
		// The words hold a secret, in one of them or across several
		// (password = S3cr…): the label must not give it back,
		// whatever the shell would make of the label's text.
		u.wordSecrets = wordSecretKinds(cmd)
		u.Label = e.dialect.hiddenLabel(u.Label, cmd, redacted, u.wordSecrets)
	}
	if cmd.NameDynamic {
		u.unknown = "the program is not known until the line runs"
		u.Risk = risk.Execute
		u.RiskWhy = append(u.RiskWhy, "program name is not static: "+cmd.Name)
		return u
	}
	name := cmd.Name
	if name == "" && e.dialect == bash && (len(cmd.Args) > 0 || len(cmd.Assigns) == 0 && len(cmd.Redirects) == 0) {
		// A command word that is empty ('' rm -rf x): bash looks up a
		// program named "" and finds none, which no table knows for sure
		// of every shell.
		u.unknown = "the program's name is an empty word"
		u.Risk = risk.Execute
		u.RiskWhy = append(u.RiskWhy, "program name is empty")
		return u
	}
	if name == "" {
		// An assignment alone (X=1): no program runs; substitutions in the
		// value are commands of their own.
		u.known, u.navigation = true, true
		u.RiskWhy = append(u.RiskWhy, "only sets shell variables")
		if u.Label == "" || u.Label == " " {
			u.Label = "(assignment)"
		}
	} else if sys := systemProgram(cmd.Dir, name); sys != "" {
		// A path that really leads to a system program (/proc/self/root/
		// usr/bin/rm) is that program.
		name, u.view.Name = sys, sys
		u.view.Prepare() // the words are read as that program's
		u.Command.Name = sys
	}
	if name == "" {
	} else if strings.Contains(name, "/") {
		// A program named by path is not the trusted program of the same
		// name: ./sed or /tmp/cat may be anything.
		u.RiskWhy = append(u.RiskWhy, "runs a program by path: "+name)
		u.Risk = risk.Execute
		if dir := cmd.Dir; dir != "" || filepath.IsAbs(name) {
			u.Reads = append(u.Reads, e.pathFact(dir, name))
		}
	} else {
		eff := e.dialect.effect(name, cmd.Args, cmd.ArgDynamic)
		u.known = eff.Known
		u.Command.Spec, u.Command.UnknownOption = eff.Spec, eff.UnknownOption
		u.unknownOption = eff.UnknownOption
		u.Risk, u.base = eff.Level, eff.Level
		u.navigation = eff.Navigation
		u.network = eff.Network
		u.destructive = eff.Destructive
		u.secret = eff.Secret
		if e.dialect == powerShell {
			if p := risk.PowerShellUnknownParameter(name, cmd.Args); p != "" {
				u.unknownOption, u.known = p, false
			}
		}
		switch {
		case eff.UnknownOption != "":
			u.RiskWhy = append(u.RiskWhy, fmt.Sprintf("%s: option %s is not in the spec of %s: it may do anything", name, eff.UnknownOption, eff.Spec))
		case u.unknownOption != "":
			u.RiskWhy = append(u.RiskWhy, fmt.Sprintf("%s is not known to take %s: it may do anything", name, u.unknownOption))
		case !eff.Known && eff.Spec == "" && !risk.Interpreter(name) && risk.Known(name):
			u.RiskWhy = append(u.RiskWhy, name+" has no spec of its options: it may do anything")
		case eff.Exec != "" && eff.Spec != "":
			// Read by its spec; the option that runs code is the reason.
		case !eff.Known && risk.Interpreter(name):
			u.RiskWhy = append(u.RiskWhy, name+" runs the code it is given: it may do anything")
		case !eff.Known:
			u.RiskWhy = append(u.RiskWhy, name+" is not a known program: it may do anything")
		case eff.Destructive != "":
			u.RiskWhy = append(u.RiskWhy, eff.Destructive)
		case eff.Secret != "":
			u.RiskWhy = append(u.RiskWhy, name+" "+eff.Secret)
		default:
			u.RiskWhy = append(u.RiskWhy, fmt.Sprintf("%s is classed %s", name, eff.Level))
		}
		if f := inlineCode(name, cmd.Args); f != "" {
			u.inline = name + " " + f + " runs code given inline"
		}
		if risk.Interpreter(name) {
			u.interpreter = name
		}
		if name == "git" && u.exec == "" {
			if repo := e.otherRepo(cmd); repo != "" {
				u.exec = "git would use the repository at " + repo + ", not the project's: its configuration can run programs"
				u.Risk = risk.Max(u.Risk, risk.Execute)
			}
		}
		if l := e.movedLink(name, eff, cmd); l != "" {
			u.unknown = "copies or moves the link " + l + ", whose target is relative to where the link lies"
		}
		if g, m := globOption(cmd); m != "" {
			u.unknown = fmt.Sprintf("the pattern %s matches %s, which %s reads as an option", g, m, name)
		}
		if eff.Problem != "" {
			u.unknown = eff.Problem
		} else if eff.Unknown {
			u.unknown = "an argument is not known until the line runs"
		}
		exists := false
		for _, r := range eff.Reads {
			for _, f := range e.operandFacts(cmd.Dir, r) {
				f.Recursive, f.skipHidden, f.followLinks, f.nameGlob = eff.Recursive, eff.SkipsHidden, eff.FollowsLinks, eff.NameGlob
				u.Reads = append(u.Reads, f)
				if _, err := os.Lstat(f.Real); f.Real != "" && err == nil {
					exists = true
				}
			}
		}
		if eff.Recursive && !exists && len(eff.Reads) > 0 && risk.IsSearch(name) {
			// None of the operands of a recursive search exists: perhaps
			// an option's value was taken for one, and the search reads
			// the working directory.
			for _, f := range e.operandFacts(cmd.Dir, ".") {
				f.Recursive, f.skipHidden, f.followLinks, f.nameGlob = true, eff.SkipsHidden, eff.FollowsLinks, eff.NameGlob
				u.Reads = append(u.Reads, f)
			}
		}
		for _, w := range eff.Writes {
			for _, f := range e.operandFacts(cmd.Dir, w) {
				if downloader[name] && (devFiles[f.Real] || devFiles[f.abs]) {
					continue // curl -o /dev/null: the output goes nowhere
				}
				f.Delete = eff.Deletes
				u.Writes = append(u.Writes, f)
			}
		}
		for _, f := range codeFiles(name, cmd.Args) {
			u.Code = append(u.Code, e.pathFact(cmd.Dir, f))
		}
		u.exec, u.opaque = eff.Exec, eff.Opaque
		if f := inlineCode(name, cmd.Args); f != "" && editors[name] && u.exec == "" {
			// An editor's commands run shell commands (:!cmd,
			// :call system()), which no rule for the editor covers.
			u.exec = name + " " + f + " runs editor commands, which may run shell commands"
			u.Risk = risk.Max(u.Risk, risk.Execute)
		}
		if u.exec != "" {
			u.RiskWhy = append(u.RiskWhy, u.exec)
		}
		for _, h := range eff.Hosts {
			u.Hosts = append(u.Hosts, hostFact(h))
		}
		if slices.Contains(cmd.Wrappers, "sudo") || slices.Contains(cmd.Wrappers, "doas") {
			u.Risk = risk.Max(u.Risk, risk.Execute)
			u.RiskWhy = append(u.RiskWhy, "runs with raised privileges")
		}
	}
	e.codeDeps(u, name, cmd)
	if name != "" && !risk.NamesOnly(name, cmd.Args) {
		u.Reads = append(u.Reads, e.credentialArgs(cmd, u)...)
	}
	if slices.Contains(cmd.Wrappers, "xargs") {
		// xargs -a FILE reads its arguments from FILE.
		files, ok := xargsArgFiles(cmd.Source)
		if !ok {
			u.unknown = "the xargs options cannot be read statically"
		}
		for _, f := range files {
			u.Reads = append(u.Reads, e.pathFacts(cmd.Dir, f)...)
		}
	}
	if u.network {
		// What a network command sends: its words, the values it is
		// given in the environment and what the line gives it on its
		// standard input (a heredoc, a here-string, a static echo piped in).
		var out []string
		out = append(out, cmd.Args...)
		for _, a := range cmd.Assigns {
			out = append(out, a.Value)
		}
		if cmd.Stdin != "" {
			out = append(out, cmd.Stdin)
		}
		u.Secrets = secretKinds(strings.Join(out, "\n"))
	}
	if v := secretVar(cmd); v != "" {
		// The value is not known here, so a person judges where it goes.
		u.secretVar = "expands " + v + ", which by its name holds a secret"
		u.RiskWhy = append(u.RiskWhy, u.secretVar)
	}
	if subscriptRuns(cmd) {
		u.exec = "an array subscript with a command substitution runs when it is assigned"
		u.Risk = risk.Max(u.Risk, risk.Execute)
	}
	if v := assignedRisky(cmd); v != "" {
		u.exec = "sets " + v + ", which changes what programs run"
		u.Risk = risk.Max(u.Risk, risk.Execute)
		u.RiskWhy = append(u.RiskWhy, u.exec)
	} else if v := assignedUnknownEnv(cmd); v != "" {
		// A program may read options, code or paths from a variable:
		// only the inert ones are known.
		// A rule for the command does not cover what the variable makes it
		// run (GOFLAGS=-toolexec=x, RUSTC_WRAPPER=x, CC=x).
		u.known = false
		u.Risk = risk.Max(u.Risk, risk.Execute)
		if u.exec == "" {
			u.exec = "gives the program " + v + ", which toolgate does not know to be inert: the program may read options, code or paths from it"
		}
		u.RiskWhy = append(u.RiskWhy, u.exec)
	}
	for _, r := range cmd.Redirects {
		if r.Heredoc != "" || r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			continue
		}
		if host, ok := devNet(r.Target); ok && !r.Dynamic {
			// bash opens /dev/tcp/HOST/PORT as a network connection.
			u.Hosts = append(u.Hosts, hostFact(host))
			u.network = true
			u.Risk = risk.Max(u.Risk, risk.Network)
			continue
		}
		if (r.Op == ">&" || r.Op == "<&") && (isFD(r.Target) || r.Target == "-") {
			continue
		}
		if r.Dynamic {
			u.unknown = "a redirection target is not known until the line runs"
			continue
		}
		for _, f := range e.operandFacts(cmd.Dir, r.Target) {
			if devFiles[f.Real] || devFiles[f.abs] {
				continue
			}
			if r.Op == "<" {
				u.Reads = append(u.Reads, f)
			} else {
				u.Writes = append(u.Writes, f)
				u.Risk = risk.Max(u.Risk, risk.Write)
			}
		}
	}
	return u
}

// xargsArgFiles returns the files an xargs command in src reads its
// arguments from (-a FILE, -aFILE, --arg-file=FILE, --arg-file FILE). It
// reports false when the words cannot be read statically.
func xargsArgFiles(src string) ([]string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, false
	}
	var words []string
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, isCall := n.(*syntax.CallExpr); isCall && words == nil {
			for _, w := range c.Args {
				lit, err := literalWord(w)
				if err != nil {
					ok = false
				}
				words = append(words, lit)
			}
			return false
		}
		return true
	})
	var files []string
	seen := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !seen {
			seen = w == "xargs" || strings.HasSuffix(w, "/xargs")
			continue
		}
		switch {
		case w == "-a" || w == "--arg-file":
			if i+1 < len(words) {
				files = append(files, words[i+1])
				i++
			}
		case strings.HasPrefix(w, "--arg-file="):
			files = append(files, strings.TrimPrefix(w, "--arg-file="))
		case strings.HasPrefix(w, "-a") && !strings.HasPrefix(w, "--"):
			files = append(files, w[2:])
		case !strings.HasPrefix(w, "-"):
			return files, ok // the command xargs runs
		}
	}
	return files, ok
}

// literalWord returns the value of a word without expansions, after quote
// removal.
func literalWord(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(x.Value, "\\", ""))
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", fmt.Errorf("expansion in word")
				}
				b.WriteString(l.Value)
			}
		default:
			return "", fmt.Errorf("expansion in word")
		}
	}
	return b.String(), nil
}

// devNet reports the host of a bash /dev/tcp/HOST/PORT or /dev/udp path.
func devNet(target string) (string, bool) {
	for _, p := range []string{"/dev/tcp/", "/dev/udp/"} {
		if rest, ok := strings.CutPrefix(target, p); ok {
			host, _, _ := strings.Cut(rest, "/")
			return host, host != ""
		}
	}
	return "", false
}

func isFD(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// secretKinds returns the rule ids of the secrets in s, without repeats.
func secretKinds(s string) []string {
	var kinds []string
	for _, f := range secrets.Scan(s) {
		kinds = appendMissing(kinds, f.Rule)
	}
	return kinds
}

// redactAll returns words with secrets redacted, each alone and as the
// word after the one before it (--password S3cr…), or nil when none holds
// one.
func redactAll(words []string) []string {
	var out []string
	for i, w := range words {
		r := secrets.Redact(w)
		if i > 0 {
			// A secret given to the option before (--password S3cr…).
			r = secrets.RedactAfter(words[i-1]+" ", r, redactMarker)
		}
		if r != w && out == nil {
			out = append([]string{}, words...)
		}
		if out != nil {
			out[i] = r
		}
	}
	return out
}

// redactMarker is the marker secrets.Redact puts in a secret's place.
func redactMarker(f secrets.Finding, _ string) string { return "[REDACTED:" + f.Rule + "]" }

// toolUnit fills u, zero but for the empty slices it may append to, with
// the single unit of a non-shell call.
func (e *env) toolUnit(c *call, u *Unit) {
	u.Label, u.Risk, u.known = c.req.Tool, c.meta.base, true
	u.RiskWhy = append(u.RiskWhy, c.meta.classed(c.tool))
	if c.meta.acts != "" {
		u.exec = c.req.Tool + " " + c.meta.acts
		u.RiskWhy = append(u.RiskWhy, u.exec)
	}
	for _, p := range c.paths {
		f := e.pathFact(e.cwd, p.raw)
		// A search tool leaves hidden files out, as ripgrep does; one it
		// is pointed at by a glob is a read of its own.
		f.Recursive, f.skipHidden, f.nameGlob = c.recursive, c.recursive, c.nameGlob
		if p.family == "write" {
			u.Writes = append(u.Writes, f)
		} else {
			u.Reads = append(u.Reads, f)
		}
		u.Label += " " + p.raw
	}
	if c.url != nil {
		u.Hosts = append(u.Hosts, hostFact(c.url.Hostname()))
		u.network = true
		u.Secrets = secretKinds(c.url.String())
		u.Label += " " + secrets.Redact(c.url.Redacted())
	}
	if c.tool == policy.ToolWebSearch {
		u.network = true
		if q, ok := c.input["query"].(string); ok {
			u.Secrets = secretKinds(q)
		}
	}
	if c.tool == policy.ToolMCP {
		u.Label = c.mcpName
		for _, p := range c.paths {
			u.Label += " " + p.raw
		}
		u.known = false
		if m := c.req.MCP; m != nil && c.mcpTrusted {
			// A trusted server's annotations are the tool's effect.
			u.known = true
			switch {
			case m.ReadOnly:
				u.Risk, u.base = risk.Read, risk.Read
				u.RiskWhy = append(u.RiskWhy, "the trusted server annotates the tool read-only")
			case m.Destructive:
				u.Risk, u.base = risk.Destructive, risk.Destructive
				u.destructive = c.mcpName + " is annotated destructive by its server"
			default:
				u.Risk, u.base = risk.Write, risk.Write
				u.RiskWhy = append(u.RiskWhy, "the trusted server annotates the tool as changing things")
			}
			u.network = m.OpenWorld
		}
		if m := c.req.MCP; m == nil || !c.mcpTrusted || !m.ReadOnly {
			// A tool that may change things may write every path it names.
			for _, p := range c.paths {
				if !p.guessed {
					u.Writes = append(u.Writes, e.pathFact(e.cwd, p.raw))
				}
			}
		}
		if b, err := json.Marshal(c.input); err == nil {
			u.Secrets = secretKinds(string(b))
		}
	}
}

// escalate raises a unit's risk from what its paths reveal.
func (e *env) escalate(u *Unit) {
	for i, p := range u.Reads {
		if !p.Recursive || p.Unknown || p.Class == "credential" {
			continue
		}
		for _, r := range e.credentialPaths {
			if r.MatchBelow(p.Real, &e.match) {
				// Reading the whole tree reads the credential inside it.
				u.Reads[i].Class = "credential"
				break
			}
		}
		if u.Reads[i].Class == "credential" {
			continue
		}
		// The files a tree holds now: grep -r KEY . reads ./.env.
		if p.listed {
			continue // a find whose -name cannot match a sensitive file
		}
		found, complete := e.credentialsBelow(p)
		for _, f := range found {
			if !named(u.Reads, f.Requested) {
				u.Reads = append(u.Reads, f)
			}
		}
		if !complete && u.unknown == "" {
			u.unknown = fmt.Sprintf("the tree below %s is too large to check for credential files", p.Requested)
		}
	}
	outside, escape := false, false
	for _, ps := range [2][]PathFact{u.Reads, u.Writes} {
		for _, p := range ps {
			if p.Lookalike {
				u.RiskWhy = append(u.RiskWhy, p.Requested+" uses characters that look like others")
			}
			switch {
			case p.Unknown:
				if u.unknown == "" {
					u.unknown = "path " + p.Requested + " cannot be resolved statically"
				}
			case p.Class == "credential":
				u.Risk = risk.Credential
				u.RiskWhy = append(u.RiskWhy, p.Requested+" holds credentials")
			case !p.Inside:
				outside = true
				if p.abs != "" && e.inside(p.abs) && p.Symlink {
					escape = true
					u.RiskWhy = append(u.RiskWhy, fmt.Sprintf("%s is a link out of the workspace to %s", p.Requested, p.Real))
				} else {
					u.RiskWhy = append(u.RiskWhy, p.Requested+" is outside the workspace")
				}
			}
		}
	}
	if u.secret != "" {
		u.Risk = risk.Max(u.Risk, risk.Credential)
	}
	if outside && u.Risk < risk.Credential {
		u.Risk = u.Risk.Raise()
	}
	if u.destructive != "" {
		u.Risk = risk.Destructive
		for _, w := range u.Writes {
			switch {
			case !w.Delete:
			case w.Real == "/":
				u.destructive = "deletes the whole file system: " + u.destructive
			case w.Real == e.home && e.home != "":
				u.destructive = "deletes your whole home directory: " + u.destructive
			case w.Real == e.root && e.root != "":
				u.destructive = "deletes the whole workspace: " + u.destructive
			default:
				continue
			}
			u.RiskWhy = append(u.RiskWhy, u.destructive)
			break
		}
	}
	u.outside, u.escape = outside, escape
}

// PathsOnly reports whether everything the unit does is in its Reads and
// Writes: a program whose effects are known, that runs no hidden code,
// reaches no host, sends no secret, deletes nothing irreversibly and names
// every path it touches. Only such a unit can be covered by a lease on its
// paths.
func (u *Unit) PathsOnly() bool {
	if u.unknown != "" || u.exec != "" || u.opaque != "" || u.network || len(u.Hosts) > 0 ||
		len(u.Secrets) > 0 || u.secret != "" || u.secretVar != "" || u.destructive != "" ||
		u.Risk == risk.Destructive || (u.Command != nil && !u.known) {
		return false
	}
	for _, ps := range [][]PathFact{u.Reads, u.Writes} {
		for _, p := range ps {
			if p.Unknown || p.Real == "" {
				return false
			}
		}
	}
	return true
}

// inlineCode are the options with which an interpreter runs code given on
// the command line or names a module, not a script file.
var inlineCodeOpts = map[string]bool{"-c": true, "-e": true, "-m": true, "-E": true, "--eval": true, "-r": true, "-p": true, "--print": true, "-x": true}

// codeFiles returns the files, as the command spells them, whose content
// decides what the program name does with args: an interpreter's script,
// the Makefile of make, the package.json of a package manager's scripts.
func codeFiles(name string, args []string) []string {
	switch {
	case posixShells[name]:
		if script, _ := shellScriptArg(args, nil); script != "" {
			return []string{script}
		}
		return nil
	case risk.Interpreter(name):
		for _, a := range args {
			if inlineCodeOpts[a] {
				return nil
			}
			if a == "--" || !strings.HasPrefix(a, "-") {
				if a == "--" || a == "-" {
					return nil
				}
				return []string{a}
			}
		}
	case name == "make" || name == "gmake":
		for i, a := range args {
			if (a == "-f" || a == "--file" || a == "--makefile") && i+1 < len(args) {
				return []string{args[i+1]}
			}
		}
		return []string{"Makefile"}
	case name == "npm" || name == "pnpm" || name == "yarn" || name == "bun":
		return []string{"package.json"}
	}
	return nil
}
