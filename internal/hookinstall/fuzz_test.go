package hookinstall

import (
	"encoding/json"
	"testing"
)

// FuzzParseJSON: the settings reader never panics, accepts as strict JSON
// only what encoding/json accepts, and reads JSON with comments whenever
// it reads it without.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": []}]}}`,
		"{\n  // comment\n  \"a\": [1, 2,],\n}\n", `{"a": "\u00e9\n"}`, `[`, `{"a":1}{}`, `/* x */ {}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, strictErr := parseJSON("settings.json", []byte(src), false)
		_, looseErr := parseJSON("settings.json", []byte(src), true)
		if strictErr == nil && !json.Valid([]byte(src)) {
			t.Fatalf("strict parse accepted %q, which is not JSON", src)
		}
		if strictErr == nil && looseErr != nil {
			t.Fatalf("%q parses as JSON but not as JSON with comments: %v", src, looseErr)
		}
	})
}

// FuzzParseGuarded: reading a hook command as a guard never panics, and a
// command read as one is exactly the guard install writes for what was
// read, so nothing else passes for toolgate's guard.
func FuzzParseGuarded(f *testing.F) {
	for i := range guards {
		f.Add(guards[i].command("/opt/tg/bin/toolgate", 600))
		f.Add(guards[i].command("/a b/it's/toolgate", 60000))
	}
	f.Add("/bin/sh -c 'x' toolgate '\"'")
	f.Fuzz(func(t *testing.T, cmd string) {
		g, prog, seconds, ok := parseGuarded(cmd)
		if ok && g.commandSeconds(prog, seconds) != cmd {
			t.Fatalf("%q read as the %s %s guard of %q with %ds, which is %q", cmd, g.client, g.event, prog, seconds, g.commandSeconds(prog, seconds))
		}
	})
}
