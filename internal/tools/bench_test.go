package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchTree makes 10,000 files of about 2 KiB in 100 directories, with a
// .gitignore that hides one directory in ten.
func benchTree(b *testing.B) (string, *Executor, int64) {
	b.Helper()
	base, err := filepath.EvalSymlinks(b.TempDir())
	must(b, err)
	ws := filepath.Join(base, "ws")
	line := "the quick brown fox jumps over the lazy dog 0123456789\n"
	var total int64
	for d := 0; d < 100; d++ {
		dir := filepath.Join(ws, fmt.Sprintf("d%02d", d))
		must(b, os.MkdirAll(dir, 0o755))
		for f := 0; f < 100; f++ {
			body := strings.Repeat(line, 36)
			if f == 7 {
				body += "func needle() {}\n"
			}
			must(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), []byte(body), 0o644))
			total += int64(len(body))
		}
	}
	must(b, os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("d9*/\n"), 0o644))
	x, err := New(Options{StateDir: filepath.Join(base, "state")})
	must(b, err)
	return ws, x, total
}

// BenchmarkRead reads every file of the tree once per iteration; b.SetBytes
// gives MB/s.
func BenchmarkRead(b *testing.B) {
	ws, x, total := benchTree(b)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for d := 0; d < 100; d++ {
			for f := 0; f < 100; f++ {
				_, err := x.Exec(context.Background(), &Call{ID: "r", Tool: "Read", Input: map[string]any{"path": fmt.Sprintf("d%02d/f%03d.go", d, f)}, Cwd: ws}, "")
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(b.N*10000)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkSearch searches the whole tree per iteration; it reports the
// files searched per second.
func BenchmarkSearch(b *testing.B) {
	ws, x, _ := benchTree(b)
	b.ReportAllocs()
	b.ResetTimer()
	files := 0
	for b.Loop() {
		res, err := x.Exec(context.Background(), &Call{ID: "s", Tool: "Grep", Input: map[string]any{"pattern": `func \w+\(`}, Cwd: ws}, "")
		if err != nil {
			b.Fatal(err)
		}
		if got := strings.Count(string(res.Stdout), "\n"); got != 90 {
			b.Fatalf("%d matches, want 90 (ten directories ignored)", got)
		}
		files += res.Detail["files"].(int)
	}
	b.ReportMetric(float64(files)/b.Elapsed().Seconds(), "files/s")
}
