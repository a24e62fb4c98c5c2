package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/toolgate/toolgate/internal/server"
)

// TestMain lets the scripts of testdata/script run toolgate as a real
// process: the test binary, started as "toolgate", runs [Main].
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"toolgate": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the scripts of testdata/script: a person's first hour
// with toolgate, on a real server with a real SQLite log, its outputs
// compared with the golden files in each script (go test -update
// rewrites them).
//
// Besides exec toolgate, a script has:
//
//	serve                 start toolgate serve in $WORK/state for the
//	                      project $WORK/project; $SERVER is its URL
//	agent SESSION JSON [TOKEN-FILE]
//	                      POST /v1/check as the agent of agent.token (or
//	                      of TOKEN-FILE; cwd defaults to $WORK/project);
//	                      prints the decision and reason, and sets $ASKED
//	                      to the approval id of an ask
//	answer ID KIND [MSG]  answer approval ID through the API, as a script
//	                      with the approver token would
//	norm FILE             write the last command's stdout to FILE with
//	                      what changes from run to run replaced: times,
//	                      tool call ids, agent ids, $WORK, $SERVER
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			return os.MkdirAll(filepath.Join(env.WorkDir, "project", ".git"), 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve":  scriptServe,
			"agent":  scriptAgent,
			"answer": scriptAnswer,
			"norm":   scriptNorm,
		},
	})
}

func scriptServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: serve")
	}
	work := ts.Getenv("WORK")
	state := filepath.Join(work, "state")
	none := filepath.Join(work, "none.toml")
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	argv := []string{"serve", "--addr", "127.0.0.1:0", "--state-dir", state, "--user-policy", none, "--managed-policy", none, "--timeout", "2m"}
	go func() { exit <- RunContext(ctx, argv, strings.NewReader(""), out, out) }()
	ts.Defer(func() {
		cancel()
		select {
		case <-exit:
		case <-time.After(20 * time.Second):
			ts.Logf("serve did not stop")
		}
	})
	re := regexp.MustCompile(`listening on (http://\S+)`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			ts.Setenv("SERVER", m[1])
			break
		}
		select {
		case code := <-exit:
			ts.Fatalf("serve exited with %d: %s", code, out)
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("serve did not start: %s", out)
		}
	}
	agent, err := server.ReadTokenFile(filepath.Join(state, server.AgentTokenFile))
	ts.Check(err)
	ts.Setenv("AGENT_TOKEN", agent)
}

// scriptPost posts body to the script's server with token.
func scriptPost(ts *testscript.TestScript, path, token string, body any) (int, map[string]any) {
	data, err := json.Marshal(body)
	ts.Check(err)
	req, err := http.NewRequest(http.MethodPost, ts.Getenv("SERVER")+path, bytes.NewReader(data))
	ts.Check(err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if out == nil {
		out = map[string]any{"body": string(raw)}
	}
	return resp.StatusCode, out
}

func scriptAgent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: agent SESSION JSON [TOKEN-FILE]")
	}
	token := ts.Getenv("AGENT_TOKEN")
	if len(args) == 3 {
		tok, err := server.ReadTokenFile(ts.MkAbs(args[2]))
		ts.Check(err)
		token = tok
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(args[1]), &body); err != nil {
		ts.Fatalf("agent: %v", err)
	}
	body["session"] = args[0]
	if body["cwd"] == nil {
		body["cwd"] = filepath.Join(ts.Getenv("WORK"), "project")
	}
	code, out := scriptPost(ts, "/v1/check", token, body)
	if code != http.StatusOK {
		ts.Fatalf("check: %d %v", code, out)
	}
	if id, _ := out["approval_id"].(string); id != "" {
		ts.Setenv("ASKED", id)
	}
	fmt.Fprintf(ts.Stdout(), "%v %v\n", out["decision"], out["reason"])
}

func scriptAnswer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: answer ID KIND [MESSAGE]")
	}
	tok, err := server.ReadTokenFile(filepath.Join(ts.Getenv("WORK"), "state", server.ApproverTokenFile))
	ts.Check(err)
	body := map[string]string{"answer": args[1]}
	if len(args) == 3 {
		body["message"] = args[2]
	}
	code, out := scriptPost(ts, "/v1/approvals/"+args[0], tok, body)
	if code != http.StatusOK {
		ts.Fatalf("answer: %d %v", code, out)
	}
}

// scriptIDs maps each script to the numbers its call ids are shown as.
var scriptIDs sync.Map

var (
	normTime   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	normClock  = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`)
	normCallID = regexp.MustCompile(`\b(tc|rc|sa)_[0-9a-f]{16}\b`)
	normAgent  = regexp.MustCompile(`agent:[0-9a-f]{16}`)
)

func scriptNorm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: norm FILE")
	}
	s := ts.ReadFile("stdout")
	s = strings.ReplaceAll(s, ts.Getenv("WORK"), "$WORK")
	if srv := ts.Getenv("SERVER"); srv != "" {
		s = strings.ReplaceAll(s, srv, "$SERVER")
	}
	s = normTime.ReplaceAllString(s, "2026-01-01T00:00:00Z")
	s = normClock.ReplaceAllString(s, "00:00:00")
	s = normAgent.ReplaceAllString(s, "agent:0000000000000000")
	// Call ids keep telling calls apart: each becomes the number of its
	// first appearance in the script, at the width of the id.
	v, _ := scriptIDs.LoadOrStore(ts, map[string]string{})
	ids := v.(map[string]string)
	s = normCallID.ReplaceAllStringFunc(s, func(id string) string {
		tail := id[3:]
		n, ok := ids[tail]
		if !ok {
			n = fmt.Sprintf("%016d", len(ids)+1)
			ids[tail] = n
		}
		return id[:3] + n
	})
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(s), 0o644))
}
