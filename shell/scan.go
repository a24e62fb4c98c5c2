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

func (a *analyzer) topScript(src string, f *syntax.File, opts *Options) *script {
	sc := &script{src: src, pwdOK: true, ifsOK: true, cdpathOK: true}
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

// scan records the functions a script defines and forgets every known
// variable that the script may assign. It errs on the side of forgetting.
func (a *analyzer) scan(f *syntax.File, sc *script) {
	all := func() {
		sc.vars = nil
		sc.pwdOK, sc.ifsOK, sc.cdpathOK = false, false, false
	}
	del := func(name string) {
		switch name {
		case "PWD":
			sc.pwdOK = false
		case "IFS":
			sc.ifsOK = false
		case "CDPATH":
			sc.cdpathOK = false
		}
		delete(sc.vars, name)
	}
	// delIn forgets every known variable whose name occurs in s.
	delIn := func(s string) {
		for _, k := range [...]string{"PWD", "IFS", "CDPATH"} {
			if strings.Contains(s, k) {
				del(k)
			}
		}
		for k := range sc.vars {
			if strings.Contains(s, k) {
				delete(sc.vars, k)
			}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
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
				del(n.Name.Value)
			} else if n.Value != nil {
				s, ok := staticLit(n.Value)
				switch {
				case !ok:
					all()
				case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
					// Options of declare and friends: -n makes a name
					// reference, -i evaluates values as arithmetic.
					if strings.ContainsAny(s, "ni") {
						all()
					}
				default:
					delIn(s)
				}
			}
		case *syntax.WordIter:
			del(n.Name.Value)
		case *syntax.ParamExp:
			if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				if n.Excl || n.Param == nil {
					all()
				} else {
					del(n.Param.Value)
				}
			}
			if n.Index != nil && arithDynamic(n.Index) {
				if w, ok := n.Index.(*syntax.Word); !ok || (w.Lit() != "@" && w.Lit() != "*") {
					all()
				}
			}
			if n.Slice != nil && (n.Slice.Offset != nil && arithDynamic(n.Slice.Offset) || n.Slice.Length != nil && arithDynamic(n.Slice.Length)) {
				all()
			}
		case *syntax.ArithmExp:
			// A variable's value is evaluated as an expression in turn,
			// and that expression may assign anything.
			if arithDynamic(n.X) {
				all()
			}
		case *syntax.ArithmCmd:
			if arithDynamic(n.X) {
				all()
			}
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				if arithDynamic(x) {
					all()
				}
			}
		case *syntax.CStyleLoop:
			for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
				if x != nil && arithDynamic(x) {
					all()
				}
			}
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, x := range []syntax.TestExpr{n.X, n.Y} {
					if w, ok := x.(*syntax.Word); !ok || !isNumber(w.Lit()) {
						all()
					}
				}
			}
		case *syntax.CoprocClause:
			del("COPROC")
			if n.Name != nil {
				if s, ok := staticLit(n.Name); ok {
					del(s)
				} else {
					all()
				}
			}
		case *syntax.Redirect:
			if n.N != nil && strings.HasPrefix(n.N.Value, "{") {
				del(strings.Trim(n.N.Value, "{}"))
			}
		case *syntax.CallExpr:
			a.scanCall(n, all, delIn)
		}
		return true
	})
}

// scanCall handles builtins that assign to variables named by arguments.
func (a *analyzer) scanCall(ce *syntax.CallExpr, all func(), delIn func(string)) {
	args := ce.Args
	for len(args) > 0 {
		s, ok := staticLit(args[0])
		if !ok {
			// A dynamic program may be any builtin.
			all()
			return
		}
		if s != "command" && s != "builtin" {
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
		all()
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
		s, ok := staticLit(w)
		if !ok {
			all()
			return
		}
		if (name == "mapfile" || name == "readarray") && strings.HasPrefix(s, "-") && strings.Contains(s, "C") {
			all()
			return
		}
		delIn(s)
	}
}
