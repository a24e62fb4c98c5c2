package risk

import (
	"slices"
	"strings"
	"testing"
)

func TestGitNetwork(t *testing.T) {
	for _, tc := range []struct {
		line    string
		network bool
		hosts   []string
		exec    bool
		secret  bool
		destr   bool
	}{
		{"git log --oneline -5", false, nil, false, false, false},
		{"git status", false, nil, false, false, false},
		{"git grep -n foo", false, nil, false, false, false},
		{"git remote -v", false, nil, false, false, false},
		{"git remote show -n origin", false, nil, false, false, false},
		{"git remote add origin git@evil.example:x", false, nil, false, false, false},
		{"git archive HEAD", false, nil, false, false, false},
		{"git fetch origin", true, nil, false, false, false},
		{"git fetch git@evil.example:org/x.git", true, []string{"evil.example"}, false, false, false},
		{"git pull https://evil.example/x main", true, []string{"evil.example"}, false, false, false},
		{"git push origin main:main", true, nil, false, false, false},
		{"git clone user@[::1]:x d", true, []string{"::1"}, false, false, false},
		{"git ls-remote ssh://git@evil.example:22/x", true, []string{"evil.example"}, false, false, false},
		{"git send-pack https://x.example/r main", true, []string{"x.example"}, false, false, false},
		{"git send-pack x.example:r +main", true, []string{"x.example"}, false, false, true},
		{"git fetch-pack x.example:r", true, []string{"x.example"}, false, false, false},
		{"git archive --remote=https://x.example/r HEAD", true, []string{"x.example"}, false, false, false},
		{"git archive --remote git@x.example:r HEAD", true, []string{"x.example"}, false, false, false},
		{"git request-pull v1 https://x.example/r", true, []string{"x.example"}, false, false, false},
		{"git remote update", true, nil, false, false, false},
		{"git remote prune origin", true, nil, false, false, false},
		{"git remote show origin", true, nil, false, false, false},
		{"git remote set-head origin -a", true, nil, false, false, false},
		{"git remote add -f x git@evil.example:x", true, []string{"evil.example"}, false, false, false},
		{"git submodule update --init", true, nil, false, false, false},
		{"git svn fetch", true, nil, false, false, false},
		{"git send-email 0001.patch", true, nil, false, false, false},
		{"git send-email --to-cmd=./x 0001.patch", true, nil, true, false, false},
		{"git maintenance run --task=prefetch", true, nil, false, false, false},
		{"git maintenance start", false, nil, true, false, false},
		{"git remote-https origin https://x.example/r", true, []string{"x.example"}, false, false, false},
		{"git remote-ext origin x", false, nil, true, false, false},
		{"git clone ext::sh d", true, nil, true, false, false},
		{"git fetch fancy::x", true, nil, true, false, false},
		{"git clone -u ./evil https://x.example/r", true, []string{"x.example"}, true, false, false},
		{"git clone --config=core.fsmonitor=./x https://x.example/r", true, []string{"x.example"}, true, false, false},
		{"git clone --template=/tmp/t https://x.example/r", true, []string{"x.example"}, true, false, false},
		{"git submodule foreach id", true, nil, true, false, false},
		{"git credential fill", false, nil, false, true, false},
		{"git lfs pull", true, nil, false, false, false},
		{"git lfs ls-files", false, nil, false, false, false},
		{"git bisect run ./t.sh", false, nil, true, false, false},
		{"git bisect good", false, nil, false, false, false},
		{"git rebase -x make HEAD~3", false, nil, true, false, false},
		{"git rebase --exec make HEAD~3", false, nil, true, false, false},
		{"git rebase -i HEAD~3", false, nil, false, false, false},
		{"git difftool HEAD", false, nil, true, false, false},
		{"git credential-store get", false, nil, false, true, false},
	} {
		f := strings.Fields(tc.line)
		e := Command(f[0], f[1:], nil)
		if e.Network != tc.network || !slices.Equal(e.Hosts, tc.hosts) || (e.Exec != "") != tc.exec ||
			(e.Secret != "") != tc.secret || (e.Destructive != "") != tc.destr {
			t.Errorf("%s: network=%v hosts=%q exec=%q secret=%q destructive=%q", tc.line, e.Network, e.Hosts, e.Exec, e.Secret, e.Destructive)
		}
		if tc.network && e.Level < Network {
			t.Errorf("%s: level %s, want at least network", tc.line, e.Level)
		}
	}
}

func TestGitGrepUntracked(t *testing.T) {
	for _, tc := range []struct {
		line  string
		reads []string
		rec   bool
	}{
		{"git grep -n foo", nil, false},
		{"git grep --untracked foo", []string{"."}, true},
		{"git grep --untracked -e foo src", []string{"src"}, true},
		{"git grep --no-index foo", []string{"."}, true},
	} {
		f := strings.Fields(tc.line)
		e := Command(f[0], f[1:], nil)
		if !slices.Equal(e.Reads, tc.reads) || e.Recursive != tc.rec || e.Level != Read {
			t.Errorf("%s: reads %q recursive %v level %s", tc.line, e.Reads, e.Recursive, e.Level)
		}
	}
}

func FuzzGitRepoHost(f *testing.F) {
	for _, s := range []string{"git@evil.example:x", "https://x.example/r", "ext::sh", "C:\\repo", "[::1]:x", "a::b", "./x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		host, exec := gitRepoHost(addr)
		if strings.HasPrefix(strings.ToLower(addr), "ext::") && exec == "" {
			t.Fatalf("%q: ext:: must run a program", addr)
		}
		if host != "" && (strings.Contains(host, "/") || host != strings.ToLower(host)) {
			t.Fatalf("%q: host %q", addr, host)
		}
	})
}
