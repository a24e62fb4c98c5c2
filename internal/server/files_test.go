package server

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestApprovalCarriesFilesAsAsked: a question about an edit, a write or a
// patch carries the files it changes as they were when it was asked, in
// the receipt's version form and with their secrets redacted, so that the
// page can show the change as a diff; a later change of the file does not
// change what the question shows. Other tools carry no files.
func TestApprovalCarriesFilesAsAsked(t *testing.T) {
	const secret = "ghp_R7gTq2Vx9LmN4pZs8KjW3hYb6FdC1eA0uXoI"
	e := newEnv(t)
	write := func(name, content string) string {
		p := filepath.Join(e.project, name)
		must(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	small := "package main\n\nconst token = \"" + secret + "\"\n\nfunc main() {}\n"
	write("main.go", small)
	write("big.txt", strings.Repeat("x", 70<<10))
	write("bin.dat", "a\x00b")
	// A pipe would block a reader that opened it: it is not read.
	must(t, syscall.Mkfifo(filepath.Join(e.project, "pipe"), 0o644))
	sum := sha256.Sum256([]byte(small))
	version := "sha256:" + hex.EncodeToString(sum[:])
	bsum := sha256.Sum256([]byte("a\x00b"))
	binVersion := "sha256:" + hex.EncodeToString(bsum[:])

	for _, tc := range []struct {
		name, tool string
		input      map[string]any
		want       []File // Content compared by substring; "" for none
	}{
		{"edit", "Edit", map[string]any{"file_path": "main.go", "old_string": "func main() {}", "new_string": "func main() { run() }"},
			[]File{{Path: "main.go", Version: version, Content: "[REDACTED"}}},
		{"multiedit", "MultiEdit", map[string]any{"file_path": "main.go", "edits": []any{map[string]any{"old_string": "main", "new_string": "app"}}},
			[]File{{Path: "main.go", Version: version, Content: "func main() {}"}}},
		{"new file", "Write", map[string]any{"file_path": "new.go", "content": "package new\n"},
			[]File{{Path: "new.go", Version: "absent"}}},
		{"too large", "Write", map[string]any{"file_path": "big.txt", "content": "y"},
			[]File{{Path: "big.txt", Note: "larger than 64 KiB"}}},
		{"binary", "Write", map[string]any{"file_path": "bin.dat", "content": "y"},
			[]File{{Path: "bin.dat", Version: binVersion, Note: "not text"}}},
		{"pipe", "Write", map[string]any{"file_path": "pipe", "content": "y"},
			[]File{{Path: "pipe", Note: "not a regular file"}}},
		{"patch", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: main.go\n@@\n-func main() {}\n+func main() { run() }\n*** End Patch\n"},
			[]File{{Path: "main.go", Version: version, Content: "func main() {}"}}},
		{"shell", "Bash", map[string]any{"command": "echo hi > main.go"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := "files-" + strings.ReplaceAll(tc.name, " ", "-")
			r := e.call("POST", "/v1/check", e.tokens.Agent, map[string]any{
				"tool": tc.tool, "input": tc.input, "cwd": e.project, "session": session, "agent": "coder", "wait": false,
			})
			m := r.json(t)
			if r.code != 200 || m["state"] != "pending" {
				t.Fatalf("check: %d %s", r.code, r.body)
			}
			id := m["approval_id"].(string)
			var a Approval
			e.call("GET", "/v1/approvals/"+id, e.tokens.Approver, nil).decode(t, &a)
			if a.Agent != "coder" {
				t.Errorf("agent %q, want coder", a.Agent)
			}
			if len(a.Files) != len(tc.want) {
				t.Fatalf("files %+v, want %d", a.Files, len(tc.want))
			}
			for i, w := range tc.want {
				got := a.Files[i]
				if got.Path != filepath.Join(e.project, w.Path) || got.Version != w.Version ||
					!strings.Contains(got.Content, w.Content) || !strings.Contains(got.Note, w.Note) {
					t.Errorf("file %d: %+v, want %+v", i, got, w)
				}
				if strings.Contains(got.Content, secret) {
					t.Errorf("file %d shows the secret: %q", i, got.Content)
				}
			}
			if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 200 {
				t.Fatalf("deny: %d %s", r.code, r.body)
			}
		})
	}

	// What the question shows is the file as asked about, not as it is
	// when the page reads the question.
	r := e.call("POST", "/v1/check", e.tokens.Agent, map[string]any{
		"tool": "Edit", "input": map[string]any{"file_path": "main.go", "old_string": "main", "new_string": "app"},
		"cwd": e.project, "session": "files-later", "wait": false,
	})
	id, _ := r.json(t)["approval_id"].(string)
	write("main.go", "package rewritten\n")
	var a Approval
	e.call("GET", "/v1/approvals/"+id, e.tokens.Approver, nil).decode(t, &a)
	if len(a.Files) != 1 || a.Files[0].Version != version || !strings.Contains(a.Files[0].Content, "package main") {
		t.Errorf("after a rewrite the question shows %+v, want the file as it was asked about", a.Files)
	}
}

// TestAgentCannotReadFilesThroughItsQuestion: the attack is an agent that
// asks to write a file it may not read (one a Read deny rule keeps from
// it, say) and reads the file's content from its own question, which the
// server read as itself. An agent token is shown its questions without
// the files; only the approver sees them.
func TestAgentCannotReadFilesThroughItsQuestion(t *testing.T) {
	e := newEnv(t)
	must(t, os.WriteFile(filepath.Join(e.project, "private.txt"), []byte("the server's own notes\n"), 0o600))
	r := e.call("POST", "/v1/check", e.tokens.Agent, map[string]any{
		"tool": "Write", "input": map[string]any{"file_path": "private.txt", "content": "x"}, "cwd": e.project, "session": "exfil", "wait": false,
	})
	m := r.json(t)
	if m["state"] != "pending" {
		t.Fatalf("the write is not asked about: %s", r.body)
	}
	id := m["approval_id"].(string)
	for _, path := range []string{"/v1/approvals/" + id, "/v1/approvals?session=exfil", "/v1/approvals"} {
		body := string(e.call("GET", path, e.tokens.Agent, nil).body)
		if !strings.Contains(body, id) || strings.Contains(body, "own notes") || strings.Contains(body, `"files"`) {
			t.Errorf("GET %s as the agent: %s; want the question without the file", path, body)
		}
	}
	var a Approval
	e.call("GET", "/v1/approvals/"+id, e.tokens.Approver, nil).decode(t, &a)
	if len(a.Files) != 1 || !strings.Contains(a.Files[0].Content, "own notes") {
		t.Errorf("the approver is not shown the file as it was: %+v", a.Files)
	}
}
