package policy

import (
	"strings"
	"testing"
)

// TestMCPElicitationSetting: mcp_elicitation parses as a bool, is on by
// default, the highest layer wins, and an untrusted project may turn it
// off but not on again.
func TestMCPElicitationSetting(t *testing.T) {
	parse := func(t *testing.T, src string, layer Layer) *File {
		t.Helper()
		f, err := ParseFile(layer.String()+".toml", []byte(src), layer)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tests := []struct {
		name      string
		user      string
		project   string
		untrusted bool
		off       bool
		note      string
	}{
		{"default on", "", "", false, false, ""},
		{"user off", "mcp_elicitation = false\n", "", false, true, ""},
		{"untrusted project off", "", "mcp_elicitation = false\n", true, true, ""},
		{"trusted project on over user off", "mcp_elicitation = false\n", "mcp_elicitation = true\n", false, false, ""},
		{"untrusted project cannot turn it on", "mcp_elicitation = false\n", "mcp_elicitation = true\n", true, true, "mcp_elicitation = true from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			project := parse(t, tt.project, LayerProject)
			if tt.untrusted {
				project.Distrust()
			}
			s, err := Merge(parse(t, tt.user, LayerUser), project)
			if err != nil {
				t.Fatal(err)
			}
			if s.NoMCPElicitation != tt.off {
				t.Fatalf("NoMCPElicitation = %v, want %v", s.NoMCPElicitation, tt.off)
			}
			notes := strings.Join(s.Notes, "\n")
			if tt.note != "" && !strings.Contains(notes, tt.note) || tt.note == "" && strings.Contains(notes, "mcp_elicitation") {
				t.Fatalf("notes %q, want %q", notes, tt.note)
			}
		})
	}
	_, err := ParseFile("bad.toml", []byte("mcp_elicitation = \"no\"\n"), LayerUser)
	if err == nil || !strings.Contains(err.Error(), "bad.toml") {
		t.Fatalf("mcp_elicitation = \"no\": error %v, want one naming bad.toml", err)
	}
}
