package secrets

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// freshCase names the scan case a child process of
// TestEveryRuleRedactsInAFreshProcess redacts.
const freshCase = "TOOLGATE_SECRETS_FRESH_CASE"

// TestEveryRuleRedactsInAFreshProcess: the built-in rules compile their
// regexes at their first run, so each positive case is redacted by a
// process of its own, which has run no rule before: the secret must be
// gone and the rule's marker in its place.
func TestEveryRuleRedactsInAFreshProcess(t *testing.T) {
	if v := os.Getenv(freshCase); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= len(scanCases) {
			t.Fatalf("%s=%q: no such case", freshCase, v)
		}
		c := scanCases[i]
		out := Redact(c.in)
		if strings.Contains(out, c.secret) {
			t.Fatalf("%s: the secret is still in %q", c.name, out)
		}
		if !strings.Contains(out, "[REDACTED:"+c.rule+"]") {
			t.Fatalf("%s: no [REDACTED:%s] in %q", c.name, c.rule, out)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts a process per case")
	}
	rules := map[string]bool{}
	for i, c := range scanCases {
		if c.rule == "" {
			continue
		}
		rules[c.rule] = true
		cmd := exec.Command(os.Args[0], "-test.run=^TestEveryRuleRedactsInAFreshProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), freshCase+"="+strconv.Itoa(i))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s (%s): %v\n%s", c.name, c.rule, err, out)
		}
	}
	for _, id := range Rules() {
		if !rules[id] {
			t.Errorf("rule %s has no positive case to redact", id)
		}
	}
}

// freshAgree names the child process of TestFreshProcessAnswersAsLoaded.
const freshAgree = "TOOLGATE_SECRETS_FRESH_AGREE"

// freshInputs are the scan cases and variants of them that come close to
// a secret without holding a keyword as written: the keyword cut by an
// invalid byte, a joiner or a dotless i, with runes regexp folds, in
// JSON's and the shell's escapes, in other case, and padded to the length
// limit of the check before loading.
func freshInputs() []string {
	var ins []string
	for _, c := range scanCases {
		s := c.in
		ins = append(ins, s, strings.ToUpper(s), strings.ToLower(s))
		if c.secret == "" {
			continue
		}
		for _, cut := range []string{"\xff", "\xc5", "\u200d", "\u00ad"} {
			for i := 1; i < min(len(s), 24); i++ {
				ins = append(ins, s[:i]+cut+s[i:])
			}
		}
		ins = append(ins,
			strings.NewReplacer("s", "\u017f", "S", "\u017f").Replace(s),
			strings.NewReplacer("k", "\u212a", "K", "\u212a").Replace(s),
			strings.NewReplacer("i", "ı", "I", "İ").Replace(s),
			strings.NewReplacer("_", `\u005f`, "-", `\u002d`).Replace(s),
			strings.NewReplacer("_", `\x5f`, "-", `\x2d`).Replace(s),
			strings.NewReplacer("\n", "\r\n").Replace(s),
		)
		for n := quickMax - 1; n <= quickMax+1; n++ {
			if pad := n - len(s); pad > 0 {
				ins = append(ins, strings.Repeat("x", pad)+s, s+strings.Repeat("\n", pad))
			}
		}
	}
	return ins
}

// TestFreshProcessAnswersAsLoaded: what Scan, Contains, Redact and
// RedactFunc answer before the rules are loaded is what they answer once
// they are, for every text the check before loading calls clean.
func TestFreshProcessAnswersAsLoaded(t *testing.T) {
	if os.Getenv(freshAgree) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFreshProcessAnswersAsLoaded$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), freshAgree+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestFreshProcessAnswersAsLoaded") {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	if rulesLoaded.Load() {
		t.Fatal("the rules are loaded before the first scan")
	}
	type answer struct {
		scan        []Finding
		contains    bool
		redact, fun string
	}
	marker := func(f Finding, secret string) string { return "<" + f.Rule + ":" + secret + ">" }
	ask := func(s string) answer {
		return answer{Scan(s), Contains(s), Redact(s), RedactFunc(s, marker)}
	}
	ins := freshInputs()
	fresh := map[int]answer{}
	for i, s := range ins {
		if !noKeyword(s) {
			continue
		}
		quickBytes.Store(0) // each text as a process's first
		fresh[i] = ask(s)
		if rulesLoaded.Load() {
			t.Fatalf("scanning %q loaded the rules", s)
		}
	}
	if len(fresh) < 200 || len(fresh) == len(ins) {
		t.Fatalf("%d of %d texts called clean before loading: the test tells nothing", len(fresh), len(ins))
	}
	if len(Rules()) == 0 || !rulesLoaded.Load() {
		t.Fatal("the rules did not load")
	}
	for i, a := range fresh {
		s := ins[i]
		w := ask(s)
		if !slices.Equal(a.scan, w.scan) || a.contains != w.contains || a.redact != w.redact || a.fun != w.fun {
			t.Errorf("%q:\nbefore loading %+v\nonce loaded    %+v", s, a, w)
		}
		if all := scanAll(s); len(all) > 0 {
			t.Errorf("%q holds %v, which was not found before loading", s, all)
		}
	}
	t.Logf("%d of %d texts called clean before loading", len(fresh), len(ins))
}
