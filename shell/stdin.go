package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// pipeIn is the static output of a pipeline element, piped into the
// statement st that follows it.
type pipeIn struct {
	st   *syntax.Stmt
	text string
}

// stdinPaths name a shell's standard input when given as its script.
var stdinPaths = map[string]bool{
	"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true, "-": true,
}

// hasShellFlag reports whether the single-letter shell option f is among
// the option words.
func hasShellFlag(opts []warg, f byte) bool {
	for _, w := range opts {
		if strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "--") && strings.IndexByte(w.val, f) > 0 {
			return true
		}
	}
	return false
}

// lastStdin returns the redirection that ends up as standard input.
func lastStdin(rs []*syntax.Redirect) *syntax.Redirect {
	var in *syntax.Redirect
	for _, r := range rs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			in = r
		}
	}
	return in
}

// stdinScript returns the static text that v's program reads on its
// standard input: a heredoc, a here-string, or piped output. The position
// is that of the heredoc or here-string; for piped output it is invalid,
// and commands then take the position of the program that reads it.
func (a *analyzer) stdinScript(c *ctx, v *inv) (string, syntax.Pos, bool) {
	if in := lastStdin(v.stdin); in != nil {
		return a.redirText(c, v.dir, in)
	}
	if v.pipe != nil {
		return v.pipe.text, syntax.Pos{}, true
	}
	return "", syntax.Pos{}, false
}

// redirText returns the text that a heredoc or here-string supplies, when
// it is static.
func (a *analyzer) redirText(c *ctx, dir string, in *syntax.Redirect) (string, syntax.Pos, bool) {
	switch in.Op {
	case syntax.WordHdoc:
		w := a.single(c, dir, in.Word, modeSingle)
		if w.dyn {
			return "", syntax.Pos{}, false
		}
		return w.val + "\n", in.Word.Pos(), true
	case syntax.Hdoc, syntax.DashHdoc:
	default:
		return "", syntax.Pos{}, false
	}
	if in.Hdoc == nil || len(in.Hdoc.Parts) == 0 {
		return "", in.Word.Pos(), true
	}
	_, plain := plainLit(in.Word)
	var b strings.Builder
	for _, p := range in.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", syntax.Pos{}, false
		}
		s := lit.Value
		if !plain {
			b.WriteString(s)
			continue
		}
		// With an unquoted delimiter, \$, \`, \\ and \newline are escapes.
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) {
				switch s[i+1] {
				case '$', '`', '\\':
					i++
				case '\n':
					i++
					continue
				}
			}
			b.WriteByte(s[i])
		}
	}
	s := b.String()
	if in.Op == syntax.DashHdoc {
		lines := strings.SplitAfter(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		s = strings.Join(lines, "")
	}
	return s, in.Hdoc.Pos(), true
}

// staticStdin returns the text the heredocs and here-strings of a
// statement supply, when none has expansions left to run time: the text
// of each, joined. redirs are rs evaluated ([analyzer.redirects]).
func (a *analyzer) staticStdin(c *ctx, dir string, rs []*syntax.Redirect, redirs []Redirect) string {
	var b strings.Builder
	for i, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		default:
			continue
		}
		if i < len(redirs) && redirs[i].Dynamic {
			continue
		}
		if text, _, ok := a.redirText(c, dir, r); ok {
			b.WriteString(text)
		}
	}
	return b.String()
}

// plainPipeSource reports whether st is a command none of whose words
// holds a command, process or arithmetic substitution, so that reading its
// static output again has no effect on the analysis.
func plainPipeSource(st *syntax.Stmt) bool {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 {
		return false
	}
	plain := true
	for _, w := range ce.Args {
		syntax.Walk(w, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
				plain = false
			}
			return plain
		})
	}
	return plain
}

// lastElement returns the last statement of a pipeline.
func lastElement(st *syntax.Stmt) *syntax.Stmt {
	for {
		b, ok := st.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
			return st
		}
		st = b.Y
	}
}

// pipeText returns what st writes to its standard output when that is
// static: echo or printf of static words, or cat of a static heredoc.
func (a *analyzer) pipeText(c *ctx, st *syntax.Stmt, dir string) (string, bool) {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) < 1 || st.Background {
		return "", false
	}
	for _, r := range st.Redirs {
		if r.N != nil && r.N.Value != "1" {
			continue
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.DplOut, syntax.RdrInOut:
			return "", false
		}
	}
	switch name, _ := staticLit(ce.Args[0]); progName(name) {
	case "echo", "printf", "cat":
	default:
		return "", false
	}
	problems, budget := len(a.res.Problems), a.braceBudget
	var words []warg
	for _, w := range ce.Args {
		words = a.words(c, dir, w, modeArg, words)
	}
	a.res.Problems, a.braceBudget = a.res.Problems[:problems], budget
	if len(words) == 0 {
		return "", false
	}
	for _, w := range words {
		if w.dyn || w.glob {
			return "", false
		}
	}
	args := words[1:]
	switch progName(words[0].val) {
	case "echo":
		newline := true
		for len(args) > 0 && len(args[0].val) > 1 && args[0].val[0] == '-' && strings.Trim(args[0].val[1:], "neE") == "" {
			if strings.Contains(args[0].val, "e") {
				// Escapes would be interpreted; only plain text is handled.
				for _, w := range args {
					if strings.Contains(w.val, "\\") {
						return "", false
					}
				}
			}
			if strings.Contains(args[0].val, "n") {
				newline = false
			}
			args = args[1:]
		}
		vals := make([]string, len(args))
		for i, w := range args {
			vals[i] = w.val
		}
		text := strings.Join(vals, " ")
		if newline {
			text += "\n"
		}
		return text, true
	case "printf":
		if len(args) == 0 {
			return "", false
		}
		format := args[0].val
		rest := args[1:]
		switch format {
		case "%s\\n", "%s":
			var b strings.Builder
			for _, w := range rest {
				b.WriteString(w.val)
				if format == "%s\\n" {
					b.WriteByte('\n')
				}
			}
			return b.String(), true
		}
		if len(rest) > 0 || strings.Contains(format, "%") {
			return "", false
		}
		var b strings.Builder
		for i := 0; i < len(format); i++ {
			if format[i] != '\\' {
				b.WriteByte(format[i])
				continue
			}
			if i+1 >= len(format) {
				return "", false
			}
			i++
			switch format[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\':
				b.WriteByte('\\')
			default:
				return "", false
			}
		}
		return b.String(), true
	case "cat":
		if len(args) > 1 || len(args) == 1 && args[0].val != "-" {
			return "", false
		}
		if in := lastStdin(st.Redirs); in != nil {
			text, _, ok := a.redirText(c, dir, in)
			return text, ok
		}
	}
	return "", false
}

// source handles source and .: a script read from a static standard input
// is analyzed like eval.
func (a *analyzer) source(c *ctx, v *inv, name string, args []warg, shellDir string) string {
	if len(args) > 0 && !args[0].dyn && stdinPaths[args[0].val] && args[0].val != "-" {
		if script, at, ok := a.stdinScript(c, v); ok {
			r := a.nested(c, v, script, at, "stdin", name, v.dir)
			a.finishNested(c, v, r, name, args)
			if v.inShell && r.ok {
				if r.changed {
					a.dirEvents++
				}
				return r.dir
			}
			return shellDir
		}
	}
	a.emit(v, name, false, args)
	if a.keepsDir != nil && len(args) > 0 && !args[0].dyn && !strings.HasPrefix(args[0].val, "-") &&
		v.dir != "" && v.dir == shellDir && a.keepsDir(v.dir, args[0].val) {
		return shellDir
	}
	return a.unknownAfter(v, shellDir)
}

// readsScript reports whether st may be a shell, source or . that reads a
// script from its standard input. It over-approximates.
func readsScript(st *syntax.Stmt) bool {
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return false
	}
	for _, w := range ce.Args {
		s, ok := staticLit(w)
		if !ok {
			continue
		}
		switch name := progName(s); {
		case shells[name], name == "source", name == ".":
			return true
		}
	}
	return false
}
