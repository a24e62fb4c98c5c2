package shell

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/risk"
)

// AnalyzePowerShell splits a PowerShell command line into the commands it
// runs, like [Analyze] does for bash. Names are case-insensitive in
// PowerShell, so every command name is lower-cased and an alias is replaced
// by the cmdlet it stands for (rm, del, ri → remove-item; iex →
// invoke-expression; iwr, curl → invoke-webrequest). A parameter is
// lower-cased and an unambiguous prefix of a known parameter is completed
// (-rec → -recurse). Commands inside (…), $(…), @(…) and {…} script
// blocks are returned too, since the line may run them. Variables,
// subexpressions inside strings and splatting make words dynamic. What
// the tokenizer cannot follow is a [ParseError]; the caller asks.
func AnalyzePowerShell(src string, opts *Options) (*Result, error) {
	src = psNormalize(src)
	p := &psParser{src: src, res: &Result{}}
	if opts != nil {
		p.dir = opts.Dir
	}
	if err := p.script(src, 0, nil, ""); err != nil {
		return nil, err
	}
	return p.res, nil
}

// psQuotes maps the characters PowerShell reads as quotes and dashes to
// their ASCII forms: “ ” „ close and open "…", ‘ ’ ‚ ‛ close and open '…',
// and – — ― start a parameter like -. A lone carriage return ends a
// statement like a newline. A NUL byte, which no file name holds, is
// replaced so that no word can hold a [PipeMark].
var psQuotes = strings.NewReplacer(
	"\u201c", `"`, "\u201d", `"`, "\u201e", `"`,
	"\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201b", "'",
	"\u2013", "-", "\u2014", "-", "\u2015", "-",
	"\r\n", "\n", "\r", "\n",
	"\x00", "\uFFFD",
)

func psNormalize(src string) string { return psQuotes.Replace(src) }

type psParser struct {
	src   string
	dir   string
	res   *Result
	depth int
}

// psToken is one token of a PowerShell line.
type psToken struct {
	text    string // value after quote removal, or the operator
	op      bool   // ; | && || & newline ( ) { } redirection
	dynamic bool   // holds a variable or subexpression
	quoted  bool   // began with a quote: a value, not a command name
	off     int    // byte offset in the source of this script
}

const maxPSDepth = 64

// script tokenizes and splits src (nested at offset base of the top-level
// source) into commands.
func (p *psParser) script(src string, base int, wrappers []string, via string) error {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxPSDepth {
		return p.errAt(base, "nesting deeper than %d levels", maxPSDepth)
	}
	toks, err := p.tokens(src, base, wrappers)
	if err != nil {
		return err
	}
	return p.statements(toks, wrappers, via, nil)
}

// PipeMark starts, in the arguments of a command that receives the output
// of an earlier command of its pipeline (gci | Get-Content), the words that
// describe that earlier command. The mark is followed by one letter per
// word of the description, "1" for a word whose value is not known
// statically and "0" for one that is; the description is the command's
// name ("" for an expression such as 'a','b') and its arguments. The
// nearest earlier command comes first, then the one before it, each behind
// a mark of its own. The words of a description are marked dynamic in
// ArgDynamic: what a pipeline feeds a command is not a word a rule can
// name. No word of a line can hold the mark, since the NUL byte it starts
// with is replaced when a line is read.
const PipeMark = risk.PipeMark

// ItemMark follows, in the arguments of a command inside the script block
// of a ForEach-Object or Where-Object stage, the words of the command when
// one of them is the object the stage is given ($_, $PSItem, $_.FullName,
// $_.PSPath); after it come the stages before that stage, each behind a
// PipeMark as for a command of the pipeline itself. It is a dynamic word.
const ItemMark = risk.ItemMark

// IsItemRef reports whether a dynamic word stands for the object a
// ForEach-Object or Where-Object block is given, or for its path.
func IsItemRef(w string) bool { return risk.IsItemRef(w) }

// BlockWord stands, among the arguments of a command, for a script block
// {…} given to it; the block's own commands are commands of the line. It
// is a dynamic word: the block runs, or gives a value, only when the
// command runs.
const BlockWord = risk.BlockWord

// statements splits tokens into statements, a statement into the stages
// of its pipeline, and records the command of each stage. The script
// blocks {…} of a stage are statements of their own, recorded after it.
// item are the stages before the ForEach-Object or Where-Object stage
// whose block the tokens are, nil elsewhere.
func (p *psParser) statements(toks []psToken, wrappers []string, via string, item []Command) error {
	var (
		stage  []psToken   // the words and operators of the current stage
		blocks [][]psToken // its script blocks
		prev   []Command   // the earlier stages of the pipeline, in order
		held   []Command   // the stages of a pipeline a newline ended
	)
	end := func() error {
		var inner []Command
		if len(stage) > 0 {
			c, ok := p.command(stage, wrappers, via, prev, item)
			if ok && len(prev) > 0 && (c.Name == "foreach-object" || c.Name == "where-object") {
				inner = slices.Clone(prev)
			}
			if ok {
				prev = append(prev, c)
			}
		}
		for _, b := range blocks {
			if err := p.block(b, wrappers, via, inner); err != nil {
				return err
			}
		}
		stage, blocks = nil, nil
		return nil
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.op {
			held = nil
			stage = append(stage, t)
			continue
		}
		switch t.text {
		case "{":
			// The block runs when the stage's command calls it: its
			// commands are judged as commands of the line.
			depth, j := 1, i+1
			for ; j < len(toks); j++ {
				if toks[j].op && toks[j].text == "{" {
					depth++
				} else if toks[j].op && toks[j].text == "}" {
					if depth--; depth == 0 {
						break
					}
				}
			}
			blocks = append(blocks, toks[i+1:min(j, len(toks))])
			stage = append(stage, psToken{text: BlockWord, dynamic: true, off: t.off})
			i = j
			held = nil
		case "|":
			if len(stage) == 0 && len(blocks) == 0 {
				// A | that starts a line continues the pipeline the
				// line before ended.
				prev, held = held, nil
			}
			if err := end(); err != nil {
				return err
			}
		case "\n":
			if len(stage) == 0 && len(blocks) == 0 {
				// After a |, a newline continues the pipeline; a blank
				// line keeps a held one.
				continue
			}
			if err := end(); err != nil {
				return err
			}
			held, prev = prev, nil
		case "&":
			if len(stage) == 0 {
				// The call operator: & 'program' args.
				stage = append(stage, t)
				continue
			}
			// The background operator ends the pipeline; what follows
			// is a statement of its own.
			fallthrough
		case ";", "&&", "||", "(", ")", "}":
			if err := end(); err != nil {
				return err
			}
			prev, held = nil, nil
		default:
			held = nil
			stage = append(stage, t)
		}
	}
	return end()
}

// block records the statements of a script block.
func (p *psParser) block(toks []psToken, wrappers []string, via string, item []Command) error {
	if len(toks) == 0 {
		return nil
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxPSDepth {
		return p.errAt(toks[0].off, "nesting deeper than %d levels", maxPSDepth)
	}
	return p.statements(toks, wrappers, via, item)
}

func (p *psParser) errAt(off int, format string, args ...any) error {
	line, col := 1, 1
	for i := 0; i < off && i < len(p.src); i++ {
		if p.src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &ParseError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// tokens splits src into words and operators. Subexpressions and script
// blocks found inside strings are analyzed as scripts of their own.
func (p *psParser) tokens(src string, base int, wrappers []string) ([]psToken, error) {
	var toks []psToken
	i, n := 0, len(src)
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '`' && i+1 < n && src[i+1] == '\n':
			i += 2 // line continuation
		case c == '#':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '<' && i+1 < n && src[i+1] == '#':
			end := strings.Index(src[i+2:], "#>")
			if end < 0 {
				return nil, p.errAt(base+i, "block comment <# is not closed")
			}
			i += end + 4
		case c == '(' || (c == '$' || c == '@') && i+1 < n && src[i+1] == '(':
			// A group's, $(…)'s or @(…)'s output is a value: analyze its
			// commands first, then stand for it with a dynamic word
			// (iex (iwr …)).
			open := i
			if c != '(' {
				open++
			}
			inner, end, err := p.balanced(src, open, '(', ')', base)
			if err != nil {
				return nil, err
			}
			if err := p.script(inner, base+open+1, wrappers, "subst"); err != nil {
				return nil, err
			}
			toks = append(toks, psToken{text: src[i:end], dynamic: true, off: base + i})
			i = end
		case c == '\n' || c == ';' || c == ')' || c == '{' || c == '}':
			toks = append(toks, psToken{text: string(c), op: true, off: base + i})
			i++
		case c == '|' || c == '&':
			if i+1 < n && src[i+1] == c {
				toks = append(toks, psToken{text: src[i : i+2], op: true, off: base + i})
				i += 2
			} else if c == '|' {
				toks = append(toks, psToken{text: "|", op: true, off: base + i})
				i++
			} else {
				// The call operator: & 'prog' args, or a trailing
				// background &. Either way the next word is a program.
				toks = append(toks, psToken{text: "&", op: true, off: base + i})
				i++
			}
		case (c == '>' || (c >= '0' && c <= '9' || c == '*') && i+1 < n && src[i+1] == '>'):
			j := i
			for j < n && (src[j] == '>' || src[j] == '*' || src[j] >= '0' && src[j] <= '9' || src[j] == '&') {
				j++
			}
			toks = append(toks, psToken{text: src[i:j], op: true, off: base + i})
			i = j
		default:
			w, end, err := p.word(src, i, base, wrappers)
			if err != nil {
				return nil, err
			}
			w.off = base + i
			toks = append(toks, w)
			i = end
		}
	}
	return toks, nil
}

// balanced returns the text between the bracket at src[open] and its
// match, and the offset just past the match, skipping quoted strings.
func (p *psParser) balanced(src string, open int, lb, rb byte, base int) (string, int, error) {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				return "", 0, p.errAt(base+i, "string is not closed")
			}
			i += j + 1
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '`' {
					j++
				}
				j++
			}
			i = j
		case lb:
			depth++
		case rb:
			if depth--; depth == 0 {
				return src[open+1 : i], i + 1, nil
			}
		}
	}
	return "", 0, p.errAt(base+open, "%q is not closed", string(lb))
}

// word reads one word starting at i: bare text, quoted strings and
// variables, until whitespace or an operator.
func (p *psParser) word(src string, i, base int, wrappers []string) (psToken, int, error) {
	var b strings.Builder
	t := psToken{}
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '|' || c == ')' || c == '}' ||
			c == '(' && b.Len() > 0 || c == '{' && b.Len() > 0 || c == '&' || c == '>' && b.Len() > 0:
			t.text = b.String()
			return t, i, nil
		case c == '\'':
			if b.Len() == 0 {
				t.quoted = true
			}
			j := i + 1
			for {
				k := strings.IndexByte(src[j:], '\'')
				if k < 0 {
					return t, 0, p.errAt(base+i, "string is not closed")
				}
				b.WriteString(src[j : j+k])
				j += k + 1
				if j < n && src[j] == '\'' { // '' is a quote
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			i = j
		case c == '"':
			if b.Len() == 0 {
				t.quoted = true
			}
			j := i + 1
			for j < n && src[j] != '"' {
				switch {
				case src[j] == '`' && j+1 < n:
					b.WriteByte(src[j+1])
					j += 2
				case src[j] == '$' && j+1 < n && src[j+1] == '(':
					inner, end, err := p.balanced(src, j+1, '(', ')', base)
					if err != nil {
						return t, 0, err
					}
					if err := p.script(inner, base+j+2, wrappers, "subst"); err != nil {
						return t, 0, err
					}
					b.WriteString(src[j:end])
					t.dynamic = true
					j = end
				case src[j] == '$' && j+1 < n && (isPSVarStart(src[j+1]) || src[j+1] == '{'):
					t.dynamic = true
					b.WriteByte('$')
					j++
				default:
					b.WriteByte(src[j])
					j++
				}
			}
			if j >= n {
				return t, 0, p.errAt(base+i, "string is not closed")
			}
			i = j + 1
		case c == '@' && i+1 < n && (src[i+1] == '"' || src[i+1] == '\''):
			// Here-string: @"…"@ or @'…'@ on lines of their own.
			q := src[i+1]
			end := strings.Index(src[i+2:], "\n"+string(q)+"@")
			if end < 0 {
				return t, 0, p.errAt(base+i, "here-string is not closed")
			}
			body := src[i+2 : i+2+end]
			if q == '"' && (strings.Contains(body, "$")) {
				t.dynamic = true
			}
			b.WriteString(strings.TrimPrefix(body, "\n"))
			i += 2 + end + 3
		case c == '$' || c == '@' && i+1 < n && isPSVarStart(src[i+1]):
			// A variable, or @splatting: its value is not known.
			t.dynamic = true
			b.WriteByte(c)
			i++
		case c == '`' && i+1 < n:
			b.WriteByte(src[i+1])
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	t.text = b.String()
	return t, i, nil
}

func isPSVarStart(c byte) bool {
	return c == '_' || c == '{' || c == '?' || c == '^' || c == '$' || c == ':' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// psAssign are PowerShell's assignment operators.
var psAssign = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "??=": true}

// psCalls reports whether an expression invokes a method — $x.Delete(),
// $s.Invoke() — which may do anything.
func psCalls(words []psToken) bool {
	for _, w := range words {
		if strings.Contains(w.text, "(") || strings.Contains(strings.ToLower(w.text), "invoke") {
			return true
		}
	}
	return false
}

// psAliases maps the built-in aliases to the cmdlets they stand for.
var psAliases = map[string]string{
	"rm": "remove-item", "del": "remove-item", "erase": "remove-item", "rd": "remove-item", "rmdir": "remove-item", "ri": "remove-item",
	"cat": "get-content", "gc": "get-content", "type": "get-content",
	"ls": "get-childitem", "dir": "get-childitem", "gci": "get-childitem",
	"cp": "copy-item", "copy": "copy-item", "cpi": "copy-item",
	"mv": "move-item", "move": "move-item", "mi": "move-item",
	"echo": "write-output", "write": "write-output",
	"iex": "invoke-expression", "iwr": "invoke-webrequest", "curl": "invoke-webrequest", "wget": "invoke-webrequest",
	"irm": "invoke-restmethod", "start": "start-process", "saps": "start-process",
	"sc": "set-content", "ac": "add-content", "ni": "new-item", "md": "mkdir",
	"cd": "set-location", "sl": "set-location", "chdir": "set-location", "pwd": "get-location", "gl": "get-location",
	"icm": "invoke-command", "sal": "set-alias", "nal": "new-alias", "ii": "invoke-item", "ren": "rename-item",
	"rni": "rename-item", "sp": "set-itemproperty", "rp": "remove-itemproperty", "ci": "clear-item", "clc": "clear-content",
	"ipmo": "import-module", "gci.": "get-childitem", "%": "foreach-object", "foreach": "foreach-object",
	"?": "where-object", "where": "where-object", "select": "select-object", "sort": "sort-object", "tee": "tee-object",
	"gv": "get-variable", "ls.": "get-childitem", "gcm": "get-command", "gal": "get-alias", "cls": "clear-host",
	"sls": "select-string", "gi": "get-item", "rvpa": "resolve-path", "fhx": "format-hex", "ipcsv": "import-csv",
	"gu": "get-unique", "measure": "measure-object", "ft": "format-table", "fl": "format-list", "gps": "get-process",
	"gsv": "get-service",
}

// psNumber matches a number or a range of numbers (3, -1.5, 0x1F, 1..10,
// 2kb): a statement that starts with one is an expression.
var psNumber = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^[+-]?(0x[0-9a-f]+|[0-9]+(\.[0-9]+)?)(kb|mb|gb|tb|pb)?(\.\.[+-]?[0-9]+)?$`)
})

// psParams lists the parameters of the cmdlets whose effects the gate
// judges, so that abbreviations (-rec) can be completed.
var psParams = map[string][]string{
	"remove-item":       {"path", "literalpath", "recurse", "force", "include", "exclude", "filter", "confirm", "whatif", "credential", "stream"},
	"get-content":       {"path", "literalpath", "raw", "totalcount", "tail", "encoding", "delimiter", "readcount", "wait", "stream"},
	"set-content":       {"path", "literalpath", "value", "encoding", "force", "nonewline", "passthru", "stream"},
	"add-content":       {"path", "literalpath", "value", "encoding", "force", "nonewline", "passthru", "stream"},
	"out-file":          {"filepath", "literalpath", "append", "encoding", "force", "noclobber", "width", "inputobject"},
	"copy-item":         {"path", "literalpath", "destination", "recurse", "force", "container", "include", "exclude", "filter", "passthru"},
	"move-item":         {"path", "literalpath", "destination", "force", "include", "exclude", "filter", "passthru"},
	"new-item":          {"path", "name", "itemtype", "value", "force"},
	"get-childitem":     {"path", "literalpath", "recurse", "force", "filter", "include", "exclude", "name", "depth", "file", "directory", "hidden"},
	"invoke-webrequest": {"uri", "method", "body", "infile", "outfile", "headers", "usebasicparsing", "proxy", "credential", "contenttype", "form"},
	"invoke-restmethod": {"uri", "method", "body", "infile", "outfile", "headers", "usebasicparsing", "proxy", "credential", "contenttype", "form"},
	"start-process":     {"filepath", "argumentlist", "verb", "wait", "workingdirectory", "nonewwindow", "passthru", "windowstyle"},
	"invoke-expression": {"command"},
	"set-location":      {"path", "literalpath", "passthru"},
	"tee-object":        {"filepath", "literalpath", "append", "variable", "inputobject"},
	"rename-item":       {"path", "literalpath", "newname", "force"},
	"clear-content":     {"path", "literalpath", "force", "filter", "include", "exclude"},
}

// command records one PowerShell command from its tokens; prev are the
// earlier stages of its pipeline, item those that $_ comes from. It returns
// the command and whether one was recorded.
func (p *psParser) command(toks []psToken, wrappers []string, via string, prev, item []Command) (Command, bool) {
	var c Command
	c.Wrappers, c.Via, c.Dir = wrappers, via, p.dir
	i := 0
	if toks[0].op && (toks[0].text == "&" || toks[0].text == ".") {
		i++ // & 'program' or . script: the next word is what runs
	}
	if i < len(toks) && toks[i].text == "." && !toks[i].op {
		i++
	}
	// Redirections and their targets.
	var words []psToken
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.op && strings.Contains(t.text, ">") {
			r := Redirect{Op: strings.TrimLeft(t.text, "0123456789*")}
			if strings.HasSuffix(t.text, ">&1") || strings.HasSuffix(t.text, ">&2") {
				continue
			}
			if i+1 < len(toks) && !toks[i+1].op {
				i++
				r.Target, r.Dynamic = toks[i].text, toks[i].dynamic
			} else {
				r.Dynamic = true
			}
			c.Redirects = append(c.Redirects, r)
			continue
		}
		if t.op {
			continue
		}
		words = append(words, t)
	}
	callOp := toks[0].op && (toks[0].text == "&" || toks[0].text == ".")
	if !callOp && len(words) > 2 && psAssign[words[1].text] && strings.HasPrefix(words[0].text, "$") {
		// $x = command args: the right-hand side runs.
		words = words[2:]
	}
	block := len(words) > 0 && words[0].dynamic && words[0].text == BlockWord
	if len(words) > 0 && (block || !callOp && (words[0].quoted || !words[0].dynamic && psNumber().MatchString(words[0].text) || words[0].dynamic && strings.HasPrefix(words[0].text, "$") && !psCalls(words))) {
		// A statement that starts with a value ("x", $_.Name -gt 1) is
		// an expression: no program runs. Its words are kept as Args (a
		// value such as $env:TOKEN is printed) and its redirections count.
		// A script block, called with & or not, is judged by its
		// commands.
		c.Name = ""
		for _, w := range words {
			c.Args = append(c.Args, w.text)
			c.ArgDynamic = append(c.ArgDynamic, w.dynamic)
		}
		p.res.Commands = append(p.res.Commands, c)
		return c, true
	}
	if len(words) == 0 {
		if len(c.Redirects) > 0 {
			p.res.Commands = append(p.res.Commands, c)
		}
		return c, false
	}
	name := strings.ToLower(words[0].text)
	if full, ok := psAliases[name]; ok {
		name = full
	}
	name = strings.TrimSuffix(name, ".exe")
	c.Name, c.NameDynamic = name, words[0].dynamic
	if c.NameDynamic {
		c.Name = words[0].text
		p.res.Problems = append(p.res.Problems, Problem{Msg: fmt.Sprintf("program name is not static: %q", words[0].text)})
	}
	params := psParams[name]
	for _, w := range words[1:] {
		a := w.text
		cmdlet := strings.Contains(name, "-") || params != nil || name == "pwsh" || name == "powershell"
		if cmdlet && strings.HasPrefix(a, "-") && len(a) > 1 && !w.dynamic {
			pname, val, hasVal := strings.Cut(a[1:], ":")
			pname = completeParam(strings.ToLower(pname), params)
			a = "-" + pname
			if hasVal {
				a += ":" + val
			}
		}
		c.Args = append(c.Args, a)
		c.ArgDynamic = append(c.ArgDynamic, w.dynamic)
	}
	if len(prev) > 0 && !c.NameDynamic && strings.Contains(name, "-") {
		// A cmdlet may take what the pipeline gives it as the paths it
		// works on: the earlier stages come with it.
		c.Args, c.ArgDynamic = pipeInput(c.Args, c.ArgDynamic, prev)
	}
	if len(item) > 0 && !c.NameDynamic && strings.Contains(name, "-") &&
		slices.ContainsFunc(words[1:], func(w psToken) bool { return w.dynamic && IsItemRef(w.text) }) {
		// gci | % { Get-Content $_ }: $_ is what the stages before the
		// block's stage give.
		args, dyn := pipeInput(nil, nil, item)
		c.Args = append(append(c.Args, ItemMark), args...)
		c.ArgDynamic = append(append(c.ArgDynamic, true), dyn...)
	}
	c.Source = strings.TrimSpace(p.srcOf(words))
	p.res.Commands = append(p.res.Commands, c)
	switch name {
	case "set-location", "push-location", "chdir":
		// Later commands run in the new directory.
		for i, a := range c.Args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if c.ArgDynamic[i] || p.dir == "" && !path.IsAbs(a) {
				p.dir = ""
			} else if path.IsAbs(strings.ReplaceAll(a, `\`, "/")) {
				p.dir = path.Clean(strings.ReplaceAll(a, `\`, "/"))
			} else if !strings.HasPrefix(a, "~") {
				p.dir = path.Join(p.dir, strings.ReplaceAll(a, `\`, "/"))
			} else {
				p.dir = ""
			}
			break
		}
	case "invoke-expression":
		// iex 'literal': the string is a script of its own.
		for i, a := range c.Args {
			if strings.HasPrefix(a, "-") && !c.ArgDynamic[i] {
				continue
			}
			if !c.ArgDynamic[i] {
				if err := p.script(a, 0, append(append([]string{}, wrappers...), "invoke-expression"), "eval"); err != nil {
					p.res.Problems = append(p.res.Problems, Problem{Msg: "Invoke-Expression text does not parse: " + err.Error()})
				}
			}
			break
		}
	}
	// Nested PowerShell: powershell -Command "…" / pwsh -c "…".
	if name == "powershell" || name == "pwsh" {
		p.nested(c, wrappers)
	}
	return c, true
}

// maxPipeStages bounds how many earlier stages a command carries: a stage
// further back is left out, and what its pipeline gives is then not known.
const maxPipeStages = 8

// pipeInput appends to args the description of the earlier stages prev
// of a pipeline, nearest first, each behind a [PipeMark], at most
// maxPipeStages of them. A native
// program's arguments are left out: it gives text, whatever they are. The
// description of a stage does not repeat what the pipeline gave it.
func pipeInput(args []string, dyn []bool, prev []Command) ([]string, []bool) {
	args, dyn = append([]string{}, args...), append([]bool{}, dyn...)
	for i := len(prev) - 1; i >= max(0, len(prev)-maxPipeStages); i-- {
		s := prev[i]
		own, ownDyn := s.Args, s.ArgDynamic
		if j := slices.IndexFunc(own, func(a string) bool { return strings.HasPrefix(a, PipeMark) || a == ItemMark }); j >= 0 {
			own, ownDyn = own[:j], ownDyn[:j]
		}
		if s.Name != "" && !strings.Contains(s.Name, "-") {
			own, ownDyn = nil, nil
		}
		flags := make([]byte, 0, len(own)+1)
		flags = append(flags, '0'+psBit(s.NameDynamic))
		words := append([]string{s.Name}, own...)
		for k := range own {
			flags = append(flags, '0'+psBit(ownDyn[k]))
		}
		args = append(args, PipeMark+string(flags))
		args = append(args, words...)
		for range len(words) + 1 {
			dyn = append(dyn, true)
		}
	}
	return args, dyn
}

func psBit(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func (p *psParser) srcOf(words []psToken) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

// psParamAliases are the parameter aliases PowerShell cmdlets share.
var psParamAliases = map[string]string{"lp": "literalpath", "pspath": "literalpath", "fullname": "literalpath"}

// completeParam completes an unambiguous prefix of a known parameter.
func completeParam(name string, params []string) string {
	if a, ok := psParamAliases[name]; ok && params != nil {
		return a
	}
	found := ""
	for _, p := range params {
		if p == name {
			return p
		}
		if strings.HasPrefix(p, name) {
			if found != "" {
				return name
			}
			found = p
		}
	}
	if found == "" {
		return name
	}
	return found
}

// nested analyzes the script given to powershell/pwsh with -Command.
func (p *psParser) nested(c Command, wrappers []string) {
	for i, a := range c.Args {
		la := strings.ToLower(a)
		if len(la) >= 2 && strings.HasPrefix("-command", la) || la == "-commandwithargs" || la == "-cwa" {
			rest := strings.Join(c.Args[i+1:], " ")
			if slicesAny(c.ArgDynamic[i+1:]) {
				p.res.Problems = append(p.res.Problems, Problem{Msg: "powershell -Command with a script that is not static"})
				return
			}
			if err := p.script(rest, 0, append(append([]string{}, wrappers...), "powershell -c"), "sh -c"); err != nil {
				p.res.Problems = append(p.res.Problems, Problem{Msg: "powershell -Command script does not parse: " + err.Error()})
			}
			return
		}
		if la == "-ec" || la == "-e" || len(la) >= 3 && strings.HasPrefix("-encodedcommand", la) || strings.HasPrefix(la, "-encodedarguments") {
			p.res.Problems = append(p.res.Problems, Problem{Msg: "powershell -EncodedCommand hides its script"})
			return
		}
	}
}

func slicesAny(b []bool) bool {
	for _, v := range b {
		if v {
			return true
		}
	}
	return false
}
