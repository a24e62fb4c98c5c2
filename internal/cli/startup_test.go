package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxInitBytes bounds what the initialization of one of toolgate's
// packages may allocate. Every run of toolgate pays for it, a hook's
// `toolgate check` and `toolgate sandbox -- true` included; tables that
// take work to build (the program specs, the argument schemas) are built
// at first use instead.
const maxInitBytes = 256 << 10

// TestInitCost runs this test binary, which holds every package the
// toolgate command does, with GODEBUG=inittrace=1, and checks what each of
// toolgate's packages allocates before main. Bytes allocated, unlike time,
// do not depend on the load of the machine.
func TestInitCost(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	inits, err := parseInitTrace(string(out))
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	seen := 0
	for _, in := range inits {
		total += in.ms
		if !strings.HasPrefix(in.pkg, "github.com/toolgate/toolgate/") && in.pkg != "github.com/toolgate/toolgate" {
			continue
		}
		seen++
		if in.bytes > maxInitBytes {
			t.Errorf("init of %s allocates %d bytes (%d allocs, %.2f ms), more than %d: build what it builds at first use",
				in.pkg, in.bytes, in.allocs, in.ms, maxInitBytes)
		}
	}
	if seen < 5 {
		t.Fatalf("inittrace names %d of toolgate's packages; the trace format changed?\n%s", seen, out)
	}
	t.Logf("init of %d packages: %.1f ms", len(inits), total)
}

// TestNoRegexpAtInit checks that no package of the module compiles a
// regular expression in a package-level variable's initializer, which
// every toolgate process (a hook's among them) would pay for at start-up,
// whether or not it uses it: such a variable is made at first use
// (sync.OnceValue). A regexp compiled once costs too little for
// TestInitCost's budget to catch, and they add up.
func TestNoRegexpAtInit(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || d.Name() == "bench" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					call, ok := v.(*ast.CallExpr)
					if !ok {
						continue
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "MustCompile" {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "regexp" {
							t.Errorf("%s: a regexp compiled at package initialization; make it at first use (sync.OnceValue)", fset.Position(call.Pos()))
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s; is that the module's root?", files, root)
	}
}

// pkgInit is one line of GODEBUG=inittrace=1:
// "init PKG @0.5 ms, 0.25 ms clock, 1024 bytes, 10 allocs".
type pkgInit struct {
	pkg           string
	ms            float64
	bytes, allocs int
}

func parseInitTrace(out string) ([]pkgInit, error) {
	var inits []pkgInit
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[5] != "ms" || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		var in pkgInit
		var err1, err2, err3 error
		in.pkg = f[1]
		in.ms, err1 = strconv.ParseFloat(f[4], 64)
		in.bytes, err2 = strconv.Atoi(f[7])
		in.allocs, err3 = strconv.Atoi(f[9])
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("bad inittrace line %q", line)
		}
		inits = append(inits, in)
	}
	return inits, nil
}
