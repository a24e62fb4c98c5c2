package secrets

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// TestQuickKeywords: the keywords read from the data file's lines are
// those of the decoded rules, in order, so that a text the check before
// loading calls clean is one no rule would run on.
func TestQuickKeywords(t *testing.T) {
	var want []string
	rs, err := parseRules(patternsTOML, patternsFile, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.always) > 0 {
		t.Fatalf("rules %v have no keywords; quickKeywords must be nil then", rs.always)
	}
	var f fileRules
	if err := toml.Unmarshal(patternsTOML, &f); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Rule {
		want = append(want, r.Keywords...)
	}
	if got := quickKeywords(); !slices.Equal(got, want) {
		t.Fatalf("quickKeywords = %q\nthe rules' keywords = %q", got, want)
	}
}

// TestKeywordLines: a file whose keywords the line scan cannot be sure of
// gives no keywords at all, and every text then takes the long way.
func TestKeywordLines(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"two rules", "[[rule]]\nkeywords = [\"ab\", \"c-d\"]\n[[rule]]\n  keywords=[\"x\"]\n", []string{"ab", "c-d", "x"}},
		{"a rule without keywords", "[[rule]]\nkeywords = [\"ab\"]\n[[rule]]\nid = \"x\"\n", nil},
		{"a list over lines", "[[rule]]\nkeywords = [\n  \"ab\",\n]\n", nil},
		{"an empty list", "[[rule]]\nkeywords = []\n", nil},
		{"upper case", "[[rule]]\nkeywords = [\"AB\"]\n", []string{"AB"}},
		{"not ASCII", "[[rule]]\nkeywords = [\"\u00e9\"]\n", nil},
		{"a literal string", "[[rule]]\nkeywords = ['ab']\n", nil},
		{"an escape", "[[rule]]\nkeywords = [\"a\\u0062\"]\n", nil},
		{"a comma in a keyword", "[[rule]]\nkeywords = [\"a,b\"]\n", nil},
		{"a trailing comment", "[[rule]]\nkeywords = [\"ab\"] # c\n", nil},
		{"no rules", "", nil},
		// Lines the decoder reads otherwise than a line at a time.
		{"a key in another case", "[[rule]]\nkeywords = [\"ab\"]\nKeywords = [\"cd\"]\n", nil},
		{"a quoted key in another case", "[[rule]]\nkeywords = [\"ab\"]\n\"Keywords\" = [\"cd\"]\n", nil},
		{"a keywords line in a multi-line string", "[[rule]]\nkeywords = [\"ab\"]\n[[rule]]\nregex = '''\nkeywords = [\"x\"]\n'''\n", nil},
		{"a rule header in a multi-line string", "[[rule]]\nkeywords = [\"ab\"]\nregex = \"\"\"\n[[rule]]\nkeywords = [\"x\"]\n\"\"\"\n", nil},
		{"a quoted rule header", "[[rule]]\nkeywords = [\"ab\"]\n[[\"rule\"]]\nid = \"x\"\n", nil},
		{"a rule header with a comment", "[[rule]]\nkeywords = [\"ab\"]\n[[rule]] # c\nid = \"x\"\n", nil},
		{"a rule header with spaces", "[[rule]]\nkeywords = [\"ab\"]\n[[ rule ]]\nid = \"x\"\n", nil},
		{"a list over lines before", "[[rule]]\nkeywords = [\"ab\"]\n[[rule]]\nstopwords = [ # ]\n\"keywords = [\\\"x\\\"]\",\n]\n", nil},
		{"a one-line multi-line string", "[[rule]]\nregex = '''a'''\nkeywords = [\"ab\"]\n", []string{"ab"}},
		{"comments and blank lines", "# keywords = [\"x\"]\n\n[[rule]]\r\n  # [[rule]]\nkeywords = [\"ab\"]\r\n", []string{"ab"}},
	} {
		if got := keywordLines(tc.data); !slices.Equal(got, tc.want) {
			t.Errorf("%s: keywordLines = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestNoKeyword: what the check before loading calls clean, and what it
// leaves to the rules.
func TestNoKeyword(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"git status", true},
		{"ls -la src/", true},
		{"", true},
		{"cat ~/.aws/credentials", true}, // no rule's keyword: the path rules judge it
		{"echo GHP_abc", false},
		{"npm run task", true},          // "sk", not "SK"
		{"riskAtDecision", true},        // a key of every decision's event
		{"x SK0123456789abcdef", false}, // a Twilio key's start
		{"curl https://x", false},
		{"PassWord", false},
		{"\u017fk_live_x", false}, // ſ folds to s
		{"\u212a", false},
		{strings.Repeat("a", quickMax+1), false},
		{strings.Repeat("a", quickMax), true},
	} {
		if got := noKeyword(tc.in); got != tc.want {
			t.Errorf("noKeyword(%.40q) = %v, want %v", tc.in, got, tc.want)
		}
		if tc.want && len(scanAll(tc.in)) > 0 {
			t.Errorf("%q holds a secret", tc.in)
		}
	}
}

// TestFirstScanLoadsNoRules: a process whose first scans are of short
// texts without keywords loads no rules until their bytes pass
// quickBudget, and finds a secret in a text with one.
func TestFirstScanLoadsNoRules(t *testing.T) {
	const alone = "TOOLGATE_TEST_FIRST_SCAN"
	if os.Getenv(alone) == "" {
		// Other tests of this process may have loaded them: run alone.
		cmd := exec.Command(os.Args[0], "-test.run=^TestFirstScanLoadsNoRules$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), alone+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestFirstScanLoadsNoRules") {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	if Contains("git status") || len(Scan("ls -la")) > 0 {
		t.Fatal("a secret in git status")
	}
	if rulesLoaded.Load() {
		t.Fatal("scanning git status loaded the rules")
	}
	// A process that keeps scanning clean texts loads the rules once it
	// has looked at quickBudget bytes, and then scans with them.
	clean := strings.Repeat("git status ", 90)
	for range quickBudget/len(clean) + 1 {
		if Contains(clean) {
			t.Fatal("a secret in git status")
		}
	}
	if !rulesLoaded.Load() {
		t.Fatalf("the rules are not loaded after %d bytes", quickBytes.Load())
	}
	if !Contains("token " + ghp) {
		t.Fatal("no secret found in a GitHub token")
	}
}

// FuzzKeywordLines: the keywords read a line at a time are none, or those
// that decoding the file gives, and then every rule has some.
func FuzzKeywordLines(f *testing.F) {
	f.Add(string(patternsTOML))
	f.Add("[[rule]]\nkeywords = [\"ab\", \"c-d\"]\n[[rule]]\n  keywords=[\"x\"]\n")
	f.Add("[[rule]]\nkeywords = [\"ab\"]\nKeywords = [\"cd\"]\n")
	f.Add("[[rule]]\nkeywords = [\"ab\"]\n[[rule]]\nregex = '''\nkeywords = [\"x\"]\n'''\n")
	f.Add("[[rule]]\nkeywords = [\"ab\"]\n[[rule]]\nstopwords = [ # ]\n\"x\",\n]\n")
	f.Fuzz(func(t *testing.T, data string) {
		got := keywordLines(data)
		if got == nil {
			return
		}
		var fr fileRules
		if err := toml.NewDecoder(strings.NewReader(data)).DisallowUnknownFields().Decode(&fr); err != nil {
			return // the rules do not load: no text is scanned
		}
		var want []string
		for i, r := range fr.Rule {
			if len(r.Keywords) == 0 {
				t.Fatalf("keywordLines = %q, but rule %d has no keywords", got, i)
			}
			want = append(want, r.Keywords...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("keywordLines = %q, the decoded keywords %q", got, want)
		}
	})
}

// decodedRules is the embedded data file, decoded once.
var decodedRules = sync.OnceValue(func() fileRules {
	var f fileRules
	if err := toml.Unmarshal(patternsTOML, &f); err != nil {
		panic(err)
	}
	return f
})

// noKeywordAsMatcher reports what noKeyword must answer for s: the text
// is short, holds neither of the runes that regexp folds to ASCII
// letters, and the rules' keyword automaton finds no keyword in it but
// keywords written with upper-case letters that s does not hold in that
// case.
func noKeywordAsMatcher(rs *ruleSet, s string) bool {
	if len(s) > quickMax || strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a") {
		return false
	}
	sc := new(scratch)
	if !rs.plan(sc, s) {
		return true
	}
	// The automaton may run only rules whose keywords all have
	// upper-case letters and that s holds in no case as written.
	f := decodedRules()
	for r, mode := range sc.mode {
		if mode == skip {
			continue
		}
		for _, kw := range f.Rule[r].Keywords {
			if kw == lowerASCII(kw) || strings.Contains(s, kw) {
				return false
			}
		}
	}
	return true
}

// TestNoKeywordIsTheMatcher: the check before loading finds a keyword
// wherever the loaded rules' automaton does, and nowhere else, in texts
// made of keywords and their pieces in either case, the runes regexp
// folds, invalid UTF-8 and line breaks, of up to and just over quickMax
// bytes.
func TestNoKeywordIsTheMatcher(t *testing.T) {
	rs, err := parseRules(patternsTOML, patternsFile, false)
	if err != nil {
		t.Fatal(err)
	}
	pieces := []string{"\u017f", "\u212a", "\xc5", "\xbf", "\xe2\x84", "\xaa", "\xff", "\x00", "\n", "\r", " ", "İ", "ı", "\u200d"}
	for _, kw := range quickKeywords() {
		pieces = append(pieces, kw, strings.ToUpper(kw), kw[:len(kw)/2], kw[len(kw)/2:], strings.ToUpper(kw[:1])+kw[1:])
	}
	// At the length limit, with a keyword at either end or none.
	var edges []string
	for n := quickMax - 2; n <= quickMax+2; n++ {
		for _, kw := range []string{"", "sk", "Sk-", "hooks.slack.com", "PRIVATE KEY", "\u017f"} {
			fill := strings.Repeat("x", max(0, n-len(kw)))
			edges = append(edges, fill+kw, kw+fill)
		}
	}
	for _, s := range edges {
		if got, want := noKeyword(s), noKeywordAsMatcher(rs, s); got != want {
			t.Errorf("noKeyword(%d bytes %.12q…%q) = %v, the rules' automaton says %v", len(s), s, s[max(0, len(s)-16):], got, want)
		}
	}
	clean, dirty := 0, 0
	for trial := range 20000 {
		var b strings.Builder
		n := rng.IntN(40)
		if trial%40 == 0 {
			n = quickMax - 30 + rng.IntN(60)
		}
		for b.Len() < n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			if rng.IntN(3) == 0 {
				b.WriteString(fake("abcxyzAZ_-.:/=", 1))
			}
		}
		s := b.String()
		want := noKeywordAsMatcher(rs, s)
		if got := noKeyword(s); got != want {
			t.Fatalf("noKeyword(%q) = %v, the rules' automaton says %v", s, got, want)
		}
		if want {
			clean++
		} else {
			dirty++
		}
	}
	if clean < 1000 || dirty < 1000 {
		t.Fatalf("%d texts without a keyword and %d with one: the test tells nothing", clean, dirty)
	}
}

// FuzzNoKeyword holds the check before loading to the rules' automaton.
func FuzzNoKeyword(f *testing.F) {
	rs, err := parseRules(patternsTOML, patternsFile, false)
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range scanCases {
		f.Add(c.in)
	}
	f.Add("PassWord \u017fecret \xff toKen")
	f.Add(strings.Repeat("x", quickMax-3) + "sk-")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := noKeyword(s), noKeywordAsMatcher(rs, s); got != want {
			t.Fatalf("noKeyword(%q) = %v, the rules' automaton says %v", s, got, want)
		}
	})
}

// TestFoldRunes: U+017F and U+212A are the only runes beyond ASCII that
// regexp's case folding equates with an ASCII letter, as the check before
// loading and the keyword scan assume (Unicode tables of a later Go could
// add one).
func TestFoldRunes(t *testing.T) {
	var got []rune
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf {
				got = append(got, r)
				break
			}
		}
	}
	if want := []rune{'\u017f', '\u212a'}; !slices.Equal(got, want) {
		t.Fatalf("runes folding to ASCII: %U, want %U", got, want)
	}
	for _, r := range got {
		if folded := lowerASCII(string(r)); len(folded) != 1 || !strings.EqualFold(folded, string(r)) {
			t.Errorf("lowerASCII(%U) = %q", r, folded)
		}
		if noKeyword(string(r)) {
			t.Errorf("noKeyword(%U) = true", r)
		}
	}
}

// TestRedactAfter: only the part of s is redacted, what the prefix names
// in it and what it holds alone; a secret in the prefix is not.
func TestRedactAfter(t *testing.T) {
	mark := func(f Finding, _ string) string { return "<" + f.Rule + ">" }
	for _, tc := range []struct{ prefix, s, want string }{
		{"--password ", "S3cr3tPassw0rd9xQz", "<option-secret>"},
		{`"password":"`, "S3cr3tPassw0rd9xQz", "<generic-secret>"},
		{"-e ", "S3cr3tPassw0rd9xQz", "S3cr3tPassw0rd9xQz"},
		{"token " + ghp + " ", "hello", "hello"},
		{"x ", "token " + ghp, "token <github-token>"},
	} {
		if got := RedactAfter(tc.prefix, tc.s, mark); got != tc.want {
			t.Errorf("RedactAfter(%q, %q) = %q, want %q", tc.prefix, tc.s, got, tc.want)
		}
	}
}
