package shell

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Text that reaches bash's arithmetic evaluation is code, quoted or not.
// bash expands it once more as it evaluates it: a command substitution in
// an array subscript runs ((( 'a[$(id)]' )) runs id), and the value of a
// variable named in it is evaluated as an expression in turn
// (x='a[$(id)]'; (( x )) runs id). The functions here find such text
// wherever bash evaluates it — (( )), $(( )), $[ ], let, the C-style for,
// the arithmetic operators of [[ ]], subscripts and ${x:off:len} in
// expansions and assignments, the values of integer variables, and the
// names given to builtins that assign — and analyze every command
// substitution in it as a command of the line. What the analysis cannot
// know statically (a variable the line does not set to static values, the
// output of a command) is reported as a Problem.

// arithVar is what a script may store in one variable, as far as
// arithmetic evaluation of the variable is concerned.
type arithVar struct {
	// vals are the static values the script assigns to the variable;
	// arithmetic assignments add "0", since they store integers.
	vals []string
	// bad reports an assignment whose value is not known statically.
	bad bool
	// checked records that vals were analyzed as arithmetic text already:
	// bit 1 where the positional parameters are known, bit 2 where they
	// are not, since a value may name them.
	checked uint8
	// assoc reports that the script declares the variable an associative
	// array, whose subscripts are keys rather than arithmetic.
	assoc bool
}

// isAssoc reports whether the script declares name an associative array.
func isAssoc(c *ctx, name string) bool {
	e := c.sc.arith[name]
	return e != nil && e.assoc
}

// keyExpr analyzes the subscript of an associative array: bash expands it
// as a word, and a command substitution in its static text may be
// expanded again where the element is used in arithmetic.
func (a *analyzer) keyExpr(c *ctx, x syntax.ArithmExpr, dir string) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok {
			return a.charge(1)
		}
		var b strings.Builder
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.SglQuoted:
				if p.Dollar {
					b.WriteString(ansiC(p.Value))
				} else {
					b.WriteString(p.Value)
				}
			case *syntax.DblQuoted:
				for _, dp := range p.Parts {
					if l, ok := dp.(*syntax.Lit); ok {
						st := wstate{}
						dquoteUnescape(&st, l.Value)
						b.Write(st.cur)
					}
				}
			case *syntax.Lit:
				unquoteLit(&b, p.Value)
			}
		}
		text := b.String()
		if strings.IndexByte(text, '$') >= 0 || strings.IndexByte(text, '`') >= 0 {
			line, col := a.pos(c, w.Pos())
			if nc, dw := a.textScript(c, text, line, col); nc != nil {
				found := false
				syntax.Walk(dw, func(n syntax.Node) bool {
					_, ok := n.(*syntax.CmdSubst)
					found = found || ok
					return !found
				})
				a.nestedIn(nc, dw, dir)
				if found {
					a.problem(line, col, "a subscript holds a command substitution that bash may expand again")
				}
			}
		}
		return false
	})
}

// inertVars are set by bash to integers and are never expressions.
var inertVars = map[string]bool{
	"RANDOM": true, "SRANDOM": true, "LINENO": true, "SECONDS": true, "EPOCHSECONDS": true,
	"BASHPID": true, "PPID": true, "UID": true, "EUID": true,
}

// inertParam reports whether the special or positional parameter name
// expands to something that cannot be code: $#, $?, $$, $! always, and the
// positional parameters where they are known to be empty.
func inertParam(c *ctx, name string) bool {
	switch name {
	case "#", "?", "$", "!":
		return true
	case "@", "*":
		return !c.posUnknown && !c.sc.posUnknown
	}
	if isDigits(name) && name != "0" {
		return !c.posUnknown && !c.sc.posUnknown
	}
	return inertVars[name]
}

// arithExpr analyzes an arithmetic expression that bash evaluates: each
// word of it is arithmetic text.
func (a *analyzer) arithExpr(c *ctx, x syntax.ArithmExpr, dir string) {
	for x != nil && a.charge(1) {
		switch e := x.(type) {
		case *syntax.BinaryArithm:
			a.arithExpr(c, e.X, dir)
			x = e.Y
		case *syntax.UnaryArithm:
			x = e.X
		case *syntax.ParenArithm:
			x = e.X
		case *syntax.Word:
			a.arithWord(c, e, dir)
			return
		default:
			return
		}
	}
}

// arithWord analyzes a word whose value, after bash's expansions and
// quote removal, is evaluated as arithmetic.
func (a *analyzer) arithWord(c *ctx, w *syntax.Word, dir string) {
	if w == nil {
		return
	}
	line, col := a.pos(c, w.Pos())
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			unquoteLit(&b, p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				switch dp := dp.(type) {
				case *syntax.Lit:
					st := wstate{}
					dquoteUnescape(&st, dp.Value)
					b.Write(st.cur)
				case *syntax.ParamExp:
					a.arithParamValue(c, dp, &b, line, col, dir)
				case *syntax.ArithmExp:
					b.WriteString(" 0 ")
				default:
					a.problem(line, col, "the output of a command substitution is evaluated as arithmetic, which may run code it holds")
				}
			}
		case *syntax.ParamExp:
			a.arithParamValue(c, p, &b, line, col, dir)
		case *syntax.ArithmExp:
			// Its own words are analyzed where the walk meets it; its
			// value is a number.
			b.WriteString(" 0 ")
		case *syntax.CmdSubst:
			a.problem(line, col, "the output of a command substitution is evaluated as arithmetic, which may run code it holds")
		default:
			a.problem(line, col, "an expansion that is not known statically is evaluated as arithmetic")
		}
	}
	a.arithText(c, b.String(), line, col, dir)
}

// unquoteLit writes the unquoted literal v to b after quote removal: a
// backslash escapes the next byte, and a backslash-newline is removed.
func unquoteLit(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
}

// arithParamValue handles a parameter expansion whose value becomes part
// of arithmetic text, writing what stands for the value to b.
func (a *analyzer) arithParamValue(c *ctx, p *syntax.ParamExp, b *strings.Builder, line, col int, dir string) {
	if p.Param == nil {
		a.problem(line, col, "an expansion that is not known statically is evaluated as arithmetic")
		return
	}
	name := p.Param.Value
	plain := p.Flags == nil && !p.Excl && !p.Width && !p.IsSet && p.NestedParam == nil && len(p.Modifiers) == 0 &&
		p.Slice == nil && p.Repl == nil && p.Names == 0 && p.Exp == nil
	switch {
	case p.Length && !p.Excl:
		// ${#x} is a number.
		b.WriteString(" 0 ")
	case !plain:
		a.problem(line, col, fmt.Sprintf("the expansion of %s is not known statically and is evaluated as arithmetic", name))
	case inertParam(c, name) && p.Index == nil:
		b.WriteString(" 0 ")
	case p.Index == nil:
		if e := c.sc.arith[name]; e != nil && !c.sc.arithAll && !e.bad && len(e.vals) == 1 {
			// One known value: it is part of the text as written.
			b.WriteString(e.vals[0])
			return
		}
		a.arithVar(c, name, line, col, dir)
		b.WriteString(" 0 ")
	default:
		// An array element: its value is evaluated like the variable's.
		a.arithVar(c, name, line, col, dir)
		b.WriteString(" 0 ")
	}
}

// arithText analyzes text that bash evaluates as arithmetic: it expands
// the text (command substitutions run, parameters expand) and evaluates
// what results, reading each variable named in it as an expression.
func (a *analyzer) arithText(c *ctx, text string, line, col int, dir string) {
	if !a.charge(len(text) + 1) {
		return
	}
	if strings.IndexByte(text, '$') < 0 && strings.IndexByte(text, '`') < 0 {
		a.arithNames(c, text, line, col, dir)
		return
	}
	nc, w := a.textScript(c, text, line, col)
	if nc == nil {
		return
	}
	// The commands of its substitutions are commands of the line.
	a.nestedIn(nc, w, dir)
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			a.arithNames(nc, p.Value, line, col, dir)
		case *syntax.ParamExp:
			var b strings.Builder
			a.arithParamValue(nc, p, &b, line, col, dir)
			a.arithNames(nc, b.String(), line, col, dir)
		case *syntax.ArithmExp:
		case *syntax.CmdSubst:
			a.problem(line, col, "the output of a command substitution is evaluated as arithmetic, which may run code it holds")
		default:
			a.problem(line, col, "an expansion that is not known statically is evaluated as arithmetic")
		}
	}
}

// textScript parses text, expanded by bash as if in double quotes, as a
// script of its own at line:col, sharing what c knows about variables.
// It returns nil after recording a Problem if the text does not parse.
func (a *analyzer) textScript(c *ctx, text string, line, col int) (*ctx, *syntax.Word) {
	depth := c.sc.depth + 1
	if depth > maxNesting {
		if a.err == nil {
			a.err = tooComplex("%d:%d: arithmetic text is nested more than %d levels deep", line, col, maxNesting)
		}
		return nil, nil
	}
	if err := precheck(text); err != nil {
		a.err = err
		return nil, nil
	}
	w, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Document(strings.NewReader(text))
	if err != nil || w == nil {
		a.problem(line, col, fmt.Sprintf("arithmetic text %q cannot be analyzed", text))
		return nil, nil
	}
	sc := *c.sc
	sc.src, sc.fixed, sc.line, sc.col, sc.depth = text, true, line, col, depth
	if len(c.sc.vars) > 0 {
		sc.vars = make(map[string]string, len(c.sc.vars))
		for k, v := range c.sc.vars {
			sc.vars[k] = v
		}
	}
	a.scan(w, &sc)
	nc := *c
	nc.sc = &sc
	return &nc, w
}

// arithNames checks each variable named in arithmetic text: bash
// evaluates its value as an expression.
func (a *analyzer) arithNames(c *ctx, text string, line, col int, dir string) {
	for i := 0; i < len(text); {
		ch := text[i]
		switch {
		case ch >= '0' && ch <= '9':
			// A number, with its base and digits: 0x1f, 16#ff, 64#_@.
			for i < len(text) && (isNameByte(text[i]) || text[i] == '#' || text[i] == '@') {
				i++
			}
		case isNameByte(ch):
			j := i
			for j < len(text) && isNameByte(text[j]) {
				j++
			}
			a.arithVar(c, text[i:j], line, col, dir)
			if a.err != nil {
				return
			}
			i = j
		default:
			i++
		}
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// arithVar checks a variable that arithmetic evaluation reads: its value
// is evaluated as an expression, so it must be known statically, and each
// value it may hold is analyzed as arithmetic text in turn.
func (a *analyzer) arithVar(c *ctx, name string, line, col int, dir string) {
	if inertParam(c, name) {
		return
	}
	unknown := func() {
		a.problem(line, col, fmt.Sprintf("%s is evaluated as arithmetic, and its value, which bash evaluates as an expression, is not known statically", name))
	}
	if c.sc.arithAll {
		unknown()
		return
	}
	if e := c.sc.arith[name]; e != nil {
		if e.bad {
			unknown()
			return
		}
		bit := uint8(1)
		if c.posUnknown || c.sc.posUnknown {
			bit = 2
		}
		if e.checked&bit != 0 {
			return
		}
		e.checked |= bit
		for _, v := range e.vals {
			a.arithText(c, v, line, col, dir)
		}
		return
	}
	if v, ok := c.sc.vars[name]; ok && name != "HOME" {
		a.arithText(c, v, line, col, dir)
		return
	}
	unknown()
}

// nameSubscript analyzes a variable name given to a builtin that assigns
// or reads it by name: a subscript in it is arithmetic text.
func (a *analyzer) nameSubscript(c *ctx, name string, line, col int, dir string) {
	i := strings.IndexByte(name, '[')
	if i < 0 {
		return
	}
	sub := name[i+1:]
	if j := strings.LastIndexByte(sub, ']'); j >= 0 {
		sub = sub[:j]
	}
	a.arithText(c, sub, line, col, dir)
}

// paramArith analyzes the parts of a parameter expansion that bash
// evaluates as arithmetic or as a variable name: the subscript, the
// offset and length of ${x:off:len}, and the name held by the variable of
// an indirection ${!ref}.
func (a *analyzer) paramArith(c *ctx, p *syntax.ParamExp, dir string) {
	if p.Index != nil {
		if w, ok := p.Index.(*syntax.Word); !ok || (w.Lit() != "@" && w.Lit() != "*") {
			if p.Param != nil && isAssoc(c, p.Param.Value) {
				a.keyExpr(c, p.Index, dir)
			} else {
				a.arithExpr(c, p.Index, dir)
			}
		}
	}
	if p.Slice != nil {
		a.arithExpr(c, p.Slice.Offset, dir)
		a.arithExpr(c, p.Slice.Length, dir)
	}
	if p.Excl && p.Param != nil && p.Names == 0 && p.Index == nil {
		line, col := a.pos(c, p.Pos())
		a.indirect(c, p.Param.Value, line, col, dir)
	}
}

// indirect checks the variable of an indirection: its value is a name,
// whose subscript bash evaluates.
func (a *analyzer) indirect(c *ctx, ref string, line, col int, dir string) {
	if inertParam(c, ref) {
		return
	}
	unknown := func() {
		a.problem(line, col, fmt.Sprintf("${!%s} uses the value of %s as a variable name, which is not known statically and may hold a subscript that runs code", ref, ref))
	}
	if c.sc.arithAll {
		unknown()
		return
	}
	if e := c.sc.arith[ref]; e != nil && !e.bad {
		for _, v := range e.vals {
			a.nameSubscript(c, v, line, col, dir)
		}
		return
	}
	if v, ok := c.sc.vars[ref]; ok {
		a.nameSubscript(c, v, line, col, dir)
		return
	}
	unknown()
}

// testArith analyzes the operands of a [[ ]] expression that bash
// evaluates as arithmetic (-eq, -ne, -lt, -le, -gt, -ge) or as a
// variable name (-v).
func (a *analyzer) testArith(c *ctx, x syntax.TestExpr, dir string) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, y := range [...]syntax.TestExpr{x.X, x.Y} {
				if w, ok := y.(*syntax.Word); ok {
					a.arithWord(c, w, dir)
				} else {
					a.testArith(c, y, dir)
				}
			}
			return
		}
		a.testArith(c, x.X, dir)
		a.testArith(c, x.Y, dir)
	case *syntax.UnaryTest:
		if w, ok := x.X.(*syntax.Word); ok && x.Op == syntax.TsVarSet {
			a.nameWord(c, w, dir)
			return
		}
		a.testArith(c, x.X, dir)
	case *syntax.ParenTest:
		a.testArith(c, x.X, dir)
	}
}

// nameWord analyzes a word that names a variable: if it is not static it
// may name any subscript.
func (a *analyzer) nameWord(c *ctx, w *syntax.Word, dir string) {
	v := a.single(c, dir, w, modeSingle)
	line, col := a.pos(c, w.Pos())
	if v.dyn {
		a.nameArg(c, v, line, col, dir)
		return
	}
	// The whole word is the name: no "=" ends it here, as it does in an
	// assignment.
	a.nameSubscript(c, v.val, line, col, dir)
}

// nameArg analyzes one expanded word that names a variable.
func (a *analyzer) nameArg(c *ctx, w warg, line, col int, dir string) {
	if w.dyn {
		a.problem(line, col, fmt.Sprintf("variable name %q is not static: a subscript in it would run as code", w.val))
		return
	}
	name := w.val
	if eq := strings.IndexByte(name, '='); eq >= 0 {
		if br := strings.IndexByte(name, '['); br < 0 || br > eq {
			name = name[:eq]
		} else if end := strings.LastIndexByte(name, ']'); end > br && end+1 < len(name) && name[end+1] == '=' {
			// name[subscript]=value: the subscript runs to the "]" before
			// the "=" that starts the value; any other word is a name whole.
			name = name[:end+1]
		}
	}
	a.nameSubscript(c, name, line, col, dir)
}

// AssignedNames returns the names of the variables the builtin name sets
// from its input when given args (read, mapfile and readarray, printf -v,
// getopts, wait -p), as the analysis reads them; nil for anything else.
// A word it cannot place is among them.
func AssignedNames(name string, args []string) []string {
	w := make([]warg, len(args))
	for i, a := range args {
		w[i] = warg{val: a}
	}
	names, input := assignedNames(name, w)
	if !input {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.val
	}
	return out
}

// assignedNames returns the words of the builtin name that name variables
// it assigns or reads by name, and whether it assigns them from input
// (read, mapfile, printf -v, getopts, wait -p). A word it cannot place is
// returned among the names.
func assignedNames(name string, args []warg) (names []warg, input bool) {
	var flags, vals, nameVals string
	operand := -1 // -1: every operand is a name; otherwise that operand only
	switch name {
	case "read":
		flags, vals, nameVals, input = "ers", "dinNptu", "a", true
	case "mapfile", "readarray":
		flags, vals, operand, input = "t", "dnOsuCc", 0, true
	case "printf":
		vals, nameVals, operand, input = "", "v", 1<<30, true
	case "unset":
		flags = "fvn"
	case "getopts":
		operand, input = 1, true
	case "wait":
		flags, nameVals, operand, input = "fn", "p", 1<<30, true
	case "declare", "typeset", "local", "export", "readonly":
		flags = "aAfFgiIlnprtuxm"
	case "test", "[":
		for i := 0; i+1 < len(args); i++ {
			if !args[i].dyn && args[i].val == "-v" {
				names = append(names, args[i+1])
			}
		}
		return names, false
	default:
		return nil, false
	}
	k := 0
	opts := true
	for i := 0; i < len(args); i++ {
		w := args[i]
		if opts && !w.dyn && w.val == "--" {
			opts = false
			continue
		}
		if opts && (w.dyn || len(w.val) > 1 && (w.val[0] == '-' || w.val[0] == '+' && name != "read")) {
			if w.dyn {
				// It may be an option or, where operands are names, a
				// name; if it is an option that takes a name, the next
				// word is one.
				if operand < 0 || k == operand {
					names = append(names, w)
				}
				if nameVals != "" && i+1 < len(args) {
					names = append(names, args[i+1])
				}
				continue
			}
			for j := 1; j < len(w.val); j++ {
				ch := w.val[j]
				isName := strings.IndexByte(nameVals, ch) >= 0
				if isName || strings.IndexByte(vals, ch) >= 0 {
					var v warg
					if j+1 < len(w.val) {
						v = warg{val: w.val[j+1:], pos: w.pos}
					} else if i+1 < len(args) {
						i++
						v = args[i]
					}
					if isName {
						names = append(names, v)
					}
					break
				}
				if strings.IndexByte(flags, ch) < 0 {
					// Not an option this table knows: it may be a name.
					names = append(names, w)
					break
				}
			}
			continue
		}
		opts = false
		if operand < 0 || k == operand {
			names = append(names, w)
		}
		k++
	}
	return names, input
}

// builtinNames analyzes the variable names given to a builtin that
// assigns or reads variables by name.
func (a *analyzer) builtinNames(c *ctx, v *inv, name string, args []warg) {
	if name == "let" {
		for _, w := range args {
			if w.dyn {
				a.problem(v.line, v.col, fmt.Sprintf("let expression %q is not static", w.val))
				continue
			}
			a.arithText(c, w.val, v.line, v.col, v.dir)
		}
		return
	}
	names, input := assignedNames(name, args)
	for _, w := range names {
		a.nameArg(c, w, v.line, v.col, v.dir)
	}
	if input && len(names) > 0 && c.sc.intAttr {
		a.problem(v.line, v.col, name+" may assign input to a variable with the integer attribute, which evaluates it as arithmetic")
	}
}
