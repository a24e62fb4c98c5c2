package policy

import (
	"strings"
	"testing"
)

// TestWrapHooksSetting: wrap_hooks parses as a bool, a wrong type is an
// error naming the file, the highest layer wins, and an untrusted project
// cannot turn it off.
func TestWrapHooksSetting(t *testing.T) {
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
		{"user off", "wrap_hooks = false\n", "", false, true, ""},
		{"user on", "wrap_hooks = true\n", "", false, false, ""},
		{"trusted project off", "", "wrap_hooks = false\n", false, true, ""},
		{"project on over user off", "wrap_hooks = false\n", "wrap_hooks = true\n", true, false, ""},
		{"untrusted project cannot turn it off", "", "wrap_hooks = false\n", true, false, "wrap_hooks = false from"},
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
			if s.NoHookWrap != tt.off {
				t.Fatalf("NoHookWrap = %v, want %v", s.NoHookWrap, tt.off)
			}
			notes := strings.Join(s.Notes, "\n")
			if tt.note != "" && !strings.Contains(notes, tt.note) || tt.note == "" && strings.Contains(notes, "wrap_hooks") {
				t.Fatalf("notes %q, want %q", notes, tt.note)
			}
		})
	}
	_, err := ParseFile("bad.toml", []byte("wrap_hooks = \"no\"\n"), LayerUser)
	if err == nil || !strings.Contains(err.Error(), "bad.toml") {
		t.Fatalf("wrap_hooks = \"no\": error %v, want one naming bad.toml", err)
	}
}
