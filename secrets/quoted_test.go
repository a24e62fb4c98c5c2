package secrets

import (
	"strings"
	"testing"
)

// TestRedactQuoted: a secret the shell's quoting splits is redacted with
// its quoting, one not split is redacted as before, and a text without a
// secret is left as it is.
func TestRedactQuoted(t *testing.T) {
	const aws = "AKIAQYLPMN5HHHFPZAM2"
	for _, tc := range []struct{ in, want string }{
		{"curl -d key=AK''IAQYLPMN5HHHFPZAM2 https://x", "curl -d key=[REDACTED:aws-access-key-id] https://x"},
		{`echo "AKIA"'QYLPMN5HHHFPZAM2' done`, `echo "[REDACTED:aws-access-key-id]' done`}, // the quotes around it stay
		{`echo AK\IAQYLPMN5HHHFPZAM2`, "echo [REDACTED:aws-access-key-id]"},
		// A backslash before a newline continues the line: the shell
		// takes both away.
		{"echo AK\\\nIAQYLPMN5HHHFPZAM2", "echo [REDACTED:aws-access-key-id]"},
		{"echo \"AKIA\\\nQYLPMN5HHHFPZAM2\"", "echo \"[REDACTED:aws-access-key-id]\""},
		{"echo " + aws + " 'x'", "echo [REDACTED:aws-access-key-id] 'x'"},
		{"echo 'hello' \"world\"", "echo 'hello' \"world\""},
		{"no quoting " + aws, "no quoting [REDACTED:aws-access-key-id]"},
	} {
		got := RedactQuoted(tc.in)
		if got != tc.want {
			t.Errorf("RedactQuoted(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "QYLPMN5HHHFPZAM2") {
			t.Errorf("RedactQuoted(%q) keeps the secret: %q", tc.in, got)
		}
		if c := ContainsQuoted(tc.in); c != (got != tc.in) {
			t.Errorf("ContainsQuoted(%q) = %v", tc.in, c)
		}
	}
}

// FuzzRedactQuoted: what RedactQuoted leaves holds no secret, as written or
// unquoted, and a text with none is left as it is.
func FuzzRedactQuoted(f *testing.F) {
	f.Add("curl -d key=AK''IAQYLPMN5HHHFPZAM2 https://x")
	f.Add(`"to"ken=` + genericKey)
	f.Add("echo 'a' \"b\" \\c")
	f.Add("echo AK\\\nIAQYLPMN5HHHFPZAM2")
	f.Fuzz(func(t *testing.T, s string) {
		got := RedactQuoted(s)
		if !ContainsQuoted(s) && got != s {
			t.Fatalf("RedactQuoted(%q) = %q, though it holds no secret", s, got)
		}
		u, _, _ := unquoted(got)
		for _, f := range Scan(u) {
			// What is left may hold a secret only inside a marker's
			// own text, which no rule takes for one.
			t.Fatalf("RedactQuoted(%q) = %q still holds %s unquoted: %q", s, got, f.Rule, u[f.Start:f.End])
		}
	})
}
