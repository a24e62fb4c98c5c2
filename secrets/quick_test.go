package secrets

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

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
// texts without keywords loads no rules, and finds a secret in the first
// text with one.
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
	if !Contains("token " + ghp) {
		t.Fatal("no secret found in a GitHub token")
	}
	if !rulesLoaded.Load() {
		t.Fatal("the rules were not loaded")
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
