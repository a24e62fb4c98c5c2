package engine

import (
	"slices"
	"testing"
)

// TestRedactAll: a secret is redacted in the word that holds it, alone or
// named by the option before it, and words without one are kept.
func TestRedactAll(t *testing.T) {
	const pass = "S3cr3tPassw0rd9xQz"
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"--password", pass, "-e", "select 1"}, []string{"--password", "[REDACTED:option-secret]", "-e", "select 1"}},
		{[]string{"--password=" + pass}, []string{"--password=[REDACTED:generic-secret]"}},
		{[]string{"-e", pass}, nil},
		{[]string{"--password"}, nil},
		{[]string{"--token-file", "/home/user/.config/tokens/deploy2024.txt"}, nil},
	} {
		if got := redactAll(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("redactAll(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
