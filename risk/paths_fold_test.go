package risk

import (
	"strings"
	"testing"
)

// twoPass is the class of abs as ClassifyPath defines it: the higher of
// the classes of abs as written and of abs in lower case, each compared
// exactly.
func twoPass(abs, home string) PathClass {
	c := classify(abs, home, false)
	if lc := classify(strings.ToLower(abs), strings.ToLower(home), false); lc > c {
		c = lc
	}
	return c
}

// foldPaths are paths whose names differ from a sensitive one by case
// only, or by a dotenv suffix whose case decides it.
var foldPaths = []string{
	"/W/P/.ENV", "/w/p/.Env.Local", "/w/p/.env.EXAMPLE", "/w/p/.ENV.example", "/w/p/.Env.Sample", "/HOME/U/.SSH/id_rsa",
	"/home/u/.Ssh", "/Home/U/.aws/Credentials", "/home/U/.kube/CONFIG", "/w/p/Certs/Server.PEM", "/w/p/TLS.Key",
	"/w/p/backup/ID_RSA", "/ETC/shadow", "/Etc", "/PROC/self/ENVIRON", "/proc/1/CmdLine", "/w/p/.GIT/hooks/x",
	"/w/p/.Git", "/home/u/.BashRC", "/w/p/.VSCode/tasks.json", "/w/p/.Mcp.Json", "/HOME/u/.Config/Toolgate/policy.toml",
	"/home/u/.config/toolgate/Approver.Token", "/w/p/Src/Main.go", "/w/p/.env.production", "/w/p/.Environment",
	"/root", "/ROOT/x", "/run/Secrets/a", "/home/u/Bin/x", "/home/u/.local/BIN", "/w/p/x.KEYSTORE", "/",
}

// TestClassifyPathFolds checks the one pass ClassifyPath makes over an
// ASCII path against the two passes it stands for, and that a path
// beyond ASCII is classed by the two.
func TestClassifyPathFolds(t *testing.T) {
	for _, home := range []string{"/home/u", "/Home/U", "/HOME/u/", ""} {
		for _, p := range foldPaths {
			if got, want := ClassifyPath(p, home), twoPass(p, home); got != want {
				t.Errorf("ClassifyPath(%q, %q) = %s, want %s", p, home, got, want)
			}
		}
	}
	// The Kelvin sign is K in lower case: beyond ASCII, the lower-cased
	// pass still runs.
	if got := ClassifyPath("/home/u/.\u212Aube/config", "/home/u"); got != Secret {
		t.Errorf("a Kelvin sign for k: %s, want credential", got)
	}
	for _, c := range []struct {
		path string
		want PathClass
	}{{"/w/p/.env.EXAMPLE", Secret}, {"/w/p/.ENV.EXAMPLE", Ordinary}, {"/w/p/.env.example", Ordinary}, {"/X/.GIT/config", Protected}} {
		if got := ClassifyPath(c.path, "/home/u"); got != c.want {
			t.Errorf("ClassifyPath(%q) = %s, want %s", c.path, got, c.want)
		}
	}
}

// FuzzClassifyPath checks ClassifyPath against the two passes it stands
// for on any path and home.
func FuzzClassifyPath(f *testing.F) {
	for i, p := range foldPaths {
		f.Add(p, []string{"/home/u", "/Home/U", ""}[i%3])
	}
	f.Fuzz(func(t *testing.T, abs, home string) {
		if got, want := ClassifyPath(abs, home), twoPass(abs, home); got != want {
			t.Fatalf("ClassifyPath(%q, %q) = %s, want %s", abs, home, got, want)
		}
	})
}
