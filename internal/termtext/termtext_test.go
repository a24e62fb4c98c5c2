package termtext_test

import (
	"errors"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/termtext"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"a\nb", `a\nb`},
		{"row\r2026-01-01 allow", `row\r2026-01-01 allow`},
		{"\x1b[2J\x1b]0;title\x07", `\x1b[2J\x1b]0;title\x07`},
		{"tab\there", `tab\there`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b31m", `csi\u009b31m`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"sep\u2028x", `sep\u2028x`},
		{"bad \xff utf8", `bad \xff utf8`},
	} {
		if got := termtext.Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestArgs(t *testing.T) {
	got := fmt.Sprintf("%s %d %s %s %v", termtext.Args("a\x1b", 7, errors.New("e\n"), stringer("s\r"), true)...)
	if want := `a\x1b 7 e\n s\r true`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEscapeLines(t *testing.T) {
	if got, want := termtext.EscapeLines("a\x1b[2J\nb\rc\n"), "a\\x1b[2J\nb\\rc\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestClip: a clip never splits a character, marks a cut with "…", and
// leaves a string that fits alone.
func TestClip(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: cutting at 2 would split it
		{"héllo", 3, "hé…"},
		{"日本語", 4, "日…"},
		{"日本語", 0, "…"},
		{"abc", -1, "…"},
		{"", 0, ""},
	}
	for _, tc := range tests {
		got := termtext.Clip(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q: not valid UTF-8", tc.s, tc.n, got)
		}
	}
}
