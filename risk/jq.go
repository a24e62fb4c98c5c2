package risk

import (
	"strings"
)

// jq has no function that runs a command or writes a file; what a jq
// program can reach beyond its inputs is the environment (env, $ENV) and
// module files (import, include, modulemeta). yq (mikefarah's) adds env(),
// strenv() and envsubst for the environment, load() and its kin for files,
// and eval for expressions built at run time. Names are matched as tokens:
// .env is a field and "env" a string, env.HOME and $ENV.X are reads.

type jqKind uint8

const (
	jqEOF jqKind = iota
	jqIdent
	jqField  // .name
	jqString // a string or one literal part of an interpolated string
	jqNumber
	jqFormat // @name
	jqPunct
)

type jqTok struct {
	kind jqKind
	text string
}

var jqOperators = []string{"?//=", "?//", "//=", "|=", "+=", "-=", "*=", "/=", "%=", "==", "!=", "<=", ">=", "//", "..",
	".", "[", "]", "{", "}", "(", ")", "|", ",", ":", ";", "=", "<", ">", "+", "-", "*", "/", "%", "?", "$"}

// tokenizeJq splits a jq program into tokens, the code inside string
// interpolations included. It fails with the reason when it cannot.
func tokenizeJq(src string) ([]jqTok, string) {
	var toks []jqTok
	i, n := 0, len(src)
	// interp holds, for each open \( interpolation, the depth of
	// parentheses at which it closes.
	var interp []int
	depth := 0
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
	}
	ident := func(j int) int { // end of an identifier (with :: parts) at j
		for j < n && isIdent(src[j], false) {
			j++
			if strings.HasPrefix(src[j:], "::") && j+2 < n && isIdent(src[j+2], true) {
				j += 2
			}
		}
		return j
	}
	// str scans string text from j (after the opening quote or after the
	// closing parenthesis of an interpolation) to its end or to \(.
	str := func(j int) (int, string) {
		var b strings.Builder
		for j < n {
			c := src[j]
			switch {
			case c == '"':
				toks = append(toks, jqTok{jqString, b.String()})
				return j + 1, ""
			case c == '\\' && j+1 < n && src[j+1] == '(':
				toks = append(toks, jqTok{jqString, b.String()}, jqTok{jqPunct, "("})
				depth++
				interp = append(interp, depth)
				return j + 2, ""
			case c == '\\':
				if j+1 >= n {
					return j, "a string is not closed"
				}
				b.WriteByte(src[j+1])
				j += 2
			default:
				b.WriteByte(c)
				j++
			}
		}
		return j, "a string is not closed"
	}
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '"':
			j, bad := str(i + 1)
			if bad != "" {
				return nil, bad
			}
			i = j
		case c == ')' && len(interp) > 0 && interp[len(interp)-1] == depth:
			// The end of an interpolation: the string goes on.
			interp = interp[:len(interp)-1]
			depth--
			toks = append(toks, jqTok{jqPunct, ")"})
			j, bad := str(i + 1)
			if bad != "" {
				return nil, bad
			}
			i = j
		case c == '.' && i+1 < n && isIdent(src[i+1], true):
			j := i + 1
			for j < n && isIdent(src[j], false) {
				j++
			}
			toks = append(toks, jqTok{jqField, src[i+1 : j]})
			i = j
		case c == '@' && i+1 < n && isIdent(src[i+1], true):
			j := i + 1
			for j < n && isIdent(src[j], false) {
				j++
			}
			toks = append(toks, jqTok{jqFormat, src[i+1 : j]})
			i = j
		case isIdent(c, true):
			j := ident(i)
			toks = append(toks, jqTok{jqIdent, src[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < n && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == 'e' || src[j] == 'E' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			toks = append(toks, jqTok{jqNumber, src[i:j]})
			i = j
		default:
			op := firstPrefix(src[i:], jqOperators)
			if op == "" {
				return nil, "a character jq does not know: " + strings.ToValidUTF8(src[i:i+1], "?")
			}
			switch op {
			case "(":
				depth++
			case ")":
				depth--
			}
			toks = append(toks, jqTok{jqPunct, op})
			i += len(op)
		}
	}
	if len(interp) > 0 {
		return nil, "a string interpolation is not closed"
	}
	return append(toks, jqTok{kind: jqEOF}), ""
}

// yqEnvFuncs are yq's operators that read the environment.
var yqEnvFuncs = setOf("env strenv envsubst")

// JqProgram returns what a jq (or yq) program does, read from its text.
func JqProgram(src string) ProgramEffect {
	var p ProgramEffect
	toks, bad := tokenizeJq(src)
	if bad != "" {
		p.unknown("cannot read the jq program: " + bad)
		return p
	}
	tok := func(i int) jqTok {
		if i >= 0 && i < len(toks) {
			return toks[i]
		}
		return jqTok{kind: jqEOF}
	}
	is := func(i int, s string) bool { return tok(i).kind == jqPunct && tok(i).text == s }
	var brackets []string // open brackets, innermost last
	for i, t := range toks {
		if t.kind == jqPunct {
			switch t.text {
			case "(", "[", "{":
				brackets = append(brackets, t.text)
			case ")", "]", "}":
				if len(brackets) > 0 {
					brackets = brackets[:len(brackets)-1]
				}
			}
			continue
		}
		if t.kind != jqIdent {
			continue
		}
		name := t.text
		if is(i-1, "$") {
			// A variable: $ENV is the environment, $__loc__ and the
			// program's own variables are inert.
			if name == "ENV" {
				p.secret("reads the environment ($ENV), which holds secrets")
			}
			continue
		}
		if tok(i-1).kind == jqIdent && tok(i-1).text == "def" {
			continue // the name of a definition
		}
		// {name} and {name: …} in an object are keys, not calls.
		if len(brackets) > 0 && brackets[len(brackets)-1] == "{" && (is(i-1, "{") || is(i-1, ",")) &&
			(is(i+1, ":") || is(i+1, ",") || is(i+1, "}")) {
			continue
		}
		switch {
		case name == "env" || yqEnvFuncs[name]:
			p.secret("reads the environment (" + name + "), which holds secrets")
		case name == "import" || name == "include":
			p.unknown(name + " reads a jq module from the search path")
		case name == "modulemeta" || name == "get_search_list":
			p.unknown(name + " reads jq modules from the search path")
		case name == "eval":
			p.unknown("eval runs an expression built at run time")
		case strings.HasPrefix(name, "load") || name == "strload":
			// yq's load("file") and its kin read a file.
			if is(i+1, "(") && tok(i+2).kind == jqString && is(i+3, ")") {
				p.Reads = append(p.Reads, tok(i+2).text)
			} else {
				p.unknown(name + " reads a file named at run time")
			}
		}
	}
	return p
}

// jqLine is a jq or yq command line as its options read it.
type jqLine struct {
	p ProgramEffect
	// program is the position of the program operand, -1 when there is
	// none; files are the positions of the files read (or edited in place).
	program int
	files   []int
	inPlace bool
	// unknown reports a word not known statically where a file may stand.
	unknown bool
}

// jqArgs reads the options and operands of jq or yq run with args, by
// the program's spec in the table of program knowledge. The files that
// --rawfile and --slurpfile read are typed there and checked with the
// command's other reads.
func jqArgs(prog string, args []string, dyn []bool) jqLine {
	l := jqLine{program: -1}
	p := &l.p
	isDyn := func(i int) bool { return i < len(dyn) && dyn[i] }
	sp := Lookup(prog)
	if sp == nil {
		p.unknown(prog + " has no spec of its options")
		return l
	}
	pr := sp.Parse(args, dyn)
	if pr.Unknown != "" {
		p.unknown("option " + pr.Unknown + " is not known")
	}
	if pr.Problem != "" {
		l.unknown = true
	}
	fromFile, positionalArgs := false, false
	for _, o := range pr.Options {
		switch o.Name {
		case "-f", "--from-file":
			// The program is in a file: a read, and code not judged.
			fromFile = true
			if o.HasValue && !isDyn(o.ValueIndex) {
				p.Reads = append(p.Reads, o.Value)
			}
		case "-i":
			l.inPlace = prog == "yq"
		case "--args", "--jsonargs":
			positionalArgs = true
		}
	}
	ops := pr.Operands
	files := ops
	if prog == "yq" && len(files) > 0 {
		switch args[files[0]] {
		case "eval", "e", "eval-all", "ea":
			files = files[1:]
		}
	}
	if fromFile {
		p.unknown("the program is read from a file, which the analysis does not read")
	} else if len(files) > 0 {
		l.program = files[0]
		if isDyn(files[0]) {
			p.unknown("the program is not known until the line runs")
		}
		files = files[1:]
	}
	if !positionalArgs {
		// With --args the rest are values for $ARGS, not files.
		l.files = files
	}
	return l
}

// jqCommand fills e for jq or yq run with args: the files it reads and
// writes, and what its program does.
func jqCommand(prog string, args []string, dyn []bool, e *Effect) {
	e.Level, e.Reads, e.Writes, e.Unknown = Read, nil, nil, false
	l := jqArgs(prog, args, dyn)
	p := l.p
	e.Unknown = l.unknown
	if l.program >= 0 {
		p.merge(JqProgram(args[l.program]))
		if prog == "yq" && !(l.program < len(dyn) && dyn[l.program]) {
			// mikefarah's yq reads its first operand as a file when a
			// file of that name exists (yq .env).
			e.Reads = append(e.Reads, args[l.program])
		}
	}
	for _, k := range l.files {
		if k < len(dyn) && dyn[k] {
			e.Unknown = true
			continue
		}
		if args[k] != "-" {
			if l.inPlace {
				e.Writes = append(e.Writes, args[k])
			} else {
				e.Reads = append(e.Reads, args[k])
			}
		}
	}
	if l.inPlace {
		e.Level = max(e.Level, Write)
	}
	p.apply(prog, e)
}
