package policy

import "testing"

// TestExactAllowIsExact checks that an exact rule allows only the command
// line it names: flags may be spelled or ordered otherwise within their
// place, but not moved across an operand, and the command must not run
// through a wrapper. Deny and ask rules still match every such variant.
// Nothing allows what runs through sudo, doas or su.
func TestExactAllowIsExact(t *testing.T) {
	ctx := &MatchContext{Root: "/w/p", Home: "/home/u"}
	for _, tc := range []struct {
		rule     string
		name     string
		args     []string
		wrappers []string
		allow    bool // matched when allowing
		deny     bool // matched when denying
	}{
		{"Bash(docker run alpine chroot --privileged /host)", "docker", []string{"run", "alpine", "chroot", "--privileged", "/host"}, nil, true, true},
		{"Bash(docker run alpine chroot --privileged /host)", "docker", []string{"run", "--privileged", "alpine", "chroot", "/host"}, nil, false, true},
		{"Bash(docker run alpine sh -x)", "docker", []string{"run", "-x", "alpine", "sh"}, nil, false, true},
		{"Bash(rm -rf dist)", "rm", []string{"-r", "-f", "dist"}, nil, true, true},
		{"Bash(rm -rf dist)", "rm", []string{"-fr", "dist"}, nil, true, true},
		{"Bash(rm -rf dist)", "rm", []string{"dist", "-rf"}, nil, false, true},
		{"Bash(git commit -m msg)", "git", []string{"commit", "-m", "msg"}, nil, true, true},
		{"Bash(docker run hello-world)", "docker", []string{"run", "hello-world"}, []string{"timeout"}, false, true},
		{"Bash(docker run hello-world)", "docker", []string{"run", "hello-world"}, []string{"env"}, false, true},
		{"Bash(docker run hello-world)", "docker", []string{"run", "hello-world"}, []string{"xargs"}, false, true},
		{"Bash(npm test)", "npm", []string{"test"}, []string{"sudo"}, false, true},
		{"Bash(git status:*)", "git", []string{"status"}, []string{"sudo"}, false, true},
		{"Bash(git status:*)", "git", []string{"status"}, []string{"doas"}, false, true},
		{"Bash(git status:*)", "git", []string{"status"}, []string{"timeout"}, true, true},
	} {
		for _, c := range []struct {
			eff  Decision
			want bool
		}{{Allow, tc.allow}, {Deny, tc.deny}} {
			r, err := ParseRule(tc.rule, c.eff, Position{})
			if err != nil {
				t.Fatal(err)
			}
			v := &CommandView{Name: tc.name, Args: tc.args, Dynamic: make([]bool, len(tc.args)), Wrappers: tc.wrappers}
			if got := r.MatchCommand(v, ctx, c.eff != Allow); got != c.want {
				t.Errorf("%s %s vs %v %s %v = %v, want %v", c.eff, tc.rule, tc.wrappers, tc.name, tc.args, got, c.want)
			}
		}
	}
}
