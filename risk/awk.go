package risk

import (
	"cmp"
	"strings"
)

// awk programs are judged token by token: a program is read-only only when
// every name it calls is a known built-in function or one it defines, and
// it uses none of the constructs that run commands (system, pipes, |&,
// indirect calls), write files (print > f), read the environment
// (ENVIRON), change which files are read (ARGV, ARGC) or load code
// (@load, @include). Anything the tokenizer cannot read, or where awk
// implementations could read the text differently, makes the program
// unknown.

type awkKind uint8

const (
	awkEOF awkKind = iota
	awkNewline
	awkName     // identifier or keyword
	awkFuncName // identifier written directly before "("
	awkNumber
	awkString
	awkRegex
	awkPunct
)

type awkTok struct {
	kind awkKind
	text string // the name, operator, or a string's or regex's body
	// ctrl marks the ")" that closes the condition of if, while, for or
	// switch: a statement follows it, where some awks read "/" as the
	// start of a regular expression and others as a division.
	ctrl bool
}

// awkKeywords are the reserved words of awk and gawk.
var awkKeywords = setOf("BEGIN END BEGINFILE ENDFILE function func if else while for do break continue next nextfile exit return delete in getline print printf switch case default")

// awkSafeFuncs are the built-in functions that compute, or read only the
// input and the files the analysis sees.
var awkSafeFuncs = setOf("length substr index split sub gsub gensub match sprintf tolower toupper int sqrt exp log sin cos atan2 rand srand " +
	"close fflush strftime systime mktime asort asorti patsplit and or xor lshift rshift compl strtonum isarray typeof mkbool")

// awkOtherFuncs are built-in functions of gawk that the analysis does not
// judge (they read message catalogs from directories of the caller's
// choosing).
var awkOtherFuncs = setOf("bindtextdomain dcgettext dcngettext")

// awkRegexAfterKeyword are the keywords after which "/" starts a regular
// expression; after the other keywords it is an error or ambiguous.
var awkRegexAfterKeyword = setOf("print printf return case do else in exit")

// awkAssignOps are the operators that assign to their left operand.
var awkAssignOps = setOf("= += -= *= /= %= ^= **= ++ --")

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// awkOperators are awk's operators and punctuation, longest first.
var awkOperators = []string{"**=", "&&", "||", "|&", "==", "<=", ">=", "!=", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "**", ">>", "!~",
	"{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|", "?", ":", "~", "$", "=", "@"}

// endsOperand reports whether a token can end an operand, so that a "/"
// after it divides. It returns ok false where awk implementations may read
// a following "/" either way.
func endsOperand(toks []awkTok) (division, ok bool) {
	if len(toks) == 0 {
		return false, true
	}
	t := toks[len(toks)-1]
	switch t.kind {
	case awkNewline:
		return false, true
	case awkNumber, awkString, awkRegex:
		return true, true
	case awkName, awkFuncName:
		switch {
		case awkSafeFuncs[t.text] || awkOtherFuncs[t.text] || t.text == "system":
			// length / 2 divides in gawk; mawk reads a regular
			// expression after any built-in function's name.
			return false, false
		case !awkKeywords[t.text]:
			return true, true
		}
		return false, awkRegexAfterKeyword[t.text]
	}
	switch t.text {
	case ")", "]":
		if t.ctrl {
			return false, false
		}
		return true, true
	case "++", "--":
		// x++ / 2 divides in gawk; mawk reads a regular expression.
		return false, false
	case "$":
		return false, false
	}
	return false, true
}

// tokenizeAwk splits an awk program into tokens. It fails with the reason
// when the text is not one it can read the way every awk would.
func tokenizeAwk(src string) ([]awkTok, string) {
	var toks []awkTok
	i, n := 0, len(src)
	var ctrlParens []bool // for each open "(", whether it holds a condition
	emit := func(k awkKind, s string) {
		t := awkTok{kind: k, text: s}
		if k == awkPunct && s == "(" {
			prev := awkTok{}
			if len(toks) > 0 {
				prev = toks[len(toks)-1]
			}
			ctrlParens = append(ctrlParens, (prev.kind == awkName || prev.kind == awkFuncName) &&
				(prev.text == "if" || prev.text == "while" || prev.text == "for" || prev.text == "switch"))
		}
		if k == awkPunct && s == ")" && len(ctrlParens) > 0 {
			t.ctrl = ctrlParens[len(ctrlParens)-1]
			ctrlParens = ctrlParens[:len(ctrlParens)-1]
		}
		toks = append(toks, t)
	}
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '\r' && i+1 < n && src[i+1] == '\n':
			i++ // CRLF: the newline ends the line
		case c == '\\':
			// A line continuation; a backslash anywhere else is an error.
			switch {
			case strings.HasPrefix(src[i:], "\\\n"):
				i += 2
			case strings.HasPrefix(src[i:], "\\\r\n"):
				i += 3
			default:
				return nil, "a backslash outside a string"
			}
		case c == '\n' || c == '#':
			if c == '#' {
				for i < n && src[i] != '\n' {
					i++
				}
				if i >= n {
					break
				}
			}
			i++
			// A newline after these does not end a statement.
			if len(toks) > 0 {
				switch last := toks[len(toks)-1]; {
				case last.kind == awkPunct && (last.text == "," || last.text == "{" || last.text == "&&" || last.text == "||"),
					last.kind == awkName && (last.text == "do" || last.text == "else"),
					last.kind == awkNewline:
					continue
				}
			}
			emit(awkNewline, "\n")
		case c == '"':
			j := i + 1
			var b strings.Builder
			for {
				if j >= n {
					return nil, "a string is not closed"
				}
				d := src[j]
				if d == '\n' {
					return nil, "a string runs past the end of a line"
				}
				if d == '"' {
					break
				}
				if d == '\\' && j+1 < n {
					j++
					if src[j] == '\n' {
						j++
						continue
					}
					b.WriteByte('\\')
				}
				b.WriteByte(src[j])
				j++
			}
			emit(awkString, b.String())
			i = j + 1
		case c == '/':
			div, ok := endsOperand(toks)
			if !ok {
				return nil, "a / that awk implementations may read as a division or as a regular expression"
			}
			if div {
				if strings.HasPrefix(src[i:], "/=") {
					emit(awkPunct, "/=")
					i += 2
				} else {
					emit(awkPunct, "/")
					i++
				}
				continue
			}
			j := i + 1
			bracket := false
			for {
				if j >= n || src[j] == '\n' {
					return nil, "a regular expression is not closed"
				}
				d := src[j]
				if d == '\\' {
					j += 2
					continue
				}
				if bracket {
					if d == '/' {
						return nil, "a / inside a bracket expression, which awk implementations read differently"
					}
					if d == '[' && j+1 < n && (src[j+1] == ':' || src[j+1] == '.' || src[j+1] == '=') {
						// [:class:], [.coll.] and [=equiv=] inside brackets.
						end := strings.Index(src[j+2:], string(src[j+1])+"]")
						if end < 0 {
							return nil, "a bracket expression is not closed"
						}
						j += 2 + end + 2
						continue
					}
					if d == ']' {
						bracket = false
					}
					j++
					continue
				}
				if d == '[' {
					bracket = true
					j++
					// A ] first in the brackets (after an optional ^) is
					// literal.
					if j < n && src[j] == '^' {
						j++
					}
					if j < n && src[j] == ']' {
						j++
					}
					continue
				}
				if d == '/' {
					break
				}
				j++
			}
			emit(awkRegex, src[i+1:j])
			i = j + 1
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < n {
				d := src[j]
				if d >= '0' && d <= '9' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d == '.' || d == '_' {
					j++
					continue
				}
				if (d == '+' || d == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !strings.HasPrefix(strings.ToLower(src[i:j]), "0x") {
					j++
					continue
				}
				break
			}
			emit(awkNumber, src[i:j])
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < n && (src[j] == '_' || src[j] == ':' && strings.HasPrefix(src[j:], "::") || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				if src[j] == ':' {
					j += 2 // a gawk name qualified by its namespace
					continue
				}
				j++
			}
			if j < n && src[j] == '(' {
				emit(awkFuncName, src[i:j])
			} else {
				emit(awkName, src[i:j])
			}
			i = j
		default:
			op := firstPrefix(src[i:], awkOperators)
			if op == "" {
				return nil, "a character awk does not know: " + strings.ToValidUTF8(src[i:i+1], "?")
			}
			emit(awkPunct, op)
			i += len(op)
		}
	}
	emit(awkEOF, "")
	return toks, ""
}

// AwkProgram returns what an awk program does, read from its text.
func AwkProgram(src string) ProgramEffect {
	var p ProgramEffect
	toks, bad := tokenizeAwk(src)
	if bad != "" {
		p.unknown("cannot read the awk program: " + bad)
		return p
	}
	// The functions the program defines.
	defined := map[string]bool{}
	for i := 0; i+1 < len(toks); i++ {
		if (toks[i].text == "function" || toks[i].text == "func") && toks[i].kind == awkName &&
			(toks[i+1].kind == awkName || toks[i+1].kind == awkFuncName) {
			defined[toks[i+1].text] = true
		}
	}
	tok := func(i int) awkTok {
		if i >= 0 && i < len(toks) {
			return toks[i]
		}
		return awkTok{kind: awkEOF}
	}
	is := func(i int, s string) bool { t := tok(i); return t.kind == awkPunct && t.text == s }
	// match returns the position of the token closing the bracket at i.
	match := func(i int) int {
		open, close := toks[i].text, map[string]string{"(": ")", "[": "]"}[toks[i].text]
		depth := 0
		for j := i; j < len(toks); j++ {
			if is(j, open) {
				depth++
			} else if is(j, close) {
				if depth--; depth == 0 {
					return j
				}
			}
		}
		return len(toks) - 1
	}
	// literal returns the file name written as a lone string at i ("f" or
	// ("f")) and the position after it, or ok false.
	literal := func(i int) (string, int, bool) {
		switch {
		case tok(i).kind == awkString:
			return tok(i).text, i + 1, true
		case is(i, "(") && tok(i+1).kind == awkString && is(i+2, ")"):
			return tok(i + 1).text, i + 3, true
		}
		return "", i, false
	}
	endsExpr := func(i int) bool {
		t := tok(i)
		switch t.kind {
		case awkEOF, awkNewline:
			return true
		case awkPunct:
			switch t.text {
			case ")", ";", "}", ",", ">", "<", "==", "!=", ">=", "<=", "&&", "||", "?", ":", "]":
				return true
			}
		}
		return false
	}
	// file judges a file name written in the program.
	file := func(name string, write bool) {
		if strings.Contains(name, "\\") {
			p.unknown("a file name with escapes: " + name)
			return
		}
		if host, ok := inetHost(name); ok {
			p.Hosts = append(p.Hosts, host)
			return
		}
		if specialStream(name) || name == "-" && !write {
			return
		}
		if write {
			p.Writes = append(p.Writes, name)
		} else {
			p.Reads = append(p.Reads, name)
		}
	}
	// parens holds, for each open parenthesis, the function it calls ("" for
	// grouping).
	var parens []string
	inCall := func(names ...string) bool {
		for _, f := range parens {
			for _, n := range names {
				if f == n {
					return true
				}
			}
		}
		return false
	}
	printDepth := -1 // depth of parentheses at the print statement, or -1
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case awkNewline:
			printDepth = -1
			continue
		case awkPunct:
			switch t.text {
			case "(":
				owner := ""
				if prev := tok(i - 1); (prev.kind == awkFuncName || prev.kind == awkName) && i > 0 {
					owner = prev.text
				}
				parens = append(parens, owner)
			case ")":
				if len(parens) > 0 {
					parens = parens[:len(parens)-1]
				}
			case ";", "}":
				printDepth = -1
			case "|", "|&":
				p.exec("a pipe (" + t.text + ") runs a shell command")
			case "@":
				switch next := tok(i + 1); {
				case next.text == "load":
					p.exec("@load loads a compiled extension")
				case next.text == "include" || next.text == "nsinclude":
					p.unknown("@" + next.text + " reads awk code from another file")
				case next.text == "namespace":
					p.unknown("@namespace makes names mean other functions")
				case next.kind == awkRegex:
					// @/re/, a regular expression constant of gawk.
				default:
					p.exec("an indirect call (@name) can call any function, system() too")
				}
			case ">", ">>":
				if printDepth < 0 || printDepth != len(parens) {
					if t.text == ">>" {
						p.unknown(">> outside a print statement")
					}
					continue // a comparison
				}
				name, next, ok := literal(i + 1)
				if !ok || !endsExpr(next) {
					p.unknown("print writes to a file named at run time")
					continue
				}
				file(name, true)
			}
			continue
		case awkName, awkFuncName:
		default:
			continue
		}
		name := t.text
		switch {
		case name == "ENVIRON":
			p.secret("reads the environment (ENVIRON), which holds secrets")
		case name == "PROCINFO":
			// Reading an entry is harmless; an entry set to a value changes
			// how gawk reads and writes, and sorted_in names a function
			// that gawk calls: only its built-in orders ("@ind_str_asc")
			// are known.
			if !is(i+1, "[") {
				p.unknown("PROCINFO is passed whole, where it can be changed")
				break
			}
			j := match(i + 1)
			next := tok(j + 1)
			prev := tok(i - 1)
			set := next.kind == awkPunct && awkAssignOps[next.text] || prev.kind == awkPunct && (prev.text == "++" || prev.text == "--") ||
				prev.kind == awkName && prev.text == "getline" || inCall("sub", "gsub")
			if !set {
				break
			}
			literal := j == i+3 && tok(i+2).kind == awkString
			switch {
			case !literal:
				p.unknown("PROCINFO is set at an entry named at run time")
			case tok(i+2).text == "sorted_in" && !(next.text == "=" && tok(j+2).kind == awkString &&
				strings.HasPrefix(tok(j+2).text, "@") && endsExpr(j+3)):
				p.unknown("PROCINFO[\"sorted_in\"] names a function for gawk to call")
			}
		case name == "SYMTAB" || name == "FUNCTAB":
			p.unknown(name + " reaches every variable and function by its name")
		case strings.Contains(name, "::"):
			p.unknown("a name qualified by a gawk namespace: " + name)
		case name == "system":
			p.exec("system() runs a shell command")
		case awkOtherFuncs[name]:
			p.unknown(name + "() is not a function the analysis knows")
		case name == "print" || name == "printf":
			printDepth = len(parens)
		case name == "getline":
			if prev := tok(i - 1); prev.kind == awkPunct && (prev.text == "|" || prev.text == "|&") {
				break // cmd | getline: the pipe runs the command
			}
			j := i + 1
			lv := ""
			switch {
			case is(j, "$"):
				j++
				switch {
				case is(j, "("):
					j = match(j) + 1
				case tok(j).kind == awkName || tok(j).kind == awkNumber:
					j++
				}
			case tok(j).kind == awkName && !awkKeywords[tok(j).text]:
				lv = tok(j).text
				j++
				if is(j, "[") {
					j = match(j) + 1
				}
			}
			if lv == "ARGV" || lv == "ARGC" {
				p.unknown("getline into " + lv + " changes which files awk reads")
			}
			if is(j, "<") {
				f, next, ok := literal(j + 1)
				if !ok || !endsExpr(next) {
					p.unknown("getline reads a file named at run time")
					break
				}
				file(f, false)
			}
		case name == "ARGV" || name == "ARGC":
			prev := tok(i - 1)
			if prev.kind == awkPunct && (prev.text == "++" || prev.text == "--") ||
				prev.kind == awkName && (prev.text == "delete" || prev.text == "getline") || inCall("sub", "gsub") {
				p.unknown("the program changes " + name + ", which names the files awk reads")
				break
			}
			j := i + 1
			if name == "ARGV" {
				if !is(j, "[") {
					if prev.kind != awkName || prev.text != "in" {
						p.unknown("ARGV is passed whole, where it can be changed")
					}
					break
				}
				j = match(j) + 1
			}
			if next := tok(j); next.kind == awkPunct && awkAssignOps[next.text] || next.kind == awkName && next.text == "in" {
				p.unknown("the program changes " + name + ", which names the files awk reads")
			}
		case t.kind == awkFuncName && !awkKeywords[name] && !awkSafeFuncs[name] && !defined[name] && !is(i-1, "@"):
			p.unknown(name + "() is not a function the analysis knows")
		}
	}
	return p
}

// inetHost returns the remote host of a gawk network special file
// (/inet/tcp/LPORT/HOST/RPORT), ok true for any /inet name.
func inetHost(name string) (string, bool) {
	if !strings.HasPrefix(name, "/inet") {
		return "", false
	}
	parts := strings.Split(name, "/")
	if len(parts) >= 6 && parts[4] != "" {
		return strings.ToLower(parts[4]), true
	}
	return "/inet", true
}

// awkAssignment reports whether an awk operand is a variable assignment
// (name=value), which awk performs instead of reading a file.
func awkAssignment(op string) bool {
	name, _, ok := strings.Cut(op, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// awkCommand fills e for awk or gawk run with args: the files it reads and
// writes, and what its program does.
func awkCommand(prog string, args []string, dyn []bool, e *Effect) {
	e.Level, e.Reads, e.Writes, e.Unknown = Read, nil, nil, false
	var p ProgramEffect
	opts, ops, bad := scanOpts(prog, args, dyn)
	if bad != "" {
		p.unknown(bad)
	}
	var sources []string
	fromFile := false
	for _, o := range opts {
		switch o.name {
		case "-f", "--file", "-E", "--exec":
			fromFile = true
			p.Reads = append(p.Reads, o.val)
			p.unknown("the program is read from " + o.val + ", which the analysis does not read")
		case "-e", "--source":
			if o.dyn {
				p.unknown("the program is not known until the line runs")
			}
			sources = append(sources, o.val)
		case "-i", "--include":
			p.Reads = append(p.Reads, o.val)
			p.unknown("-i includes awk code from " + o.val)
		case "-l", "--load":
			p.exec("-l loads the compiled extension " + o.val)
		case "-W":
			p.unknown("option -W " + o.val + " is not known")
		case "-D", "--debug":
			p.unknown("the debugger runs the commands it reads")
		case "-d", "--dump-variables":
			p.Writes = append(p.Writes, cmp.Or(o.val, "awkvars.out"))
		case "-o", "--pretty-print", "-p", "--profile":
			p.Writes = append(p.Writes, cmp.Or(o.val, "awkprof.out"))
		}
	}
	if len(sources) == 0 && !fromFile {
		if len(ops) == 0 {
			p.unknown("no program is given")
		} else {
			if ops[0] < len(dyn) && dyn[ops[0]] {
				p.unknown("the program is not known until the line runs")
			}
			sources = append(sources, args[ops[0]])
			ops = ops[1:]
		}
	}
	if len(sources) > 0 {
		p.merge(AwkProgram(strings.Join(sources, "\n")))
	}
	for _, k := range ops {
		if k < len(dyn) && dyn[k] {
			e.Unknown = true
			continue
		}
		if a := args[k]; a != "-" && !awkAssignment(a) {
			e.Reads = append(e.Reads, a)
		}
	}
	p.apply(prog, e)
}
