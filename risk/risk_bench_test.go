package risk

import "testing"

// BenchmarkCommand reads typical command lines with the knowledge base:
// by their specs where a program has one.
func BenchmarkCommand(b *testing.B) {
	lines := [][]string{
		{"git", "log", "--oneline", "-5"},
		{"grep", "-rn", "TODO", "src"},
		{"tar", "tzf", "release.tgz"},
		{"sort", "-t,", "-k2", "-n", "data.csv"},
		{"ls", "-la", "src"},
		{"rm", "-rf", "dist"},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			Command(l[0], l[1:], nil)
		}
	}
}

// BenchmarkRunnerCommand reads build and test runners' command lines by
// their specs.
func BenchmarkRunnerCommand(b *testing.B) {
	lines := [][]string{
		{"npm", "run", "build", "--silent"},
		{"cargo", "test", "--release", "-p", "app", "--", "--nocapture"},
		{"make", "-j4", "test"},
		{"pytest", "-q", "-k", "test_x", "tests"},
		{"ssh", "-p", "2222", "host", "ls", "-la"},
		{"rsync", "-avz", "--exclude", ".git", "a/", "host:b"},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			Command(l[0], l[1:], nil)
		}
	}
}

// BenchmarkLoadAllSpecs parses every built-in table at once, what the
// first lookup cost before entries were parsed one by one.
func BenchmarkLoadAllSpecs(b *testing.B) {
	tables, subs := builtinTables()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := loadSpecs(tables, subs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookupOneEntry parses git's entry and its status subcommand's,
// what a hook judging git status pays at its first lookup.
func BenchmarkLookupOneEntry(b *testing.B) {
	e := specIndex()["git"]
	b.ReportAllocs()
	for b.Loop() {
		fresh := &specEntry{table: e.table, lines: e.lines, start: e.start, end: e.end, subs: e.subs}
		if fresh.load().Subcommand("status") == nil {
			b.Fatal("no spec for git status")
		}
	}
}

// BenchmarkSpecIndex builds the built-in tables (git's subcommands are
// named here and written at their first use) and indexes their entries by
// their first lines: what the first lookup of any program pays besides its
// entry, and what BenchmarkLoadAllSpecs leaves out.
func BenchmarkSpecIndex(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		tables, _ := indexedTables()
		if len(indexEntries(tables)) == 0 {
			b.Fatal("no entries")
		}
	}
}

// BenchmarkClassifyPath classes an ordinary file below a home directory
// whose name has capitals, as a decision classes every path it resolves.
func BenchmarkClassifyPath(b *testing.B) {
	const home = "/tmp/TestCPU123/001/home"
	b.ReportAllocs()
	for b.Loop() {
		if ClassifyPath("/tmp/TestCPU123/001/project/src/main.go", home) != Ordinary {
			b.Fatal("class changed")
		}
	}
}
