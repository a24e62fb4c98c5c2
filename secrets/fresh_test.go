package secrets

import (
	"os"
	"os/exec"
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
