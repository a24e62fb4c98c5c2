package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/risk"
	"github.com/toolgate/toolgate/shell"
)

// The bounds of the walk through the files a command's code depends on.
// Past them the walk stops and the command's dependencies are unseen.
const (
	// maxDepDepth is how deeply files may source or include one another,
	// counting the script or makefile the command names as depth 1.
	maxDepDepth = 8
	// maxDepFiles is how many files one command's walk may bind.
	maxDepFiles = 64
	// maxDepBytes is the largest file the walk reads; the shell analysis
	// refuses larger scripts anyway.
	maxDepBytes = 64 << 10
	// maxDepTotal bounds the bytes one walk reads and analyses in all, so
	// that files an agent writes cannot make a decision slow.
	maxDepTotal = 512 << 10
)

// posixShells are the shells whose scripts are read as bash to find the
// files they source and the scripts they run.
var posixShells = map[string]bool{"sh": true, "bash": true, "dash": true, "ksh": true, "zsh": true, "mksh": true, "ash": true}

// UnseenDependency returns why the call's code depends on a file the
// analysis cannot name (a file sourced or a script run by a computed path,
// a relative path after a possible cd, too deep a chain of includes), or
// "" when every such file is in its units' Code. A call with an unseen
// dependency is never covered by a prior approval: what the approval would
// be bound to is not all the call runs.
func (c *Call) UnseenDependency() string {
	if c == nil {
		return ""
	}
	return anyUnseen(c.Units)
}

func anyUnseen(units []*Unit) string {
	for _, u := range units {
		if u.CodeUnseen != "" {
			return u.CodeUnseen
		}
	}
	return ""
}

// depWalk finds the files a command's code depends on.
type depWalk struct {
	e    *env
	u    *Unit
	seen map[string]bool
	// keeps remembers, by directory and file, whether sourcing the file
	// leaves the directory as it is (keepsDir).
	keeps map[string]bool
	// read counts the bytes read, up to maxDepTotal.
	read int
}

// charge counts n more bytes read and reports whether the walk may go on.
func (w *depWalk) charge(n int) bool {
	w.read += n
	return w.read <= maxDepTotal
}

// codeDeps adds to u.Code what the code of cmd depends on as far as the
// analysis can see: the files a shell script sources (source, .), the
// scripts and makefiles it runs, the makefiles make reads and what they
// include, each level in turn. Where a dependency cannot be seen it sets
// u.CodeUnseen instead.
func (e *env) codeDeps(u *Unit, name string, cmd *shell.Command) {
	if e.dialect != bash || name == "" || cmd.NameDynamic {
		return
	}
	w := &depWalk{e: e, u: u, seen: map[string]bool{}, keeps: map[string]bool{}}
	w.command(name, cmd, 1)
}

// command binds what the command cmd (run as name) runs code from, found
// at depth: the file it sources, the script a shell or interpreter is
// given, a program run by path, make's makefiles.
func (w *depWalk) command(name string, cmd *shell.Command, depth int) {
	if w.done() {
		return
	}
	if depth > maxDepDepth {
		w.unseen(fmt.Sprintf("scripts run or source one another more than %d levels deep", maxDepDepth))
		return
	}
	// file resolves a path the command names, or says why it cannot.
	file := func(p string) (PathFact, bool) {
		if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~") && cmd.Dir == "" {
			w.unseen(fmt.Sprintf("%s %s: the directory it runs in is not known (a command before it may change it)", name, p))
			return PathFact{}, false
		}
		f := w.e.pathFact(cmd.Dir, p)
		if f.Unknown || f.Real == "" {
			w.unseen(fmt.Sprintf("%s %s: the path cannot be resolved", name, p))
			return PathFact{}, false
		}
		return f, true
	}
	switch {
	case name == "source" || name == ".":
		if len(cmd.Args) == 0 {
			return
		}
		i := 0
		if cmd.Args[0] == "--" && len(cmd.Args) > 1 {
			i = 1
		}
		w.source(name, cmd.Dir, cmd.Args[i], cmd.ArgDynamic[i], depth)
	case posixShells[name]:
		script, ok := shellScriptArg(cmd.Args, cmd.ArgDynamic)
		if !ok {
			w.unseen(name + " is given a script whose name is not known until the line runs")
			return
		}
		if script == "" && readsScriptFromStdin(cmd) {
			script = stdinFile(cmd, func(why string) { w.unseen(name + " " + why) })
		}
		if script == "" {
			return
		}
		if f, ok := file(script); ok && w.bind(f) {
			w.script(f.Real, cmd.Dir, depth)
		}
	case name == "fish":
		if script, _ := shellScriptArg(cmd.Args, cmd.ArgDynamic); script != "" {
			w.unseen("fish scripts are not read for the files they source")
		}
	case strings.Contains(name, "/"):
		f, ok := file(name)
		if !ok || !w.bind(f) {
			return
		}
		switch interp := scriptInterpreter(f.Real); {
		case posixShells[interp]:
			w.script(f.Real, cmd.Dir, depth)
		case isPython(interp):
			w.python(f.Real, depth)
		case isNode(interp):
			w.nodeFile(f.Real, depth)
		case interp == "fish":
			w.unseen("fish scripts are not read for the files they source")
		}
	case name == "make" || name == "gmake":
		w.make(cmd, depth)
	case packageManagers[name]:
		w.packageScripts(name, cmd, depth)
	default:
		// An interpreter's words up to its script say what code it runs
		// (all of them, for eval).
		for i, a := range cmd.Args {
			if !risk.Interpreter(name) {
				break
			}
			if i < len(cmd.ArgDynamic) && cmd.ArgDynamic[i] {
				w.unseen(name + " is given a word that is not known until the line runs: it may name the code it runs")
				return
			}
			if name != "eval" && (a == "--" || !strings.HasPrefix(a, "-")) {
				break
			}
		}
		switch {
		case isNode(name):
			w.nodeCommand(name, cmd, depth)
		case isPython(name):
			w.pythonCommand(cmd, depth)
		default:
			for _, p := range codeFiles(name, cmd.Args) {
				if f, ok := file(p); ok {
					w.bind(f)
				}
			}
		}
	}
}

// isPython reports whether name is a Python interpreter (python,
// python3, python3.12, …).
func isPython(name string) bool {
	return strings.HasPrefix(name, "python") && strings.Trim(name[len("python"):], "0123456789.") == ""
}

// pythonImport finds the modules a line of Python imports: "import a.b, c
// as d" and "from a.b import c" (a relative "from ." is reported as ".").
var pythonImport = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:import\s+([\w.,\s]+?)(?:\s+as\s+\w+)?\s*$|from\s+(\.*[\w.]*)\s+import\b)`)
})

// pythonDynamic finds Python that imports or runs code chosen as it runs:
// an import by a computed name, code run from a string (exec, eval), or
// a change of where modules are looked up.
var pythonDynamic = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`__import__|importlib|runpy|\b(?:exec|execfile|eval)\s*\(|\bsys\s*\.\s*(?:path|meta_path|path_hooks)\b|\baddsitedir\b`)
})

// python binds the modules the Python script at real imports from beside
// it: Python looks there first, so a module file that is there (or is
// created there, which the binding of its absence catches) is the code
// that runs, even for a name of the standard library. A package directory
// there, a relative import or an import by computed name is unseen.
func (w *depWalk) python(real string, depth int) {
	if src, ok := w.readModule(real, depth); ok {
		w.pythonSource(real, src, filepath.Dir(real), depth)
	}
}

// readModule returns the content of the module at real, met depth deep
// in a chain of modules loading one another, or ok false when the walk
// stops there: it is done, the chain is too deep, or [depWalk.readFile]
// gives nothing.
func (w *depWalk) readModule(real string, depth int) (string, bool) {
	if w.done() {
		return "", false
	}
	if depth > maxDepDepth {
		w.unseen(fmt.Sprintf("modules load one another more than %d levels deep", maxDepDepth))
		return "", false
	}
	return w.readFile(real)
}

// pythonSource binds the modules the Python code src (of from) imports
// from dir, the first place Python looks.
func (w *depWalk) pythonSource(real, src, dir string, depth int) {
	if pythonDynamic().MatchString(src) {
		w.unseen(real + " imports or runs code by a name computed when it runs")
		return
	}
	for _, line := range strings.Split(src, "\n") {
		// A statement ends at ";", and an import may follow the ":" of a
		// compound statement on its line ("try: import x").
		for _, stmt := range strings.FieldsFunc(line, func(r rune) bool { return r == ';' || r == ':' }) {
			m := pythonImport().FindStringSubmatch(stmt)
			if m == nil {
				continue
			}
			names := []string{m[2]}
			if m[1] != "" {
				names = strings.Split(m[1], ",")
			}
			for _, n := range names {
				n = strings.TrimSpace(n)
				if i := strings.IndexAny(n, " \t"); i >= 0 {
					n = n[:i] // "c as d"
				}
				top, _, _ := strings.Cut(n, ".")
				if top == "" {
					w.unseen(fmt.Sprintf("%s imports relative to its package (%s)", real, strings.TrimSpace(stmt)))
					return
				}
				w.pythonModule(real, dir, top, depth)
				if w.done() {
					return
				}
			}
		}
	}
}

// pythonCommand binds what python run by cmd runs: its script and the
// modules that imports, what -c CODE imports, or the module -m MODULE
// runs (both looked up in the directory it runs in first). Its options
// are read as Python reads them: clustered (-Ic), with the value attached
// (-mtool) or next (-W ignore); an option not known, or a word not known
// until the line runs, makes the dependencies unseen.
func (w *depWalk) pythonCommand(cmd *shell.Command, depth int) {
	const (
		flags  = "bBdEhiIOPqRsSuvVx?" // options that take no value
		values = "WX"                 // options that take one
	)
	args := cmd.Args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if i < len(cmd.ArgDynamic) && cmd.ArgDynamic[i] {
			w.unseen("python is given a word that is not known until the line runs: it may name the code it runs")
			return
		}
		switch {
		case a == "-":
			return // the code comes from standard input
		case a == "--" || !strings.HasPrefix(a, "-"):
			if a == "--" {
				if i+1 >= len(args) || (i+1 < len(cmd.ArgDynamic) && cmd.ArgDynamic[i+1]) {
					w.unseen("python is given a script whose name is not known until the line runs")
					return
				}
				a = args[i+1]
			}
			w.pythonScript(cmd.Dir, a, depth)
			return
		case a == "--check-hash-based-pycs":
			i++
			continue
		case a == "--version" || a == "--help" || strings.HasPrefix(a, "--help-") ||
			strings.HasPrefix(a, "--check-hash-based-pycs="):
			continue
		case strings.HasPrefix(a, "--"):
			w.unseen("python's option " + a + " cannot be read for the code it runs")
			return
		}
		for j := 1; j < len(a); j++ {
			switch c := a[j]; {
			case c == 'c' || c == 'm':
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return
					}
					v = args[i+1]
				}
				if cmd.Dir == "" {
					w.unseen("python -" + string(c) + ": the directory it runs in is not known")
					return
				}
				if c == 'm' {
					top, _, _ := strings.Cut(v, ".")
					w.pythonModule("python -m", cmd.Dir, top, depth)
				} else {
					w.pythonSource("python -c", v, cmd.Dir, depth)
				}
				return
			case strings.IndexByte(values, c) >= 0:
				if j == len(a)-1 {
					i++
				}
				j = len(a)
			case strings.IndexByte(flags, c) < 0:
				w.unseen("python's option " + a + " cannot be read for the code it runs")
				return
			}
		}
	}
}

// pythonScript binds the script python runs, named p in dir, and what it
// imports.
func (w *depWalk) pythonScript(dir, p string, depth int) {
	if dir == "" && !filepath.IsAbs(p) {
		w.unseen(fmt.Sprintf("python %s: the directory it runs in is not known (a command before it may change it)", p))
		return
	}
	f := w.e.pathFact(dir, p)
	if f.Unknown || f.Real == "" {
		w.unseen(fmt.Sprintf("python %s: the path cannot be resolved", p))
		return
	}
	if w.bind(f) {
		w.python(f.Real, depth)
	}
}

// pythonModule binds the module top that a script in dir imports: the
// file top.py there (or its absence), and reports a package directory top
// there as unseen.
func (w *depWalk) pythonModule(from, dir, top string, depth int) {
	pkg := w.e.pathFact(dir, top)
	if pkg.Unknown || pkg.Real == "" {
		w.unseen(fmt.Sprintf("%s: module %s cannot be resolved", from, top))
		return
	}
	if fi, err := os.Stat(pkg.Real); err == nil && fi.IsDir() {
		w.unseen(fmt.Sprintf("%s imports the package %s beside it, whose modules are not read", from, top))
		return
	}
	w.bind(pkg) // its absence: a package created there would be imported
	f := w.e.pathFact(dir, top+".py")
	if f.Unknown || f.Real == "" {
		w.unseen(fmt.Sprintf("%s: module %s cannot be resolved", from, top))
		return
	}
	if w.bind(f) {
		if _, err := os.Stat(f.Real); err == nil {
			w.python(f.Real, depth+1)
		}
	}
}

// unseen notes why a dependency cannot be seen; the first reason stays.
func (w *depWalk) unseen(why string) {
	if w.u.CodeUnseen == "" {
		w.u.CodeUnseen = why
	}
}

func (w *depWalk) done() bool { return w.u.CodeUnseen != "" }

// bind adds f to the unit's code, unless it is there already, and
// reports whether the walk meets it for the first time.
func (w *depWalk) bind(f PathFact) bool {
	if w.seen[f.Real] {
		return false
	}
	if len(w.seen) >= maxDepFiles {
		w.unseen(fmt.Sprintf("the code depends on more than %d files", maxDepFiles))
		return false
	}
	w.seen[f.Real] = true
	for _, c := range w.u.Code {
		if c.Real == f.Real {
			return true
		}
	}
	w.u.Code = append(w.u.Code, f)
	return true
}

// readFile returns the content of the file at real, or ok false when it does
// not exist (nothing is run from it then; its absence is bound). A file
// that cannot be read, or is too large, makes the dependencies unseen.
func (w *depWalk) readFile(real string) (string, bool) {
	f, err := os.Open(real)
	if err != nil {
		if !os.IsNotExist(err) {
			w.unseen(fmt.Sprintf("%s cannot be read: %v", real, err))
		}
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		w.unseen(real + " is not a regular file")
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDepBytes+1))
	if err != nil {
		w.unseen(fmt.Sprintf("%s cannot be read: %v", real, err))
		return "", false
	}
	if len(b) > maxDepBytes {
		w.unseen(fmt.Sprintf("%s is larger than %d bytes: the files it uses are not read", real, maxDepBytes))
		return "", false
	}
	if !w.charge(len(b)) {
		w.unseen(fmt.Sprintf("the code depends on more than %d bytes of files", maxDepTotal))
		return "", false
	}
	return string(b), true
}

// script reads the shell script at real, run or sourced from dir, for the
// files it sources and the code it runs.
func (w *depWalk) script(real, dir string, depth int) {
	if w.done() {
		return
	}
	src, ok := w.readFile(real)
	if !ok {
		return
	}
	w.shellCode(real, "it", src, dir, func(c *shell.Command) { w.command(c.Name, c, depth+1) })
}

// shellCode reads the shell code src, run in dir, for the code its
// commands run: run is called with each command whose name is known. A
// command whose name is not known until the code runs, or one that sets
// a variable of riskyVars, makes the dependencies unseen. what names the
// code in the reasons given ("t.sh", "Makefile:3: the recipe"), and
// runner what runs it ("it", "make").
func (w *depWalk) shellCode(what, runner, src, dir string, run func(c *shell.Command)) {
	res, err := shell.AnalyzeContext(w.e.context(), src, &shell.Options{Dir: dir, Home: w.e.home, KeepsDir: w.keepsDir})
	if err != nil {
		w.unseen(fmt.Sprintf("%s cannot be analysed for the code it runs: %v", what, err))
		return
	}
	for _, c := range res.Commands {
		if w.done() {
			return
		}
		if v := setsRisky(&c); v != "" {
			w.unseen(fmt.Sprintf("%s sets %s, which changes what code runs", what, v))
			return
		}
		switch {
		case c.NameDynamic:
			w.unseen(fmt.Sprintf("%s runs a command whose name is not known until %s runs (%s): it may run any file", what, runner, c.Name))
		case c.Name != "":
			run(&c)
		}
	}
}

// setsRisky returns a variable of riskyVars that c assigns (as a prefix,
// alone, or with export, declare and the like; a name not known until the
// line runs counts), or "".
func setsRisky(c *shell.Command) string {
	for _, a := range c.Assigns {
		if riskyVars[a.Name] {
			return a.Name
		}
	}
	switch c.Name {
	case "export", "declare", "typeset", "local", "readonly":
		for i, a := range c.Args {
			if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") {
				continue
			}
			n, _, _ := strings.Cut(a, "=")
			if riskyVars[n] || i < len(c.ArgDynamic) && c.ArgDynamic[i] && strings.ContainsAny(n, "$`") {
				return n
			}
		}
	}
	return ""
}

// keepsDir reports whether sourcing file from dir certainly leaves the
// working directory as it is: the file (if it exists) is read, and neither
// it nor what it sources runs cd, pushd or popd, a command whose name is
// not static, or anything the analysis cannot judge
// (shell.Options.KeepsDir).
func (w *depWalk) keepsDir(dir, file string) bool {
	if !strings.Contains(file, "/") {
		return false
	}
	f := w.e.pathFact(dir, file)
	if f.Unknown || f.Real == "" {
		return false
	}
	key := dir + "\x00" + f.Real
	if v, ok := w.keeps[key]; ok {
		return v
	}
	if len(w.keeps) >= maxDepFiles {
		return false
	}
	// While the file is read it counts as changing the directory, which
	// ends a cycle of files sourcing one another.
	w.keeps[key] = false
	keeps := w.readKeepsDir(f.Real, dir)
	w.keeps[key] = keeps
	return keeps
}

func (w *depWalk) readKeepsDir(real, dir string) bool {
	fi, err := os.Stat(real)
	if os.IsNotExist(err) {
		return true // sourcing it fails; its absence is bound
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxDepBytes {
		return false
	}
	b, err := os.ReadFile(real)
	if err != nil || len(b) > maxDepBytes || !w.charge(len(b)) {
		return false
	}
	res, err := shell.AnalyzeContext(w.e.context(), string(b), &shell.Options{Dir: dir, Home: w.e.home, KeepsDir: w.keepsDir})
	if err != nil || len(res.Problems) > 0 {
		return false
	}
	for _, c := range res.Commands {
		switch {
		case c.NameDynamic, c.Name == "cd", c.Name == "pushd", c.Name == "popd":
			return false
		case c.Name == "source" || c.Name == ".":
			if len(c.Args) == 0 {
				continue
			}
			i := 0
			if c.Args[0] == "--" && len(c.Args) > 1 {
				i = 1
			}
			if c.Dir == "" || c.ArgDynamic[i] || !w.keepsDir(c.Dir, c.Args[i]) {
				return false
			}
		}
	}
	return true
}

// source binds the file that `source file` (or `. file`) run in dir reads,
// and what it sources in turn.
func (w *depWalk) source(name, dir, file string, dynamic bool, depth int) {
	switch {
	case dynamic:
		w.unseen(fmt.Sprintf("%s %s: the path is not known until the line runs", name, file))
		return
	case !strings.Contains(file, "/"):
		w.unseen(fmt.Sprintf("%s %s: the shell looks the file up in PATH", name, file))
		return
	case !filepath.IsAbs(file) && !strings.HasPrefix(file, "~") && dir == "":
		w.unseen(fmt.Sprintf("%s %s: the directory it is sourced from is not known (a command before it may change it)", name, file))
		return
	}
	if depth > maxDepDepth {
		w.unseen(fmt.Sprintf("files are sourced more than %d levels deep", maxDepDepth))
		return
	}
	f := w.e.pathFact(dir, file)
	if f.Unknown || f.Real == "" {
		w.unseen(fmt.Sprintf("%s %s: the path cannot be resolved", name, file))
		return
	}
	if w.bind(f) {
		w.script(f.Real, dir, depth)
	}
}

// shellScriptArg returns the script a shell is given in args, "" when it
// runs none (it reads standard input or runs -c code), and ok false when
// the script's name is not known statically.
func shellScriptArg(args []string, dyn []bool) (script string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case i < len(dyn) && dyn[i]:
			return "", false
		case a == "--":
			if i+1 < len(args) {
				if i+1 < len(dyn) && dyn[i+1] {
					return "", false
				}
				return args[i+1], true
			}
			return "", true
		case a == "-c" || a == "-s" || a == "-":
			return "", true
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "cs") {
				return "", true
			}
		default:
			return a, true
		}
	}
	return "", true
}

// stdinFile returns the file a shell reading its script from standard
// input is given with <, or "" when it is given a heredoc or here-string
// (whose commands the analysis reads itself). Any other standard input (a
// pipe, the terminal, a computed file) is reported to unseen.
func stdinFile(cmd *shell.Command, unseen func(why string)) string {
	file, text := "", false
	for _, r := range cmd.Redirects {
		if r.Fd != "" && r.Fd != "0" {
			continue
		}
		switch r.Op {
		case "<":
			if r.Dynamic {
				unseen("reads its script from a file named only when the line runs")
				return ""
			}
			file, text = r.Target, false
		case "<<", "<<-", "<<<":
			file, text = "", true
		case "<>", "<&":
			file, text = "", false
		}
	}
	if file == "" && !text {
		unseen("reads its script from standard input, which the analysis cannot follow to a file")
	}
	return file
}

// scriptInterpreter returns the base name of the interpreter the script
// at real names in its #! line ("env" seen through), "sh" for a text file
// without one (the shell runs it), or "" for a binary or unreadable file.
func scriptInterpreter(real string) string {
	f, err := os.Open(real)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	line, err := bufio.NewReader(io.LimitReader(f, 512)).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return ""
	}
	if bytes.HasPrefix(line, []byte("\x7fELF")) || bytes.IndexByte(line, 0) >= 0 {
		return ""
	}
	if !bytes.HasPrefix(line, []byte("#!")) {
		return "sh"
	}
	fields := strings.Fields(string(line[2:]))
	if len(fields) == 0 {
		return "sh"
	}
	interp := filepath.Base(fields[0])
	if interp == "env" {
		interp = ""
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
				interp = filepath.Base(f)
				break
			}
		}
	}
	return interp
}

// make binds the makefiles make reads: those named with -f, or the first
// of GNUmakefile, makefile and Makefile, each in the directory -C leads
// to, and the makefiles they include.
func (w *depWalk) make(cmd *shell.Command, depth int) {
	for _, a := range cmd.Assigns {
		if a.Name == "MAKEFILES" {
			w.unseen("MAKEFILES names makefiles make reads first")
			return
		}
	}
	dir := cmd.Dir
	var files []string
	searchDirs := false
	value := func(i *int, a, long, short string) (string, bool) {
		switch {
		case a == short || a == long:
			if *i+1 < len(cmd.Args) {
				*i++
				return cmd.Args[*i], true
			}
		case strings.HasPrefix(a, long+"="):
			return a[len(long)+1:], true
		case strings.HasPrefix(a, short) && len(a) > len(short):
			return a[len(short):], true
		}
		return "", false
	}
	for i := 0; i < len(cmd.Args); i++ {
		a := cmd.Args[i]
		if i < len(cmd.ArgDynamic) && cmd.ArgDynamic[i] {
			w.unseen("an argument of make is not known until the line runs: it may name other makefiles")
			return
		}
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			// A variable given on the line overrides the makefiles'.
			if name, _, ok := strings.Cut(a, "="); ok && name == "MAKEFILES" {
				w.unseen("MAKEFILES names makefiles make reads first")
				return
			}
			if v := makeShellVar([]string{a}); v != "" {
				w.unseen("make " + a + ": " + v + " changes what runs the recipes")
				return
			}
			continue
		}
		if v, ok := value(&i, a, "--directory", "-C"); ok {
			if dir == "" && !filepath.IsAbs(v) {
				w.unseen("make -C " + v + ": the directory it starts from is not known")
				return
			}
			dir = filepath.Join(dir, v)
			if filepath.IsAbs(v) {
				dir = filepath.Clean(v)
			}
			continue
		}
		if v, ok := value(&i, a, "--file", "-f"); ok {
			files = append(files, v)
			continue
		}
		if a == "--makefile" || strings.HasPrefix(a, "--makefile=") {
			if v, ok := value(&i, a, "--makefile", "--makefile"); ok {
				files = append(files, v)
			}
			continue
		}
		if a == "--eval" || strings.HasPrefix(a, "--eval=") {
			w.unseen("make --eval adds makefile text given on the line")
			return
		}
		if _, ok := value(&i, a, "--include-dir", "-I"); ok {
			searchDirs = true
			continue
		}
		if !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], "CfI") {
			w.unseen("make's option " + a + " cannot be read for the makefiles it names")
			return
		}
	}
	if dir == "" {
		w.unseen("the directory make runs in is not known")
		return
	}
	if len(files) == 0 {
		// make reads the first that exists; each is bound, so that
		// creating one that comes first asks again.
		for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} {
			f := w.e.pathFact(dir, n)
			if f.Unknown || f.Real == "" {
				w.unseen("the makefile " + n + " cannot be resolved")
				return
			}
			w.bind(f)
			if len(files) == 0 {
				if _, err := os.Stat(f.Real); err == nil {
					files = append(files, n)
				}
			}
		}
	}
	for _, n := range files {
		if n == "-" {
			continue
		}
		f := w.e.pathFact(dir, n)
		if f.Unknown || f.Real == "" {
			w.unseen("the makefile " + n + " cannot be resolved")
			return
		}
		w.bind(f)
		w.makefile(f.Real, dir, depth, searchDirs)
		if w.done() {
			return
		}
	}
}

// makefile reads the makefile at real, read by make running in dir, for
// the makefiles it includes (include, -include, sinclude).
func (w *depWalk) makefile(real, dir string, depth int, searchDirs bool) {
	if w.done() {
		return
	}
	src, ok := w.readFile(real)
	if !ok {
		return
	}
	// Logical lines: a backslash at the end joins the next one.
	src = strings.ReplaceAll(src, "\\\r\n", " ")
	src = strings.ReplaceAll(src, "\\\n", " ")
	for n, line := range strings.Split(src, "\n") {
		if w.done() {
			return
		}
		if strings.Contains(line, "eval") && (strings.Contains(line, "$(eval") || strings.Contains(line, "${eval")) {
			w.unseen(fmt.Sprintf("%s:%d: $(eval) may include makefiles that cannot be named before make runs", real, n+1))
			return
		}
		if strings.HasPrefix(line, "\t") {
			w.recipe(real, n+1, dir, line[1:], depth+1)
			continue
		}
		// $(shell …) runs its command as make reads the line.
		if _, calls := makeExpand(line); len(calls) > 0 {
			for _, c := range calls {
				w.recipe(real, n+1, dir, c, depth+1)
			}
			if w.done() {
				return
			}
		}
		if r, ok := ruleRecipe(line); ok {
			w.recipe(real, n+1, dir, r, depth+1)
			continue
		}
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		if v := makeShellVar(words); v != "" {
			w.unseen(fmt.Sprintf("%s:%d: %s changes what runs the recipes", real, n+1, v))
			return
		}
		switch words[0] {
		case "include", "-include", "sinclude":
		case "load", "-load":
			w.unseen(fmt.Sprintf("%s:%d: load runs the code of a shared object in make itself", real, n+1))
			return
		default:
			continue
		}
		for _, p := range words[1:] {
			if strings.HasPrefix(p, "#") {
				break
			}
			w.include(real, n+1, dir, p, depth+1, searchDirs)
		}
	}
}

// ruleRecipe returns the recipe a rule's line carries after ";" ("all: dep
// ; ./build.sh"), read outside the references of make, and ok false for
// a line that carries none: no ":" before a ";", an assignment (an "="
// before the ";", a target's variable included), or a comment first.
func ruleRecipe(line string) (string, bool) {
	colon, refs := false, 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '$' && i+1 < len(line):
			i++
			if line[i] == '(' || line[i] == '{' {
				refs++
			}
		case refs > 0:
			if c == ')' || c == '}' {
				refs--
			}
		case c == '#' || c == '=':
			return "", false
		case c == ':':
			colon = true
		case c == ';' && colon:
			return line[i+1:], true
		}
	}
	return "", false
}

// makeShellVar returns the variable of make that the makefile line of
// words (or an assignment on make's command line) sets to something that
// changes how recipes are read or run, or "": SHELL other than a system
// shell by absolute path (SHELL := /bin/bash is common), .SHELLFLAGS
// other than options, .RECIPEPREFIX. A target's own value (all: SHELL =
// …) counts, and so does a value defined over lines (define SHELL).
func makeShellVar(words []string) string {
	for len(words) > 1 && (words[0] == "override" || words[0] == "export" || words[0] == "private") {
		words = words[1:]
	}
	line := strings.Join(words, " ")
	var name, value string
	if words[0] == "define" && len(words) > 1 {
		// The value is on the lines that follow: known to be none safe.
		name, value = strings.TrimRight(words[1], ":+?!="), "$(define)"
	} else {
		i := strings.Index(line, "=")
		if i < 0 {
			return ""
		}
		// The last word before "=": the variable, after a target's name.
		lhs := strings.Fields(strings.TrimRight(line[:i], ":+?!"))
		if len(lhs) == 0 {
			return ""
		}
		name, value = lhs[len(lhs)-1], strings.TrimSpace(line[i+1:])
	}
	switch name {
	case "SHELL":
		if filepath.IsAbs(value) && !strings.ContainsAny(value, " \t$") && posixShells[filepath.Base(value)] &&
			(strings.HasPrefix(value, "/bin/") || strings.HasPrefix(value, "/usr/bin/")) {
			return ""
		}
		return name
	case ".SHELLFLAGS":
		if strings.Trim(value, "-+abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ") == "" {
			return ""
		}
		return name
	case ".RECIPEPREFIX":
		return name
	}
	return ""
}

// recipe binds what one recipe line of the makefile from (line n) runs
// code from, as the shell make starts for it in dir runs it: the scripts
// it runs and sources. A reference to a make variable reads as a
// substitution, so a command named by one is unseen.
func (w *depWalk) recipe(from string, n int, dir, line string, depth int) {
	if w.done() {
		return
	}
	if depth > maxDepDepth {
		w.unseen(fmt.Sprintf("%s:%d: scripts run or source one another more than %d levels deep", from, n, maxDepDepth))
		return
	}
	line = strings.TrimLeft(line, "@-+ \t")
	line, calls := makeExpand(line)
	for _, c := range calls {
		w.recipe(from, n, dir, c, depth+1)
	}
	if strings.TrimSpace(line) == "" || w.done() {
		return
	}
	w.shellCode(fmt.Sprintf("%s:%d: the recipe", from, n), "make", line, dir, func(c *shell.Command) { w.command(c.Name, c, depth) })
}

// makeExpand returns text as the shell reads it after make expanded it:
// $$ is $, and each reference to a variable or function of make is a
// variable of the shell's, whose value the analysis does not know. It
// also returns the commands of the $(shell …) calls in text, which make
// runs as it expands it.
func makeExpand(text string) (string, []string) { return makeExpandIn(text, 0) }

// maxMakeNesting bounds how deeply references of make are read inside one
// another; past it the line reads as a command not known until make runs.
const maxMakeNesting = 16

// makeExpandIn is makeExpand for text found nesting references deep.
func makeExpandIn(text string, nesting int) (string, []string) {
	if nesting > maxMakeNesting {
		return "${__make_ref}", []string{"$(nested)"}
	}
	var b strings.Builder
	var calls []string
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '$' || i+1 == len(text) {
			b.WriteByte(c)
			continue
		}
		i++
		switch open := text[i]; open {
		case '$':
			b.WriteByte('$')
		case '(', '{':
			closer := byte(')')
			if open == '{' {
				closer = '}'
			}
			depth, j := 1, i+1
			for ; j < len(text) && depth > 0; j++ {
				switch text[j] {
				case open:
					depth++
				case closer:
					depth--
				}
			}
			end := j
			if depth == 0 {
				end = j - 1
			}
			inner := text[i+1 : end]
			switch f, arg, _ := strings.Cut(inner, " "); f {
			case "shell":
				calls = append(calls, arg)
			case "guile":
				// Guile code: read as a command not known until make
				// runs, which makes the dependencies unseen.
				calls = append(calls, "$(guile)")
			default:
				_, nested := makeExpandIn(inner, nesting+1)
				calls = append(calls, nested...)
			}
			b.WriteString("${__make_ref}")
			i = j - 1
		default:
			b.WriteString("${__make_ref}")
		}
	}
	return b.String(), calls
}

// include binds the makefiles one word of an include directive names.
func (w *depWalk) include(from string, line int, dir, p string, depth int, searchDirs bool) {
	where := fmt.Sprintf("%s:%d", from, line)
	switch {
	case strings.ContainsAny(p, "$`"):
		w.unseen(fmt.Sprintf("%s: include %s: the path is not known until make runs", where, p))
		return
	case depth > maxDepDepth:
		w.unseen(fmt.Sprintf("%s: makefiles are included more than %d levels deep", where, maxDepDepth))
		return
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(dir, p)
	}
	if strings.ContainsAny(p, "*?[") {
		// A pattern: the files it matches now, and the directory, whose
		// version changes when a file is added to it.
		if strings.ContainsAny(filepath.Dir(p), "*?[") {
			w.unseen(fmt.Sprintf("%s: include %s: a pattern over directories is not followed", where, p))
			return
		}
		matches, err := filepath.Glob(abs)
		if err != nil {
			w.unseen(fmt.Sprintf("%s: include %s: %v", where, p, err))
			return
		}
		w.bind(w.e.pathFact(dir, filepath.Dir(abs)))
		for _, m := range matches {
			f := w.e.pathFact(dir, m)
			if f.Real != "" && w.bind(f) {
				w.makefile(f.Real, dir, depth, searchDirs)
			}
		}
		return
	}
	f := w.e.pathFact(dir, p)
	if f.Unknown || f.Real == "" {
		w.unseen(fmt.Sprintf("%s: include %s: the path cannot be resolved", where, p))
		return
	}
	if _, err := os.Stat(f.Real); err != nil && searchDirs && !filepath.IsAbs(p) {
		w.unseen(fmt.Sprintf("%s: include %s: make looks for it in the -I directories", where, p))
		return
	}
	if w.bind(f) {
		w.makefile(f.Real, dir, depth, searchDirs)
	}
}

// packageManagers run the scripts of package.json.
var packageManagers = map[string]bool{"npm": true, "pnpm": true, "yarn": true, "bun": true}

// packageSettings are the files beside package.json whose settings change
// what a package manager runs.
var packageSettings = []string{".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml"}

// packageScripts binds the package.json a package manager reads (the
// nearest at or above the directory it runs in; each missing one below it
// is bound as absent, so creating one counts as a change) and what the
// script it runs, with its pre and post scripts, runs in turn: the script
// lines are read as the shell lines they are, and a command named without
// a path is the package's node_modules/.bin one when there is one.
func (w *depWalk) packageScripts(name string, cmd *shell.Command, depth int) {
	for i := range cmd.Args {
		if i < len(cmd.ArgDynamic) && cmd.ArgDynamic[i] {
			w.unseen(name + " is given a word that is not known until the line runs: it may name the script it runs")
			return
		}
	}
	if cmd.Dir == "" {
		w.unseen("the directory " + name + " runs in is not known")
		return
	}
	var pkg PathFact
	for dir := cmd.Dir; ; dir = filepath.Dir(dir) {
		f := w.e.pathFact(dir, "package.json")
		if f.Unknown || f.Real == "" {
			w.unseen("package.json in " + dir + " cannot be resolved")
			return
		}
		w.bind(f)
		if _, err := os.Stat(f.Real); err == nil {
			pkg = f
			break
		}
		// Above the project the files are not the agent's to write
		// without asking.
		if filepath.Dir(dir) == dir || dir == w.e.root || w.e.root == "" || !pathres.Within(w.e.root, dir) || w.done() {
			return
		}
	}
	// The package manager's own settings in the package say how scripts
	// run (npm's script-shell and node-options, pnpm's hooks file, …).
	dir := filepath.Dir(pkg.Real)
	for _, n := range packageSettings {
		f := w.e.pathFact(dir, n)
		if f.Unknown || f.Real == "" {
			w.unseen(n + " in " + dir + " cannot be resolved")
			return
		}
		w.bind(f)
	}
	script := scriptName(name, cmd.Args)
	if script == "" {
		return
	}
	src, ok := w.readFile(pkg.Real)
	if !ok {
		return
	}
	var manifest struct {
		Scripts map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(src, "\ufeff")), &manifest); err != nil {
		w.unseen(fmt.Sprintf("%s cannot be read for its scripts: %v", pkg.Real, err))
		return
	}
	for _, s := range []string{"pre" + script, script, "post" + script} {
		if line, ok := manifest.Scripts[s]; ok {
			w.packageScript(pkg.Real, s, dir, line, depth+1)
		}
	}
}

// scriptName returns the script of package.json that the package manager
// name given args runs ("test" for npm test, "build" for npm run build),
// or "" for none.
func scriptName(name string, args []string) string {
	var words []string
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	if len(words) == 0 {
		return ""
	}
	switch sub := words[0]; sub {
	case "run", "run-script", "rum", "urn":
		if len(words) > 1 {
			return words[1]
		}
		return ""
	case "test", "t", "tst":
		if name == "bun" {
			return "" // bun's own test runner
		}
		return "test"
	case "start", "stop", "restart":
		return sub
	default:
		if name == "yarn" || name == "pnpm" {
			return sub // a script run by its name
		}
		return ""
	}
}

// packageScript binds what the script named s of the package.json from,
// run by sh in dir, runs code from.
func (w *depWalk) packageScript(from, s, dir, line string, depth int) {
	if w.done() {
		return
	}
	if depth > maxDepDepth {
		w.unseen(fmt.Sprintf("%s: scripts run one another more than %d levels deep", from, maxDepDepth))
		return
	}
	w.shellCode(fmt.Sprintf("%s: script %q", from, s), "it", line, dir, func(c *shell.Command) {
		if strings.Contains(c.Name, "/") {
			w.command(c.Name, c, depth)
			return
		}
		// The package manager puts node_modules/.bin first in PATH.
		bin := w.e.pathFact(dir, filepath.Join("node_modules", ".bin", c.Name))
		if bin.Unknown || bin.Real == "" {
			w.unseen(fmt.Sprintf("%s: script %q: node_modules/.bin/%s cannot be resolved", from, s, c.Name))
			return
		}
		w.bind(bin)
		if _, err := os.Stat(bin.Real); err != nil {
			w.command(c.Name, c, depth)
		} else if posixShells[scriptInterpreter(bin.Real)] {
			w.script(bin.Real, c.Dir, depth)
		}
	})
}
