package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/toolgate/toolgate/policy"
)

// TestServePolicyEdits: a running server applies an edit of a project's
// policy file from the next call on, with no restart, and says which
// version of the files decided; an invalid edit denies every call,
// naming the file and line, is logged once, and ends when the file is
// fixed.
func TestServePolicyEdits(t *testing.T) {
	rs := startServe(t)
	file := filepath.Join(rs.project, policy.ProjectFile)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Dir(file), 0o755))
	steps := []struct {
		policy  string // written before the call; "-" leaves the file
		want    string // decision
		reason  string
		has     string // in the message or rule origin
		version string // "same", "new" or "none" against the call before
	}{
		{"", "allow", "read_only", "", "new"},
		{"[permissions]\ndeny = [\"Read(README.md)\"]\n", "deny", "rule_deny", policy.ProjectFile + ":2", "new"},
		{"-", "deny", "rule_deny", policy.ProjectFile + ":2", "same"},
		{"[permissions]\ndeny = [\"Read(README.md\"]\n", "deny", "policy_error", policy.ProjectFile + ":2:", "none"},
		{"-", "deny", "policy_error", policy.ProjectFile + ":2:", "none"},
		{"[permissions]\n", "allow", "read_only", "", "new"},
	}
	version := ""
	for i, s := range steps {
		if s.policy != "-" {
			must(os.WriteFile(file, []byte(s.policy), 0o644))
		}
		code, m := rs.post(t, "/v1/check", rs.agent, map[string]any{
			"tool": "Read", "input": map[string]any{"file_path": "README.md"}, "cwd": rs.project, "session": "s1", "wait": true})
		got, _ := m["policy_version"].(string)
		where, _ := m["message"].(string)
		origin, _ := m["rule_origin"].(string)
		where += " " + origin
		if code != 200 || m["decision"] != s.want || m["reason"] != s.reason || !strings.Contains(where, s.has) {
			t.Fatalf("step %d: %d %v, want %s (%s) with %q", i+1, code, m, s.want, s.reason, s.has)
		}
		switch {
		case s.version == "none" && got != "",
			s.version == "same" && got != version,
			s.version == "new" && (got == "" || got == version):
			t.Fatalf("step %d: policy version %q after %q, want %s", i+1, got, version, s.version)
		}
		if got != "" {
			version = got
		}
	}
	// The effective policy shown is the version the last call was
	// decided under.
	if code, m := rs.do(t, "GET", "/v1/policy?cwd="+rs.project, rs.approver, nil); code != 200 || m["version"] != version {
		t.Fatalf("GET /v1/policy: %d, version %v, want %s", code, m["version"], version)
	}
	if n := strings.Count(rs.stderr.String(), "policy cannot be loaded"); n != 1 {
		t.Fatalf("the invalid policy was logged %d times:\n%s", n, rs.stderr)
	}
}

// TestServeInstancesShareRules: of two servers over the same state and
// policy files, the one that was not asked honours the rule an "always
// allow in this project" answer made the other write.
func TestServeInstancesShareRules(t *testing.T) {
	one := startServe(t)
	two := startServe(t, "--state-dir", one.stateDir)
	check := func(rs *runningServer, command, session string) map[string]any {
		t.Helper()
		code, m := rs.post(t, "/v1/check", rs.agent, map[string]any{
			"tool": "Bash", "input": map[string]any{"command": command}, "cwd": one.project, "session": session})
		if code != 200 {
			t.Fatalf("check %q: %d %v", command, code, m)
		}
		return m
	}
	// Both have the project's policy loaded.
	if m := check(two, "git status", "s2"); m["decision"] != "allow" {
		t.Fatalf("git status on the second: %v", m)
	}
	m := check(one, "make build", "s1")
	if m["state"] != "pending" {
		t.Fatalf("make build on the first: %v", m)
	}
	id := m["approval_id"].(string)
	code, m := one.post(t, "/v1/approvals/"+id, one.approver, map[string]any{"answer": "allow_project", "rule": "Bash(make build)"})
	if code != 200 {
		t.Fatalf("answer: %d %v", code, m)
	}
	local := filepath.Join(one.project, policy.LocalFile)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if data, _ := os.ReadFile(local); strings.Contains(string(data), "Bash(make build)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rule was never written to %s", local)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m = check(two, "make build", "s2")
	if m["decision"] != "allow" || m["reason"] != "rule_allow" || !strings.HasPrefix(m["rule_origin"].(string), local+":") {
		t.Fatalf("make build on the second: %v", m)
	}
}

// TestExplainShowsVersion: explain names the policy version and each
// file's, the same the decision carries, and a new one after an edit.
func TestExplainShowsVersion(t *testing.T) {
	dir := workspace(t, &txtar.Archive{})
	file := filepath.Join(dir, "project", policy.ProjectFile)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	req := `{"tool":"Read","input":{"file_path":"README.md"},"cwd":"` + filepath.Join(dir, "project") + `"}`
	explain := func(policyText string) (version, fileLine string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(policyText), 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := run(t, dir, req, "explain")
		jsonOut, _, jcode := run(t, dir, req, "explain", "--json")
		if code != 0 || jcode != 0 {
			t.Fatalf("exit %d, %d: %s", code, jcode, stderr)
		}
		var d struct {
			PolicyVersion string `json:"policy_version"`
		}
		if err := json.Unmarshal([]byte(jsonOut), &d); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "version   "); ok {
				version = v
			}
			if strings.HasPrefix(line, "file      project "+file+" ") {
				fileLine = line
			}
		}
		if version == "" || version != d.PolicyVersion || fileLine == "" {
			t.Fatalf("version %q (decision %q), file line %q in:\n%s", version, d.PolicyVersion, fileLine, out)
		}
		return version, fileLine
	}
	v1, f1 := explain("[permissions]\n")
	v2, f2 := explain("[permissions]\ndeny = [\"Read(x)\"]\n")
	if v1 == v2 || f1 == f2 {
		t.Fatalf("the version did not change with the file: %s %s, %q %q", v1, v2, f1, f2)
	}
}
