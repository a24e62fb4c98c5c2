package secrets

import (
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// genMatch appends to b a random text that re, a simplified regex,
// matches: each literal in a random rune of its case-folding orbit when
// the regex ignores case, each class in a random rune of a random range.
func genMatch(re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				orbit := []rune{r}
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					orbit = append(orbit, f)
				}
				r = orbit[rng.IntN(len(orbit))]
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		k := rng.IntN(len(re.Rune) / 2)
		lo, hi := re.Rune[2*k], min(re.Rune[2*k+1], re.Rune[2*k]+1000)
		r := lo + rune(rng.IntN(int(hi-lo)+1))
		if !utf8.ValidRune(r) {
			r = lo
		}
		b.WriteRune(r)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte('a')
	case syntax.OpCapture:
		genMatch(re.Sub[0], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 3
			}
		}
		for range lo + rng.IntN(hi-lo+1) {
			genMatch(re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			genMatch(s, b)
		}
	case syntax.OpAlternate:
		genMatch(re.Sub[rng.IntN(len(re.Sub))], b)
	}
}

// TestEveryMatchHoldsAKeyword: texts made to match each rule's regex,
// with every rune case folding allows, hold one of its keywords (after
// the folding the scan applies), and the scan, the check before loading
// and a scan without the keyword prefilter agree on them.
func TestEveryMatchHoldsAKeyword(t *testing.T) {
	var f fileRules
	if err := toml.Unmarshal(patternsTOML, &f); err != nil {
		t.Fatal(err)
	}
	rs := loadRules()
	for ri, fr := range f.Rule {
		p, err := syntax.Parse(fr.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		p = p.Simplify()
		re := rs.rules[ri].re()
		matched, found := 0, 0
		for range matchesPerRule {
			var b strings.Builder
			genMatch(p, &b)
			s := b.String()
			m := re.FindStringIndex(s)
			if m == nil {
				continue
			}
			matched++
			// A keyword with upper-case letters is held in that case.
			w := lowerASCII(s[m[0]:m[1]])
			if !slices.ContainsFunc(fr.Keywords, func(kw string) bool {
				if kw != lowerASCII(kw) {
					return strings.Contains(s[m[0]:m[1]], kw)
				}
				return strings.Contains(w, kw)
			}) {
				t.Fatalf("%s: the match %+q holds none of the keywords %q", fr.ID, s[m[0]:m[1]], fr.Keywords)
			}
			all := scanAll(s)
			if got := Scan(s); !slices.Equal(got, all) {
				t.Fatalf("%s: Scan(%+q) = %v, without prefilter %v", fr.ID, s, got, all)
			}
			if len(all) > 0 {
				found++
				if noKeyword(s) {
					t.Fatalf("%s: the check before loading calls %+q clean, which holds %v", fr.ID, s, all)
				}
			}
		}
		if matched < matchesPerRule/2 || found == 0 {
			t.Errorf("%s: %d of %d texts made matched, %d held a secret: the test tells little", fr.ID, matched, matchesPerRule, found)
		}
	}
}
