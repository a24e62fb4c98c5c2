package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/internal/shellrun"
)

// TestAgentCodexWrapsShell runs a real Codex turn whose shell commands
// toolgate allows: the hook hands each back to Codex as its updatedInput,
// wrapped in `toolgate sandbox`, and Codex runs that. An allowed touch in
// the workspace makes its file; a script a person approved, which writes
// outside the workspace where the gate's analysis cannot see it, is
// stopped by the sandbox and leaves no file, which it would make run as
// it was given.
func TestAgentCodexWrapsShell(t *testing.T) {
	requireAgent(t, "codex")
	s := startServer(t)
	if rep, err := shellrun.Probe(context.Background(), sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workspace: s.project}); err != nil || rep.FS != "landlock" || rep.Mask != "mountns" {
		t.Skipf("no sandbox here: %v %+v", err, rep)
	}
	c := codexSetup(t, s, "")

	outside := t.TempDir()
	escaped := filepath.Join(outside, "escaped.txt")
	script := filepath.Join(s.project, "escape.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\necho before > inside-by-script.txt\necho escaped > "+escaped+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := startCodexMock(t, "all done",
		codexCall{Name: "exec_command", Args: map[string]any{"cmd": "touch marker.txt"}},
		codexCall{Name: "exec_command", Args: map[string]any{"cmd": "./escape.sh"}},
	)
	stop := codexApprover(t, s, map[string]string{"escape.sh": "allow_once"})
	stdout, stderr := codexRun(t, s, c, m)
	asked := stop()
	defer func() {
		if t.Failed() {
			t.Logf("codex stdout:\n%s\nstderr:\n%s\nasked: %q", stdout, stderr, asked)
		}
	}()

	if !codexExists(filepath.Join(s.project, "marker.txt")) {
		t.Errorf("the allowed, wrapped touch did not make marker.txt")
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "escape.sh") {
		t.Errorf("questions put to the person = %q, want the one for escape.sh", asked)
	}
	if !codexExists(filepath.Join(s.project, "inside-by-script.txt")) {
		t.Errorf("the approved script did not run (no inside-by-script.txt)")
	}
	if codexExists(escaped) {
		t.Errorf("the approved script wrote outside the workspace (%s): its command was not run in the sandbox", escaped)
	}
	// What Codex ran, as it reports it, is the wrapped command.
	if n := strings.Count(stdout, " sandbox --require landlock --require mountns --sandbox "); n < 2 {
		t.Errorf("codex's output shows %d wrapped commands, want both", n)
	}
	outs := m.outputs()
	if len(outs) < 2 || !strings.Contains(outs[1].Output, "Permission denied") {
		t.Errorf("the script's output does not show the sandbox refusing its write: %+v", outs)
	}
}
