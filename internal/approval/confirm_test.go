package approval

import "testing"

// TestConfirmWordNeverAKeystroke: a recorded target shorter than three
// characters is not confirmed by typing it alone.
func TestConfirmWordNeverAKeystroke(t *testing.T) {
	for _, tc := range []struct {
		target, word string
		typed        string
		ok           bool
	}{
		{"", "yes", "yes", true},
		{"y", "yes, y", "y", false},
		{"y", "yes, y", "yes, y", true},
		{"ab", "yes, ab", "ab", false},
		{".git and 3 more", ".git and 3 more", ".git", false},
		{".git and 3 more", ".git and 3 more", " .git and 3 more ", true},
	} {
		r := &Request{Destructive: true, ConfirmTarget: tc.target}
		if got := r.ConfirmWord(); got != tc.word {
			t.Errorf("ConfirmWord of target %q = %q, want %q", tc.target, got, tc.word)
		}
		if got := r.Confirmed(tc.typed); got != tc.ok {
			t.Errorf("target %q, typed %q: confirmed %v, want %v", tc.target, tc.typed, got, tc.ok)
		}
	}
}
