package shell

import "testing"

// TestWrapperSpecs checks that every wrapper the analysis sees through
// has its entry in the table of program knowledge.
func TestWrapperSpecs(t *testing.T) {
	for _, sp := range []*optSpec{&sudoSpec, &doasSpec, &timeoutSpec, &niceSpec, &ioniceSpec, &nohupSpec,
		&timeSpec, &commandSpec, &builtinSpec, &execSpec, &stdbufSpec, &chrtSpec, &tasksetSpec, &setsidSpec,
		&unbufferSpec, &xargsSpec, &watchSpec, &suSpec, &envSpec, &mapfileSpec, &cdSpec, &pushdSpec} {
		sp.spec() // panics when missing
		if !sp.spec().Posix && sp.prog != "mapfile" {
			t.Errorf("wrapper %s: its spec must end options at the first operand (@posix), the program it runs", sp.prog)
		}
	}
}
