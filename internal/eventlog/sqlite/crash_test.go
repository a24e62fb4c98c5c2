//go:build unix

package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

// crashHelperEnv names the database a re-executed test binary appends to
// in TestCrashHelper.
const crashHelperEnv = "TOOLGATE_EVENTLOG_CRASH_HELPER_DB"

// TestCrashHelper is not a test: TestCrashKill9 runs the test binary again
// with crashHelperEnv set, and then this appends from 8 goroutines to two
// sessions until the process is killed, printing "ack SESSION SEQ ID" for
// every event whose Append has returned.
func TestCrashHelper(t *testing.T) {
	path := os.Getenv(crashHelperEnv)
	if path == "" {
		t.Skip("run by TestCrashKill9")
	}
	s, err := sqlite.Open(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			session := fmt.Sprintf("crash-%d", g%2)
			for i := 0; ; i++ {
				ds := make([]eventlog.Draft, 1+i%3)
				for j := range ds {
					ds[j] = eventlog.Draft{Type: eventlog.TypeToolCompleted, Payload: fmt.Appendf(nil, `{"g":%d,"i":%d,"j":%d}`, g, i, j)}
				}
				evs, err := s.Append(context.Background(), session, ds...)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(4)
				}
				var b strings.Builder
				for _, e := range evs {
					fmt.Fprintf(&b, "ack %s %d %d\n", e.Session, e.Seq, e.ID)
				}
				mu.Lock()
				os.Stdout.WriteString(b.String()) // one write, after the acknowledgement
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCrashKill9 kills a process that is appending with SIGKILL, several
// times over the same database, and checks after each kill that every
// event the process was told was stored is there with the seq and ID it
// was given, that no session's seq has a gap and that IDs increase in
// commit order, across the kills too.
func TestCrashKill9(t *testing.T) {
	if os.Getenv(crashHelperEnv) != "" {
		t.Skip("inside the helper")
	}
	path := filepath.Join(t.TempDir(), "events.db")
	acked := map[string]int64{} // highest acknowledged seq per session, over all rounds
	for round, killAfter := range []int{1, 300, 3000} {
		got, stderr := runAndKill(t, path, killAfter)
		n := 0
		for session, as := range got {
			n += len(as)
			for _, a := range as {
				acked[session] = max(acked[session], a.seq)
			}
		}
		if n < killAfter {
			t.Fatalf("round %d: the helper acknowledged %d events before it ended, want at least %d; its stderr:\n%s", round, n, killAfter, stderr)
		}

		s, err := sqlite.Open(path, nil)
		if err != nil {
			t.Fatalf("round %d: reopening after kill -9: %v", round, err)
		}
		all, err := collect(s.Query(context.Background(), eventlog.Filter{}))
		if err != nil {
			t.Fatal(err)
		}
		byID := map[int64]eventlog.Event{}
		for i, e := range all {
			if i > 0 && e.ID <= all[i-1].ID {
				t.Fatalf("round %d: ID %d after ID %d after kill -9", round, e.ID, all[i-1].ID)
			}
			byID[e.ID] = e
		}
		for session, as := range got {
			for _, a := range as {
				if e, ok := byID[a.id]; !ok || e.Session != session || e.Seq != a.seq {
					t.Fatalf("round %d: the helper was told %s seq %d has ID %d; after kill -9 that ID holds %+v (found: %v)", round, session, a.seq, a.id, e, ok)
				}
			}
		}
		stored := 0
		for _, session := range []string{"crash-0", "crash-1"} {
			high := acked[session]
			evs, err := collect(s.Query(context.Background(), eventlog.Filter{Session: session}))
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range evs {
				if e.Seq != int64(i+1) {
					t.Fatalf("round %d: session %s: event %d has seq %d: a gap after kill -9", round, session, i, e.Seq)
				}
			}
			if int64(len(evs)) < high {
				t.Fatalf("round %d: session %s: seq %d was acknowledged, but only %d events survived kill -9", round, session, high, len(evs))
			}
			stored += len(evs)
		}
		t.Logf("round %d: killed after %d acknowledged events this round; %d events stored in all, acknowledged up to %v", round, n, stored, acked)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// An ack is an event the helper was told was stored.
type ack struct{ seq, id int64 }

// runAndKill starts the helper on path, kills it with SIGKILL once it has
// acknowledged killAfter events, and returns the acknowledged events per
// session and the helper's stderr.
func runAndKill(t *testing.T, path string, killAfter int) (map[string][]ack, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()

	got := map[string][]ack{}
	n := 0
	killed := false
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			break // a final line without its newline was cut by the kill: not acknowledged
		}
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "ack" {
			continue
		}
		seq, err1 := strconv.ParseInt(f[2], 10, 64)
		id, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("helper printed %q", line)
		}
		got[f[1]] = append(got[f[1]], ack{seq, id})
		if n++; n == killAfter && !killed {
			// Lines still in the pipe were acknowledged before the kill
			// and are read below.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	_ = cmd.Wait()
	if !killed {
		return got, stderr.String()
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, not by SIGKILL; stderr:\n%s", cmd.ProcessState, stderr.String())
	}
	return got, stderr.String()
}

func collect(seq func(func(eventlog.Event, error) bool)) ([]eventlog.Event, error) {
	var evs []eventlog.Event
	for e, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, e)
	}
	return evs, nil
}
