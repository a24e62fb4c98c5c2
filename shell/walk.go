package shell

import (
	"context"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// analyzer holds the state of one call to Analyze.
type analyzer struct {
	res Result
	// err stops the analysis: a *ParseError, an error wrapping
	// ErrTooComplex, or the error of a done context.
	err error
	// ctx is the context of the call; work counts the steps taken, which
	// may not exceed budget, and nextCheck is when ctx is looked at next.
	ctx          context.Context
	work, budget int
	nextCheck    int
	// dirEvents counts the places where the shell's working directory may
	// have changed; compound commands compare it before and after.
	dirEvents int
	// braceBudget is how many more words brace expansion may produce, and
	// braceBytes about how many more bytes.
	braceBudget, braceBytes int
	// funcs holds the names of the functions defined anywhere in the line,
	// nested shell strings included.
	funcs map[string]bool
	// builtinsRedefined reports that the line uses alias or enable, which
	// can make cd something else on later lines.
	builtinsRedefined bool
	// keyElems are the elements of associative arrays, whose subscripts
	// are keys rather than arithmetic.
	keyElems map[*syntax.ArrayElem]bool
	// pipeIn is the static text piped into the statement being analyzed.
	pipeIn *pipeIn
	// top is the script of the top-level line.
	top script
	// keepsDir is Options.KeepsDir.
	keepsDir func(dir, file string) bool
	buf      []byte
}

// script is one parsed piece of shell source: the top-level line, or the
// string of a nested shell, eval, watch, trap or alias.
type script struct {
	src string
	// vars holds the variables whose values are known, including HOME.
	vars map[string]string
	// pwdOK, ifsOK and cdpathOK report that PWD, IFS and CDPATH keep their
	// expected meaning: PWD follows the tracked directory, IFS is the
	// default, and CDPATH does not redirect relative cd targets.
	pwdOK, ifsOK, cdpathOK bool
	// fixed reports that every command gets the position line:col, that of
	// the string argument in the top-level source.
	fixed     bool
	line, col int
	depth     int
	// arith holds, for each variable the script assigns, the values
	// arithmetic evaluation may read from it; arithAll reports that any
	// variable may hold anything (eval, source, a name reference).
	arith    map[string]*arithVar
	arithAll bool
	// intAttr reports that the script gives some variable the integer
	// attribute, so that values assigned to variables may be evaluated as
	// arithmetic.
	intAttr bool
	// posUnknown reports that the positional parameters may hold anything
	// (set -- …, a shell string run with arguments).
	posUnknown bool
}

// ctx is the context in which statements are analyzed.
type ctx struct {
	sc       *script
	via      string
	wrappers []string
	assigns  []Assign
	// posUnknown reports that the positional parameters may hold
	// anything: in a function body, a trap action or an alias.
	posUnknown bool
}

func (c *ctx) with(via, wrapper string) *ctx {
	c2 := *c
	c2.via = via
	if wrapper != "" {
		c2.wrappers = appendStr(c.wrappers, wrapper)
	}
	return &c2
}

// appendStr returns a new slice; it never writes into the array of s.
func appendStr(s []string, v ...string) []string {
	out := make([]string, 0, len(s)+len(v))
	out = append(out, s...)
	return append(out, v...)
}

func (a *analyzer) pos(c *ctx, p syntax.Pos) (int, int) {
	if c.sc.fixed {
		return c.sc.line, c.sc.col
	}
	return int(p.Line()), int(p.Col())
}

// text returns the source between two positions of the script.
func (c *ctx) text(from, to syntax.Pos) string {
	src := c.sc.src
	i, j := int(from.Offset()), int(to.Offset())
	if i < 0 || j > len(src) || i > j {
		return ""
	}
	return src[i:j]
}

func (a *analyzer) problem(line, col int, msg string) {
	a.res.Problems = append(a.res.Problems, Problem{Line: line, Col: col, Msg: msg})
}

func (a *analyzer) add(cmd Command) {
	if len(a.res.Commands) >= maxCommands {
		if a.err == nil {
			a.err = tooComplex("the line runs more than %d commands", maxCommands)
		}
		return
	}
	a.res.Commands = append(a.res.Commands, cmd)
}

// stmts analyzes a sequential list and returns the directory after it.
func (a *analyzer) stmts(c *ctx, list []*syntax.Stmt, dir string) string {
	for _, st := range list {
		if !a.charge(1) {
			return dir
		}
		dir = a.stmt(c, st, dir)
	}
	return dir
}

// sub analyzes statements that run in a subshell: changes of directory do
// not leave it.
func (a *analyzer) sub(c *ctx, list []*syntax.Stmt, dir string) {
	ev := a.dirEvents
	a.stmts(c, list, dir)
	a.dirEvents = ev
}

// stmt analyzes one statement and returns the directory after it.
func (a *analyzer) stmt(c *ctx, st *syntax.Stmt, dir string) string {
	if st.Background || st.Coprocess || st.Disown {
		ev := a.dirEvents
		a.command(c, st, dir)
		a.dirEvents = ev
		return dir
	}
	return a.command(c, st, dir)
}

// command analyzes the command of a statement and returns the directory
// after it.
func (a *analyzer) command(c *ctx, st *syntax.Stmt, dir string) string {
	switch cmd := st.Cmd.(type) {
	case nil:
		a.carrier(c, st, dir)
		return dir
	case *syntax.CallExpr:
		return a.call(c, st, cmd, dir)
	case *syntax.DeclClause:
		a.decl(c, st, cmd, dir)
		return dir
	case *syntax.TestClause:
		a.testClause(c, st, cmd, dir)
		return dir
	case *syntax.ArithmCmd:
		a.nestedIn(c, cmd.X, dir)
		a.arithExpr(c, cmd.X, dir)
		a.pseudo(c, st, cmd, dir, "((", []string{c.text(cmd.X.Pos(), cmd.X.End())}, []bool{arithDynamic(cmd.X)})
		return dir
	case *syntax.LetClause:
		args := make([]string, len(cmd.Exprs))
		dyn := make([]bool, len(cmd.Exprs))
		for i, x := range cmd.Exprs {
			a.nestedIn(c, x, dir)
			a.arithExpr(c, x, dir)
			args[i] = c.text(x.Pos(), x.End())
			dyn[i] = arithDynamic(x)
		}
		a.pseudo(c, st, cmd, dir, "let", args, dyn)
		return dir
	}
	// Compound commands: their redirections are shown by a carrier after
	// the body.
	ev := a.dirEvents
	out := dir
	switch cmd := st.Cmd.(type) {
	case *syntax.Block:
		out = a.stmts(c, cmd.Stmts, dir)
	case *syntax.Subshell:
		a.sub(c, cmd.Stmts, dir)
	case *syntax.BinaryCmd:
		out = a.binary(c, cmd, dir)
	case *syntax.IfClause:
		out = a.ifClause(c, cmd, dir)
		if a.dirEvents != ev {
			out = ""
		}
	case *syntax.WhileClause:
		entry := dir
		if entry != "" && a.mayChangeDir(cmd) {
			entry = ""
		}
		d := a.stmts(c, cmd.Cond, entry)
		a.stmts(c, cmd.Do, d)
		if a.dirEvents != ev {
			out = ""
		}
	case *syntax.ForClause:
		entry := dir
		switch loop := cmd.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range loop.Items {
				a.nestedIn(c, w, dir)
			}
			if entry != "" && a.mayChangeDir(cmd) {
				entry = ""
			}
		case *syntax.CStyleLoop:
			if entry != "" && a.mayChangeDir(cmd) {
				entry = ""
			}
			for _, x := range []syntax.ArithmExpr{loop.Init, loop.Cond, loop.Post} {
				if x != nil {
					a.nestedIn(c, x, entry)
					a.arithExpr(c, x, entry)
				}
			}
		}
		a.stmts(c, cmd.Do, entry)
		if a.dirEvents != ev {
			out = ""
		}
	case *syntax.CaseClause:
		a.nestedIn(c, cmd.Word, dir)
		prevChanged := false
		var prevOp syntax.CaseOperator
		for _, item := range cmd.Items {
			d := dir
			if prevChanged && (prevOp == syntax.Fallthrough || prevOp == syntax.Resume || prevOp == syntax.ResumeKorn) {
				d = ""
			}
			for _, p := range item.Patterns {
				a.nestedIn(c, p, d)
			}
			iev := a.dirEvents
			a.stmts(c, item.Stmts, d)
			prevChanged = a.dirEvents != iev
			prevOp = item.Op
		}
		if a.dirEvents != ev {
			out = ""
		}
	case *syntax.FuncDecl:
		fc := *c
		fc.posUnknown = true
		a.sub(&fc, []*syntax.Stmt{cmd.Body}, "")
	case *syntax.TimeClause:
		if cmd.Stmt != nil {
			out = a.stmt(c.with(c.via, "time"), cmd.Stmt, dir)
		}
	case *syntax.CoprocClause:
		if cmd.Name != nil {
			a.nestedIn(c, cmd.Name, dir)
		}
		a.sub(c, []*syntax.Stmt{cmd.Stmt}, dir)
	case *syntax.TestDecl:
		if cmd.Description != nil {
			a.nestedIn(c, cmd.Description, dir)
		}
		a.sub(c, []*syntax.Stmt{cmd.Body}, "")
	default:
		// Any other node is walked generically so that no command inside
		// it goes unseen.
		a.nestedIn(c, cmd, dir)
	}
	if len(st.Redirs) > 0 {
		a.carrier(c, st, dir)
	}
	return out
}

// binary analyzes a && b, a || b and pipelines.
func (a *analyzer) binary(c *ctx, b *syntax.BinaryCmd, dir string) string {
	switch b.Op {
	case syntax.AndStmt:
		d := a.stmt(c, b.X, dir)
		return a.stmt(c, b.Y, d)
	case syntax.OrStmt:
		ev := a.dirEvents
		a.stmt(c, b.X, dir)
		yDir := dir
		if a.dirEvents != ev {
			yDir = ""
		}
		a.stmt(c, b.Y, yDir)
		if a.dirEvents != ev {
			return ""
		}
		return dir
	default: // pipelines
		ev := a.dirEvents
		a.stmt(c, b.X, dir)
		a.dirEvents = ev
		if a.err != nil {
			return dir
		}
		// What a static echo, printf or cat pipes in: a shell's script,
		// or what any other program may send on ([Command.Stdin]).
		if x := lastElement(b.X); readsScript(b.Y) || plainPipeSource(x) {
			if text, ok := a.pipeText(c, x, dir); ok {
				a.pipeIn = &pipeIn{st: b.Y, text: text}
			}
		}
		a.stmt(c, b.Y, dir)
		a.pipeIn = nil
		if a.dirEvents != ev {
			// With lastpipe the last element runs in the shell itself.
			return ""
		}
		return dir
	}
}

// ifClause analyzes an if clause and its elif and else branches.
func (a *analyzer) ifClause(c *ctx, ic *syntax.IfClause, dir string) string {
	d := a.stmts(c, ic.Cond, dir)
	a.stmts(c, ic.Then, d)
	if ic.Else != nil {
		a.ifClause(c, ic.Else, d)
	}
	return dir
}

// nestedIn analyzes the command and process substitutions inside node,
// which must not be a statement list.
func (a *analyzer) nestedIn(c *ctx, node syntax.Node, dir string) {
	if node == nil {
		return
	}
	if w, ok := node.(*syntax.Word); ok && literalWord(w) {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		if !a.charge(1) {
			return false
		}
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(n.Exp.Word.Lit(), "P") {
				line, col := a.pos(c, n.Pos())
				a.problem(line, col, "prompt expansion ${…@P} may run commands held in a variable")
			}
			a.paramArith(c, n, dir)
		case *syntax.ArithmExp:
			a.arithExpr(c, n.X, dir)
		case *syntax.Assign:
			assoc := n.Name != nil && isAssoc(c, n.Name.Value)
			switch {
			case n.Index != nil && assoc:
				a.keyExpr(c, n.Index, dir)
			case n.Index != nil:
				a.arithExpr(c, n.Index, dir)
			}
			if assoc && n.Array != nil {
				for _, e := range n.Array.Elems {
					a.keyExpr(c, e.Index, dir)
					if a.keyElems == nil {
						a.keyElems = make(map[*syntax.ArrayElem]bool)
					}
					a.keyElems[e] = true
				}
			}
			if c.sc.intAttr && n.Value != nil && n.Name != nil {
				// The variable may have the integer attribute.
				a.arithWord(c, n.Value, dir)
			}
		case *syntax.ArrayElem:
			if n.Index != nil && !a.keyElems[n] {
				a.arithExpr(c, n.Index, dir)
			}
			if c.sc.intAttr && n.Value != nil {
				a.arithWord(c, n.Value, dir)
			}
		case *syntax.CmdSubst:
			a.sub(c.with("subst", ""), n.Stmts, dir)
			return false
		case *syntax.ProcSubst:
			a.sub(c.with("procsubst", ""), n.Stmts, dir)
			return false
		}
		return true
	})
}

// carrier emits a command without a program that shows the redirections of
// a statement.
func (a *analyzer) carrier(c *ctx, st *syntax.Stmt, dir string) {
	if len(st.Redirs) == 0 {
		return
	}
	for _, r := range st.Redirs {
		a.nestedIn(c, r, dir)
	}
	redirs := a.redirects(c, st.Redirs, dir)
	line, col := a.pos(c, st.Redirs[0].Pos())
	a.add(Command{
		Redirects: redirs,
		Wrappers:  c.wrappers,
		Via:       c.via,
		Dir:       dir,
		Source:    redirSource(c, st.Redirs),
		Line:      line,
		Col:       col,
	})
}

func redirSource(c *ctx, rs []*syntax.Redirect) string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.text(r.Pos(), r.Word.End()))
	}
	return b.String()
}

func cloneAssigns(as []Assign) []Assign {
	if len(as) == 0 {
		return nil
	}
	return append([]Assign(nil), as...)
}

// stmtSource returns the text of a simple command with its redirections,
// leaving out heredoc bodies.
func stmtSource(c *ctx, st *syntax.Stmt, n syntax.Node) string {
	from, to := n.Pos(), n.End()
	for _, r := range st.Redirs {
		if r.Pos().Offset() < from.Offset() {
			from = r.Pos()
		}
		if e := r.Word.End(); e.Offset() > to.Offset() {
			to = e
		}
	}
	return c.text(from, to)
}

// redirects evaluates the redirections of a statement.
func (a *analyzer) redirects(c *ctx, rs []*syntax.Redirect, dir string) []Redirect {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Redirect, 0, len(rs))
	for _, r := range rs {
		rd := Redirect{Op: r.Op.String()}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil && len(r.Hdoc.Parts) > 0 {
				rd.Heredoc = heredocBody(c.text(r.Hdoc.Pos(), r.Hdoc.End()), r)
				for _, p := range r.Hdoc.Parts {
					if _, ok := p.(*syntax.Lit); !ok {
						rd.Dynamic = true
					}
				}
			}
		case syntax.WordHdoc:
			rd.Heredoc = c.text(r.Word.Pos(), r.Word.End())
			rd.Dynamic = a.single(c, dir, r.Word, modeSingle).dyn
		default:
			w := a.single(c, dir, r.Word, modeSingle)
			rd.Target, rd.Dynamic = w.val, w.dyn
		}
		out = append(out, rd)
	}
	return out
}

// pseudo emits a command for a shell keyword or declaration builtin.
func (a *analyzer) pseudo(c *ctx, st *syntax.Stmt, n syntax.Node, dir, name string, args []string, dyn []bool) {
	for _, r := range st.Redirs {
		a.nestedIn(c, r, dir)
	}
	line, col := a.pos(c, n.Pos())
	a.add(Command{
		Name:       name,
		Args:       args,
		ArgDynamic: dyn,
		Assigns:    cloneAssigns(c.assigns),
		Redirects:  a.redirects(c, st.Redirs, dir),
		Wrappers:   c.wrappers,
		Via:        c.via,
		Dir:        dir,
		Source:     stmtSource(c, st, n),
		Line:       line,
		Col:        col,
	})
}

// testClause emits a [[ ]] clause with its operands and operators as
// arguments.
func (a *analyzer) testClause(c *ctx, st *syntax.Stmt, tc *syntax.TestClause, dir string) {
	a.nestedIn(c, tc.X, dir)
	a.testArith(c, tc.X, dir)
	var args []string
	var dyn []bool
	var flat func(x syntax.TestExpr)
	flat = func(x syntax.TestExpr) {
		switch x := x.(type) {
		case *syntax.Word:
			w := a.single(c, dir, x, modeSingle)
			args = append(args, w.val)
			dyn = append(dyn, w.dyn)
		case *syntax.UnaryTest:
			args = append(args, x.Op.String())
			dyn = append(dyn, false)
			flat(x.X)
		case *syntax.BinaryTest:
			flat(x.X)
			args = append(args, x.Op.String())
			dyn = append(dyn, false)
			flat(x.Y)
		case *syntax.ParenTest:
			args = append(args, "(")
			dyn = append(dyn, false)
			flat(x.X)
			args = append(args, ")")
			dyn = append(dyn, false)
		}
	}
	flat(tc.X)
	a.pseudo(c, st, tc, dir, "[[", args, dyn)
}

// arithDynamic reports whether an arithmetic expression refers to anything
// other than numbers.
func arithDynamic(x syntax.ArithmExpr) bool {
	dyn := false
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			if !isNumber(w.Lit()) {
				dyn = true
			}
			return false
		}
		return !dyn
	})
	return dyn
}

func isNumber(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// decl emits a declaration builtin such as export or local.
func (a *analyzer) decl(c *ctx, st *syntax.Stmt, d *syntax.DeclClause, dir string) {
	var args []string
	var dyn []bool
	for _, as := range d.Args {
		a.nestedIn(c, as, dir)
		switch {
		case as.Name == nil && as.Value != nil:
			for _, w := range a.words(c, dir, as.Value, modeArg, nil) {
				args = append(args, w.val)
				dyn = append(dyn, w.dyn)
				if w.dyn || !strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "+") {
					// NAME, NAME=value or NAME[subscript]=value.
					line, col := a.pos(c, as.Pos())
					a.nameArg(c, w, line, col, dir)
				}
			}
		case as.Name != nil:
			v, vd := a.assignText(c, dir, as)
			args = append(args, v)
			dyn = append(dyn, vd)
			if !as.Naked {
				line, col := a.pos(c, as.Pos())
				val, vdyn := a.assignValue(c, dir, as)
				a.checkAssign(line, col, as.Name.Value, val, vdyn)
			}
		}
	}
	a.pseudo(c, st, d, dir, d.Variant.Value, args, dyn)
}

// assignText renders an assignment the way a declaration builtin receives
// it: NAME, NAME=value or NAME+=value.
func (a *analyzer) assignText(c *ctx, dir string, as *syntax.Assign) (string, bool) {
	name := as.Name.Value
	dyn := false
	if as.Index != nil {
		name += "[" + c.text(as.Index.Pos(), as.Index.End()) + "]"
		dyn = arithDynamic(as.Index)
	}
	if as.Naked {
		return name, dyn
	}
	op := "="
	if as.Append {
		op = "+="
	}
	v, vd := a.assignValue(c, dir, as)
	return name + op + v, dyn || vd
}

// assignValue evaluates the value of an assignment.
func (a *analyzer) assignValue(c *ctx, dir string, as *syntax.Assign) (string, bool) {
	switch {
	case as.Array != nil:
		return c.text(as.Array.Pos(), as.Array.End()), true
	case as.Value != nil:
		w := a.single(c, dir, as.Value, modeAssign)
		return w.val, w.dyn
	}
	return "", false
}

// specialVars are variables whose values the shell runs or sources later.
var specialVars = map[string]string{
	"PS0":            "is expanded before each command",
	"PS1":            "is expanded for each prompt",
	"PS2":            "is expanded for each prompt",
	"PS4":            "is expanded for each traced command",
	"PROMPT_COMMAND": "is run before each prompt",
	"BASH_ENV":       "names a file that shells run at startup",
	"ENV":            "names a file that shells run at startup",
}

// checkAssign reports assignments whose value the shell may run later: to
// the variables in specialVars, and of text that holds a command
// substitution, which arithmetic evaluation, eval or ${x@P} would run.
func (a *analyzer) checkAssign(line, col int, name, val string, dyn bool) {
	if why, ok := specialVars[name]; ok {
		a.problem(line, col, "assignment to "+name+": its value "+why)
		return
	}
	if !dyn && (strings.Contains(val, "$(") || strings.Contains(val, "`")) {
		a.problem(line, col, "value of "+name+" holds a command substitution that a later expansion may run")
	}
}

// mayChangeDir reports whether running node could change the shell's
// working directory. It over-approximates.
func (a *analyzer) mayChangeDir(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if found || !a.charge(1) {
			// Past the budget the analysis stops; the answer no longer
			// matters.
			return false
		}
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		for i, w := range ce.Args {
			s, ok := staticLit(w)
			if ok && hasBraceExp(w) {
				// Brace expansion may assemble any word.
				found = true
				return false
			}
			if !ok {
				if i == 0 {
					found = true
					return false
				}
				continue
			}
			switch s {
			case "cd", "pushd", "popd", "source", ".", "eval", "trap", "alias", "mapfile", "readarray", "builtin", "command":
				found = true
				return false
			}
			if a.funcs[progName(s)] {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// heredocBody removes the closing delimiter line, which the parser counts
// as part of the body.
func heredocBody(body string, r *syntax.Redirect) string {
	delim, ok := staticLit(r.Word)
	if !ok {
		return body
	}
	i := strings.LastIndexByte(body, '\n')
	last := body[i+1:]
	if r.Op == syntax.DashHdoc {
		last = strings.TrimLeft(last, "\t")
	}
	if last == delim || last == "" {
		return body[:i+1]
	}
	return body
}

// hasBraceExp reports whether w contains a brace expansion.
func hasBraceExp(w *syntax.Word) bool {
	if !hasBrace(w) {
		return false
	}
	w2 := &syntax.Word{Parts: w.Parts}
	syntax.SplitBraces(w2)
	for _, p := range w2.Parts {
		if _, ok := p.(*syntax.BraceExp); ok {
			return true
		}
	}
	return false
}

// literalWord reports whether w is made of literal text only, so that no
// command can hide in it.
func literalWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if _, ok := dp.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}
