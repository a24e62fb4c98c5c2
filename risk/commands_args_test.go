package risk

import (
	"slices"
	"strings"
	"testing"
)

func TestPatternArgsAndNamesOnly(t *testing.T) {
	for _, tc := range []struct {
		line    string
		pattern []int // indexes of args that are patterns
		names   bool
	}{
		{"grep -q .env .gitignore", []int{1}, false},
		{"grep -e .env .gitignore", []int{1}, false},
		{"rg --files src", nil, false},
		{"find . -name .env -newer x", []int{2}, false},
		{"tar --exclude=.env -czf out.tgz src", []int{0}, false},
		{"git commit -m .env", []int{2}, false},
		{"git rm --cached .env", []int{}, true},
		{"git add .env", []int{}, false},
		{"git update-index --add .env", []int{}, false},
		{"echo ~/.ssh/id_rsa", []int{}, true},
		{"python3 -x .env", []int{}, false},
	} {
		f := strings.Fields(tc.line)
		got := PatternArgs(f[0], f[1:])
		var idx []int
		for i, p := range got {
			if p {
				idx = append(idx, i)
			}
		}
		if !slices.Equal(idx, tc.pattern) && len(idx)+len(tc.pattern) > 0 {
			t.Errorf("%s: pattern args %v, want %v", tc.line, idx, tc.pattern)
		}
		if n := NamesOnly(f[0], f[1:]); n != tc.names {
			t.Errorf("%s: NamesOnly = %v, want %v", tc.line, n, tc.names)
		}
	}
}
