package secrets

import "strings"

// A shell line may hold a secret that only its words, once the shell has
// taken the quoting away, show: AK''IA…, "to"ken=…, AK\IA…. The engine
// judges the words; these functions let what is logged of the line as
// written lose such a secret too, and one a backslash and a newline split
// (AK\<newline>IA…, a continued line).

// shellQuoting are the bytes the shell's quoting adds to a word.
const shellQuoting = `'"\`

// unquoted returns s without the bytes of shellQuoting, and without the
// newline after a backslash (a line the shell continues), and, for each
// byte of the result, the index in s it comes from; ok is false when s
// has none of them.
func unquoted(s string) (string, []int, bool) {
	if !strings.ContainsAny(s, shellQuoting) {
		return s, nil, false
	}
	var b strings.Builder
	b.Grow(len(s))
	at := make([]int, 0, len(s))
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(shellQuoting, s[i]) >= 0 {
			if s[i] == '\\' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
		at = append(at, i)
	}
	return b.String(), at, true
}

// ContainsQuoted reports whether s holds a secret as written, or once the
// quote characters and backslashes are taken out of it.
func ContainsQuoted(s string) bool {
	if Contains(s) {
		return true
	}
	u, _, ok := unquoted(s)
	return ok && Contains(u)
}

// RedactQuotedFunc is [RedactFunc], and then also replaces every secret
// that s holds once the quote characters and backslashes are taken out of
// it: from the byte of s where the secret starts to the one where it
// ends, quoting included. marker gets the secret as the unquoted text
// holds it, and a Finding whose Start and End are that span of s.
func RedactQuotedFunc(s string, marker func(f Finding, secret string) string) string {
	s = RedactFunc(s, marker)
	u, at, ok := unquoted(s)
	if !ok {
		return s
	}
	fs := Scan(u)
	if len(fs) == 0 {
		return s
	}
	spans := make([]replacement, len(fs))
	for i, f := range fs {
		spans[i] = replacement{f, at[f.Start], at[f.End-1] + 1, u[f.Start:f.End]}
	}
	return splice(s, 0, spans, marker)
}

// RedactQuoted is [Redact] of s as written and once unquoted, as
// [RedactQuotedFunc] does.
func RedactQuoted(s string) string {
	return RedactQuotedFunc(s, func(f Finding, _ string) string { return "[REDACTED:" + f.Rule + "]" })
}
