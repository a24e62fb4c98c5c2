package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestContainment: with a layer of the sandbox missing, interpreters with
// inline code and scripts ask even under an allow rule; with every layer,
// or when the caller does not say, the rule allows them as before. Calls
// that run no interpreter are judged as before in every case.
func TestContainment(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "w.py"), []byte("open('/etc/x','w')\n"), 0o644))
	f, err := policy.ParseRules(policy.LayerCLI, []string{"Bash(python3:*)", "Bash(sh:*)", "Bash(ls:*)"}, nil, nil)
	must(t, err)
	set, err := policy.Merge(f)
	must(t, err)
	e, err := New(Options{Policy: Fixed(set), Home: t.TempDir()})
	must(t, err)
	full := &Containment{FS: true, Mask: true, Net: true, Syscalls: true}
	noFS := &Containment{Mask: true, Net: true, Syscalls: true}
	noMask := &Containment{FS: true, Net: true, Syscalls: true}
	noNet := &Containment{FS: true, Mask: true, Syscalls: true}
	noSeccomp := &Containment{FS: true, Mask: true, Net: true}
	for _, tc := range []struct {
		name    string
		command string
		c       *Containment
		want    policy.Decision
		reason  Reason
	}{
		{"inline, not said", `python3 -c "open('/etc/x','w')"`, nil, policy.Allow, ReasonRuleAllow},
		{"inline, contained", `python3 -c "open('/etc/x','w')"`, full, policy.Allow, ReasonRuleAllow},
		{"inline, no fs", `python3 -c "open('/etc/x','w')"`, noFS, policy.Ask, ReasonUncontained},
		{"inline, no mask", `python3 -c "print(open('.env').read())"`, noMask, policy.Ask, ReasonUncontained},
		{"inline, no net", `python3 -c "import socket"`, noNet, policy.Ask, ReasonUncontained},
		{"inline, no seccomp", `python3 -c "import os"`, noSeccomp, policy.Ask, ReasonUncontained},
		{"script, contained", `python3 w.py`, full, policy.Allow, ReasonRuleAllow},
		{"script, no fs", `python3 w.py`, noFS, policy.Ask, ReasonUncontained},
		{"shell script, no mask", `sh w.py`, noMask, policy.Ask, ReasonUncontained},
		{"no interpreter, no fs", `ls -la`, noFS, policy.Allow, ReasonRuleAllow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := e.Check(context.Background(), &Request{Tool: "Bash", Input: sh(tc.command), Cwd: dir, Containment: tc.c})
			if d.Decision != tc.want || d.Reason != tc.reason {
				t.Fatalf("%s: %s %s (%s), want %s %s", tc.command, d.Decision, d.Reason, d.Message, tc.want, tc.reason)
			}
		})
	}
}
