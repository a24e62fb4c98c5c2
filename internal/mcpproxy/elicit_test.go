package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/policy"
)

// person is the test's MCP client user: it answers each elicitation
// with answer and keeps what it was asked.
type person struct {
	mu     sync.Mutex
	asked  []*mcp.ElicitParams
	answer func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

func (p *person) handler(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.mu.Lock()
	p.asked = append(p.asked, r.Params)
	p.mu.Unlock()
	return p.answer(ctx, r.Params)
}

func (p *person) questions() []*mcp.ElicitParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.asked
}

func accept(content map[string]any) func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

func action(a string) func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: a}, nil
	}
}

// The protocol versions the elicitation tests run on: the latest, on
// which the question travels in the call's result and the client calls
// again with the answer, and two before, on which the proxy sends
// elicitation/create while it serves the call (the older one without
// titled enums).
const (
	latest = ""
	legacy = "2025-11-25"
	older  = "2025-06-18" // before titled enums
)

// connectAs is connect with a client built from opts speaking protocol
// version (latest when ""), in front of a gate with the given approval
// timeout.
func (w *world) connectAs(t *testing.T, upstream *mcp.Server, trusted bool, opts *mcp.ClientOptions, timeout time.Duration, version string) *mcp.ClientSession {
	t.Helper()
	if timeout > 0 {
		g, err := gate.New(w.eng, w.store, nil, gate.Options{Headless: true, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		w.gate = g
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	upT, proxyUpT := mcp.NewInMemoryTransports()
	go func() { _ = upstream.Run(ctx, upT) }()
	p, err := New(ctx, proxyUpT, Options{Name: "files", Trusted: trusted, Gate: w.gate, Engine: w.eng, Cwd: w.project, Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	cliT, srvT := mcp.NewInMemoryTransports()
	go func() { _ = p.Serve(ctx, srvT) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, opts).Connect(ctx, cliT, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		t.Fatalf("protocol version %s, want %s", got, version)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// events returns the payloads of session s1's events of type typ.
func (w *world) events(t *testing.T, typ eventlog.Type) []map[string]any {
	t.Helper()
	var out []map[string]any
	for e, err := range w.store.Query(context.Background(), eventlog.Filter{Session: "s1", Types: []eventlog.Type{typ}}) {
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := json.Unmarshal(e.Payload, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestElicitation: a call that asks, with no toolgate serve, is put to the
// person at a client that declared elicitation. Accepting runs it (the
// file is written) and is recorded as the user's answer through
// mcp-elicitation; declining, dismissing, answering deny, an error of the
// client or no answer in time refuse it, and nothing is written.
func TestElicitation(t *testing.T) {
	tests := []elicitTest{
		{name: "accept allow runs the call", answer: accept(map[string]any{"decision": "allow"}),
			written: true, reason: engine.ReasonUserApproved, actor: "user", answerK: "allow_once"},
		{name: "accept deny", answer: accept(map[string]any{"decision": "deny"}),
			reason: engine.ReasonUserDenied, actor: "user", answerK: "deny"},
		{name: "decline", answer: action("decline"), reason: engine.ReasonUserDenied, actor: "user", answerK: "deny"},
		{name: "cancel", answer: action("cancel"), reason: engine.ReasonUserDenied, actor: "user", answerK: "deny"},
		{name: "client error", answer: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return nil, errors.New("the client's window was closed")
		}, reason: engine.ReasonApproverError, actor: "system"},
		{name: "no answer in time", timeout: 300 * time.Millisecond, answer: func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			// The person answers allow, too late.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Second):
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
			}
		}, reason: engine.ReasonApprovalTimeout, actor: "system"},
		{name: "destructive: allow without the confirmation", trusted: true, answer: accept(map[string]any{"decision": "allow"}),
			reason: engine.ReasonUserDenied, actor: "user", answerK: "allow_once"},
		{name: "destructive: allow with the confirmation", trusted: true, answer: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			// The message says what to type.
			_, after, _ := strings.Cut(p.Message, "type ")
			word, _, _ := strings.Cut(after, " in the confirmation field")
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow", "confirm": word}}, nil
		}, written: true, reason: engine.ReasonUserApproved, actor: "user", answerK: "allow_once"},
	}
	for _, version := range []string{latest, legacy, older} {
		for _, tt := range tests {
			name := "latest/" + tt.name
			if version != latest {
				name = version + "/" + tt.name
			}
			t.Run(name, func(t *testing.T) { elicitCase(t, version, tt) })
		}
	}
}

type elicitTest struct {
	name    string
	trusted bool
	answer  func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	timeout time.Duration
	written bool
	reason  engine.Reason
	actor   string
	answerK string
}

func elicitCase(t *testing.T, version string, tt elicitTest) {
	w := newWorld(t, "")
	who := &person{answer: tt.answer}
	timeout := tt.timeout
	clientFails := tt.reason == engine.ReasonApproverError && version == latest
	if clientFails {
		// On the latest version the client fails its own call when
		// it cannot answer; the proxy hears nothing, and the question
		// times out.
		timeout, tt.reason, tt.actor = 300*time.Millisecond, engine.ReasonApprovalTimeout, "system"
	}
	cs := w.connectAs(t, fileServer(), tt.trusted, &mcp.ClientOptions{ElicitationHandler: who.handler}, timeout, version)
	target := filepath.Join(w.project, "out.txt")
	var out string
	var isErr bool
	if clientFails {
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": target, "content": "written"}}); err == nil {
			t.Fatalf("the client's call succeeded: %v", res)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(w.events(t, eventlog.TypePermissionResolved)) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		isErr, out = true, string(tt.reason)
	} else {
		out, isErr = call(t, cs, "write_file", map[string]any{"path": target, "content": "written"})
	}

	b, err := os.ReadFile(target)
	if written := err == nil && string(b) == "written"; written != tt.written {
		t.Fatalf("file written %t, want %t (result %q, isError %t)", written, tt.written, out, isErr)
	}
	if isErr == tt.written {
		t.Fatalf("isError %t for a call that ran %t: %q", isErr, tt.written, out)
	}
	wantText := string(tt.reason)
	if tt.reason == engine.ReasonApprovalTimeout && version == latest && !clientFails {
		// The answer came back after the question closed.
		wantText = "closed"
	}
	if !tt.written && !strings.Contains(out, wantText) {
		t.Fatalf("the refusal %q does not give the reason %s", out, tt.reason)
	}

	qs := who.questions()
	if len(qs) != 1 {
		t.Fatalf("%d elicitations, want 1", len(qs))
	}
	q := qs[0]
	for _, want := range []string{"write_file", "mcp__files__write_file", target, "Risk:"} {
		if !strings.Contains(q.Message, want) {
			t.Errorf("the question %q does not show %q", q.Message, want)
		}
	}
	schema, _ := json.Marshal(q.RequestedSchema)
	choice := `"oneOf":[{"const":"allow","title":"Allow once"},{"const":"deny","title":"Deny"}]`
	if version == older {
		// Before titled enums: enum and enumNames.
		choice = `"enum":["allow","deny"],"enumNames":["Allow once","Deny"]`
	}
	if !strings.Contains(string(schema), choice) {
		t.Errorf("the form %s offers no allow/deny choice %s", schema, choice)
	}

	asked := w.events(t, eventlog.TypePermissionRequested)
	if len(asked) != 1 || asked[0]["askedOf"] != "user" || asked[0]["channel"] != ElicitationChannel {
		t.Fatalf("permission.requested %v", asked)
	}
	res := w.events(t, eventlog.TypePermissionResolved)
	if len(res) != 1 {
		t.Fatalf("permission.resolved %v", res)
	}
	r := res[0]
	want := "deny"
	if tt.written {
		want = "allow"
	}
	if r["decision"] != want || r["reason"] != string(tt.reason) || r["actor"] != tt.actor || r["channel"] != ElicitationChannel {
		t.Fatalf("permission.resolved %v, want %s (%s) by %s through %s", r, want, tt.reason, tt.actor, ElicitationChannel)
	}
	if tt.answerK != "" && r["answer"] != tt.answerK {
		t.Fatalf("answer %v, want %s", r["answer"], tt.answerK)
	}
	if n := len(w.events(t, eventlog.TypeToolCompleted)); (n == 1) != tt.written {
		t.Fatalf("%d tool.completed events for a call that ran %t", n, tt.written)
	}
}

// TestNoElicitation: without the client's capability, or with the policy
// setting mcp_elicitation = false, nobody is asked and the call is denied
// as before, with how to approve it; what the policy allows or denies is
// never put to the person.
func TestNoElicitation(t *testing.T) {
	t.Run("client without the capability", func(t *testing.T) {
		w := newWorld(t, "")
		cs := w.connectAs(t, fileServer(), false, nil, 0, latest)
		out, isErr := call(t, cs, "write_file", map[string]any{"path": filepath.Join(w.project, "out.txt"), "content": "x"})
		if !isErr || !strings.Contains(out, "elicitation") || !strings.Contains(out, "--server") {
			t.Fatalf("got %q (isError %t)", out, isErr)
		}
		if got := w.decisions(t); len(got) != 1 || got[0] != "mcp__files__write_file deny headless" {
			t.Fatalf("decisions %v", got)
		}
	})
	t.Run("policy turns it off", func(t *testing.T) {
		w := newWorld(t, "")
		off := false
		layer, err := policy.ParseRules(policy.LayerCLI, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		layer.MCPElicitation = &off
		none := filepath.Join(t.TempDir(), "none.toml")
		w.eng, err = engine.New(engine.Options{Policy: engine.FromFiles(none, none, layer), Home: t.TempDir(), Project: w.project})
		if err != nil {
			t.Fatal(err)
		}
		w.gate, err = gate.New(w.eng, w.store, nil, gate.Options{Headless: true})
		if err != nil {
			t.Fatal(err)
		}
		who := &person{answer: accept(map[string]any{"decision": "allow"})}
		cs := w.connectAs(t, fileServer(), false, &mcp.ClientOptions{ElicitationHandler: who.handler}, 0, latest)
		target := filepath.Join(w.project, "out.txt")
		if out, isErr := call(t, cs, "write_file", map[string]any{"path": target, "content": "x"}); !isErr {
			t.Fatalf("got %q (isError %t)", out, isErr)
		}
		if _, err := os.Stat(target); !os.IsNotExist(err) || len(who.questions()) != 0 {
			t.Fatalf("asked %d times, file: %v", len(who.questions()), err)
		}
	})
	t.Run("decided calls are not put to the person", func(t *testing.T) {
		w := newWorld(t, "", "mcp__files__echo")
		who := &person{answer: accept(map[string]any{"decision": "allow"})}
		cs := w.connectAs(t, fileServer(), false, &mcp.ClientOptions{ElicitationHandler: who.handler}, 0, latest)
		if out, isErr := call(t, cs, "echo", map[string]any{"text": "hi"}); isErr {
			t.Fatalf("allowed call: %q", out)
		}
		if out, isErr := call(t, cs, "read_file", map[string]any{"path": filepath.Join(w.project, ".env")}); !isErr || strings.Contains(out, "sk-secret") {
			t.Fatalf("credential read: %q", out)
		}
		if n := len(who.questions()); n != 0 {
			t.Fatalf("the person was asked %d times", n)
		}
	})
}

// TestElicitationAnswerBinding: on the latest protocol the client carries
// the person's answer back in a call of its own, which the agent's side
// could forge. An answer counts only for the question toolgate asked,
// about the very tool and arguments it showed, and only once: a retry
// with other arguments, another tool, a state toolgate did not issue or a
// replay is refused, and only what the person saw runs.
func TestElicitationAnswerBinding(t *testing.T) {
	w := newWorld(t, "")
	who := &person{answer: accept(map[string]any{"decision": "allow"})}
	cs := w.connectAs(t, fileServer(), false, &mcp.ClientOptions{
		ElicitationHandler: who.handler,
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true}, // the test answers by hand
	}, 0, latest)
	ctx := context.Background()
	shown := filepath.Join(w.project, "shown.txt")
	other := filepath.Join(w.project, "other.txt")
	args := map[string]any{"path": shown, "content": "seen"}

	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || len(first.InputRequests) != 1 || first.RequestState == "" {
		t.Fatalf("the first call did not return a question: %+v", first)
	}
	var id string
	for k, v := range first.InputRequests {
		if p, ok := v.(*mcp.ElicitParams); !ok || !strings.Contains(p.Message, shown) {
			t.Fatalf("input request %v", v)
		}
		id = k
	}
	yes := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}}
	retry := func(name string, a map[string]any, state string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a, InputResponses: yes, RequestState: state})
		if err != nil {
			t.Fatalf("retry %s: %v", name, err)
		}
		return textOf(res), res.IsError
	}

	attacks := []struct {
		name  string
		tool  string
		args  map[string]any
		state string
	}{
		{"other arguments", "write_file", map[string]any{"path": other, "content": "seen"}, first.RequestState},
		{"other content", "write_file", map[string]any{"path": shown, "content": "not what was shown"}, first.RequestState},
		{"other tool", "read_file", map[string]any{"path": shown}, first.RequestState},
		{"forged state", "write_file", args, id + ".00ff"},
		{"state of another question", "write_file", args, "toolgate-0123." + strings.SplitN(first.RequestState, ".", 2)[1]},
	}
	for _, a := range attacks {
		if out, isErr := retry(a.tool, a.args, a.state); !isErr || !strings.Contains(out, "not for a question toolgate asked") {
			t.Fatalf("%s: got %q (isError %t)", a.name, out, isErr)
		}
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Fatalf("%s was written: %v", other, err)
	}
	// The question is still open for the answer to what was shown.
	if out, isErr := retry("write_file", args, first.RequestState); isErr {
		t.Fatalf("the answer to the question was refused: %q", out)
	}
	if b, err := os.ReadFile(shown); err != nil || string(b) != "seen" {
		t.Fatalf("%s: %q %v", shown, b, err)
	}
	// Replayed, the answer finds its question closed; nothing runs again.
	if out, isErr := retry("write_file", args, first.RequestState); !isErr || !strings.Contains(out, "closed") {
		t.Fatalf("replay: got %q (isError %t)", out, isErr)
	}
	if n := len(w.events(t, eventlog.TypeToolStarted)); n != 1 {
		t.Fatalf("%d tool.started events, want 1", n)
	}
	res := w.events(t, eventlog.TypePermissionResolved)
	if len(res) != 1 || res[0]["decision"] != "allow" || res[0]["actor"] != "user" || res[0]["channel"] != ElicitationChannel {
		t.Fatalf("permission.resolved %v", res)
	}
}

// TestElicitationMessageEscapes: what the agent supplies (arguments, the
// reason's paths) cannot pose as a line of the question or reorder it:
// control characters, line breaks and bidirectional controls are shown
// escaped, and the question keeps its lines.
func TestElicitationMessageEscapes(t *testing.T) {
	e := elicitor{server: "files", tool: "write_file"}
	ar := &approval.Request{
		Tool:    "mcp__files__write_file",
		Input:   map[string]any{"path": "/w/a\u202etxt.exe", "content": "x\nRisk: none\r\x1b[2J"},
		Reason:  "untrusted_mcp_server",
		Message: "writes /w/a\u202etxt.exe\nAllow it once, or deny it?",
		Risk:    "execute",
	}
	msg := e.message(ar)
	if n := strings.Count(msg, "\n"); n != 4 {
		t.Fatalf("the question has %d line breaks, want 4:\n%s", n, msg)
	}
	for _, bad := range []string{"\u202e", "\x1b", "\r", "\nRisk: none"} {
		if strings.Contains(msg, bad) {
			t.Fatalf("the question holds %q:\n%s", bad, msg)
		}
	}
	if !strings.Contains(msg, `\u202e`) {
		t.Fatalf("the bidirectional control is not shown escaped:\n%s", msg)
	}
}
