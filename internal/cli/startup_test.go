package cli

import (
	"fmt"
	"os"
	"os/exec"
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
