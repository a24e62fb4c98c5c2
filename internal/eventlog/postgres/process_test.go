//go:build unix

package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/postgres"
	"github.com/toolgate/toolgate/internal/eventlog/postgres/pgtest"
)

// processHelperEnv holds the connection string a re-executed test binary
// appends to in TestProcessHelper.
const processHelperEnv = "TOOLGATE_EVENTLOG_POSTGRES_HELPER_DSN"

// TestProcessHelper is not a test: TestSeveralProcesses runs the test
// binary again with processHelperEnv set, and then this makes 25 appends
// of 1 to 3 events from each of 4 goroutines to three shared sessions,
// printing "ack SESSION SEQ ID" for every event whose Append has returned.
func TestProcessHelper(t *testing.T) {
	dsn := os.Getenv(processHelperEnv)
	if dsn == "" {
		t.Skip("run by TestSeveralProcesses")
	}
	s, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 25 {
				ds := make([]eventlog.Draft, 1+i%3)
				for j := range ds {
					ds[j] = eventlog.Draft{Type: eventlog.TypeToolCompleted, Payload: fmt.Appendf(nil, `{"pid":%d,"g":%d,"i":%d}`, os.Getpid(), g, i)}
				}
				evs, err := s.Append(context.Background(), fmt.Sprintf("proc-%d", (g+i)%3), ds...)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(4)
				}
				var b strings.Builder
				for _, e := range evs {
					fmt.Fprintf(&b, "ack %s %d %d\n", e.Session, e.Seq, e.ID)
				}
				mu.Lock()
				os.Stdout.WriteString(b.String())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
}

// TestSeveralProcesses has processes append to the same sessions of one
// database at once, kills one of them with SIGKILL midway, and checks that
// every session is gapless, that every acknowledged event is stored with
// the seq and ID it was given, and that a subscriber in this process
// received every event in ID order.
func TestSeveralProcesses(t *testing.T) {
	if os.Getenv(processHelperEnv) != "" {
		t.Skip("inside the helper")
	}
	dsn := pgtest.SchemaDSN(t)
	s := open(t, dsn, nil)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type ack struct {
		session string
		seq, id int64
	}
	const processes = 3
	acks := make([][]ack, processes)
	stderr := make([]strings.Builder, processes)
	killed := make([]bool, processes)
	var wg sync.WaitGroup
	for p := range processes {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcessHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), processHelperEnv+"="+dsn)
		cmd.Stderr = &stderr[p]
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			r := bufio.NewReader(out)
			for {
				line, err := r.ReadString('\n')
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Error(err)
					break
				}
				f := strings.Fields(line)
				if len(f) != 4 || f[0] != "ack" {
					continue
				}
				seq, err1 := strconv.ParseInt(f[2], 10, 64)
				id, err2 := strconv.ParseInt(f[3], 10, 64)
				if err1 != nil || err2 != nil {
					t.Errorf("helper printed %q", line)
					continue
				}
				acks[p] = append(acks[p], ack{session: f[1], seq: seq, id: id})
				if p == 0 && len(acks[p]) == 60 {
					// Lines still in the pipe were acknowledged before the
					// kill and are read below.
					cmd.Process.Signal(syscall.SIGKILL)
					killed[p] = true
				}
			}
			err := cmd.Wait()
			if !killed[p] && err != nil {
				t.Errorf("helper %d: %v; stderr:\n%s", p, err, stderr[p].String())
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if !killed[0] {
		t.Fatalf("helper 0 ended before it was killed, after %d events", len(acks[0]))
	}

	var all []eventlog.Event
	for e, err := range s.Query(ctx, eventlog.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	byID := map[int64]eventlog.Event{}
	for i, e := range all {
		if i > 0 && e.ID <= all[i-1].ID {
			t.Fatalf("Query(all): ID %d after ID %d", e.ID, all[i-1].ID)
		}
		byID[e.ID] = e
	}
	for p := range processes {
		for _, a := range acks[p] {
			if e, ok := byID[a.id]; !ok || e.Session != a.session || e.Seq != a.seq {
				t.Fatalf("process %d was told %s seq %d has ID %d; stored under that ID: %+v (found: %v)", p, a.session, a.seq, a.id, e, ok)
			}
		}
	}
	for sess := range 3 {
		name := fmt.Sprintf("proc-%d", sess)
		var seq int64
		for e, err := range s.Query(ctx, eventlog.Filter{Session: name}) {
			if err != nil {
				t.Fatal(err)
			}
			if seq++; e.Seq != seq {
				t.Fatalf("session %s: seq %d where %d was due: a gap", name, e.Seq, seq)
			}
		}
	}
	got, err := collect(s.Subscribe(ctx, eventlog.Filter{AfterID: eventlog.ReplayAll, Limit: len(all)}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(all) {
		t.Fatalf("a subscriber replaying everything received %d events, Query %d", len(got), len(all))
	}
	t.Logf("%d events stored; acknowledged per process: %d (killed), %d, %d", len(all), len(acks[0]), len(acks[1]), len(acks[2]))
}
