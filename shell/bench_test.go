package shell

import "testing"

func BenchmarkAnalyze(b *testing.B) {
	opts := &Options{Dir: "/repo", Home: "/home/u"}
	const line = "git status && npm run test -- --watch | tee out.log"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(line, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnalyzeNested(b *testing.B) {
	opts := &Options{Dir: "/repo", Home: "/home/u"}
	const line = `sudo -u root bash -c 'cd /tmp && find . -name "*.log" -exec rm -f {} +' && echo {a,b}-$(date) > ~/out`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(line, opts); err != nil {
			b.Fatal(err)
		}
	}
}
