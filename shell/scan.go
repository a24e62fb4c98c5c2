package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// dynamicVars are set by the shell itself and never taken from Options.
var dynamicVars = map[string]bool{
	"BASHPID": true, "BASH_ARGC": true, "BASH_ARGV": true, "BASH_ARGV0": true,
	"BASH_COMMAND": true, "BASH_LINENO": true, "BASH_REMATCH": true,
	"BASH_SOURCE": true, "BASH_SUBSHELL": true, "COLUMNS": true,
	"DIRSTACK": true, "EPOCHREALTIME": true, "EPOCHSECONDS": true,
	"FUNCNAME": true, "GROUPS": true, "HISTCMD": true, "IFS": true,
	"LINENO": true, "LINES": true, "OLDPWD": true, "OPTARG": true,
	"OPTIND": true, "PIPESTATUS": true, "PPID": true, "RANDOM": true,
	"REPLY": true, "SECONDS": true, "SHLVL": true, "SRANDOM": true,
}

// validName reports whether s is a valid shell variable name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// topScript builds the script of the top-level line from the options.
func (a *analyzer) topScript(src string, f *syntax.File, opts *Options) *script {
	a.top = script{src: src, pwdOK: true, ifsOK: true, cdpathOK: true}
	sc := &a.top
	if opts != nil {
		for k, v := range opts.Env {
			if !validName(k) || dynamicVars[k] || k == "HOME" || k == "PWD" {
				continue
			}
			if sc.vars == nil {
				sc.vars = make(map[string]string, len(opts.Env)+1)
			}
			sc.vars[k] = v
		}
		if opts.Home != "" {
			if sc.vars == nil {
				sc.vars = make(map[string]string, 1)
			}
			sc.vars["HOME"] = opts.Home
		}
		if opts.Env["CDPATH"] != "" {
			sc.cdpathOK = false
		}
	}
	a.scan(f, sc)
	return sc
}

// assigningBuiltins assign to variables named by their arguments.
var assigningBuiltins = map[string]bool{
	"read": true, "mapfile": true, "readarray": true, "getopts": true,
	"unset": true, "export": true, "declare": true, "typeset": true,
	"local": true, "readonly": true, "let": true, "wait": true,
	"printf": true,
}

// scanner forgets the known variables of a script that the script may
// assign.
type scanner struct {
	a  *analyzer
	sc *script
}

// all forgets every known variable, and every value that arithmetic may
// read from a variable.
func (s *scanner) all() {
	s.forget()
	s.sc.arithAll = true
}

// forget forgets every known variable. Arithmetic only ever stores
// integers, so what it may assign is forgotten this way.
func (s *scanner) forget() {
	s.sc.vars = nil
	s.sc.pwdOK, s.sc.ifsOK, s.sc.cdpathOK = false, false, false
}

// arithVar returns the record of what the script stores in name.
func (s *scanner) arithVar(name string) *arithVar {
	if s.sc.arith == nil {
		s.sc.arith = make(map[string]*arithVar)
	}
	e := s.sc.arith[name]
	if e == nil {
		e = &arithVar{}
		s.sc.arith[name] = e
	}
	return e
}

// set records a static value the script assigns to name.
func (s *scanner) set(name, val string) {
	e := s.arithVar(name)
	e.vals = append(e.vals, val)
	e.checked = 0
}

// bad records that the script assigns name a value not known statically.
func (s *scanner) bad(name string) {
	s.arithVar(name).bad = true
}

// leadingName returns the variable name at the start of s.
func leadingName(s string) string {
	i := 0
	for i < len(s) && isNameByte(s[i]) && (i > 0 || s[i] < '0' || s[i] > '9') {
		i++
	}
	return s[:i]
}

// staticWordValue returns the value of a word that is static and is not
// changed by pathname expansion, or by brace expansion other than of
// numbers ({1..5}, {1,2}), whose words hold only digits and minus signs.
func staticWordValue(w *syntax.Word) (string, bool) {
	v, ok := staticLit(w)
	if !ok {
		return "", false
	}
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		if strings.ContainsAny(l.Value, "*?[") ||
			strings.IndexByte(l.Value, '{') >= 0 && strings.Trim(v, "0123456789{},.-") != "" {
			return "", false
		}
	}
	return v, true
}

// arithAssigned records the variable that an arithmetic assignment to x
// sets: it stores an integer.
func (s *scanner) arithAssigned(x syntax.ArithmExpr) {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if validName(p.Value) {
			s.set(p.Value, "0")
		}
	case *syntax.ParamExp:
		if p.Param != nil && validName(p.Param.Value) {
			s.set(p.Param.Value, "0")
		}
	}
}

// del forgets the variable name.
func (s *scanner) del(name string) {
	switch name {
	case "PWD":
		s.sc.pwdOK = false
	case "IFS":
		s.sc.ifsOK = false
	case "CDPATH":
		s.sc.cdpathOK = false
	}
	delete(s.sc.vars, name)
}

// delIn forgets every known variable whose name occurs in str.
func (s *scanner) delIn(str string) {
	for _, k := range [...]string{"PWD", "IFS", "CDPATH"} {
		if strings.Contains(str, k) {
			s.del(k)
		}
	}
	for k := range s.sc.vars {
		if strings.Contains(str, k) {
			delete(s.sc.vars, k)
		}
	}
}

// scan records the functions a script defines and forgets every known
// variable that the script may assign. It errs on the side of forgetting.
func (a *analyzer) scan(node syntax.Node, sc *script) {
	s := &scanner{a: a, sc: sc}
	syntax.Walk(node, s.visit)
}

func (s *scanner) visit(n syntax.Node) bool {
	a := s.a
	if !a.charge(1) {
		return false
	}
	switch n := n.(type) {
	case *syntax.FuncDecl:
		if a.funcs == nil {
			a.funcs = make(map[string]bool)
		}
		if n.Name != nil {
			a.funcs[n.Name.Value] = true
		}
		for _, l := range n.Names {
			a.funcs[l.Value] = true
		}
	case *syntax.Assign:
		if n.Name != nil {
			s.del(n.Name.Value)
			s.assign(n)
		} else if n.Value != nil {
			v, ok := staticLit(n.Value)
			switch {
			case !ok:
				s.all()
			case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
				// Options of declare and friends: -n makes a name
				// reference, -i evaluates values as arithmetic.
				if strings.Contains(v, "n") {
					s.all()
				}
				if strings.Contains(v, "i") {
					s.forget()
					s.sc.intAttr = true
				}
			default:
				s.delIn(v)
				if name, val, ok := strings.Cut(v, "="); ok {
					if n := leadingName(name); n == name {
						s.set(n, val)
					} else if n != "" {
						s.bad(n)
					}
				}
			}
		}
	case *syntax.WordIter:
		s.del(n.Name.Value)
		if len(n.Items) == 0 {
			// for x; do: the positional parameters.
			s.bad(n.Name.Value)
		}
		for _, w := range n.Items {
			if v, ok := staticWordValue(w); ok {
				s.set(n.Name.Value, v)
			} else {
				s.bad(n.Name.Value)
			}
		}
	case *syntax.BinaryArithm:
		switch n.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
			syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
			s.arithAssigned(n.X)
		}
	case *syntax.UnaryArithm:
		switch n.Op {
		case syntax.Inc, syntax.Dec:
			s.arithAssigned(n.X)
		}
	case *syntax.ParamExp:
		if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
			if n.Excl || n.Param == nil {
				s.all()
			} else {
				s.del(n.Param.Value)
				s.bad(n.Param.Value)
			}
		}
		// A variable's value is evaluated as an expression in turn, and
		// that expression may assign any variable an integer.
		if n.Index != nil && arithDynamic(n.Index) {
			if w, ok := n.Index.(*syntax.Word); !ok || (w.Lit() != "@" && w.Lit() != "*") {
				s.forget()
			}
		}
		if n.Slice != nil && (n.Slice.Offset != nil && arithDynamic(n.Slice.Offset) || n.Slice.Length != nil && arithDynamic(n.Slice.Length)) {
			s.forget()
		}
	case *syntax.ArithmExp:
		if arithDynamic(n.X) {
			s.forget()
		}
	case *syntax.ArithmCmd:
		if arithDynamic(n.X) {
			s.forget()
		}
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			if arithDynamic(x) {
				s.forget()
			}
		}
	case *syntax.CStyleLoop:
		for _, x := range [...]syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
			if x != nil && arithDynamic(x) {
				s.forget()
			}
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range [...]syntax.TestExpr{n.X, n.Y} {
				if w, ok := x.(*syntax.Word); !ok || !isNumber(w.Lit()) {
					s.forget()
				}
			}
		}
	case *syntax.CoprocClause:
		s.del("COPROC")
		s.bad("COPROC")
		if n.Name != nil {
			if v, ok := staticLit(n.Name); ok {
				s.del(v)
				s.bad(v)
			} else {
				s.all()
			}
		}
	case *syntax.Redirect:
		if n.N != nil && strings.HasPrefix(n.N.Value, "{") {
			s.del(strings.Trim(n.N.Value, "{}"))
			s.bad(strings.Trim(n.N.Value, "{}"))
		}
	case *syntax.CallExpr:
		s.call(n)
	case *syntax.DeclClause:
		s.decl(n)
	}
	return true
}

// decl records the associative arrays that declare -A, local -A and
// typeset -A declare.
func (s *scanner) decl(d *syntax.DeclClause) {
	assoc := false
	for _, as := range d.Args {
		if as.Name == nil && as.Value != nil {
			if v, ok := staticLit(as.Value); ok && strings.HasPrefix(v, "-") && strings.Contains(v, "A") {
				assoc = true
			}
		}
	}
	if !assoc {
		return
	}
	for _, as := range d.Args {
		if as.Name != nil {
			s.arithVar(as.Name.Value).assoc = true
		}
	}
}

// call handles builtins that assign to variables named by arguments.
func (s *scanner) call(ce *syntax.CallExpr) {
	args := ce.Args
	for len(args) > 0 {
		v, ok := staticLit(args[0])
		if !ok {
			// A dynamic program may be any builtin.
			s.all()
			return
		}
		if v != "command" && v != "builtin" {
			break
		}
		args = args[1:]
		for len(args) > 0 {
			if o, ok := staticLit(args[0]); ok && strings.HasPrefix(o, "-") {
				args = args[1:]
				continue
			}
			break
		}
	}
	if len(args) == 0 {
		return
	}
	name, _ := staticLit(args[0])
	switch name {
	case "eval", "source", ".", "trap":
		s.all()
		return
	case "set":
		s.setArgs(args[1:])
		return
	case "alias", "enable":
		s.a.builtinsRedefined = true
		return
	}
	if !assigningBuiltins[name] {
		return
	}
	rest := args[1:]
	if name == "printf" {
		if len(rest) == 0 {
			return
		}
		o, ok := staticLit(rest[0])
		if ok && !strings.HasPrefix(o, "-v") {
			return
		}
	}
	for _, w := range rest {
		v, ok := staticLit(w)
		if !ok {
			s.all()
			return
		}
		if (name == "mapfile" || name == "readarray") && strings.HasPrefix(v, "-") && strings.Contains(v, "C") {
			s.all()
			return
		}
		s.delIn(v)
		switch {
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			if name == "declare" || name == "typeset" || name == "local" || name == "export" || name == "readonly" {
				if strings.Contains(v, "n") {
					s.all()
				}
				if strings.Contains(v, "i") {
					s.sc.intAttr = true
				}
			}
		default:
			// What these builtins store is input, or unknown.
			if n := leadingName(v); n != "" {
				s.bad(n)
			}
		}
	}
}

// assign records an assignment NAME=value, NAME+=value or NAME=(…).
func (s *scanner) assign(as *syntax.Assign) {
	name := as.Name.Value
	switch {
	case as.Naked:
	case as.Array != nil:
		for _, e := range as.Array.Elems {
			if e.Value == nil {
				continue
			}
			if v, ok := staticWordValue(e.Value); ok {
				s.set(name, v)
			} else {
				s.bad(name)
			}
		}
	case as.Append && as.Index == nil:
		// The value is joined to the old one, which may make a new name.
		s.bad(name)
	case as.Value == nil:
		s.set(name, "")
	case integerWord(as.Value):
		s.set(name, "0")
	default:
		if v, ok := staticLit(as.Value); ok {
			s.set(name, v)
		} else {
			s.bad(name)
		}
	}
}

// integerWord reports whether w is made of arithmetic expansions and
// digits only, as in n=$((n + 1)): its value is an integer.
func integerWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.ArithmExp:
		case *syntax.Lit:
			if !isDigits(p.Value) {
				return false
			}
		default:
			return false
		}
	}
	return len(w.Parts) > 0
}

// setArgs handles set, which sets the positional parameters when it is
// given operands.
func (s *scanner) setArgs(args []*syntax.Word) {
	for i := 0; i < len(args); i++ {
		v, ok := staticLit(args[i])
		switch {
		case !ok, v == "--", v == "-":
			s.sc.posUnknown = true
			return
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			if strings.Contains(v, "o") {
				i++
			}
		default:
			s.sc.posUnknown = true
			return
		}
	}
}
