package shell

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// inv is a command invocation being resolved through its wrappers.
type inv struct {
	words   []warg
	assigns []Assign
	redirs  []Redirect
	// stdin holds the statement's redirections while they still feed the
	// program's standard input.
	stdin []*syntax.Redirect
	// pipe is the static text piped into the program, if known.
	pipe *pipeIn
	// stdinText is the static text a heredoc or here-string of the
	// statement supplies (see [Command.Stdin]).
	stdinText string
	wrappers  []string
	via       string
	// dir is the directory the program runs in.
	dir string
	// inShell reports that the command runs in the shell process itself,
	// so that builtins such as cd change the shell's state.
	inShell bool
	// noFunc reports that shell functions are bypassed (command, builtin).
	noFunc bool
	// envReset reports that the environment was replaced (sudo, env -i).
	envReset bool
	// envDrop lists variables removed or replaced in the environment.
	envDrop []string
	// nameDyn reports that the program is looked up somewhere unknown.
	nameDyn   bool
	line, col int
	source    string
}

// through sees through the wrapper name; rest is the wrapped command.
func (v *inv) through(name string, rest []warg) {
	v.wrappers = appendStr(v.wrappers, name)
	v.words = rest
	v.inShell = false
	v.noFunc = true
}

// call analyzes a simple command and returns the directory after it.
func (a *analyzer) call(c *ctx, st *syntax.Stmt, ce *syntax.CallExpr, dir string) string {
	var pipe *pipeIn
	if a.pipeIn != nil && a.pipeIn.st == st {
		pipe = a.pipeIn
	}
	a.pipeIn = nil
	for _, as := range ce.Assigns {
		a.nestedIn(c, as, dir)
	}
	for ai, ri := 0, 0; ai < len(ce.Args) || ri < len(st.Redirs); {
		if ri >= len(st.Redirs) || ai < len(ce.Args) && ce.Args[ai].Pos().Offset() < st.Redirs[ri].Pos().Offset() {
			a.nestedIn(c, ce.Args[ai], dir)
			ai++
		} else {
			a.nestedIn(c, st.Redirs[ri], dir)
			ri++
		}
	}
	if a.err != nil {
		return dir
	}
	line, col := a.pos(c, ce.Pos())
	v := &inv{
		assigns:  cloneAssigns(c.assigns),
		wrappers: c.wrappers,
		via:      c.via,
		dir:      dir,
		inShell:  true,
		line:     line,
		col:      col,
		source:   stmtSource(c, st, ce),
		stdin:    st.Redirs,
		pipe:     pipe,
	}
	for _, as := range ce.Assigns {
		if as.Name == nil {
			continue
		}
		name := as.Name.Value
		val, dyn := a.assignValue(c, dir, as)
		if as.Index != nil {
			name += "[" + c.text(as.Index.Pos(), as.Index.End()) + "]"
		}
		if as.Append {
			dyn = true
		}
		v.assigns = append(v.assigns, Assign{Name: name, Value: val, Dynamic: dyn})
		aline, acol := a.pos(c, as.Pos())
		a.checkAssign(aline, acol, as.Name.Value, val, dyn)
	}
	v.redirs = a.redirects(c, st.Redirs, dir)
	v.stdinText = a.staticStdin(c, dir, st.Redirs, v.redirs)
	v.words = make([]warg, 0, len(ce.Args))
	for _, w := range ce.Args {
		v.words = a.words(c, dir, w, modeArg, v.words)
	}
	if len(v.words) == 0 {
		// Only assignments to shell variables, and redirections.
		v.assigns = v.assigns[len(c.assigns):]
		a.emit(v, "", false, nil)
		return dir
	}
	return a.run(c, v, dir)
}

// emit adds the command that v resolved to.
func (a *analyzer) emit(v *inv, name string, nameDyn bool, args []warg) {
	cmd := Command{
		Name:        name,
		NameDynamic: nameDyn || v.nameDyn,
		Assigns:     cloneAssigns(v.assigns),
		Redirects:   v.redirs,
		Wrappers:    v.wrappers,
		Via:         v.via,
		Dir:         v.dir,
		Source:      v.source,
		Stdin:       v.stdinText,
		Line:        v.line,
		Col:         v.col,
	}
	if v.pipe != nil {
		cmd.Stdin = v.pipe.text
	}
	if len(args) > 0 {
		cmd.Args = make([]string, len(args))
		cmd.ArgDynamic = make([]bool, len(args))
		for i, w := range args {
			cmd.Args[i] = w.val
			cmd.ArgDynamic[i] = w.dyn
		}
	}
	a.add(cmd)
}

// unknownAfter returns the shell's directory after a command whose effect
// on it is unknown.
func (a *analyzer) unknownAfter(v *inv, shellDir string) string {
	if v.inShell {
		a.dirEvents++
		return ""
	}
	return shellDir
}

// uncertain emits a wrapper whose wrapped program cannot be told because
// word bad is not static.
func (a *analyzer) uncertain(v *inv, name string, args []warg, bad *warg, shellDir string) string {
	a.problem(v.line, v.col, fmt.Sprintf("cannot tell what %s runs: %q is not static", name, bad.val))
	a.emit(v, name, true, args)
	if name == "command" || name == "builtin" {
		return a.unknownAfter(v, shellDir)
	}
	return shellDir
}

// namesVariables are the builtins that take variable names (whose
// subscripts bash evaluates) or, for let, arithmetic expressions as
// arguments.
var namesVariables = map[string]bool{
	"read": true, "mapfile": true, "readarray": true, "printf": true, "unset": true, "getopts": true,
	"wait": true, "declare": true, "typeset": true, "local": true, "export": true, "readonly": true,
	"test": true, "[": true, "let": true,
}

// shells are the programs whose -c string is analyzed as a script.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"ash": true, "mksh": true, "rbash": true, "fish": true,
}

// run resolves v through its wrappers and emits what it runs. It returns
// the shell's directory afterwards.
func (a *analyzer) run(c *ctx, v *inv, shellDir string) string {
	isFunc := false
	defer func() {
		if isFunc {
			a.dirEvents++
		}
	}()
	for a.err == nil {
		w0 := v.words[0]
		args := v.words[1:]
		if w0.dyn || w0.glob {
			what := "not static"
			if !w0.dyn {
				what = "a pattern"
			}
			a.problem(v.line, v.col, fmt.Sprintf("program name is %s: %q", what, w0.val))
			a.emit(v, w0.val, true, args)
			return a.unknownAfter(v, shellDir)
		}
		name := progName(w0.val)
		if v.inShell && !v.noFunc && a.funcs[name] {
			// A function of the same name runs instead; it is analyzed
			// where it is defined, and may change anything.
			isFunc = true
			shellDir = ""
		}
		if namesVariables[name] {
			a.builtinNames(c, v, name, args)
		}
		var d string
		next := false
		switch name {
		case "sudo":
			next, d = a.sudo(v, args, shellDir)
		case "doas":
			next, d = a.simpleWrapper(v, name, args, &doasSpec, shellDir, func(opts []opt) bool { return hasOpt(opts, "s", "L", "C") })
			v.envReset = true
		case "env":
			next, d = a.env(v, args, shellDir)
		case "timeout":
			next, d = a.positionalWrapper(v, name, args, &timeoutSpec, shellDir, nil)
		case "nice":
			next, d = a.simpleWrapper(v, name, args, &niceSpec, shellDir, nil)
		case "ionice":
			next, d = a.simpleWrapper(v, name, args, &ioniceSpec, shellDir, func(opts []opt) bool { return hasOpt(opts, "p", "P", "u", "pid", "pgid", "uid") })
		case "nohup":
			next, d = a.simpleWrapper(v, name, args, &nohupSpec, shellDir, nil)
		case "time":
			next, d = a.simpleWrapper(v, name, args, &timeSpec, shellDir, nil)
		case "stdbuf":
			next, d = a.simpleWrapper(v, name, args, &stdbufSpec, shellDir, nil)
		case "setsid":
			next, d = a.simpleWrapper(v, name, args, &setsidSpec, shellDir, nil)
		case "unbuffer":
			next, d = a.simpleWrapper(v, name, args, &unbufferSpec, shellDir, nil)
		case "chrt":
			next, d = a.chrt(v, args, shellDir)
		case "taskset":
			next, d = a.positionalWrapper(v, name, args, &tasksetSpec, shellDir, func(opts []opt) bool { return hasOpt(opts, "p", "pid") })
		case "command", "builtin":
			next, d = a.builtinWrapper(v, name, args, shellDir)
		case "exec":
			next, d = a.simpleWrapper(v, name, args, &execSpec, shellDir, nil)
		case "busybox":
			if len(args) == 0 || !args[0].dyn && strings.HasPrefix(args[0].val, "-") {
				a.emit(v, name, false, args)
				return shellDir
			}
			if args[0].dyn {
				return a.uncertain(v, name, args, &args[0], shellDir)
			}
			v.through(name, args)
			next = true
		case "xargs":
			next, d = a.xargs(v, args, shellDir)
		case "find":
			d = a.find(c, v, args, shellDir)
		case "watch":
			next, d = a.watch(c, v, args, shellDir)
		case "su":
			d = a.su(c, v, args, shellDir)
		case "eval":
			d = a.eval(c, v, args, shellDir)
		case "cd", "pushd", "popd":
			d = a.cd(c, v, name, args, shellDir)
		case "source", ".":
			d = a.source(c, v, name, args, shellDir)
		case "trap":
			d = a.trap(c, v, args, shellDir)
		case "alias":
			d = a.alias(c, v, args, shellDir)
		case "mapfile", "readarray":
			d = a.mapfile(c, v, name, args, shellDir)
		default:
			if shells[name] {
				d = a.shell(c, v, name, args, shellDir)
			} else {
				a.emit(v, name, false, args)
				d = shellDir
			}
		}
		if !next {
			if isFunc {
				return ""
			}
			return d
		}
	}
	return shellDir
}

// simpleWrapper sees through a wrapper whose options are followed by the
// command. noCmd reports options with which the wrapper runs no command.
func (a *analyzer) simpleWrapper(v *inv, name string, args []warg, sp *optSpec, shellDir string, noCmd func([]opt) bool) (bool, string) {
	opts, n, bad := parseOpts(args, sp)
	if bad != nil {
		return false, a.uncertain(v, name, args, bad, shellDir)
	}
	if n >= len(args) || noCmd != nil && noCmd(opts) || hasOpt(opts, "help", "version") {
		a.emit(v, name, false, args)
		return false, shellDir
	}
	v.through(name, args[n:])
	return true, shellDir
}

// positionalWrapper is like simpleWrapper for wrappers that take one
// operand before the command (timeout DURATION, taskset MASK).
func (a *analyzer) positionalWrapper(v *inv, name string, args []warg, sp *optSpec, shellDir string, noCmd func([]opt) bool) (bool, string) {
	opts, n, bad := parseOpts(args, sp)
	if bad == nil && n < len(args) && (args[n].split || args[n].glob) {
		bad = &args[n]
	}
	if bad != nil {
		return false, a.uncertain(v, name, args, bad, shellDir)
	}
	if n+1 >= len(args) || noCmd != nil && noCmd(opts) || hasOpt(opts, "help", "version") {
		a.emit(v, name, false, args)
		return false, shellDir
	}
	v.through(name, args[n+1:])
	return true, shellDir
}

// chrt sees through chrt [options] [priority] command.
func (a *analyzer) chrt(v *inv, args []warg, shellDir string) (bool, string) {
	opts, n, bad := parseOpts(args, &chrtSpec)
	if bad == nil && n < len(args) && (args[n].split || args[n].glob) {
		bad = &args[n]
	}
	if bad != nil {
		return false, a.uncertain(v, "chrt", args, bad, shellDir)
	}
	if n < len(args) && !args[n].dyn && isDigits(args[n].val) {
		n++
	}
	if n >= len(args) || hasOpt(opts, "p", "pid", "m", "max", "help", "version") {
		a.emit(v, "chrt", false, args)
		return false, shellDir
	}
	v.through("chrt", args[n:])
	return true, shellDir
}

// builtinWrapper sees through command and builtin, which run the command
// in the shell itself.
func (a *analyzer) builtinWrapper(v *inv, name string, args []warg, shellDir string) (bool, string) {
	sp := &builtinSpec
	if name == "command" {
		sp = &commandSpec
	}
	opts, n, bad := parseOpts(args, sp)
	if bad != nil {
		return false, a.uncertain(v, name, args, bad, shellDir)
	}
	if n >= len(args) || hasOpt(opts, "v", "V") {
		a.emit(v, name, false, args)
		return false, shellDir
	}
	v.wrappers = appendStr(v.wrappers, name)
	v.words = args[n:]
	v.noFunc = true
	return true, shellDir
}

// sudo sees through sudo [options] [NAME=VALUE...] command.
func (a *analyzer) sudo(v *inv, args []warg, shellDir string) (bool, string) {
	save := *v
	opts, n, bad := parseOpts(args, &sudoSpec)
	if bad != nil {
		return false, a.uncertain(v, "sudo", args, bad, shellDir)
	}
	login, chroot := false, false
	dir := v.dir
	for _, o := range opts {
		switch o.name {
		case "e", "edit", "l", "list", "v", "validate", "K", "remove-timestamp", "V", "version", "help":
			a.emit(v, "sudo", false, args)
			return false, shellDir
		case "h":
			if !o.hasVal {
				a.emit(v, "sudo", false, args)
				return false, shellDir
			}
		case "i", "login":
			login = true
		case "D", "chdir":
			dir = wordDir(dir, o.val)
		case "R", "chroot":
			chroot = true
		}
	}
	rest, bad := a.envAssigns(v, args[n:])
	if bad != nil {
		*v = save
		return false, a.uncertain(v, "sudo", args, bad, shellDir)
	}
	if len(rest) == 0 {
		*v = save
		a.emit(v, "sudo", false, args)
		return false, shellDir
	}
	v.dir = dir
	if login {
		v.dir = ""
	}
	if chroot {
		v.nameDyn = true
		a.problem(v.line, v.col, "sudo --chroot changes where the program is found")
	}
	v.envReset = true
	v.through("sudo", rest)
	return true, shellDir
}

// wordDir returns the directory a -C/--chdir style option names.
func wordDir(dir string, w warg) string {
	if w.dyn {
		return ""
	}
	return resolveDir(dir, w.val)
}

// envAssigns consumes NAME=VALUE words before a command, as env and sudo
// take them. It returns the remaining words, or the first word that may or
// may not be an assignment.
func (a *analyzer) envAssigns(v *inv, words []warg) ([]warg, *warg) {
	for len(words) > 0 {
		w := &words[0]
		switch {
		case w.glob:
			return nil, w
		case !w.dyn:
			eq := strings.IndexByte(w.val, '=')
			if eq < 0 {
				return words, nil
			}
			name := w.val[:eq]
			v.assigns = append(v.assigns, Assign{Name: name, Value: w.val[eq+1:]})
			v.envDrop = append(v.envDrop, name)
			a.checkAssign(v.line, v.col, name, w.val[eq+1:], false)
		case !w.split && strings.IndexByte(w.prefix, '=') >= 0:
			eq := strings.IndexByte(w.prefix, '=')
			name := w.prefix[:eq]
			val := w.val
			if i := strings.IndexByte(val, '='); i >= 0 && !strings.ContainsAny(val[:i], "$`") {
				val = val[i+1:]
			}
			v.assigns = append(v.assigns, Assign{Name: name, Value: val, Dynamic: true})
			v.envDrop = append(v.envDrop, name)
			a.checkAssign(v.line, v.col, name, val, true)
		default:
			return nil, w
		}
		words = words[1:]
	}
	return nil, nil
}

// env sees through env [options] [NAME=VALUE...] command, splitting the
// string of -S into further arguments.
func (a *analyzer) env(v *inv, args []warg, shellDir string) (bool, string) {
	orig := args
	args = append([]warg(nil), args...)
	save := *v
	fail := func(bad *warg) (bool, string) {
		*v = save
		return false, a.uncertain(v, "env", orig, bad, shellDir)
	}
	i := 0
options:
	for i < len(args) {
		w := args[i]
		if w.dyn || w.glob {
			break
		}
		s := w.val
		if s == "-" {
			v.envReset = true
			i++
			continue
		}
		if s == "--" {
			i++
			break
		}
		if len(s) < 2 || s[0] != '-' {
			break
		}
		// Collect the options of this word as (name, value) pairs.
		type pair struct {
			name string
			val  warg
		}
		var pairs []pair
		if s[1] == '-' {
			name, val, hasEq := strings.Cut(s[2:], "=")
			full, kind := envSpec.matchLong(name)
			switch kind {
			case optUnknown:
				return fail(&args[i])
			case optFlag:
				if hasEq {
					return fail(&args[i])
				}
				pairs = append(pairs, pair{name: full})
			case optVal:
				if hasEq {
					pairs = append(pairs, pair{full, warg{val: val, pos: w.pos}})
				} else {
					if i+1 >= len(args) {
						*v = save
						a.emit(v, "env", false, orig)
						return false, shellDir
					}
					i++
					if args[i].split || args[i].glob {
						return fail(&args[i])
					}
					pairs = append(pairs, pair{full, args[i]})
				}
			case optOptVal:
				pairs = append(pairs, pair{name: full})
			}
		} else {
			for j := 1; j < len(s); j++ {
				ch := s[j]
				switch envSpec.short(ch) {
				case optFlag:
					pairs = append(pairs, pair{name: s[j : j+1]})
				case optVal:
					if j+1 < len(s) {
						pairs = append(pairs, pair{s[j : j+1], warg{val: s[j+1:], pos: w.pos}})
					} else {
						if i+1 >= len(args) {
							*v = save
							a.emit(v, "env", false, orig)
							return false, shellDir
						}
						i++
						if args[i].split || args[i].glob {
							return fail(&args[i])
						}
						pairs = append(pairs, pair{s[j : j+1], args[i]})
					}
					j = len(s)
				default:
					return fail(&args[i])
				}
			}
		}
		i++
		for _, p := range pairs {
			switch p.name {
			case "i", "ignore-environment":
				v.envReset = true
			case "u", "unset":
				if p.val.dyn {
					v.envReset = true
				} else {
					v.envDrop = append(v.envDrop, p.val.val)
				}
			case "C", "chdir":
				if p.val.split || p.val.glob {
					return fail(&p.val)
				}
				v.dir = wordDir(v.dir, p.val)
			case "P":
				v.nameDyn = true
				a.problem(v.line, v.col, "env -P changes where the program is found")
			case "S", "split-string":
				if p.val.dyn {
					return fail(&p.val)
				}
				words, ok := splitEnvString(p.val.val, p.val.pos)
				if !ok {
					return fail(&p.val)
				}
				args = append(args[:i:i], append(words, args[i:]...)...)
				continue options
			case "help", "version", "list-signal-handling":
				*v = save
				a.emit(v, "env", false, orig)
				return false, shellDir
			}
		}
	}
	rest, bad := a.envAssigns(v, args[i:])
	if bad != nil {
		return fail(bad)
	}
	if len(rest) == 0 {
		// Without a command env prints the environment.
		*v = save
		a.emit(v, "env", false, orig)
		return false, shellDir
	}
	v.through("env", rest)
	return true, shellDir
}

// splitEnvString splits the argument of env -S into words. It reports
// false for anything it does not fully understand, such as ${VAR}.
func splitEnvString(s string, pos syntax.Pos) ([]warg, bool) {
	var words []warg
	var cur []byte
	in := false
	flush := func() {
		if in {
			words = append(words, warg{val: string(cur), pos: pos})
			cur = cur[:0]
			in = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			flush()
		case '#':
			if !in {
				i = len(s)
				continue
			}
			cur = append(cur, c)
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur = append(cur, s[i+1:i+1+j]...)
			in = true
			i += j + 1
		case '"':
			in = true
			closed := false
			for i++; i < len(s); i++ {
				c := s[i]
				if c == '"' {
					closed = true
					break
				}
				if c == '$' {
					return nil, false
				}
				if c == '\\' {
					if i+1 >= len(s) {
						return nil, false
					}
					i++
					switch s[i] {
					case '"', '\\', '$', '#', '\'':
						cur = append(cur, s[i])
					case '_':
						cur = append(cur, ' ')
					default:
						return nil, false
					}
					continue
				}
				cur = append(cur, c)
			}
			if !closed {
				return nil, false
			}
		case '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			switch s[i] {
			case '"', '\\', '$', '#', '\'':
				cur = append(cur, s[i])
				in = true
			case '_':
				flush()
			default:
				return nil, false
			}
		case '$':
			return nil, false
		default:
			cur = append(cur, c)
			in = true
		}
	}
	flush()
	return words, true
}

// xargs sees through xargs [options] [command], which runs the command
// (echo by default) with arguments read from its input.
func (a *analyzer) xargs(v *inv, args []warg, shellDir string) (bool, string) {
	opts, n, bad := parseOpts(args, &xargsSpec)
	if bad != nil {
		return false, a.uncertain(v, "xargs", args, bad, shellDir)
	}
	if hasOpt(opts, "help", "version") {
		a.emit(v, "xargs", false, args)
		return false, shellDir
	}
	replace := ""
	for _, o := range opts {
		switch o.name {
		case "I":
			replace = o.val.val
			if o.val.dyn {
				return false, a.uncertain(v, "xargs", args, &o.val, shellDir)
			}
		case "i", "replace":
			replace = "{}"
			if o.hasVal {
				replace = o.val.val
			}
		}
	}
	var cmd []warg
	if n < len(args) {
		cmd = append(cmd, args[n:]...)
	} else {
		cmd = append(cmd, warg{val: "echo", pos: v.wordsPos()})
	}
	if replace != "" {
		for i := range cmd {
			if strings.Contains(cmd[i].val, replace) {
				cmd[i].dyn = true
			}
		}
	} else {
		cmd = append(cmd, warg{val: "{xargs-input}", dyn: true, split: true, pos: v.wordsPos()})
	}
	v.through("xargs", cmd)
	v.via = "xargs"
	v.stdin, v.pipe = nil, nil
	return true, shellDir
}

func (v *inv) wordsPos() syntax.Pos {
	if len(v.words) > 0 {
		return v.words[0].pos
	}
	return syntax.Pos{}
}

// find emits find itself and each command of its -exec, -execdir, -ok and
// -okdir actions.
func (a *analyzer) find(c *ctx, v *inv, args []warg, shellDir string) string {
	a.emit(v, "find", false, args)
	pendingDyn := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.dyn {
			if w.split || w.glob {
				a.problem(v.line, v.col, fmt.Sprintf("find argument is not static and may add actions: %q", w.val))
			}
			pendingDyn = true
			continue
		}
		switch w.val {
		case ";", "+":
			if pendingDyn {
				a.problem(v.line, v.col, "find arguments are not static and may start an -exec action")
				pendingDyn = false
			}
			continue
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		var cmd []warg
		j := i + 1
		for ; j < len(args); j++ {
			x := args[j]
			if !x.dyn && (x.val == ";" || x.val == "+" && j > i+1 && !args[j-1].dyn && args[j-1].val == "{}") {
				break
			}
			if strings.Contains(x.val, "{}") {
				x.dyn = true
			}
			cmd = append(cmd, x)
		}
		if len(cmd) > 0 {
			v2 := *v
			v2.words = cmd
			v2.redirs = nil
			v2.stdin, v2.pipe = nil, nil
			v2.assigns = cloneAssigns(v.assigns)
			v2.envDrop = append([]string(nil), v.envDrop...)
			v2.wrappers = appendStr(v.wrappers, "find -exec")
			v2.via = "find -exec"
			v2.inShell = false
			v2.noFunc = true
			if w.val == "-execdir" || w.val == "-okdir" {
				v2.dir = ""
			}
			a.run(c, &v2, shellDir)
		}
		i = j
	}
	return shellDir
}

// watch analyzes the command of watch, which runs it through sh -c unless
// -x is given.
func (a *analyzer) watch(c *ctx, v *inv, args []warg, shellDir string) (bool, string) {
	opts, n, bad := parseOpts(args, &watchSpec)
	if bad != nil {
		a.problem(v.line, v.col, fmt.Sprintf("watch command is not static: %q", bad.val))
		a.emit(v, "watch", false, args)
		return false, shellDir
	}
	rest := args[n:]
	if len(rest) == 0 || hasOpt(opts, "help", "version") {
		a.emit(v, "watch", false, args)
		return false, shellDir
	}
	if hasOpt(opts, "x", "exec") {
		v.through("watch", rest)
		v.via = "watch"
		v.stdin, v.pipe = nil, nil
		return true, shellDir
	}
	vals := make([]string, len(rest))
	for i, w := range rest {
		if w.dyn {
			a.problem(v.line, v.col, fmt.Sprintf("watch command is not static: %q", w.val))
			a.emit(v, "watch", false, args)
			return false, shellDir
		}
		vals[i] = w.val
	}
	r := a.nested(c, v, strings.Join(vals, " "), rest[0].pos, "watch", "watch", v.dir)
	a.finishNested(c, v, r, "watch", args)
	return false, shellDir
}

// shell handles sh, bash and the like: with -c and a static string the
// string is analyzed as a script.
func (a *analyzer) shell(c *ctx, v *inv, name string, args []warg, shellDir string) string {
	orig := args
	hasC := false
	i := 0
	for i < len(args) {
		w := args[i]
		if w.dyn || w.glob {
			if hasC {
				break
			}
			a.problem(v.line, v.col, fmt.Sprintf("cannot tell what %s runs: %q is not static", name, w.val))
			a.emit(v, name, false, orig)
			return shellDir
		}
		s := w.val
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			if s == "--command" || strings.HasPrefix(s, "--command=") {
				hasC = true
				if s == "--command" {
					i++
					break
				}
				// The string is attached; analyze it as the operand.
				args = append(append(append([]warg(nil), args[:i]...), warg{val: s[len("--command="):], pos: w.pos}), args[i+1:]...)
				break
			}
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			i++
			continue
		}
		if len(s) < 2 || s[0] != '-' && s[0] != '+' {
			break
		}
		for j := 1; j < len(s); j++ {
			switch s[j] {
			case 'c':
				hasC = true
			case 'o', 'O':
				if i+1 < len(args) {
					i++
					if x := args[i]; x.split || x.glob {
						a.problem(v.line, v.col, fmt.Sprintf("cannot tell what %s runs: %q is not static", name, x.val))
						a.emit(v, name, false, orig)
						return shellDir
					}
				}
			}
		}
		i++
	}
	if !hasC && (i >= len(args) || hasShellFlag(args[:i], 's') || !args[i].dyn && stdinPaths[args[i].val]) {
		if script, at, ok := a.stdinScript(c, v); ok {
			r := a.nested(c, v, script, at, "stdin", "sh stdin", v.dir)
			a.finishNested(c, v, r, name, orig)
			return shellDir
		}
	}
	if !hasC || i >= len(args) {
		a.emit(v, name, false, orig)
		return shellDir
	}
	sw := args[i]
	if sw.dyn {
		a.problem(v.line, v.col, fmt.Sprintf("%s -c string is not static: %q", name, sw.val))
		a.emit(v, name, false, orig)
		return shellDir
	}
	r := a.nested(c, v, sw.val, sw.pos, "sh -c", "sh -c", v.dir)
	a.finishNested(c, v, r, name, orig)
	return shellDir
}

// su analyzes the string of su -c, which the target user's shell runs.
func (a *analyzer) su(c *ctx, v *inv, args []warg, shellDir string) string {
	var opts []opt
	rest := args
	for len(rest) > 0 {
		o, n, bad := parseOpts(rest, &suSpec)
		if bad != nil {
			return a.uncertain(v, "su", args, bad, shellDir)
		}
		opts = append(opts, o...)
		if n > 0 && rest[n-1].val == "--" && !rest[n-1].dyn {
			break
		}
		rest = rest[n:]
		if len(rest) == 0 {
			break
		}
		if rest[0].val == "-" && !rest[0].dyn {
			opts = append(opts, opt{name: "l"})
		}
		rest = rest[1:]
	}
	var script *warg
	login := false
	for i, o := range opts {
		switch o.name {
		case "c", "command", "session-command":
			script = &opts[i].val
		case "l", "login":
			login = true
		case "s", "shell":
			if o.val.dyn || !shells[path.Base(o.val.val)] {
				a.problem(v.line, v.col, fmt.Sprintf("su runs a program that is not a known shell: %q", o.val.val))
				a.emit(v, "su", false, args)
				return shellDir
			}
		case "help", "version":
			script = nil
			a.emit(v, "su", false, args)
			return shellDir
		}
	}
	if script == nil {
		a.emit(v, "su", false, args)
		return shellDir
	}
	if script.dyn {
		a.problem(v.line, v.col, fmt.Sprintf("su -c string is not static: %q", script.val))
		a.emit(v, "su", false, args)
		return shellDir
	}
	v.envReset = true
	dir := v.dir
	if login {
		dir = ""
	}
	r := a.nested(c, v, script.val, script.pos, "sh -c", "su", dir)
	a.finishNested(c, v, r, "su", args)
	return shellDir
}

// eval analyzes the words of eval, joined with spaces, in the current
// shell.
func (a *analyzer) eval(c *ctx, v *inv, args []warg, shellDir string) string {
	rest := args
	if len(rest) > 0 && !rest[0].dyn && rest[0].val == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		a.emit(v, "eval", false, args)
		return shellDir
	}
	vals := make([]string, len(rest))
	for i, w := range rest {
		if w.dyn {
			srcs := make([]string, len(rest))
			for j, x := range rest {
				srcs[j] = x.val
			}
			a.problem(v.line, v.col, fmt.Sprintf("eval string is not static: %q", strings.Join(srcs, " ")))
			a.emit(v, "eval", false, args)
			return a.unknownAfter(v, shellDir)
		}
		vals[i] = w.val
	}
	r := a.nested(c, v, strings.Join(vals, " "), rest[0].pos, "eval", "eval", v.dir)
	a.finishNested(c, v, r, "eval", args)
	if v.inShell && r.ok {
		if r.changed {
			a.dirEvents++
		}
		return r.dir
	}
	return shellDir
}

// cd emits cd, pushd or popd and returns the directory afterwards.
func (a *analyzer) cd(c *ctx, v *inv, name string, args []warg, shellDir string) string {
	a.emit(v, name, false, args)
	if !v.inShell {
		return shellDir
	}
	a.dirEvents++
	if name == "popd" || a.builtinsRedefined {
		return ""
	}
	sp := &cdSpec
	if name == "pushd" {
		sp = &pushdSpec
	}
	opts, n, bad := parseOpts(args, sp)
	if bad != nil {
		return ""
	}
	if hasOpt(opts, "n") {
		return shellDir
	}
	ops := args[n:]
	var t string
	switch {
	case len(ops) == 0:
		h, ok := c.sc.vars["HOME"]
		if name == "pushd" || !ok {
			return ""
		}
		t = h
	case len(ops) > 1 || ops[0].dyn:
		return ""
	default:
		t = ops[0].val
	}
	if t == "" || t == "-" || name == "pushd" && (strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-")) {
		return ""
	}
	if !path.IsAbs(t) && !c.sc.cdpathOK && t != "." && t != ".." && !strings.HasPrefix(t, "./") && !strings.HasPrefix(t, "../") {
		return ""
	}
	if hasOpt(opts, "P") && strings.Contains(t, "..") {
		return ""
	}
	return resolveDir(shellDir, t)
}

// trap emits trap and analyzes its action, which runs at an unknown time.
func (a *analyzer) trap(c *ctx, v *inv, args []warg, shellDir string) string {
	a.emit(v, "trap", false, args)
	rest := args
	if len(rest) > 0 && !rest[0].dyn && rest[0].val == "--" {
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return shellDir
	}
	act := rest[0]
	if act.dyn {
		a.problem(v.line, v.col, fmt.Sprintf("trap action is not static: %q", act.val))
		return a.unknownAfter(v, shellDir)
	}
	if act.val == "" || act.val == "-" || isDigits(act.val) || strings.HasPrefix(act.val, "-") {
		return shellDir
	}
	r := a.nested(c, v, act.val, act.pos, "trap", "trap", "")
	if !r.ok || r.changed {
		return a.unknownAfter(v, shellDir)
	}
	return shellDir
}

// alias emits alias and analyzes the text of each definition.
func (a *analyzer) alias(c *ctx, v *inv, args []warg, shellDir string) string {
	a.emit(v, "alias", false, args)
	changed := false
	for _, w := range args {
		if w.dyn {
			a.problem(v.line, v.col, fmt.Sprintf("alias definition is not static: %q", w.val))
			changed = true
			continue
		}
		eq := strings.IndexByte(w.val, '=')
		if eq <= 0 || strings.HasPrefix(w.val, "-") {
			continue
		}
		r := a.nested(c, v, w.val[eq+1:], w.pos, "alias", "alias", "")
		changed = changed || !r.ok || r.changed
	}
	if changed {
		return a.unknownAfter(v, shellDir)
	}
	return shellDir
}

// mapfile emits mapfile or readarray and analyzes its -C callback.
func (a *analyzer) mapfile(c *ctx, v *inv, name string, args []warg, shellDir string) string {
	a.emit(v, name, false, args)
	opts, _, _ := parseOpts(args, &mapfileSpec)
	for _, o := range opts {
		if o.name != "C" {
			continue
		}
		if o.val.dyn {
			a.problem(v.line, v.col, fmt.Sprintf("%s callback is not static: %q", name, o.val.val))
			return a.unknownAfter(v, shellDir)
		}
		r := a.nested(c, v, o.val.val, o.val.pos, "eval", name+" -C", v.dir)
		if !r.ok || r.changed {
			return a.unknownAfter(v, shellDir)
		}
	}
	return shellDir
}

// nestResult is the outcome of analyzing a nested shell string.
type nestResult struct {
	dir string
	// ok reports that the string parsed.
	ok bool
	// empty reports that it contained no command.
	empty bool
	// changed reports that it may change the working directory.
	changed bool
}

// nested analyzes text, the string given to a nested shell, eval, watch,
// trap or alias, starting in dir.
func (a *analyzer) nested(c *ctx, v *inv, text string, at syntax.Pos, via, label, dir string) nestResult {
	line, col := a.pos(c, at)
	if !at.IsValid() {
		line, col = v.line, v.col
	}
	depth := c.sc.depth + 1
	if depth > maxNesting {
		if a.err == nil {
			a.err = tooComplex("%d:%d: shell strings are nested more than %d levels deep", line, col, maxNesting)
		}
		return nestResult{}
	}
	if !a.charge(len(text)) {
		return nestResult{}
	}
	if err := precheck(text); err != nil {
		a.err = err
		return nestResult{}
	}
	f, err := parse(text)
	if err != nil {
		l, cl, msg := parseErr(err)
		a.problem(line, col, fmt.Sprintf("%s string does not parse: %d:%d: %s", label, l, cl, msg))
		return nestResult{}
	}
	sc := &script{
		src:      text,
		pwdOK:    c.sc.pwdOK,
		ifsOK:    c.sc.ifsOK,
		cdpathOK: c.sc.cdpathOK,
		fixed:    true,
		line:     line,
		col:      col,
		depth:    depth,
	}
	if !v.envReset && len(c.sc.vars) > 0 {
		sc.vars = make(map[string]string, len(c.sc.vars))
		for k, x := range c.sc.vars {
			sc.vars[k] = x
		}
	}
	drop := func(name string) {
		delete(sc.vars, name)
		switch name {
		case "PWD":
			sc.pwdOK = false
		case "IFS":
			sc.ifsOK = false
		case "CDPATH":
			sc.cdpathOK = false
		}
	}
	for _, n := range v.envDrop {
		drop(n)
	}
	for _, as := range v.assigns {
		drop(as.Name)
	}
	switch via {
	case "sh -c", "stdin", "watch":
		// A new shell: its variables come from the environment, and its
		// positional parameters from arguments.
		sc.posUnknown = true
	default:
		// The same shell: eval, a trap action, an alias, a callback.
		sc.arith, sc.arithAll, sc.intAttr, sc.posUnknown = c.sc.arith, c.sc.arithAll, c.sc.intAttr, c.sc.posUnknown
	}
	a.scan(f, sc)
	nc := &ctx{sc: sc, via: via, wrappers: appendStr(v.wrappers, label), assigns: cloneAssigns(v.assigns),
		posUnknown: c.posUnknown || via == "trap" || via == "alias"}
	n, ev := len(a.res.Commands), a.dirEvents
	d := a.stmts(nc, f.Stmts, dir)
	r := nestResult{dir: d, ok: true, empty: len(a.res.Commands) == n, changed: a.dirEvents != ev}
	a.dirEvents = ev
	return r
}

// finishNested emits what the nested string alone does not show: the
// command itself when the string could not be analyzed or ran nothing,
// or else a carrier for the command's redirections.
func (a *analyzer) finishNested(c *ctx, v *inv, r nestResult, name string, args []warg) {
	if a.err != nil {
		return
	}
	if name != "" && (!r.ok || r.empty) {
		a.emit(v, name, false, args)
		return
	}
	if len(v.redirs) > 0 {
		a.add(Command{
			Redirects: v.redirs,
			Wrappers:  c.wrappers,
			Via:       c.via,
			Dir:       v.dir,
			Source:    v.source,
			Line:      v.line,
			Col:       v.col,
		})
	}
}
