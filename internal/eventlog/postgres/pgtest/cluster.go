package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/testnote"
)

// serverBin returns the directory of the newest PostgreSQL server
// programs installed the Debian way, "" when there are none.
func serverBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	best, bestV := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d))))
		if err == nil && v > bestV {
			best, bestV = filepath.Dir(d), v
		}
	}
	return best
}

// clusterPort is the next port a Cluster listens on (its unix socket's
// name); each test process starts from its pid, so that test binaries
// running at once do not collide.
var clusterPort atomic.Int32

// Cluster is a PostgreSQL server of the test's own, which the test may
// stop and start: in a temporary directory, run as user postgres,
// reached only on a unix socket.
type Cluster struct {
	t    testing.TB
	dir  string // the directory of the data and the socket
	bin  string // the server programs
	port int
	run  func(args ...string) error
}

// NewCluster creates and starts a cluster that is stopped and removed when
// t ends. It skips t when the server programs, root or user postgres are
// not there.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	binDir := serverBin()
	if binDir == "" {
		testnote.Skip(t, "PostgreSQL cluster suite", "no PostgreSQL server programs in /usr/lib/postgresql/VERSION/bin", "as root with PostgreSQL installed (apt-get install -y postgresql): go test ./internal/eventlog/postgres ./internal/server")
	}
	if os.Geteuid() != 0 {
		testnote.Skip(t, "PostgreSQL cluster suite", "not root, which it needs to run a PostgreSQL server as user postgres", "as root with PostgreSQL installed (apt-get install -y postgresql): go test ./internal/eventlog/postgres ./internal/server")
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		testnote.Skip(t, "PostgreSQL cluster suite", "no user postgres to run a PostgreSQL server as", "as root with PostgreSQL installed (apt-get install -y postgresql): go test ./internal/eventlog/postgres ./internal/server")
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	dir, err := os.MkdirTemp("", "toolgate-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	if clusterPort.Load() == 0 {
		clusterPort.CompareAndSwap(0, int32(20000+os.Getpid()%20000))
	}
	c := &Cluster{t: t, dir: dir, bin: binDir, port: int(clusterPort.Add(1))}
	c.run = func(args ...string) error {
		var q []string
		for _, a := range args {
			q = append(q, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
		cmd := exec.Command("su", "postgres", "-s", "/bin/sh", "-c", strings.Join(q, " "))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := c.run(filepath.Join(binDir, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"); err != nil {
		testnote.Skip(t, "PostgreSQL cluster suite", "initdb failed: "+err.Error(), "as root with PostgreSQL installed (apt-get install -y postgresql): go test ./internal/eventlog/postgres ./internal/server")
	}
	conf := fmt.Sprintf("listen_addresses = ''\nunix_socket_directories = '%s'\nport = %d\nfsync = off\n", dir, c.port)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(func() { _ = c.run(filepath.Join(binDir, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop") })
	return c
}

// DSN returns the connection string of the cluster's database postgres.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("postgres://postgres@/postgres?host=%s&port=%d&sslmode=disable", c.dir, c.port)
}

// Start starts the cluster and waits until it takes connections.
func (c *Cluster) Start() {
	c.t.Helper()
	if err := c.run(filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "log"), "-w", "start"); err != nil {
		c.t.Fatal(err)
	}
}

// Stop stops the cluster (fast shutdown: connections are closed).
func (c *Cluster) Stop() {
	c.t.Helper()
	if err := c.run(filepath.Join(c.bin, "pg_ctl"), "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop"); err != nil {
		c.t.Fatal(err)
	}
}
