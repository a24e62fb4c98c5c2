//go:build linux

package pathres

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestResolveUnsearchable: a path below a directory that cannot be
// searched is not judged, with the cache or without: the name there may be
// a link (to ~/.ssh) that a command reaches once it opens the directory
// up, so taking the path as missing, as spelled, would judge it inside.
// root searches every directory, so as root the test runs itself again as
// nobody.
func TestResolveUnsearchable(t *testing.T) {
	base := os.Getenv("PATHRES_UNSEARCHABLE")
	if base == "" && os.Geteuid() == 0 {
		asNobody(t)
		return
	}
	if base == "" {
		base = t.TempDir()
	}
	ws := filepath.Join(base, "project")
	must(t, os.MkdirAll(filepath.Join(ws, "shut"), 0o755))
	must(t, os.MkdirAll(filepath.Join(base, "home/.ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(base, "home/.ssh/id_rsa"), nil, 0o600))
	must(t, os.Symlink(filepath.Join(base, "home/.ssh"), filepath.Join(ws, "shut/keys")))
	must(t, os.Chmod(filepath.Join(ws, "shut"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "shut"), 0o755) })
	c := newCache(t)
	for _, v := range []*View{nil, c.Begin(), c.Begin()} {
		if p, err := v.Resolve(ws, "", "shut/keys/id_rsa"); err == nil {
			t.Errorf("shut/keys/id_rsa below a directory that cannot be searched resolved to %+v, want an error", p)
		}
	}
}

// asNobody runs the calling test again in a process of the user nobody,
// in a directory that user owns.
func asNobody(t *testing.T) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pathres")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	base := filepath.Join(dir, "base")
	must(t, os.Mkdir(base, 0o755))
	must(t, os.Chown(base, 65534, 65534))
	// The test binary, copied where nobody may run it.
	self, err := os.Executable()
	must(t, err)
	src, err := os.Open(self)
	must(t, err)
	defer src.Close()
	bin := filepath.Join(dir, "pathres.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, err)
	must(t, dst.Close())
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), "PATHRES_UNSEARCHABLE="+base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as nobody: %v\n%s", t.Name(), err, out)
	}
	t.Logf("as nobody:\n%s", out)
}
