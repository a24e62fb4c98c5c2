package termtext_test

import (
	"errors"
	"fmt"
	"testing"

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
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"\ufeffbom", `\ufeffbom`},
		{"tag\U000e0041", `tag\U000e0041`},
		{"nb\u00a0sp", `nb\u00a0sp`},
		{"private\ue000", `private\ue000`},
		{"unassigned\U000e0080", `unassigned\U000e0080`},
		{"combining é, 日本語, emoji 🙂", "combining é, 日本語, emoji 🙂"},
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

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"},                                // é is 2 bytes: the cut steps back to its start
		{"ab✓", 3, "ab…"},                              // ✓ is 3 bytes
		{"a\x80\x80\x80\x80\x80", 4, "a\x80\x80\x80…"}, // stray continuation bytes: cut where asked
		{"abc", 0, "…"},
		{"abc", -1, "…"},
	} {
		if got := termtext.Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got, want := termtext.OneLine("a\n\tb   c d", 5), "a b c…"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
