package claudeimport

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestRule(t *testing.T) {
	cases := []struct {
		in, want, note, why string
	}{
		{"Bash", "Bash", "", ""},
		{"Bash(npm run test:*)", "Bash(npm run test:*)", "", ""},
		{"Bash(git * main)", "Bash(git * main)", "", ""},
		{"Read(./secrets/**)", "Read(./secrets/**)", "", ""},
		{"Read(.env)", "Read(.env)", "", ""},
		{"Read(~/.aws/**)", "Read(~/.aws/**)", "", ""},
		{"Read(//etc/shadow)", "Read(/etc/shadow)", "", ""},
		{"Edit(/src/**/*.ts)", "Edit(./src/**/*.ts)", "a leading / is the project root", ""},
		{"Write(docs/**)", "Write(docs/**)", "Claude Code reads path rules only on Read and Edit", ""},
		{"WebFetch(domain:example.com)", "WebFetch(domain:example.com)", "", ""},
		{"WebSearch", "WebSearch", "", ""},
		{"mcp__github", "mcp__github", "", ""},
		{"mcp__github__create_issue", "mcp__github__create_issue", "", ""},
		{"Task(Explore)", "", "", "does not gate the Task tool"},
		{"NotebookEdit", "", "", "does not gate notebook edits"},
	}
	for _, tc := range cases {
		got, note, why := Rule(tc.in)
		if got != tc.want || !strings.Contains(note, tc.note) || (note == "") != (tc.note == "") || !strings.Contains(why, tc.why) || (why == "") != (tc.why == "") {
			t.Errorf("Rule(%q) = %q, %q, %q; want %q, note %q, why %q", tc.in, got, note, why, tc.want, tc.note, tc.why)
		}
		if got != "" {
			if _, err := policy.ParseRule(got, policy.Deny, policy.Position{}); err != nil {
				t.Errorf("Rule(%q) = %q, which toolgate rejects: %v", tc.in, got, err)
			}
		}
	}
}

func TestConvertGolden(t *testing.T) {
	src, err := os.ReadFile("testdata/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Convert("testdata/settings.json", src, Options{Source: ".claude/settings.json", ProjectDir: "/work/proj"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	out.Write(res.Policy)
	out.WriteString("# ---- not translated\n")
	for _, s := range res.Skipped {
		out.WriteString("# " + s.String() + "\n")
	}
	out.WriteString("# ---- notes\n")
	for _, s := range res.Notes {
		out.WriteString("# " + s.String() + "\n")
	}
	golden := "testdata/settings.golden.toml"
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("output differs from %s (run with -update):\n%s", golden, out.String())
	}
	// The policy is a toolgate policy with the rules in force.
	f, err := policy.ParseFile(filepath.Join(t.TempDir(), "policy.toml"), res.Policy, policy.LayerUser)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, r := range f.Rules {
		texts = append(texts, r.Effect.String()+" "+r.Text)
	}
	got := strings.Join(texts, "\n")
	for _, w := range []string{"allow Bash(npm run test:*)", "deny Read(./secrets/**)", "ask Bash(git push:*)", "deny Read(/etc/shadow)"} {
		if !strings.Contains(got, w) {
			t.Errorf("rule %q missing from the parsed policy:\n%s", w, got)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{\n  \"permissions\": {\n    \"allow\": [\"Bash\",]\n  }\n}\n", "s.json:3:22: invalid character ']'"},
		{"{\"permissions\": {\"allow\": \"Bash\"}}", "s.json:1:32: permissions.allow must be an array"},
		{"{\"permissions\": []}", "s.json:1:17: permissions must be an object"},
	}
	for _, tc := range cases {
		_, err := Convert("s.json", []byte(tc.src), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Convert(%q) error %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestConvertQuotesAndRelativeDirs(t *testing.T) {
	src := `{"permissions": {"deny": ["Bash(echo \"a\\b\")"], "additionalDirectories": ["../docs", "/", "~/x"]}}`
	res, err := Convert("s.json", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := policy.ParseFile("p.toml", res.Policy, policy.LayerUser)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Policy)
	}
	if len(f.Rules) != 1 || f.Rules[0].Text != `Bash(echo "a\b")` {
		t.Errorf("rules %v", f.Rules)
	}
	if len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0].Reason, "relative") || res.Skipped[1].Value != "/" {
		t.Errorf("skipped %v", res.Skipped)
	}
	if !strings.Contains(string(res.Policy), `"~/x"`) {
		t.Errorf("policy:\n%s", res.Policy)
	}
}
