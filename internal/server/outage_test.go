package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
	"github.com/toolgate/toolgate/internal/eventlog/spool"
	"github.com/toolgate/toolgate/policy"
)

// lines is a log output that counts its lines.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lines) count() int { return strings.Count(l.String(), "\n") }

// TestPostgresRestart runs a server on a PostgreSQL server of the test's
// own, over the outage record of its state directory. The PostgreSQL
// server restarts while the gate's connections are idle: the next call is
// decided as before, not denied on a dead connection. Then it is down for
// 3.5 s while calls keep coming: they are denied, the log output holds a
// few lines, not one per failure, and the denials are kept in the outage
// record (synced to disk). Once the server is back, they are in the event
// log, marked recovered, and the record is empty.
func TestPostgresRestart(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	store, err := postgres.Open(context.Background(), cluster.DSN(), nil)
	must(t, err)
	outage := filepath.Join(t.TempDir(), OutageFile(cluster.DSN(), "in_0123456789abcdef"))
	spooled, err := spool.Wrap(store, outage, nil)
	must(t, err)
	var out lines
	logger := slog.New(slog.NewTextHandler(&out, nil))
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	e := newEnvAt(t, project, spooled, func(o *Options, _ *policy.File) { o.Logger = logger })

	if d, why := e.reason("s1", cmdAllow); d != "allow" {
		t.Fatalf("before the restart: %s %s", d, why)
	}
	time.Sleep(1500 * time.Millisecond) // the pooled connections go idle
	cluster.Stop()
	cluster.Start()
	if d, why := e.reason("s1", cmdAllow); d != "allow" {
		t.Fatalf("the first call after the restart: %s %s\n%s", d, why, out.String())
	}
	if n := len(e.events("s1", eventlog.TypePermissionResolved)); n != 2 {
		t.Fatalf("permission.resolved events after the restart: %d, want 2 (none written twice)", n)
	}

	before := out.count()
	cluster.Stop()
	denied := 0
	for end := time.Now().Add(3500 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		r := e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAllow, false))
		if m := r.json(t); m["decision"] != "deny" {
			t.Fatalf("a call while the log is down: %d %s", r.code, r.body)
		}
		denied++
	}
	logged := out.count() - before
	t.Logf("%d calls denied in 3.5 s of outage; %d log lines", denied, logged)
	if logged > 12 {
		t.Fatalf("%d log lines in 3.5 s of outage, want at most 12:\n%s", logged, out.String())
	}
	raw, err := os.ReadFile(outage)
	must(t, err)
	if n := strings.Count(string(raw), `\"type\":\"permission.resolved\"`) + strings.Count(string(raw), `"type":"permission.resolved"`); n != denied {
		t.Fatalf("the outage record holds %d decisions, want %d:\n%s", n, denied, raw)
	}

	cluster.Start()
	waitFor(t, "the outage record appended to the log", func() bool {
		return len(e.events("s1", eventlog.TypePermissionResolved)) == 2+denied
	})
	for _, ev := range e.events("s1", eventlog.TypePermissionResolved)[2:] {
		var p struct {
			Decision  string          `json:"decision"`
			Recovered spool.Recovered `json:"recovered"`
		}
		must(t, json.Unmarshal(ev.Payload, &p))
		if p.Decision != "deny" || p.Recovered.From != "outage record" || p.Recovered.Error == "" || p.Recovered.Unrecorded != "allow (rule_allow)" {
			t.Fatalf("recovered decision: %s", ev.Payload)
		}
	}
	waitFor(t, "the outage record emptied", func() bool {
		st, err := os.Stat(outage)
		return err == nil && st.Size() == 0
	})
}

// TestRateLimitedLog: repeated lines of one error are dropped for the
// interval and counted on the next one; other errors, and lines below
// Warn, pass.
func TestRateLimitedLog(t *testing.T) {
	var out lines
	now := time.Unix(0, 0)
	l := rateLimited(slog.New(slog.NewTextHandler(&out, nil)), 10*time.Second, func() time.Time { return now })
	for range 100 {
		l.Error("follow the event log", "err", "connection refused", "session", "s1")
		l.Info("checked")
	}
	l.Error("follow the event log", "err", "no such host")
	now = now.Add(11 * time.Second)
	l.Error("follow the event log", "err", "connection refused")
	got := out.String()
	if n := strings.Count(got, "connection refused"); n != 2 {
		t.Fatalf("%d lines of the repeated error, want 2:\n%s", n, got)
	}
	if !strings.Contains(got, "suppressed=99") || strings.Count(got, "no such host") != 1 || strings.Count(got, "checked") != 100 {
		t.Fatalf("log:\n%s", got)
	}
}
