package secrets

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

//go:embed patterns.toml
var patternsTOML []byte

// patternsFile is the name of the embedded data file, used in error messages.
const patternsFile = "patterns.toml"

// Finding is one secret found in a text.
type Finding struct {
	// Rule is the id of the rule that found the secret.
	Rule string
	// Description says what kind of secret it is.
	Description string
	// Start and End are the byte offsets of the secret in the scanned text:
	// the secret is s[Start:End].
	Start, End int
}

// rule is one compiled entry of the data file.
type rule struct {
	id, description string
	// re returns the compiled regex; the built-in rules' are compiled at
	// their first run, so that a scan pays only for the rules it runs.
	re        func() *regexp.Regexp
	group     int
	entropy   float64
	mixed     bool
	multiline bool
	stopwords []string
	// plain is set when every match of the regex is a finding, so that
	// Contains can stop at the first match without checking it.
	plain bool
}

// ruleSet is the loaded data file.
type ruleSet struct {
	rules []*rule
	ids   []string
	// keywords finds the keywords of all rules in one pass.
	keywords *matcher
	// always lists the rules without keywords.
	always []int
}

// fileRule is the TOML form of a rule.
type fileRule struct {
	ID          string   `toml:"id"`
	Description string   `toml:"description"`
	Regex       string   `toml:"regex"`
	Keywords    []string `toml:"keywords"`
	Group       int      `toml:"group"`
	Entropy     float64  `toml:"entropy"`
	Mixed       bool     `toml:"mixed"`
	Multiline   bool     `toml:"multiline"`
	Stopwords   []string `toml:"stopwords"`
}

type fileRules struct {
	Rule []fileRule `toml:"rule"`
}

var loadRules = sync.OnceValue(func() *ruleSet {
	rs, err := parseRules(patternsTOML, patternsFile, true)
	if err != nil {
		panic("secrets: " + err.Error())
	}
	rulesLoaded.Store(true)
	return rs
})

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`) })

// load parses and compiles a rules file. Errors name the file and line.
func load(data []byte, name string) (*ruleSet, error) {
	return parseRules(data, name, false)
}

// parseRules parses a rules file and, unless lazy is set, compiles and
// checks every regex. With lazy set each regex is compiled at its rule's
// first run, and one that does not compile panics there: only for the
// embedded file, which the tests load with lazy unset.
func parseRules(data []byte, name string, lazy bool) (*ruleSet, error) {
	var f fileRules
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, decodeError(name, err)
	}
	lines := ruleLines(data)
	rs := &ruleSet{}
	var kws []keyword
	seen := map[string]bool{}
	for i, fr := range f.Rule {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: rule %q: %s", name, line, fr.ID, fmt.Sprintf(format, args...))
		}
		switch {
		case !idPattern().MatchString(fr.ID):
			return nil, fail("id must be lower-case letters, digits and dashes")
		case seen[fr.ID]:
			return nil, fail("duplicate id")
		case fr.Description == "":
			return nil, fail("missing description")
		case fr.Regex == "":
			return nil, fail("missing regex")
		case fr.Entropy < 0 || fr.Entropy > 8:
			return nil, fail("entropy %v is outside 0..8", fr.Entropy)
		}
		seen[fr.ID] = true
		var re func() *regexp.Regexp
		if lazy {
			src, file := fr.Regex, name
			re = sync.OnceValue(func() *regexp.Regexp {
				c, err := regexp.Compile(src)
				if err != nil {
					panic(fmt.Sprintf("secrets: %s: %v", file, err))
				}
				return c
			})
		} else {
			c, err := regexp.Compile(fr.Regex)
			if err != nil {
				return nil, fail("regex: %v", err)
			}
			if fr.Group < 0 || fr.Group > c.NumSubexp() {
				return nil, fail("group %d: the regex has %d groups", fr.Group, c.NumSubexp())
			}
			re = func() *regexp.Regexp { return c }
		}
		for _, kw := range fr.Keywords {
			if kw == "" || strings.ContainsAny(kw, "\r\n") || !isASCII(kw) {
				return nil, fail("keyword %q must be non-empty, ASCII and on one line", kw)
			}
			if kw != lowerASCII(kw) && strings.Contains(fr.Regex, "(?i") {
				return nil, fail("keyword %q has upper-case letters, which say that every match holds it in that case, but the regex ignores case", kw)
			}
			// The automaton ignores case; the check before loading does
			// not, for a keyword with upper-case letters.
			kws = append(kws, keyword{lowerASCII(kw), len(rs.rules)})
		}
		for _, w := range fr.Stopwords {
			if w == "" || w != lowerASCII(w) {
				return nil, fail("stopword %q must be non-empty and lower-case", w)
			}
		}
		if len(fr.Keywords) == 0 {
			rs.always = append(rs.always, len(rs.rules))
		}
		rs.rules = append(rs.rules, &rule{
			id:          fr.ID,
			description: fr.Description,
			re:          re,
			group:       fr.Group,
			entropy:     fr.Entropy,
			mixed:       fr.Mixed,
			multiline:   fr.Multiline,
			stopwords:   fr.Stopwords,
			plain:       fr.Group == 0 && fr.Entropy == 0 && !fr.Mixed && len(fr.Stopwords) == 0,
		})
		rs.ids = append(rs.ids, fr.ID)
	}
	if len(rs.rules) == 0 {
		return nil, fmt.Errorf("%s: no rules", name)
	}
	rs.keywords = newMatcher(kws)
	return rs, nil
}

// decodeError turns a go-toml error into one that names the file and line.
func decodeError(name string, err error) error {
	var de *toml.DecodeError
	var se *toml.StrictMissingError
	switch {
	case errors.As(err, &se) && len(se.Errors) > 0:
		e := &se.Errors[0]
		row, col := e.Position()
		return fmt.Errorf("%s:%d:%d: unknown field %q", name, row, col, strings.Join(e.Key(), "."))
	case errors.As(err, &de):
		row, col := de.Position()
		return fmt.Errorf("%s:%d:%d: %s", name, row, col, de.Error())
	}
	return fmt.Errorf("%s: %w", name, err)
}

// ruleLines returns the 1-based line of each [[rule]] header, in order.
func ruleLines(data []byte) []int {
	var lines []int
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "[[rule]]" {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// Rules lists the ids of the loaded rules, in the order they are tried.
func Rules() []string {
	return slices.Clone(loadRules().ids)
}

// Scan returns every secret found in s, ordered by Start. Findings do not
// overlap: where two would, the longer one wins, and between equally long
// ones the rule listed first.
func Scan(s string) []Finding {
	if surelyClean(s) {
		return nil
	}
	rs := loadRules()
	sc := getScratch()
	defer putScratch(sc)
	rs.plan(sc, s)
	return rs.scan(sc, s)
}

// Contains reports whether s holds at least one secret. It is faster than
// Scan when the answer is no, and stops at the first secret when it is yes.
func Contains(s string) bool {
	if surelyClean(s) {
		return false
	}
	rs := loadRules()
	sc := getScratch()
	defer putScratch(sc)
	if !rs.plan(sc, s) {
		return false
	}
	found := false
	rs.run(sc, s, true, func(int, int, int) bool {
		found = true
		return false
	})
	return found
}

// Redact returns s with every secret replaced by "[REDACTED:<rule id>]".
func Redact(s string) string {
	return RedactFunc(s, func(f Finding, _ string) string { return "[REDACTED:" + f.Rule + "]" })
}

// RedactFunc returns s with every secret Scan finds replaced by what
// marker returns for its finding and the secret's text, and s itself when
// it holds none.
func RedactFunc(s string, marker func(f Finding, secret string) string) string {
	fs := Scan(s)
	if len(fs) == 0 {
		return s
	}
	spans := make([]replacement, len(fs))
	for i, f := range fs {
		spans[i] = replacement{f, f.Start, f.End, s[f.Start:f.End]}
	}
	return splice(s, 0, spans, marker)
}

// replacement is a secret to replace: its finding, where it lies in the
// text and the secret itself.
type replacement struct {
	f          Finding
	start, end int
	secret     string
}

// splice returns t from byte from on with each of spans, in order, not
// overlapping and past from, replaced by what marker returns for it; the
// finding marker gets has the span's offsets from from.
func splice(t string, from int, spans []replacement, marker func(f Finding, secret string) string) string {
	var b strings.Builder
	b.Grow(len(t) - from)
	last := from
	for _, sp := range spans {
		b.WriteString(t[last:sp.start])
		f := sp.f
		f.Start, f.End = sp.start-from, sp.end-from
		b.WriteString(marker(f, sp.secret))
		last = sp.end
	}
	b.WriteString(t[last:])
	return b.String()
}

// RedactAfter returns s with the secrets redacted that a scan of prefix
// and s joined finds in s, as RedactFunc redacts them: those that what
// comes before s names (a key, an option), and those of s alone. A secret
// that ends in prefix is left to prefix's own redaction. It returns s
// itself when it holds none.
func RedactAfter(prefix, s string, marker func(f Finding, secret string) string) string {
	t := prefix + s
	if !Contains(t) {
		return s
	}
	var spans []replacement
	for _, f := range Scan(t) {
		if f.End > len(prefix) {
			start := max(f.Start, len(prefix))
			spans = append(spans, replacement{f, start, f.End, t[start:f.End]})
		}
	}
	if len(spans) == 0 {
		return s
	}
	return splice(t, len(prefix), spans, marker)
}

// secret returns the span of the secret in the match m of the regex in w,
// and whether it passes the rule's checks.
func (r *rule) secret(w string, m []int) (start, end int, ok bool) {
	start, end = m[2*r.group], m[2*r.group+1]
	if start < 0 || start >= end {
		return 0, 0, false
	}
	v := w[start:end]
	if r.entropy > 0 && entropy(v) < r.entropy {
		return 0, 0, false
	}
	if r.mixed && !hasLetterAndDigit(v) {
		return 0, 0, false
	}
	if len(r.stopwords) > 0 {
		lv := lowerASCII(v)
		for _, w := range r.stopwords {
			if strings.Contains(lv, w) {
				return 0, 0, false
			}
		}
	}
	return start, end, true
}

// Where a rule's regex runs.
const (
	skip      uint8 = iota // nowhere: none of its keywords occurs
	someLine               // on the lines in scratch.lines
	allLines               // on every line
	wholeText              // on the whole text (multiline rules)
)

// span is a line of the input, without its line break.
type span struct{ lo, hi int }

// scratch is the per-call working memory of Scan and Contains.
type scratch struct {
	mode   []uint8
	lines  [][]span
	folded []byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// putScratch returns sc to the pool, dropping a buffer grown for a very
// large input so that the pool does not hold on to it.
func putScratch(sc *scratch) {
	if cap(sc.folded) > 1<<20 {
		sc.folded = nil
	}
	scratchPool.Put(sc)
}

// reset prepares sc for a scan with n rules.
func (sc *scratch) reset(n int) {
	if len(sc.mode) != n {
		sc.mode = make([]uint8, n)
		sc.lines = make([][]span, n)
	}
	for i := range sc.mode {
		sc.mode[i] = skip
		sc.lines[i] = sc.lines[i][:0]
	}
}

// plan decides, from the keywords in s, where each rule's regex runs, and
// reports whether any rule runs at all.
func (rs *ruleSet) plan(sc *scratch, s string) bool {
	sc.reset(len(rs.rules))
	found := false
	for _, i := range rs.always {
		sc.mode[i] = rs.everywhere(i)
		found = true
	}
	// regexp's case folding matches U+017F (long s) to 's' and U+212A
	// (Kelvin sign) to 'k'. Such text is folded to ASCII first; as
	// offsets then differ, the rules whose keywords occur run on every
	// line.
	if strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a") {
		sc.folded = foldASCII(sc.folded[:0], s)
		eachKeyword(rs.keywords, sc.folded, func(_ int, rules []int) {
			for _, r := range rules {
				sc.mode[r] = rs.everywhere(r)
				found = true
			}
		})
		return found
	}
	lineStart, lineEnd := 0, -1
	eachKeyword(rs.keywords, s, func(i int, rules []int) {
		if i >= lineEnd {
			lineStart = strings.LastIndexByte(s[:i], '\n') + 1
			lineEnd = len(s)
			if e := strings.IndexByte(s[i:], '\n'); e >= 0 {
				lineEnd = i + e
			}
		}
		for _, r := range rules {
			found = true
			switch sc.mode[r] {
			case skip, someLine:
				if rs.rules[r].multiline {
					sc.mode[r] = wholeText
					continue
				}
				sc.mode[r] = someLine
				ls := sc.lines[r]
				if len(ls) == 0 || ls[len(ls)-1].lo != lineStart {
					sc.lines[r] = append(ls, span{lineStart, lineEnd})
				}
			}
		}
	})
	return found
}

// everywhere is the mode of rule i when it runs regardless of keywords.
func (rs *ruleSet) everywhere(i int) uint8 {
	if rs.rules[i].multiline {
		return wholeText
	}
	return allLines
}

// run runs each rule as planned in sc and calls visit with the rule index
// and the span of every secret, until visit returns false. With first set,
// a rule whose every match is a secret reports only whether it matches.
func (rs *ruleSet) run(sc *scratch, s string, first bool, visit func(rule, start, end int) bool) {
	for ri, r := range rs.rules {
		window := func(lo, hi int) bool {
			w := s[lo:hi]
			if first && r.plain {
				return !r.re().MatchString(w) || visit(ri, -1, -1)
			}
			for _, m := range r.re().FindAllStringSubmatchIndex(w, -1) {
				if start, end, ok := r.secret(w, m); ok && !visit(ri, lo+start, lo+end) {
					return false
				}
			}
			return true
		}
		switch sc.mode[ri] {
		case wholeText:
			if !window(0, len(s)) {
				return
			}
		case someLine:
			for _, l := range sc.lines[ri] {
				if !window(l.lo, l.hi) {
					return
				}
			}
		case allLines:
			for lo := 0; lo <= len(s); {
				hi := len(s)
				if e := strings.IndexByte(s[lo:], '\n'); e >= 0 {
					hi = lo + e
				}
				if !window(lo, hi) {
					return
				}
				lo = hi + 1
			}
		}
	}
}

type candidate struct {
	start, end, rule int
}

// scan runs the rules as planned in sc and resolves overlaps.
func (rs *ruleSet) scan(sc *scratch, s string) []Finding {
	var cands []candidate
	rs.run(sc, s, false, func(rule, start, end int) bool {
		cands = append(cands, candidate{start, end, rule})
		return true
	})
	if len(cands) == 0 {
		return nil
	}
	// Longest first; between equals, the earlier rule, then the earlier text.
	slices.SortFunc(cands, func(a, b candidate) int {
		if la, lb := a.end-a.start, b.end-b.start; la != lb {
			return lb - la
		}
		if a.rule != b.rule {
			return a.rule - b.rule
		}
		return a.start - b.start
	})
	// kept is ordered by start and never overlaps.
	var kept []candidate
	for _, c := range cands {
		i, _ := slices.BinarySearchFunc(kept, c.start, func(k candidate, start int) int { return k.start - start })
		if i > 0 && kept[i-1].end > c.start {
			continue
		}
		if i < len(kept) && kept[i].start < c.end {
			continue
		}
		kept = slices.Insert(kept, i, c)
	}
	out := make([]Finding, len(kept))
	for i, c := range kept {
		r := rs.rules[c.rule]
		out[i] = Finding{Rule: r.id, Description: r.description, Start: c.start, End: c.end}
	}
	return out
}

// foldASCII appends s to dst with ASCII letters lower-cased. The two
// non-ASCII letters that regexp's case folding equates with ASCII ones,
// U+017F (long s) and U+212A (Kelvin sign), become 's' and 'k', so that a
// keyword is found wherever a case-insensitive regex could match.
func foldASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(s[i:])
			// Written as escapes: a Kelvin sign looks like an ASCII K.
			switch r {
			case '\u017f':
				dst = append(dst, 's')
				i += n - 1
				continue
			case '\u212a':
				dst = append(dst, 'k')
				i += n - 1
				continue
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// lowerASCII returns s with ASCII letters lower-cased.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(s string) string {
	return string(foldASCII(make([]byte, 0, len(s)), s))
}

// entropy returns the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// hasLetterAndDigit reports whether s holds an ASCII letter and an ASCII digit.
func hasLetterAndDigit(s string) bool {
	letter, digit := false, false
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		switch {
		case '0' <= s[i] && s[i] <= '9':
			digit = true
		case 'a' <= c && c <= 'z':
			letter = true
		}
		if letter && digit {
			return true
		}
	}
	return false
}
