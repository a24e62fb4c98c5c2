package shell

import (
	"path"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// evalMode says which expansions apply to a word.
type evalMode int

const (
	// modeArg is a command argument: brace expansion, tilde expansion at
	// the start (and after = and : in words that look like assignments),
	// and field splitting of unquoted expansions.
	modeArg evalMode = iota
	// modeAssign is the value of an assignment: tilde expansion at the
	// start and after each :, no splitting.
	modeAssign
	// modeSingle is a redirection target, a [[ ]] operand or a case word:
	// tilde expansion at the start, no splitting.
	modeSingle
)

const (
	// maxBraceWord is how many words one brace expansion may produce.
	maxBraceWord = 1024
	// maxBraceTotal is how many words brace expansion may produce in all.
	maxBraceTotal = 1 << 16
	// maxBraceBytes is about how many bytes brace expansion may produce
	// in all.
	maxBraceBytes = 1 << 20
	// maxBraceGroups is how many brace expansions one word may hold.
	maxBraceGroups = 64
)

// warg is one word after expansion.
type warg struct {
	// val is the value, or the source text when dyn is set.
	val string
	// dyn reports an expansion that cannot be resolved statically.
	dyn bool
	// split reports an unquoted dynamic expansion: the word may become
	// zero or several words.
	split bool
	// glob reports unquoted pattern characters: the word may match files.
	glob bool
	// prefix is the static text before the first dynamic part.
	prefix string
	pos    syntax.Pos
}

// wstate accumulates the expansion of one word.
type wstate struct {
	fields    []string
	cur       []byte
	curSet    bool
	splitting bool
	dyn       bool
	split     bool
	glob      bool
	openBr    bool
	prefix    string
}

func (st *wstate) addByte(b byte) {
	st.cur = append(st.cur, b)
	st.curSet = true
}

func (st *wstate) addQuoted(s string) {
	st.cur = append(st.cur, s...)
	st.curSet = true
}

// addExpansion adds the value of an unquoted expansion, which undergoes
// field splitting with the default IFS and pattern matching.
func (st *wstate) addExpansion(s string) {
	if strings.ContainsAny(s, "*?[") {
		st.glob = true
	}
	if !st.splitting {
		st.addQuoted(s)
		return
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; b {
		case ' ', '\t', '\n':
			st.flush()
		default:
			st.addByte(b)
		}
	}
}

func (st *wstate) flush() {
	if st.curSet {
		st.fields = append(st.fields, string(st.cur))
		st.cur = st.cur[:0]
		st.curSet = false
	}
}

func (st *wstate) markDyn() {
	if !st.dyn {
		st.prefix = string(st.cur)
		st.dyn = true
	}
}

// single evaluates w into exactly one value, without brace expansion or
// field splitting.
func (a *analyzer) single(c *ctx, dir string, w *syntax.Word, mode evalMode) warg {
	if w == nil || len(w.Parts) == 0 {
		return warg{}
	}
	if s, ok := plainLit(w); ok {
		return warg{val: s, pos: w.Pos()}
	}
	st := a.expand(c, dir, w.Parts, mode, false)
	if st.dyn {
		return warg{val: c.text(w.Pos(), w.End()), dyn: true, split: st.split, glob: st.glob, prefix: st.prefix, pos: w.Pos()}
	}
	return warg{val: string(st.cur), glob: st.glob, pos: w.Pos()}
}

// plainLit returns the value of a word that is one literal needing no
// expansion at all.
func plainLit(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(lit.Value, "\\{~*?[") {
		return "", false
	}
	return lit.Value, true
}

// words expands w into the words bash would produce, appending them to out.
func (a *analyzer) words(c *ctx, dir string, w *syntax.Word, mode evalMode, out []warg) []warg {
	if w == nil || len(w.Parts) == 0 {
		return out
	}
	if s, ok := plainLit(w); ok {
		return append(out, warg{val: s, pos: w.Pos()})
	}
	if mode == modeArg && hasBrace(w) {
		w2 := &syntax.Word{Parts: w.Parts}
		if syntax.SplitBraces(w2) {
			var list []*syntax.Word
			// Expanding costs the square of the number of brace groups
			// for every word produced, so many groups are too large
			// whatever words they would produce.
			tooBig := braceGroups(w2.Parts, 0) > maxBraceGroups
			size := max(1, int(w.End().Offset()-w.Pos().Offset()))
			if !tooBig {
				for bw, err := range expand.BracesSeq(nil, w2) {
					if err != nil || len(list) >= maxBraceWord || len(list) >= a.braceBudget || size > a.braceBytes {
						tooBig = true
						break
					}
					a.braceBytes -= size
					if !a.charge(1) {
						return append(out, warg{val: c.text(w.Pos(), w.End()), dyn: true, split: true, pos: w.Pos()})
					}
					list = append(list, bw)
				}
			}
			if tooBig {
				line, col := a.pos(c, w.Pos())
				a.problem(line, col, "brace expansion is too large to check")
				return append(out, warg{val: c.text(w.Pos(), w.End()), dyn: true, split: true, pos: w.Pos()})
			}
			a.braceBudget -= len(list)
			for _, bw := range list {
				out = a.fields(c, dir, bw, w.Pos(), true, out)
			}
			return out
		}
	}
	return a.fields(c, dir, w, w.Pos(), false, out)
}

// braceGroups counts the brace expansions in parts, nested ones included,
// adding to n; it stops counting past maxBraceGroups.
func braceGroups(parts []syntax.WordPart, n int) int {
	for _, p := range parts {
		if n > maxBraceGroups {
			return n
		}
		if b, ok := p.(*syntax.BraceExp); ok {
			n++
			for _, e := range b.Elems {
				n = braceGroups(e.Parts, n)
			}
		}
	}
	return n
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); ok && strings.IndexByte(lit.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// fields expands a word without braces into fields.
func (a *analyzer) fields(c *ctx, dir string, w *syntax.Word, pos syntax.Pos, braced bool, out []warg) []warg {
	st := a.expand(c, dir, w.Parts, modeArg, true)
	if st.dyn {
		var src string
		if braced {
			src = renderParts(c, w.Parts)
		} else {
			src = c.text(w.Pos(), w.End())
		}
		return append(out, warg{val: src, dyn: true, split: st.split, glob: st.glob, prefix: st.prefix, pos: pos})
	}
	st.flush()
	for _, f := range st.fields {
		out = append(out, warg{val: f, glob: st.glob, pos: pos})
	}
	return out
}

// renderParts returns the source text of word parts, some of which were
// made by brace expansion and so have no position of their own.
func renderParts(c *ctx, parts []syntax.WordPart) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.BraceExp:
			b.WriteByte('{')
			sep := ","
			if p.Sequence {
				sep = ".."
			}
			for i, e := range p.Elems {
				if i > 0 {
					b.WriteString(sep)
				}
				b.WriteString(renderParts(c, e.Parts))
			}
			b.WriteByte('}')
		default:
			b.WriteString(c.text(p.Pos(), p.End()))
		}
	}
	return b.String()
}

// expand expands word parts. With splitting, unquoted expansions of known
// values are split into fields.
func (a *analyzer) expand(c *ctx, dir string, parts []syntax.WordPart, mode evalMode, splitting bool) *wstate {
	st := &wstate{cur: a.buf[:0], splitting: splitting}
	defer func() { a.buf = st.cur[:0] }()
	for i := 0; i < len(parts); i++ {
		switch p := parts[i].(type) {
		case *syntax.Lit:
			// Adjacent literals, which the parser splits around brackets,
			// are one piece of unquoted text.
			s := p.Value
			j := i + 1
			for j < len(parts) {
				l, ok := parts[j].(*syntax.Lit)
				if !ok {
					break
				}
				s += l.Value
				j++
			}
			a.lit(c, dir, st, s, i == 0, j == len(parts), mode)
			i = j - 1
		case *syntax.SglQuoted:
			if p.Dollar {
				st.addQuoted(ansiC(p.Value))
			} else {
				st.addQuoted(p.Value)
			}
		case *syntax.DblQuoted:
			st.curSet = true
			for _, dp := range p.Parts {
				switch dp := dp.(type) {
				case *syntax.Lit:
					dquoteUnescape(st, dp.Value)
				case *syntax.ParamExp:
					if v, ok := a.param(c, dir, dp); ok {
						st.addQuoted(v)
					} else {
						st.markDyn()
						if multiWord(dp) {
							st.split = true
						}
					}
				default:
					st.markDyn()
				}
			}
		case *syntax.ParamExp:
			v, ok := a.param(c, dir, p)
			if ok && (c.sc.ifsOK || !splitting) {
				st.addExpansion(v)
			} else {
				st.markDyn()
				st.split = true
			}
		case *syntax.CmdSubst, *syntax.ArithmExp:
			st.markDyn()
			st.split = true
		case *syntax.ProcSubst:
			st.markDyn()
		case *syntax.ExtGlob:
			st.glob = true
			st.cur = append(st.cur, p.Op.String()...)
			st.cur = append(st.cur, p.Pattern.Value...)
			st.addByte(')')
		default:
			st.markDyn()
			st.split = true
		}
	}
	return st
}

// lit expands an unquoted literal: backslash escapes, tilde prefixes and
// pattern characters.
func (a *analyzer) lit(c *ctx, dir string, st *wstate, s string, first, last bool, mode evalMode) {
	colon := mode == modeAssign
	eq := -1
	if first && mode == modeArg {
		if eq = assignPrefix(s); eq >= 0 {
			colon = true
		}
	}
	prevColon := false
	for j := 0; j < len(s); j++ {
		b := s[j]
		if b == '~' && ((j == 0 && first) || (eq >= 0 && j == eq+1) || (colon && prevColon && j > eq)) {
			if k, ok := tildeEnd(s, j, colon, last); ok {
				a.tilde(c, dir, st, s[j+1:k])
				j = k - 1
				prevColon = false
				continue
			}
		}
		prevColon = false
		switch b {
		case '\\':
			if j+1 < len(s) {
				j++
				if s[j] != '\n' {
					st.addByte(s[j])
				}
				continue
			}
			st.addByte('\\')
		case '*', '?':
			st.glob = true
			st.addByte(b)
		case '[':
			st.openBr = true
			st.addByte(b)
		case ']':
			if st.openBr {
				st.glob = true
			}
			st.addByte(b)
		case ':':
			prevColon = true
			st.addByte(b)
		default:
			st.addByte(b)
		}
	}
}

// assignPrefix returns the index of the = in a word that starts like an
// assignment (NAME=, NAME+=, NAME[...]=), or -1.
func assignPrefix(s string) int {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 {
		return -1
	}
	if i < len(s) && s[i] == '[' {
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			return -1
		}
		i += j + 1
	}
	if i < len(s) && s[i] == '+' {
		i++
	}
	if i < len(s) && s[i] == '=' {
		if strings.IndexByte(s[:i], '\\') >= 0 {
			return -1
		}
		return i
	}
	return -1
}

// tildeEnd returns the end of the tilde prefix starting at s[j].
func tildeEnd(s string, j int, colon, last bool) (int, bool) {
	for k := j + 1; k < len(s); k++ {
		switch s[k] {
		case '/':
			return k, true
		case ':':
			if colon {
				return k, true
			}
		case '\\':
			return 0, false
		}
	}
	if !last {
		return 0, false
	}
	return len(s), true
}

// tilde adds the expansion of the tilde prefix ~name.
func (a *analyzer) tilde(c *ctx, dir string, st *wstate, name string) {
	switch name {
	case "":
		if h, ok := c.sc.vars["HOME"]; ok {
			st.addQuoted(h)
			return
		}
	case "+":
		if c.sc.pwdOK && dir != "" {
			st.addQuoted(dir)
			return
		}
	}
	st.markDyn()
}

// param returns the value of a parameter expansion when it is a plain
// reference to a known variable.
func (a *analyzer) param(c *ctx, dir string, p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Flags != nil || p.Excl || p.Length || p.Width || p.IsSet ||
		p.Split != syntax.OptUnset || p.GlobSubst != syntax.OptUnset || p.RcExpand != syntax.OptUnset ||
		p.NestedParam != nil || p.Index != nil || len(p.Modifiers) > 0 || p.Slice != nil ||
		p.Repl != nil || p.Names != 0 || p.Exp != nil {
		return "", false
	}
	name := p.Param.Value
	if name == "PWD" {
		if c.sc.pwdOK && dir != "" {
			return dir, true
		}
		return "", false
	}
	v, ok := c.sc.vars[name]
	return v, ok
}

// multiWord reports whether a quoted parameter expansion may still give
// zero or several words, as "$@" and "${a[@]}" do.
func multiWord(p *syntax.ParamExp) bool {
	if p.Names != 0 || p.Param != nil && p.Param.Value == "@" {
		return true
	}
	w, ok := p.Index.(*syntax.Word)
	return ok && w.Lit() == "@"
}

// dquoteUnescape adds the text of a literal inside double quotes, where a
// backslash only escapes $, `, ", \ and newline.
func dquoteUnescape(st *wstate, s string) {
	st.curSet = true
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				b = s[i]
			case '\n':
				i++
				continue
			}
		}
		st.cur = append(st.cur, b)
	}
}

// ansiC decodes the body of a $'...' string the way bash does.
func ansiC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b = append(b, c)
			continue
		}
		i++
		c = s[i]
		switch c {
		case 'a':
			b = append(b, '\a')
		case 'b':
			b = append(b, '\b')
		case 'e', 'E':
			b = append(b, 0x1b)
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'v':
			b = append(b, '\v')
		case '\\', '\'', '"', '?':
			b = append(b, c)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := 0
			j := i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			i = j - 1
			b = append(b, byte(n))
		case 'x', 'u', 'U':
			max := 2
			if c == 'u' {
				max = 4
			} else if c == 'U' {
				max = 8
			}
			n := 0
			j := i + 1
			for ; j < len(s) && j < i+1+max && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b = append(b, '\\', c)
				continue
			}
			i = j - 1
			if c == 'x' {
				b = append(b, byte(n))
			} else if n >= 0 && n <= utf8.MaxRune {
				b = utf8.AppendRune(b, rune(n))
			}
		case 'c':
			if i+1 >= len(s) {
				b = append(b, '\\', 'c')
				continue
			}
			i++
			x := s[i]
			if x == '\\' && i+1 < len(s) && s[i+1] == '\\' {
				i++
			}
			if x == '?' {
				b = append(b, 0x7f)
			} else {
				if x >= 'a' && x <= 'z' {
					x -= 'a' - 'A'
				}
				b = append(b, x&0x1f)
			}
		default:
			b = append(b, '\\', c)
		}
	}
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// staticLit returns the value of a word made only of quoted and unquoted
// literal text, without consulting any variable.
func staticLit(w *syntax.Word) (string, bool) {
	if s, ok := plainLit(w); ok {
		return s, true
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			s := p.Value
			for i := 0; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				b.WriteByte(s[i])
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", false
				}
				st := wstate{}
				dquoteUnescape(&st, lit.Value)
				b.Write(st.cur)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// systemBin lists the directories whose programs are named by base name.
var systemBin = map[string]bool{
	"/bin":              true,
	"/usr/bin":          true,
	"/sbin":             true,
	"/usr/sbin":         true,
	"/usr/local/bin":    true,
	"/usr/local/sbin":   true,
	"/opt/homebrew/bin": true,
}

// SystemBinDir reports whether dir (absolute, clean) is a system program
// directory whose programs are named by their base name: /bin/rm is rm.
func SystemBinDir(dir string) bool { return systemBin[dir] }

// progName returns the name under which a program word is looked up.
func progName(s string) string {
	if strings.IndexByte(s, '/') < 0 {
		return s
	}
	p := path.Clean(s)
	if path.IsAbs(p) {
		if systemBin[path.Dir(p)] {
			return path.Base(p)
		}
		return p
	}
	if strings.IndexByte(p, '/') < 0 {
		p = "./" + p
	}
	return p
}

// resolveDir returns the directory that cd-like target t names, relative
// to dir; "" when unknown.
func resolveDir(dir, t string) string {
	if path.IsAbs(t) {
		return path.Clean(t)
	}
	if dir == "" || t == "" {
		return ""
	}
	return path.Join(dir, t)
}
