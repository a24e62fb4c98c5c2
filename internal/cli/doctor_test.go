package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/server"
)

type doctorOutput struct {
	Checks []doctorCheck  `json:"checks"`
	Counts map[string]int `json:"counts"`
}

// runDoctor runs toolgate doctor --json in this process and returns its
// exit code and checks by name.
func runDoctor(t *testing.T, args ...string) (int, map[string]doctorCheck) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"doctor", "--json"}, args...), strings.NewReader(""), &stdout, &stderr)
	var out doctorOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("doctor %q printed no JSON (%v): %s%s", args, err, stdout.String(), stderr.String())
	}
	checks := map[string]doctorCheck{}
	for _, c := range out.Checks {
		checks[c.Name] = c
	}
	return code, checks
}

// TestDoctorServer: doctor asks a real toolgate serve who it is with the
// agent token, and fails when the server is down or does not take the
// token.
func TestDoctorServer(t *testing.T) {
	t.Setenv("TOOLGATE_SERVER", "")
	t.Setenv("TOOLGATE_TOKEN", "")
	rs := startServe(t)
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, server.AgentTokenFile), []byte("not-the-servers-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	cases := []struct {
		name      string
		args      []string
		code      int
		status    string
		message   string
		stateFine bool
	}{
		{"running, its token", []string{"--server", rs.url, "--state-dir", rs.stateDir}, 0, statusOK, "answers and accepts the agent token (role agent)", true},
		{"running, another token", []string{"--server", rs.url, "--state-dir", other}, 1, statusFail, "does not accept the agent token", false},
		{"down", []string{"--server", down, "--state-dir", rs.stateDir}, 1, statusFail, "cannot reach the toolgate server", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, checks := runDoctor(t, append(tc.args, "server", "state", "log")...)
			c := checks["server"]
			if code != tc.code || c.Status != tc.status || !strings.Contains(c.Message, tc.message) {
				t.Fatalf("exit %d, server check %+v; want exit %d, %s with %q", code, c, tc.code, tc.status, tc.message)
			}
			if c.Status != statusOK && c.Fix == "" {
				t.Errorf("a failed check without a fix: %+v", c)
			}
			if tc.stateFine {
				// The server's own state directory and log pass.
				for _, name := range []string{"state", "log"} {
					if checks[name].Status != statusOK {
						t.Errorf("%s: %+v", name, checks[name])
					}
				}
			}
		})
	}
}

// TestDoctorChangesNothing: doctor creates neither the state directory
// nor the event log it checks.
func TestDoctorChangesNothing(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	code, checks := runDoctor(t, "--state-dir", state, "state", "log", "server")
	if code != 0 || checks["state"].Status != statusOK || checks["log"].Status != statusOK || checks["server"].Status != statusWarn {
		t.Fatalf("exit %d: %+v", code, checks)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("doctor created the state directory: %v", err)
	}
}

func TestHookProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		"/usr/bin/toolgate hook claude-code":       "/usr/bin/toolgate",
		"'/opt/my tools/toolgate' hook gemini":     "/opt/my tools/toolgate",
		`'/opt/it'\''s/toolgate' hook codex`:       "/opt/it's/toolgate",
		"toolgate hook codex":                      "toolgate",
		"'/unterminated/toolgate hook claude-code": "'/unterminated/toolgate hook claude-code",
	} {
		if got := hookProgram(cmd); got != want {
			t.Errorf("hookProgram(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestDoctorStateAndLog: a state directory someone else owns fails; a log
// larger than the limit warns; a file that is not a log fails.
func TestDoctorStateAndLog(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(state, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		code, checks := runDoctor(t, "--state-dir", state, "state")
		if c := checks["state"]; code != 1 || c.Status != statusFail || !strings.Contains(c.Message, "owned by uid 65534") || !strings.Contains(c.Fix, "chown") {
			t.Errorf("a state directory of uid 65534: exit %d, %+v", code, c)
		}
		if err := os.Chown(state, 0, 0); err != nil {
			t.Fatal(err)
		}
	}

	db := filepath.Join(state, "events.db")
	if err := os.WriteFile(db, bytes.Repeat([]byte("not a database\n"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	code, checks := runDoctor(t, "--state-dir", state, "log")
	if c := checks["log"]; code != 1 || c.Status != statusFail || !strings.Contains(c.Message, "cannot be opened") {
		t.Errorf("a file that is not a log: exit %d, %+v", code, c)
	}
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}

	store, err := openStore(t.Context(), db, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	defer func(v int64) { logSizeWarn = v }(logSizeWarn)
	logSizeWarn = 1
	code, checks = runDoctor(t, "--state-dir", state, "log")
	if c := checks["log"]; code != 0 || c.Status != statusWarn || !strings.Contains(c.Message, "larger than 1 B") || !strings.Contains(c.Fix, "archive") {
		t.Errorf("a log over the limit: exit %d, %+v", code, c)
	}
}
