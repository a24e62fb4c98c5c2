package secrets

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A process that scans a few short texts, a hook deciding one call, would
// spend most of its scanning on loading the rules: decoding the data file
// and building the keyword automaton. No rule runs on a text without one of
// its keywords, so a short text in which no keyword of the embedded rules
// occurs holds no secret, and that is checked without loading them, by
// looking for each keyword in turn, until the rules are loaded anyway.

// quickMax is the longest text checked keyword by keyword before the rules
// are loaded: 57 keywords looked for in it cost less than loading them.
const quickMax = 1024

// quickBudget is how many bytes in all the check before loading looks at
// in a process before it loads the rules after all: looking for each
// keyword in turn costs more per byte than the automaton, which pays off
// only for the few short texts of a short-lived process, not for a server
// whose texts happen to hold no keyword.
const quickBudget = 16 << 10

// rulesLoaded is set once loadRules has run; quickBytes counts the bytes
// the check before loading has looked at.
var (
	rulesLoaded atomic.Bool
	quickBytes  atomic.Int64
)

// quickKeywords are the keywords of the embedded rules, read from the data
// file's `keywords = ["…", …]` lines without decoding it, or nil when a
// line is written otherwise or a rule has none: then every text takes the
// long way. A test holds them equal to the decoded rules' keywords.
var quickKeywords = sync.OnceValue(func() []string { return keywordLines(string(patternsTOML)) })

// keywordLines returns the keywords of the rules file data, as quickKeywords
// describes. It reads the file a line at a time, so it gives up (nil) on
// any line that the decoder could read otherwise: a table header other
// than [[rule]], a key other than a lower-case bare one (the decoder
// matches keys to fields ignoring case, and a quoted key is the bare one),
// or a value that does not end on its line (a multi-line string or array,
// whose lines could look like keys or headers).
func keywordLines(data string) []string {
	var kws []string
	rules, lists := 0, 0
	for l := range strings.Lines(data) {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l[0] == '#':
			continue
		case l == "[[rule]]":
			rules++
			continue
		}
		name, list, ok := strings.Cut(l, "=")
		name, list = strings.TrimSpace(name), strings.TrimSpace(list)
		if !ok || !bareKey(name) || !endsOnItsLine(list) {
			return nil
		}
		if name != "keywords" {
			continue
		}
		lists++
		if !strings.HasPrefix(list, "[") || !strings.HasSuffix(list, "]") {
			return nil
		}
		list = strings.TrimSpace(list[1 : len(list)-1])
		if list == "" {
			return nil
		}
		for item := range strings.SplitSeq(list, ",") {
			// A plain "…" string: no escapes, whose meaning in TOML and
			// in Go could differ.
			item = strings.TrimSpace(item)
			if strings.Contains(item, `\`) {
				return nil
			}
			kw, err := strconv.Unquote(item)
			if err != nil || !strings.HasPrefix(item, `"`) || kw == "" || !isASCII(kw) || strings.Contains(kw, `"`) {
				return nil
			}
			kws = append(kws, kw)
		}
	}
	if rules == 0 || lists != rules {
		return nil
	}
	return kws
}

// bareKey reports whether name is a TOML bare key of lower-case ASCII
// letters, digits, '_' and '-' only.
func bareKey(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// endsOnItsLine reports whether the TOML value v, the rest of a line after
// its key, surely ends on that line: it holds no multi-line basic string,
// a multi-line literal string only as the whole of it, and it is no
// inline table and no array that the line does not close. An array whose
// last line is left open by a comment ("[ # ]") is caught at its next
// line, which is no key = value line.
func endsOnItsLine(v string) bool {
	switch {
	case strings.Contains(v, `"""`):
		return false
	case strings.Contains(v, "'''"):
		return len(v) >= 6 && strings.HasPrefix(v, "'''") && strings.HasSuffix(v, "'''") && strings.Count(v, "'''") == 2
	case strings.HasPrefix(v, "{"):
		return false
	case strings.HasPrefix(v, "["):
		return strings.HasSuffix(v, "]")
	}
	return true
}

// surelyClean reports whether s is known to hold no secret without the
// rules being loaded: they are not loaded yet, the process has not spent
// its quickBudget, and s holds no keyword.
func surelyClean(s string) bool {
	return !rulesLoaded.Load() && quickBytes.Add(int64(len(s))) <= quickBudget && noKeyword(s)
}

// noKeyword reports whether s is short and no keyword of the embedded
// rules occurs in it, ASCII case ignored but for keywords written with
// upper-case letters, which every match of their rule holds as written.
// Text with U+017F (long s) or U+212A (Kelvin sign), which regexp folds to
// ASCII letters, is left to the rules.
func noKeyword(s string) bool {
	if len(s) > quickMax {
		return false
	}
	kws := quickKeywords()
	if kws == nil || strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a") {
		return false
	}
	for _, kw := range kws {
		if kw != lowerASCII(kw) {
			// Every match holds it in this case.
			if strings.Contains(s, kw) {
				return false
			}
		} else if containsFoldASCII(s, kw) {
			return false
		}
	}
	return true
}

// containsFoldASCII reports whether kw, lower-case, occurs in s with the
// ASCII letters of s in either case.
func containsFoldASCII(s, kw string) bool {
	first := kw[0]
	upper := first
	if 'a' <= first && first <= 'z' {
		upper = first - 'a' + 'A'
	}
	for i := 0; i+len(kw) <= len(s); i++ {
		if c := s[i]; c != first && c != upper {
			continue
		}
		j := 1
		for ; j < len(kw); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != kw[j] {
				break
			}
		}
		if j == len(kw) {
			return true
		}
	}
	return false
}
