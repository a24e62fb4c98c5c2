package shell

import (
	"strings"
)

// AnalyzeCmd splits a Windows cmd.exe command line into the commands it
// runs: commands joined by &, &&, || and | and grouped in ( ), with "…"
// quoting and ^ escapes. Names are lower-cased (cmd is case-insensitive)
// and a trailing .exe dropped; switches such as /S /Q are lower-cased.
// %VAR% and !VAR! make a word dynamic. cmd /c and cmd /k strings are
// analyzed as cmd lines of their own. An unclosed quote or parenthesis is a
// [ParseError].
func AnalyzeCmd(src string, opts *Options) (*Result, error) {
	res := &Result{}
	dir := ""
	if opts != nil {
		dir = opts.Dir
	}
	if err := cmdScript(src, dir, res, nil, "", 0); err != nil {
		return nil, err
	}
	return res, nil
}

func cmdScript(src, dir string, res *Result, wrappers []string, via string, depth int) error {
	if depth > maxPSDepth {
		return &ParseError{Line: 1, Col: 1, Msg: "cmd /c nesting is too deep"}
	}
	var words []string
	var dyn []bool
	var redirs []Redirect
	var b strings.Builder
	wordDyn, inWord, quoted, parens := false, false, false, 0
	endWord := func() {
		if inWord {
			words = append(words, b.String())
			dyn = append(dyn, wordDyn)
		}
		b.Reset()
		inWord, wordDyn = false, false
	}
	flush := func() error {
		endWord()
		// Redirections: > >> 2> < with their target word.
		var w []string
		var d []bool
		for i := 0; i < len(words); i++ {
			if op := words[i]; op == ">" || op == ">>" || op == "2>" || op == "2>>" || op == "<" || op == "1>" {
				if i+1 < len(words) {
					redirs = append(redirs, Redirect{Op: strings.TrimPrefix(strings.TrimPrefix(op, "1"), "2"), Target: words[i+1], Dynamic: dyn[i+1]})
					i++
				}
				continue
			}
			w = append(w, words[i])
			d = append(d, dyn[i])
		}
		if len(w) > 0 || len(redirs) > 0 {
			if err := cmdEmit(w, d, redirs, dir, res, wrappers, via, depth); err != nil {
				return err
			}
		}
		words, dyn, redirs = nil, nil, nil
		return nil
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quoted:
			if c == '"' {
				quoted = false
			} else {
				if c == '%' || c == '!' {
					wordDyn = wordDyn || strings.IndexByte(src[i+1:], c) >= 0
				}
				b.WriteByte(c)
			}
		case c == '"':
			quoted, inWord = true, true
		case c == '^' && i+1 < len(src):
			i++
			b.WriteByte(src[i])
			inWord = true
		case c == ' ' || c == '\t' || c == ',' || c == '=' && !inWord:
			endWord()
		case c == '&' || c == '|' || c == '\n' || c == '\r':
			if i+1 < len(src) && src[i+1] == c {
				i++
			}
			if err := flush(); err != nil {
				return err
			}
		case c == '(':
			parens++
			if err := flush(); err != nil {
				return err
			}
		case c == ')' && parens > 0:
			parens--
			if err := flush(); err != nil {
				return err
			}
		case c == '>' || c == '<':
			fd := ""
			if inWord && b.Len() == 1 && (b.String() == "1" || b.String() == "2") {
				fd = b.String()
				b.Reset()
				inWord = false
			}
			endWord()
			op := fd + string(c)
			if c == '>' && i+1 < len(src) && src[i+1] == '>' {
				op += ">"
				i++
			}
			if i+1 < len(src) && src[i+1] == '&' { // 2>&1
				i += 2
				continue
			}
			words = append(words, op)
			dyn = append(dyn, false)
		default:
			if c == '%' || c == '!' {
				wordDyn = wordDyn || strings.IndexByte(src[i+1:], c) >= 0
			}
			b.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return &ParseError{Line: 1, Col: len(src) + 1, Msg: "a quote is not closed"}
	}
	if parens > 0 {
		return &ParseError{Line: 1, Col: len(src) + 1, Msg: "a parenthesis is not closed"}
	}
	return flush()
}

// cmdEmit records one cmd command from its words, and the command that
// call, start, or a for loop's "do" part runs.
func cmdEmit(w []string, d []bool, redirs []Redirect, dir string, res *Result, wrappers []string, via string, depth int) error {
	c := Command{Dir: dir, Wrappers: wrappers, Via: via, Redirects: redirs}
	if len(w) == 0 {
		res.Commands = append(res.Commands, c)
		return nil
	}
	c.Name = strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(w[0]), ".exe"), "@")
	c.NameDynamic = d[0]
	for i, a := range w[1:] {
		if strings.HasPrefix(a, "/") && len(a) <= 3 {
			a = strings.ToLower(a)
		}
		c.Args = append(c.Args, a)
		c.ArgDynamic = append(c.ArgDynamic, d[i+1])
	}
	c.Source = strings.Join(w, " ")
	res.Commands = append(res.Commands, c)
	if c.NameDynamic {
		res.Problems = append(res.Problems, Problem{Msg: "program name is not static: " + w[0]})
	}
	inner := -1
	switch c.Name {
	case "call", "start":
		// The command they run: after start's switches.
		for k := 1; k < len(w); k++ {
			if !strings.HasPrefix(w[k], "/") {
				inner = k
				break
			}
		}
	case "do", "else":
		// The body of a for loop or if, split off by its parentheses.
		inner = 1
	case "for", "if":
		for k := 1; k < len(w); k++ {
			if strings.EqualFold(w[k], "do") && k+1 < len(w) {
				inner = k + 1
				break
			}
		}
	case "cmd":
		for i, a := range c.Args {
			if la := strings.ToLower(a); la == "/c" || la == "/k" || la == "/r" {
				if slicesAny(c.ArgDynamic[i+1:]) {
					res.Problems = append(res.Problems, Problem{Msg: "cmd /c with a script that is not static"})
					return nil
				}
				return cmdScript(strings.Trim(strings.Join(c.Args[i+1:], " "), `"`), dir, res, append(append([]string{}, wrappers...), "cmd /c"), "sh -c", depth+1)
			}
		}
	}
	if inner > 0 {
		return cmdEmit(w[inner:], d[inner:], nil, dir, res, append(append([]string{}, wrappers...), c.Name), c.Name, depth+1)
	}
	return nil
}
