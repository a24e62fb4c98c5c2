package claudeimport

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// FuzzConvert: whatever a settings file holds, Convert returns an error or
// a policy file that toolgate parses, never panics.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		`{"permissions": {"allow": ["Bash(npm test)", "Read(./src/**)"], "deny": ["Read(//etc/**)", "WebFetch(domain:example.com)"], "ask": ["mcp__gh__create_issue"], "additionalDirectories": ["../lib", "/abs"], "defaultMode": "acceptEdits"}}`,
		`{"permissions": {"allow": [1, null, "Task", "Bash(rm -rf:*)"]}}`,
		`{}`, `null`, `{"permissions": null}`, `{"permissions": {"defaultMode": "bypassPermissions"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		res, err := Convert("settings.json", []byte(src), Options{Source: "settings.json", ProjectDir: "/proj"})
		if err != nil {
			return
		}
		if _, err := policy.ParseFile("policy.toml", res.Policy, policy.LayerUser); err != nil {
			t.Fatalf("Convert(%q) wrote a policy toolgate cannot read: %v\n%s", src, err, res.Policy)
		}
	})
}
