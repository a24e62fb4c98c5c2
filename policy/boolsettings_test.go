package policy

import (
	"strings"
	"testing"
)

// TestBoolSettings: each on/off setting parses as a bool, a wrong type is
// an error naming the file, the highest layer wins, and an untrusted
// project may change it only in the direction that tightens the gate.
func TestBoolSettings(t *testing.T) {
	parse := func(t *testing.T, src string, layer Layer) *File {
		t.Helper()
		f, err := ParseFile(layer.String()+".toml", []byte(src), layer)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	type tcase struct {
		name      string
		user      string
		project   string
		untrusted bool
		off       bool
		note      string
	}
	settings := []struct {
		key   string
		off   func(*Set) bool
		cases []tcase
	}{
		{"mcp_elicitation", func(s *Set) bool { return s.NoMCPElicitation }, []tcase{
			{"default on", "", "", false, false, ""},
			{"user off", "mcp_elicitation = false\n", "", false, true, ""},
			{"untrusted project off", "", "mcp_elicitation = false\n", true, true, ""},
			{"trusted project on over user off", "mcp_elicitation = false\n", "mcp_elicitation = true\n", false, false, ""},
			{"untrusted project cannot turn it on", "mcp_elicitation = false\n", "mcp_elicitation = true\n", true, true, "mcp_elicitation = true from"},
		}},
		{"wrap_hooks", func(s *Set) bool { return s.NoHookWrap }, []tcase{
			{"default on", "", "", false, false, ""},
			{"user off", "wrap_hooks = false\n", "", false, true, ""},
			{"user on", "wrap_hooks = true\n", "", false, false, ""},
			{"trusted project off", "", "wrap_hooks = false\n", false, true, ""},
			{"untrusted project on over user off", "wrap_hooks = false\n", "wrap_hooks = true\n", true, false, ""},
			{"untrusted project cannot turn it off", "", "wrap_hooks = false\n", true, false, "wrap_hooks = false from"},
		}},
	}
	for _, st := range settings {
		for _, tt := range st.cases {
			t.Run(st.key+"/"+tt.name, func(t *testing.T) {
				project := parse(t, tt.project, LayerProject)
				if tt.untrusted {
					project.Distrust()
				}
				s, err := Merge(parse(t, tt.user, LayerUser), project)
				if err != nil {
					t.Fatal(err)
				}
				if got := st.off(s); got != tt.off {
					t.Fatalf("%s off = %v, want %v", st.key, got, tt.off)
				}
				notes := strings.Join(s.Notes, "\n")
				if tt.note != "" && !strings.Contains(notes, tt.note) || tt.note == "" && strings.Contains(notes, st.key) {
					t.Fatalf("notes %q, want %q", notes, tt.note)
				}
			})
		}
		_, err := ParseFile("bad.toml", []byte(st.key+" = \"no\"\n"), LayerUser)
		if err == nil || !strings.Contains(err.Error(), "bad.toml") {
			t.Fatalf("%s = \"no\": error %v, want one naming bad.toml", st.key, err)
		}
	}
}
