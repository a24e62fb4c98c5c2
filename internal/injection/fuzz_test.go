package injection

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzScan: on any input Scan does not panic, its spans lie inside the
// input in order of class and position, and its excerpts are valid UTF-8
// and bounded.
func FuzzScan(f *testing.F) {
	files, _ := filepath.Glob("testdata/attacks/*.txt")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("\xff\xfe\u200b\U000E0041ＩＧＮＯＲＥ"))
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, fd := range Scan(text) {
			if fd.Span.Start < 0 || fd.Span.End > len(text) || fd.Span.Start >= fd.Span.End {
				t.Fatalf("%s: span %v outside the %d-byte input", fd.Class, fd.Span, len(text))
			}
			if !utf8.ValidString(fd.Excerpt) || len(fd.Excerpt) > 10*ExcerptBytes {
				t.Fatalf("excerpt %q", fd.Excerpt)
			}
		}
		_ = Wrap(text, Scan(text))
	})
}
