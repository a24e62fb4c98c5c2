// Package termtext makes text from untrusted sources safe to print to a
// person's terminal. Everything an agent or a log row supplies — a
// command line, a reason, a payload field, a file name — goes through
// [Escape] before it reaches a terminal, so it cannot move the cursor,
// repaint the screen, start a new line that looks like a row of its own,
// or reorder what is shown with bidirectional-text controls.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape replaces everything in s that a terminal would act on rather than
// print — C0 and C1 control characters (ESC and CSI among them; newline,
// carriage return and tab too), DEL, line and paragraph separators,
// bidirectional-text controls — and invalid UTF-8 with visible escapes
// such as \x1b, \n, \r and \u202e. Printable text, other Unicode included,
// is returned unchanged; a string that needs no escaping is returned as
// it is, without copying. The result holds no byte below 0x20 and no DEL.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

// EscapeLines is [Escape] for a message of several lines, such as an
// error that joins others: each "\n" is kept and everything else Escape
// replaces ("\r" included) is escaped.
func EscapeLines(s string) string {
	if !needsEscape(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Escape(l)
	}
	return strings.Join(lines, "\n")
}

// Args returns args with every string, error and [fmt.Stringer] replaced
// by its escaped text (see [Escape]), and everything else — numbers,
// booleans, times formatted by the caller — left as it is, for printing
// untrusted values with a trusted format:
//
//	fmt.Fprintf(w, "%s\t%d\n", termtext.Args(e.Session, e.Seq)...)
func Args(args ...any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = Escape(v)
		case error:
			out[i] = Escape(v.Error())
		case fmt.Stringer:
			out[i] = Escape(v.String())
		default:
			out[i] = a
		}
	}
	return out
}

// Clip returns s cut to at most n bytes on a character boundary, with "…"
// after a cut, and s itself when it is no longer than n. Redact secrets
// before clipping, never after: a secret cut in two is no longer
// recognised, and its first part would be shown.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
