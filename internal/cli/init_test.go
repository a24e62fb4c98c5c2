package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/policy"
)

// asToolgateEnv makes the test binary run as toolgate: the scripts in
// testdata/script run `toolgate` as a real process, with their own
// environment and working directory.
const asToolgateEnv = "TOOLGATE_CLI_TEST_AS_TOOLGATE"

func init() {
	if os.Getenv(asToolgateEnv) == "1" {
		os.Exit(Main())
	}
}

// runScripts runs the testscript files in dir. Each starts with a fresh
// HOME ($WORK/home), no managed policy, and a PATH holding only toolgate
// (this test binary) and true (the sandbox probe's program), so the agent
// clients of the machine running the tests are not found. With -update
// the golden outputs compared with cmp are rewritten in the scripts.
func runScripts(t *testing.T, dir string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program:", err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           dir,
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			bin := filepath.Join(env.WorkDir, ".bin")
			home := filepath.Join(env.WorkDir, "home")
			for _, d := range []string{bin, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			if err := os.Symlink(self, filepath.Join(bin, "toolgate")); err != nil {
				return err
			}
			if err := os.Symlink(truePath, filepath.Join(bin, "true")); err != nil {
				return err
			}
			env.Setenv("PATH", bin)
			env.Setenv("HOME", home)
			env.Setenv(asToolgateEnv, "1")
			env.Setenv("TOOLGATE_MANAGED_POLICY", filepath.Join(env.WorkDir, "no-managed-policy.toml"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"allowrules": cmdAllowRules,
			"request":    cmdRequest,
			"mklog":      cmdMklog,
		},
	})
}

// cmdAllowRules parses FILE with the policy parser as a project layer and
// compares its allow rules with the RULEs, in order:
//
//	allowrules FILE RULE...
func cmdAllowRules(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: allowrules FILE RULE...")
	}
	f, err := policy.LoadFile(ts.MkAbs(args[0]), policy.LayerProject)
	if err != nil || f == nil {
		ts.Fatalf("%s does not parse as a policy: %v", args[0], err)
	}
	var got []string
	for _, r := range f.Rules {
		if r.Effect != policy.Allow {
			ts.Fatalf("%s holds a %s rule %s", args[0], r.Effect, r.Text)
		}
		got = append(got, r.Text)
	}
	if eq := slices.Equal(got, args[1:]); eq == neg {
		ts.Fatalf("allow rules of %s: got %q, want %q", args[0], got, args[1:])
	}
}

// cmdRequest writes a request for toolgate check to FILE: the shell
// command COMMAND, run in the script's current directory:
//
//	request FILE COMMAND
func cmdRequest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: request FILE COMMAND")
	}
	b, err := json.Marshal(map[string]any{"tool": "Bash", "input": map[string]string{"command": args[1]}, "cwd": ts.MkAbs(".")})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
}

// cmdMklog writes an event log with N events in SESSION, chained under
// the key of the approver token TOKENFILE, and then deletes the events
// numbered DELETE behind the store's back:
//
//	mklog TOKENFILE DB SESSION N [DELETE...]
func cmdMklog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: mklog TOKENFILE DB SESSION N [DELETE...]")
	}
	tok, err := server.ReadTokenFile(ts.MkAbs(args[0]))
	ts.Check(err)
	db := ts.MkAbs(args[1])
	n, err := strconv.Atoi(args[3])
	ts.Check(err)
	store, err := sqlite.Open(db, &sqlite.Options{ChainKey: server.ChainKeyFor(tok)})
	ts.Check(err)
	for i := range n {
		payload, _ := json.Marshal(map[string]any{"n": i + 1})
		_, err := store.Append(context.Background(), args[2], eventlog.Draft{Type: eventlog.TypeUserMessage, Payload: payload})
		ts.Check(err)
	}
	ts.Check(store.Close())
	conn, err := sql.Open("sqlite", db)
	ts.Check(err)
	defer conn.Close()
	for _, s := range args[4:] {
		_, err := conn.Exec("DELETE FROM events WHERE session = ? AND seq = ?", args[2], s)
		ts.Check(err)
	}
	_, err = conn.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	ts.Check(err)
}

func TestInitScripts(t *testing.T) { runScripts(t, "testdata/script/init") }

func TestDoctorScripts(t *testing.T) { runScripts(t, "testdata/script/doctor") }
