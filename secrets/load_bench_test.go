package secrets

import "testing"

// BenchmarkLoadRules parses the embedded rules as a process's first scan
// does (the regexes are compiled later, at their rules' first run).
func BenchmarkLoadRules(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseRules(patternsTOML, patternsFile, true); err != nil {
			b.Fatal(err)
		}
	}
}
