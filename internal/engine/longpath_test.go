package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
	"golang.org/x/sys/unix"
)

// TestLongPathThroughLink: a path longer than the kernel takes in one
// call (PATH_MAX), through a link in the project to ~/.ssh, is not taken
// as inside the project: a shell reaches it by changing directory in
// steps, so the gate must not allow reading through it.
func TestLongPathThroughLink(t *testing.T) {
	w := newWorld(t)
	fd, err := unix.Open(w.project, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	name := strings.Repeat("d", 200)
	deep := w.project
	for range 24 {
		must(t, unix.Mkdirat(fd, name, 0o755))
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		must(t, err)
		fd, deep = next, deep+"/"+name
	}
	must(t, unix.Symlinkat(filepath.Join(w.home, ".ssh"), fd, "l"))
	must(t, unix.Symlinkat(filepath.Join(w.dir, "outside"), fd, "o"))
	unix.Close(fd)
	set, err := policy.Merge()
	must(t, err)
	for _, off := range []bool{true, false} {
		e, err := New(Options{Policy: Fixed(set), Home: w.home, Project: w.project, NoPathCache: off})
		must(t, err)
		for _, req := range []*Request{
			{Tool: "Read", Cwd: w.project, Input: fp(deep + "/l/id_rsa")},
			{Tool: "Read", Cwd: deep, Input: fp("l/id_rsa")},
			{Tool: "Bash", Cwd: deep, Input: sh("cat l/id_rsa")},
			{Tool: "Bash", Cwd: deep + "/l", Input: sh("cat id_rsa")},
			{Tool: "Bash", Cwd: deep + "/l", Input: sh("cat *")},
			{Tool: "Bash", Cwd: deep + "/l", Input: sh("ls")},
			{Tool: "Read", Cwd: deep, Input: fp("o/notes.txt")},
			{Tool: "Bash", Cwd: deep, Input: sh("cat o/notes.txt")},
			{Tool: "Bash", Cwd: deep + "/o", Input: sh("cat notes.txt")},
			// From deep, o/.. is the directory holding outside/, and
			// more ".." climb to /; taken lexically, they stay in
			// the project.
			{Tool: "Bash", Cwd: w.project, Input: sh(strings.Repeat("cd "+name+" && ", 24) + "cat o/" + strings.Repeat("../", 12) + "etc/hostname")},
			{Tool: "Bash", Cwd: w.project + "/out", Input: sh("cat notes.txt")},
			{Tool: "Bash", Cwd: w.project, Input: sh("cat out/notes.txt")},
			{Tool: "Bash", Cwd: w.project, Input: sh(strings.Repeat("cd "+name+" && ", 24) + "cat o/notes.txt")},
			{Tool: "Bash", Cwd: w.project, Input: sh(strings.Repeat("cd "+name+" && ", 24) + "cd o && cat notes.txt")},
		} {
			for range 2 {
				if d := e.Check(context.Background(), req); d.Decision == policy.Allow {
					t.Errorf("NoPathCache=%v: %s %v in %s…/%s: %s %s", off, req.Tool, req.Input, w.project, filepath.Base(req.Cwd), d.Decision, d.Reason)
				}
			}
		}
	}
}
