package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/tools"
)

// toolsAt runs a tool call through an executor over state, in ws.
func toolsAt(t *testing.T, state, ws, id, tool string, input map[string]any) string {
	t.Helper()
	x, err := tools.New(tools.Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Exec(context.Background(), &tools.Call{ID: id, Tool: tool, Input: input, Cwd: ws}, "")
	if err != nil {
		t.Fatal(err)
	}
	return res.Artifact
}

func toolsDirs(t *testing.T) (dir, state, ws string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state, ws = filepath.Join(dir, "state"), filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, state, ws
}

func TestArtifactRoundTrip(t *testing.T) {
	dir, state, ws := toolsDirs(t)
	content := strings.Repeat("line of output\n", 1000) // more than a preview holds
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	id := toolsAt(t, state, ws, "tc_1", "Read", map[string]any{"file_path": "big.txt"})
	out, errOut, code := run(t, dir, "", "artifact", "--state-dir", state, id)
	if code != 0 || out != content {
		t.Fatalf("artifact %s: exit %d, %d bytes (want %d), stderr %s", id, code, len(out), len(content), errOut)
	}
	// a stored artifact that was changed is refused
	p := filepath.Join(state, "artifacts", id[:2], id[2:])
	if err := os.WriteFile(p, []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, dir, "", "artifact", "--state-dir", state, id); code == 0 || !strings.Contains(errOut, "corrupt") {
		t.Errorf("tampered artifact: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run(t, dir, "", "artifact", "--state-dir", state, "../../etc/passwd"); code != 2 || !strings.Contains(errOut, "not an artifact id") {
		t.Errorf("bad id: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run(t, dir, "", "artifact", "--state-dir", state, strings.Repeat("a", 64)); code != 1 || !strings.Contains(errOut, "no artifact") {
		t.Errorf("unknown id: exit %d, %s", code, errOut)
	}
}

func TestRollbackCommand(t *testing.T) {
	dir, state, ws := toolsDirs(t)
	f := filepath.Join(ws, "a.txt")
	if err := os.WriteFile(f, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	toolsAt(t, state, ws, "tc_7", "Write", map[string]any{"file_path": "a.txt", "content": "after\n"})

	// changed since: refused, the difference printed, nothing changed
	if err := os.WriteFile(f, []byte("after\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, dir, "", "rollback", "--state-dir", state, "tc_7")
	if code != 1 || !strings.Contains(out, "+mine") || !strings.Contains(errOut, "not rolled back") {
		t.Fatalf("rollback over a change: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(f); string(b) != "after\nmine\n" {
		t.Fatalf("a.txt = %q: changed by a refused rollback", b)
	}

	// as the call left it: restored
	if err := os.WriteFile(f, []byte("after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, dir, "", "rollback", "--state-dir", state, "tc_7")
	if code != 0 || !strings.Contains(out, "restored "+f) {
		t.Fatalf("rollback: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(f); string(b) != "before\n" {
		t.Fatalf("a.txt = %q after rollback", b)
	}
}

func TestToolsCommand(t *testing.T) {
	dir, _, _ := toolsDirs(t)
	out, errOut, code := run(t, dir, "", "tools", "--mode", "plan", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var list []struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range list {
		names = append(names, l.Name)
		if len(l.Schema) == 0 {
			t.Errorf("%s has no schema", l.Name)
		}
	}
	if got := strings.Join(names, ","); got != "fetch,list,read,search" {
		t.Errorf("plan mode lists %s", got)
	}
	out, _, code = run(t, dir, "", "tools")
	for _, name := range []string{"write", "edit", "patch", "shell"} {
		if code != 0 || !strings.Contains(out, name+" ") {
			t.Errorf("default mode listing lacks %s:\n%s", name, out)
		}
	}
	if _, errOut, code := run(t, dir, "", "tools", "--mode", "nonsense"); code != 2 {
		t.Errorf("bad mode: exit %d %s", code, errOut)
	}
}
