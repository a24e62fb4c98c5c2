package injection

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzScan: on any input Scan does not panic, its spans lie inside the
// input in order of class and position, and its excerpts are valid UTF-8
// and bounded; wrapped, it holds no marker but the wrapper's.
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
		// Wrapped, the text cannot end the wrapper: the only marker tags
		// are its own two.
		if fs := Scan(text); len(fs) > 0 {
			if w := Wrap(text, fs); len(markerTag().FindAll(w, -1)) != 2 {
				t.Fatalf("wrapped output holds a marker of its own: %q", w)
			}
		}
	})
}
