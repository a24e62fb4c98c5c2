package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

func TestHealthz(t *testing.T) {
	e := newEnv(t)
	r := e.call("GET", "/healthz", "", nil)
	if r.code != 200 || strings.TrimSpace(string(r.body)) != "ok" {
		t.Fatalf("healthz: %d %q", r.code, r.body)
	}
}

func TestCheckDecisions(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		command  string
		wait     bool
		decision string
		reason   string
	}{
		{cmdAllow, false, "allow", "rule_allow"},
		{cmdAllow, true, "allow", "rule_allow"},
		{cmdDeny, false, "deny", "sandbox_rejected"},
		{cmdDeny, true, "deny", "sandbox_rejected"},
	} {
		t.Run(fmt.Sprintf("%s wait=%t", tc.command, tc.wait), func(t *testing.T) {
			session := fmt.Sprintf("s-%s-%t", strings.ReplaceAll(tc.command, " ", "_"), tc.wait)
			session = strings.NewReplacer("/", "root").Replace(session)
			r := e.call("POST", "/v1/check", e.tokens.Agent, e.check(session, tc.command, tc.wait))
			m := r.json(t)
			if r.code != 200 || m["decision"] != tc.decision || m["reason"] != tc.reason {
				t.Fatalf("got %d %s", r.code, r.body)
			}
			id, _ := m["tool_call_id"].(string)
			if !strings.HasPrefix(id, "tc_") || m["approval_id"] != nil || m["state"] != nil {
				t.Fatalf("response %s", r.body)
			}
			evs := e.events(session)
			// Decided at once: one event, which carries the call.
			if len(evs) != 1 || evs[0].Type != eventlog.TypePermissionResolved {
				t.Fatalf("events %v", evs)
			}
			p := e.resolvedPayload(session)
			if in, _ := p["input"].(map[string]any); p["toolCallId"] != id || p["decision"] != tc.decision || in["command"] != tc.command || p["cwd"] != e.project {
				t.Fatalf("resolved %v", p)
			}
		})
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t)
	ag, ap := e.tokens.Agent, e.tokens.Approver
	e.call("POST", "/v1/check", ag, e.check("mine", cmdAllow, true))
	for _, tc := range []struct {
		method, path, token string
		body                any
		want                int
	}{
		{"POST", "/v1/check", "", e.check("s1", cmdAllow, true), 401},
		{"POST", "/v1/check", "wrong", e.check("s1", cmdAllow, true), 401},
		{"GET", "/v1/whoami", "", nil, 401},
		{"GET", "/v1/events", "", nil, 401},
		{"GET", "/metrics", "", nil, 401},
		{"GET", "/metrics", ag, nil, 403},
		{"GET", "/v1/stats", ag, nil, 403},
		{"GET", "/v1/policy?cwd=/", ag, nil, 403},
		{"GET", "/v1/events", ag, nil, 403},
		{"GET", "/v1/events?session=other", ag, nil, 403},
		{"GET", "/v1/sessions/other/events", ag, nil, 403},
		{"GET", "/v1/sessions/other/policy", ag, nil, 403},
		{"GET", "/v1/approvals?session=other", ag, nil, 403},
		{"PUT", "/v1/sessions/mine/policy", ag, map[string]any{"mode": "bypassPermissions"}, 403},
		{"POST", "/v1/sessions/mine/respond", ag, map[string]any{"kind": "permission", "decision": "approved"}, 403},
		{"POST", "/v1/login-link", ag, nil, 403},
		{"GET", "/v1/events?session=mine", ag, nil, 200},
		{"GET", "/v1/sessions/mine/events", ag, nil, 200},
		{"GET", "/v1/sessions/mine/policy", ag, nil, 200},
		{"GET", "/v1/approvals", ag, nil, 200},
		{"GET", "/v1/whoami", ag, nil, 200},
		{"GET", "/v1/events", ap, nil, 200},
		{"GET", "/v1/sessions/other/events", ap, nil, 200},
		{"GET", "/metrics", ap, nil, 200},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.token, func(t *testing.T) {
			r := e.call(tc.method, tc.path, tc.token, tc.body)
			if r.code != tc.want {
				t.Fatalf("got %d, want %d: %s", r.code, tc.want, r.body)
			}
			if tc.want == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if tc.want >= 400 {
				if m := r.json(t); m["error"] == "" || m["error"] == nil {
					t.Errorf("no error message: %s", r.body)
				}
			}
		})
	}
	// The agent's attempts on its own session were recorded.
	got := e.events("mine", TypeApprovalForbidden)
	if len(got) != 2 {
		t.Fatalf("want 2 approval.forbidden events (policy and respond), got %v", got)
	}
	// Whoami tells the role.
	for tok, role := range map[string]string{ag: "agent", ap: "approver"} {
		if m := e.call("GET", "/v1/whoami", tok, nil).json(t); m["role"] != role {
			t.Errorf("whoami for %s: %v", role, m)
		}
	}
}

func TestAgentCannotAnswer(t *testing.T) {
	e := newEnv(t)
	id := e.ask("s1", cmdAsk)
	r := e.call("POST", "/v1/approvals/"+id, e.tokens.Agent, map[string]any{"answer": "allow_once"})
	if r.code != 403 {
		t.Fatalf("agent answer: %d %s", r.code, r.body)
	}
	evs := e.events("s1", TypeApprovalForbidden)
	if len(evs) != 1 {
		t.Fatalf("approval.forbidden events: %v", evs)
	}
	var p map[string]any
	must(t, json.Unmarshal(evs[0].Payload, &p))
	if p["toolCallId"] != id || p["action"] != "answer" {
		t.Fatalf("payload %v", p)
	}
	if got := e.pending("s1"); len(got) != 1 || got[0].ID != id {
		t.Fatalf("the approval is no longer pending: %v", got)
	}
	r = e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "deny", "message": "not now"})
	if r.code != 200 {
		t.Fatalf("approver answer: %d %s", r.code, r.body)
	}
}

func TestWaitApproveAndDeny(t *testing.T) {
	for _, tc := range []struct {
		answer, decision, reason string
	}{
		{"allow_once", "allow", "user_approved"},
		{"allow_session", "allow", "user_approved"},
		{"deny", "deny", "user_denied"},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			e := newEnv(t)
			var answered response
			done := make(chan struct{})
			go func() {
				defer close(done)
				var list []Approval
				waitFor(t, "a pending approval", func() bool { list = e.pending("s1"); return len(list) == 1 })
				answered = e.call("POST", "/v1/approvals/"+list[0].ID, e.tokens.Approver,
					map[string]any{"answer": tc.answer, "message": "from the test"})
			}()
			r := e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAsk, true))
			<-done
			m := r.json(t)
			if r.code != 200 || m["decision"] != tc.decision || m["reason"] != tc.reason {
				t.Fatalf("check: %d %s", r.code, r.body)
			}
			if answered.code != 200 {
				t.Fatalf("answer: %d %s", answered.code, answered.body)
			}
			var a Approval
			answered.decode(t, &a)
			if a.State != StateResolved || a.Decision == nil || a.Decision.Decision != tc.decision ||
				a.Decision.Reason != tc.reason || a.Decision.Actor != "user" || string(a.Decision.Answer) != tc.answer {
				t.Fatalf("answered approval %+v %+v", a, a.Decision)
			}
			if a.ID != m["tool_call_id"] || a.Request == nil || a.Request.Tool != "Bash" || a.Request.Summary == "" {
				t.Fatalf("approval %+v", a)
			}
			p := e.resolvedPayload("s1")
			if p["actor"] != "user" || p["answer"] != tc.answer || p["decision"] != tc.decision {
				t.Fatalf("resolved %v", p)
			}
			// A second answer loses.
			if r := e.call("POST", "/v1/approvals/"+a.ID, e.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 409 {
				t.Fatalf("second answer: %d %s", r.code, r.body)
			}
		})
	}
}

func TestNoWaitThenGet(t *testing.T) {
	e := newEnv(t)
	id := e.ask("s1", cmdAsk)
	r := e.call("GET", "/v1/approvals/"+id, e.tokens.Agent, nil)
	var a Approval
	r.decode(t, &a)
	if r.code != 200 || a.State != StatePending || a.Decision != nil || a.Session != "s1" || a.Turn != "t1" {
		t.Fatalf("pending approval: %d %s", r.code, r.body)
	}
	if !a.Deadline.After(a.Created) || a.Request.Reason != "execute_effect" {
		t.Fatalf("approval %+v", a)
	}
	if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "allow_once"}); r.code != 200 {
		t.Fatalf("answer: %d %s", r.code, r.body)
	}
	r = e.call("GET", "/v1/approvals/"+id, e.tokens.Agent, nil)
	r.decode(t, &a)
	if a.State != StateResolved || a.Decision.Decision != "allow" || a.Decision.Reason != "user_approved" {
		t.Fatalf("resolved approval: %s", r.body)
	}
	if got := e.call("GET", "/v1/approvals?state=resolved", e.tokens.Approver, nil).json(t)["approvals"].([]any); len(got) != 1 {
		t.Fatalf("resolved list: %v", got)
	}
	if r := e.call("GET", "/v1/approvals/tc_unknown", e.tokens.Approver, nil); r.code != 404 {
		t.Fatalf("unknown approval: %d", r.code)
	}
	if r := e.call("POST", "/v1/approvals/tc_unknown", e.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 404 {
		t.Fatalf("answer unknown approval: %d", r.code)
	}
}

func TestClientDisconnectCancels(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.callCtx(ctx, "POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAsk, true))
	}()
	waitFor(t, "a pending approval", func() bool { return len(e.pending("s1")) == 1 })
	cancel()
	<-done
	waitFor(t, "permission.resolved", func() bool { return len(e.events("s1", eventlog.TypePermissionResolved)) == 1 })
	if p := e.resolvedPayload("s1"); p["decision"] != "deny" || p["reason"] != "approval_cancelled" {
		t.Fatalf("resolved %v", p)
	}
	waitFor(t, "the approval to resolve", func() bool { return len(e.pending("s1")) == 0 })
	list := e.call("GET", "/v1/approvals?session=s1", e.tokens.Approver, nil).json(t)["approvals"].([]any)
	if d := list[0].(map[string]any)["decision"].(map[string]any); d["reason"] != "approval_cancelled" || d["actor"] != "system" {
		t.Fatalf("decision %v", d)
	}
}

func TestTimeout(t *testing.T) {
	e := newEnv(t, withTimeout(300*time.Millisecond))
	r := e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAsk, true))
	m := r.json(t)
	if m["decision"] != "deny" || m["reason"] != "approval_timeout" {
		t.Fatalf("check: %s", r.body)
	}
	if p := e.resolvedPayload("s1"); p["reason"] != "approval_timeout" || p["actor"] != "system" {
		t.Fatalf("resolved %v", p)
	}
	// Without wait, the approval resolves itself at the deadline.
	id := e.ask("s2", cmdAsk)
	waitFor(t, "the timeout", func() bool {
		var a Approval
		e.call("GET", "/v1/approvals/"+id, e.tokens.Approver, nil).decode(t, &a)
		return a.State == StateResolved && a.Decision.Reason == "approval_timeout"
	})
	if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "allow_once"}); r.code != 409 {
		t.Fatalf("answer after timeout: %d %s", r.code, r.body)
	}
}

func TestBadRequests(t *testing.T) {
	e := newEnv(t)
	id := e.ask("s1", cmdAsk)
	before := len(e.events(""))
	ap := e.tokens.Approver
	good := `{"tool":"Bash","input":{"command":"ls"},"cwd":"` + e.project + `","session":"s9"}`
	big := `{"tool":"Bash","input":{"command":"` + strings.Repeat("a", MaxBody) + `"},"cwd":"/","session":"s9"}`
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		mention                  string
	}{
		{"malformed", "POST", "/v1/check", `{"tool":`, 400, "malformed JSON"},
		{"not an object", "POST", "/v1/check", `[1]`, 400, "JSON object"},
		{"unknown field", "POST", "/v1/check", strings.Replace(good, `"tool"`, `"tools":1,"tool"`, 1), 400, `"tools"`},
		{"wrong type", "POST", "/v1/check", strings.Replace(good, `"session":"s9"`, `"session":7`, 1), 400, `"session"`},
		{"trailing data", "POST", "/v1/check", good + `{}`, 400, "after the JSON"},
		{"empty body", "POST", "/v1/check", ``, 400, "empty"},
		{"no session", "POST", "/v1/check", strings.Replace(good, `,"session":"s9"`, ``, 1), 400, `"session"`},
		{"bad session", "POST", "/v1/check", strings.Replace(good, `"s9"`, `"a b/c"`, 1), 400, `"session"`},
		{"no tool", "POST", "/v1/check", strings.Replace(good, `"tool":"Bash",`, ``, 1), 400, `"tool"`},
		{"relative cwd", "POST", "/v1/check", strings.Replace(good, e.project, `rel`, 1), 400, `"cwd"`},
		{"bad turn", "POST", "/v1/check", strings.Replace(good, `"session"`, `"turn":"t 1","session"`, 1), 400, `"turn"`},
		{"oversize", "POST", "/v1/check", big, 413, "larger"},
		{"bad approval id", "POST", "/v1/approvals/bad%20id", `{"answer":"deny"}`, 400, "approval id"},
		{"unknown answer", "POST", "/v1/approvals/" + id, `{"answer":"maybe"}`, 400, `"answer"`},
		{"no answer", "POST", "/v1/approvals/" + id, `{}`, 400, `"answer"`},
		{"answer unknown field", "POST", "/v1/approvals/" + id, `{"answer":"deny","why":1}`, 400, `"why"`},
		{"bad rule", "POST", "/v1/approvals/" + id, `{"answer":"allow_project","rule":"Bash("}`, 400, `"rule"`},
		{"rule on allow_once", "POST", "/v1/approvals/" + id, `{"answer":"allow_once","rule":"Bash(make:*)"}`, 400, `"rule"`},
		{"respond kind", "POST", "/v1/sessions/s1/respond", `{"kind":"other","decision":"approved"}`, 400, `"kind"`},
		{"respond decision", "POST", "/v1/sessions/s1/respond", `{"kind":"permission","decision":"yes"}`, 400, `"decision"`},
		{"event type", "POST", "/v1/sessions/s1/events", `{"type":"permission.resolved"}`, 400, `"type"`},
		{"agent posting a grant", "POST", "/v1/sessions/s1/events", `{"type":"lease.granted","payload":{"id":"ls_x","kind":"lease","path":"/","capability":"write"}}`, 400, `"type"`},
		{"agent posting a revocation", "POST", "/v1/sessions/s1/events", `{"events":[{"type":"lease.revoked","payload":{"id":"ls_x"}}]}`, 400, `events[0].type`},
		{"agent posting an answer", "POST", "/v1/sessions/s1/events", `{"type":"permission.answered","payload":{"toolCallId":"tc_x","answer":"allow_once"}}`, 400, `"type"`},
		{"event payload", "POST", "/v1/sessions/s1/events", `{"type":"turn.started","payload":[1]}`, 400, `"payload"`},
		{"event batch type", "POST", "/v1/sessions/s1/events", `{"events":[{"type":"turn.started"},{"type":"tool.started"}]}`, 400, `events[1].type`},
		{"event both forms", "POST", "/v1/sessions/s1/events", `{"type":"turn.started","events":[]}`, 400, "either"},
		{"bad session path", "POST", "/v1/sessions/a%20b/events", `{"type":"turn.started"}`, 400, "session id"},
		{"policy mode", "PUT", "/v1/sessions/s1/policy", `{"mode":"yolo"}`, 400, `"mode"`},
		{"policy field", "PUT", "/v1/sessions/s1/policy", `{"modes":"plan"}`, 400, `"modes"`},
		{"policy network", "PUT", "/v1/sessions/s1/policy", `{"network":"yes"}`, 400, `"network"`},
		{"events filter", "GET", "/v1/events?decision=maybe", ``, 400, `"decision"`},
		{"events param", "GET", "/v1/events?sesion=s1", ``, 400, `"sesion"`},
		{"events limit", "GET", "/v1/events?limit=0", ``, 400, `"limit"`},
		{"events since", "GET", "/v1/events?since=yesterday", ``, 400, `"since"`},
		{"approvals state", "GET", "/v1/approvals?state=open", ``, 400, `"state"`},
		{"policy cwd", "GET", "/v1/policy", ``, 400, `"cwd"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			r := e.call(tc.method, tc.path, ap, body)
			if r.code != tc.code {
				t.Fatalf("got %d, want %d: %s", r.code, tc.code, r.body)
			}
			msg, _ := r.json(t)["error"].(string)
			if !strings.Contains(msg, tc.mention) {
				t.Fatalf("error %q does not mention %q", msg, tc.mention)
			}
		})
	}
	if after := len(e.events("")); after != before {
		t.Fatalf("bad requests wrote %d events", after-before)
	}
	if got := e.pending("s1"); len(got) != 1 {
		t.Fatalf("bad answers resolved the approval: %v", got)
	}
	if _, ok := e.sessions.Get("s1"); ok {
		t.Fatal("a bad policy request changed the session settings")
	}
}

func TestDestructiveNeedsConfirmation(t *testing.T) {
	e := newEnv(t)
	id := e.ask("s1", cmdDestructive)
	var a Approval
	e.call("GET", "/v1/approvals/"+id, e.tokens.Approver, nil).decode(t, &a)
	if !a.Request.Destructive {
		t.Fatalf("%q is not destructive: %+v", cmdDestructive, a.Request)
	}
	target := a.Request.ConfirmWord()
	if a.ConfirmWord != target {
		t.Fatalf("the approval says to type %q, the server wants %q", a.ConfirmWord, target)
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		code int
	}{
		{"remembered", map[string]any{"answer": "allow_session", "confirm": target}, 400},
		{"project", map[string]any{"answer": "allow_project", "confirm": target}, 400},
		{"no confirmation", map[string]any{"answer": "allow_once"}, 400},
		{"wrong confirmation", map[string]any{"answer": "allow_once", "confirm": target + "x"}, 400},
		{"confirmed", map[string]any{"answer": "allow_once", "confirm": target}, 200},
	} {
		r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, tc.body)
		if r.code != tc.code {
			t.Fatalf("%s: got %d, want %d: %s", tc.name, r.code, tc.code, r.body)
		}
		if tc.code == 400 && !strings.Contains(string(r.body), "destructive") {
			t.Errorf("%s: error does not say why: %s", tc.name, r.body)
		}
	}
	if p := e.resolvedPayload("s1"); p["decision"] != "allow" || p["answer"] != "allow_once" {
		t.Fatalf("resolved %v", p)
	}
	// Deny needs no confirmation.
	id = e.ask("s2", cmdDestructive)
	if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "deny"}); r.code != 200 {
		t.Fatalf("deny: %d %s", r.code, r.body)
	}
}

func TestRespond(t *testing.T) {
	e := newEnv(t)
	first := e.ask("s1", cmdAsk)
	second := e.ask("s1", cmdAsk)
	other := e.ask("s2", cmdAsk)
	ap := e.tokens.Approver

	// With two pending, an answer must say which it is for.
	r := e.call("POST", "/v1/sessions/s1/respond", ap, map[string]any{"kind": "permission", "decision": "approved"})
	if msg := string(r.body); r.code != 400 || !strings.Contains(msg, `\"tool_call_id\" is required`) || !strings.Contains(msg, first) || !strings.Contains(msg, second) {
		t.Fatalf("respond without an id, two pending: %d %s", r.code, r.body)
	}
	if got := e.pending("s1"); len(got) != 2 {
		t.Fatalf("an answer without an id resolved something: %v", got)
	}
	r = e.call("POST", "/v1/sessions/s1/respond", ap, map[string]any{"kind": "permission", "decision": "approved", "tool_call_id": first})
	var a Approval
	r.decode(t, &a)
	if r.code != 200 || a.ID != first || a.Decision.Decision != "allow" || a.Decision.Answer != "allow_once" {
		t.Fatalf("respond approved: %d %s", r.code, r.body)
	}
	if r := e.call("POST", "/v1/sessions/s1/respond", ap, map[string]any{"kind": "permission", "decision": "rejected", "tool_call_id": other}); r.code != 404 {
		t.Fatalf("respond to another session's approval: %d %s", r.code, r.body)
	}
	r = e.call("POST", "/v1/sessions/s1/respond", ap, map[string]any{"kind": "permission", "decision": "rejected", "tool_call_id": second, "message": "use make test"})
	r.decode(t, &a)
	if r.code != 200 || a.ID != second || a.Decision.Decision != "deny" || a.Decision.Reason != "user_denied" {
		t.Fatalf("respond rejected: %d %s", r.code, r.body)
	}
	if p := e.resolvedPayload("s1"); p["message"] != "use make test" {
		t.Fatalf("the message did not reach the log: %v", p)
	}
	if r := e.call("POST", "/v1/sessions/s1/respond", ap, map[string]any{"kind": "permission", "decision": "approved"}); r.code != 404 {
		t.Fatalf("respond with nothing pending: %d %s", r.code, r.body)
	}
	if r := e.call("POST", "/v1/sessions/s1/respond", ap, map[string]any{"kind": "permission", "decision": "approved", "tool_call_id": first}); r.code != 409 {
		t.Fatalf("respond to a resolved approval: %d %s", r.code, r.body)
	}
}

func TestSessionPolicy(t *testing.T) {
	e := newEnv(t)
	ap := e.tokens.Approver
	decide := func(session string) string {
		return e.call("POST", "/v1/check", e.tokens.Agent, e.check(session, cmdAsk, false)).json(t)["decision"].(string)
	}
	if d := decide("s1"); d != "ask" {
		t.Fatalf("before: %s", d)
	}
	r := e.call("PUT", "/v1/sessions/s1/policy", ap, map[string]any{"mode": "dontAsk"})
	if m := r.json(t); r.code != 200 || m["mode"] != "dontAsk" || m["sandbox"] != nil {
		t.Fatalf("put: %d %s", r.code, r.body)
	}
	if d := decide("s1"); d != "deny" {
		t.Fatalf("after dontAsk: %s", d)
	}
	if d := decide("s2"); d != "ask" {
		t.Fatalf("another session changed too: %s", d)
	}
	evs := e.events("s1", eventlog.TypePolicyChanged)
	if len(evs) != 1 {
		t.Fatalf("policy.changed events: %v", evs)
	}
	var p map[string]any
	must(t, json.Unmarshal(evs[0].Payload, &p))
	if p["after"].(map[string]any)["mode"] != "dontAsk" || p["before"].(map[string]any)["mode"] != nil {
		t.Fatalf("policy.changed %v", p)
	}
	// Leaving a field out keeps it; null hands it back.
	e.call("PUT", "/v1/sessions/s1/policy", ap, map[string]any{"network": true})
	if m := e.call("GET", "/v1/sessions/s1/policy", ap, nil).json(t); m["mode"] != "dontAsk" || m["network"] != true {
		t.Fatalf("get: %v", m)
	}
	e.call("PUT", "/v1/sessions/s1/policy", ap, `{"mode":null,"network":null}`)
	if m := e.call("GET", "/v1/sessions/s1/policy", ap, nil).json(t); m["mode"] != nil || m["network"] != nil {
		t.Fatalf("after null: %v", m)
	}
	if d := decide("s1"); d != "ask" {
		t.Fatalf("after reset: %s", d)
	}
	if n := len(e.events("s1", eventlog.TypePolicyChanged)); n != 3 {
		t.Fatalf("want 3 policy.changed events, got %d", n)
	}
	// No change, no event.
	e.call("PUT", "/v1/sessions/s1/policy", ap, `{}`)
	if n := len(e.events("s1", eventlog.TypePolicyChanged)); n != 3 {
		t.Fatalf("an empty change wrote an event: %d", n)
	}
}

func TestSessionPolicyLocked(t *testing.T) {
	e := newEnv(t, func(_ *Options, f *policy.File) {
		m := policy.ModeDefault
		f.Mode = &m
	})
	r := e.call("PUT", "/v1/sessions/s1/policy", e.tokens.Approver, map[string]any{"mode": "bypassPermissions"})
	if r.code != 409 || !strings.Contains(r.json(t)["error"].(string), "mode") {
		t.Fatalf("locked mode: %d %s", r.code, r.body)
	}
	if n := len(e.events("s1")); n != 0 {
		t.Fatalf("a refused change wrote %d events", n)
	}
	if r := e.call("PUT", "/v1/sessions/s1/policy", e.tokens.Approver, map[string]any{"sandbox": "read-only"}); r.code != 200 {
		t.Fatalf("unlocked sandbox: %d %s", r.code, r.body)
	}
}

func TestMetrics(t *testing.T) {
	e := newEnv(t)
	e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAllow, true))
	e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdDeny, true))
	id := e.ask("s1", cmdAsk)
	body := string(e.call("GET", "/metrics", e.tokens.Approver, nil).body)
	for _, want := range []string{
		`toolgate_decisions_total{decision="allow",reason="rule_allow"} 1`,
		`toolgate_decisions_total{decision="deny",reason="sandbox_rejected"} 1`,
		"# TYPE toolgate_check_duration_seconds histogram",
		`toolgate_check_duration_seconds_bucket{le="+Inf"} 3`,
		"toolgate_check_duration_seconds_count 3",
		"toolgate_approvals_pending 1",
		"toolgate_approval_wait_seconds_count 0",
		// Each check's events so far went to the log in one commit: one
		// event for a call decided at once, the request and the question
		// for the call asked about.
		"toolgate_eventlog_commits_total 4\n", // and the session.bound event
		"toolgate_eventlog_events_total 5\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "deny"})
	// The asked check ends, and counts its decision, once its waiting
	// request has read the answer: after the answer's response, maybe.
	wants := []string{
		`toolgate_decisions_total{decision="deny",reason="user_denied"} 1`,
		"toolgate_approvals_pending 0",
		"toolgate_approval_wait_seconds_count 1",
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		body = string(e.call("GET", "/metrics", e.tokens.Approver, nil).body)
		missing := slices.DeleteFunc(slices.Clone(wants), func(w string) bool { return strings.Contains(body, w) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack %q:\n%s", missing, body)
		}
	}
}

func TestEventsJSONAndPost(t *testing.T) {
	e := newEnv(t)
	ag := e.tokens.Agent
	r := e.call("POST", "/v1/sessions/s1/events", ag, map[string]any{"type": "session.started", "payload": map[string]any{"agent": "claude"}})
	if r.code != 200 {
		t.Fatalf("post one: %d %s", r.code, r.body)
	}
	r = e.call("POST", "/v1/sessions/s1/events", ag, map[string]any{"events": []any{
		map[string]any{"type": "turn.started", "turn": "t1"},
		map[string]any{"type": "user.message", "turn": "t1", "payload": map[string]any{"text": "run the tests"}},
	}})
	var posted struct{ Events []eventlog.Event }
	r.decode(t, &posted)
	if r.code != 200 || len(posted.Events) != 2 || posted.Events[1].Seq != 4 || posted.Events[1].ID == 0 {
		t.Fatalf("post batch: %d %s", r.code, r.body)
	}
	e.call("POST", "/v1/check", ag, e.check("s1", cmdAllow, true))
	e.call("POST", "/v1/check", ag, e.check("s1", cmdDeny, true))
	e.call("POST", "/v1/check", e.tokens.Approver, e.check("s2", cmdAllow, true))

	get := func(path, token string) []eventlog.Event {
		t.Helper()
		r := e.call("GET", path, token, nil)
		if r.code != 200 {
			t.Fatalf("%s: %d %s", path, r.code, r.body)
		}
		var out struct{ Events []eventlog.Event }
		r.decode(t, &out)
		return out.Events
	}
	got := get("/v1/sessions/s1/events", ag)
	if len(got) != 7 || got[0].Type != TypeSessionBound || got[1].Type != eventlog.TypeSessionStarted || got[4].Type != TypeSessionBound {
		t.Fatalf("session events: %v", got)
	}
	if got := get("/v1/events?session=s1&decision=deny", ag); len(got) != 1 || got[0].Type != eventlog.TypePermissionResolved {
		t.Fatalf("deny events: %v", got)
	}
	if got := get("/v1/events?type=permission.resolved&tool=Bash", e.tokens.Approver); len(got) != 3 {
		t.Fatalf("resolved events: %v", got)
	}
	all := get("/v1/events", e.tokens.Approver)
	if got := get(fmt.Sprintf("/v1/events?after=%d&limit=2", all[2].ID), e.tokens.Approver); len(got) != 2 || got[0].ID != all[3].ID {
		t.Fatalf("after/limit: %v", got)
	}
	if got := get("/v1/events?since=1h&until="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339), e.tokens.Approver); len(got) != len(all) {
		t.Fatalf("since/until kept %d of %d", len(got), len(all))
	}
	// The agent checked nothing in s2.
	if r := e.call("GET", "/v1/sessions/s2/events", ag, nil); r.code != 403 {
		t.Fatalf("agent reads s2: %d", r.code)
	}
}

func TestPolicyStatsWhoami(t *testing.T) {
	e := newEnv(t)
	ap := e.tokens.Approver
	r := e.call("GET", "/v1/policy?cwd="+e.project, ap, nil)
	m := r.json(t)
	if r.code != 200 || m["root"] != e.project || m["settings"].(map[string]any)["mode"] != "default" {
		t.Fatalf("policy: %d %s", r.code, r.body)
	}
	rules := m["rules"].([]any)
	if len(rules) != 1 || rules[0].(map[string]any)["rule"] != "Bash(npm test)" || rules[0].(map[string]any)["layer"] != "cli" {
		t.Fatalf("rules: %v", rules)
	}

	e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAllow, true))
	e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdDeny, true))
	id := e.ask("s2", cmdAsk)
	e.call("POST", "/v1/approvals/"+id, ap, map[string]any{"answer": "deny"})
	var st Stats
	r = e.call("GET", "/v1/stats?since=1h", ap, nil)
	r.decode(t, &st)
	if st.Totals != (Counts{Calls: 3, Allow: 1, Ask: 1, Deny: 2, Pending: 0}) {
		t.Fatalf("totals %+v", st.Totals)
	}
	if len(st.Hourly) != 1 || st.Hourly[0].Counts != st.Totals {
		t.Fatalf("hourly %+v", st.Hourly)
	}
	if len(st.Sessions) != 2 || st.Sessions[0] != (Ranked{Name: "s1", Count: 2}) {
		t.Fatalf("sessions %+v", st.Sessions)
	}
	reasons := map[string]int{}
	for _, rk := range st.TopReasons {
		reasons[rk.Decision+" "+rk.Name] = rk.Count
	}
	if reasons["deny sandbox_rejected"] != 1 || reasons["ask execute_effect"] != 1 || reasons["deny user_denied"] != 1 {
		t.Fatalf("reasons %+v", st.TopReasons)
	}
}

func TestManyPending(t *testing.T) {
	e := newEnv(t, withTimeout(time.Minute))
	const n = 1000
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ids[i] = e.ask(fmt.Sprintf("s%d", i%20), cmdAsk)
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var list struct{ Approvals []Approval }
	e.call("GET", "/v1/approvals?state=pending", e.tokens.Approver, nil).decode(t, &list)
	if len(list.Approvals) != n {
		t.Fatalf("%d pending, want %d", len(list.Approvals), n)
	}
	for i := 1; i < n; i++ {
		if list.Approvals[i].Created.Before(list.Approvals[i-1].Created) {
			t.Fatal("the list is not oldest first")
		}
	}
	if !strings.Contains(string(e.call("GET", "/metrics", e.tokens.Approver, nil).body), fmt.Sprintf("toolgate_approvals_pending %d", n)) {
		t.Fatal("the pending gauge is wrong")
	}
	for i, id := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			answer := "allow_once"
			if i%2 == 1 {
				answer = "deny"
			}
			if r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": answer}); r.code != 200 {
				t.Errorf("answer %s: %d %s", id, r.code, r.body)
			}
		})
	}
	wg.Wait()
	if p := e.srv.Broker().Pending(); p != 0 {
		t.Fatalf("%d still pending", p)
	}
	if got := len(e.events("", eventlog.TypePermissionResolved)); got != n {
		t.Fatalf("%d permission.resolved events, want %d", got, n)
	}
}

func TestShutdownCancelsPending(t *testing.T) {
	e := newEnv(t)
	done := make(chan response)
	go func() { done <- e.call("POST", "/v1/check", e.tokens.Agent, e.check("s1", cmdAsk, true)) }()
	id := e.ask("s2", cmdAsk)
	waitFor(t, "two pending", func() bool { return e.srv.Broker().Pending() == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, e.srv.Shutdown(ctx))
	r := <-done
	if m := r.json(t); m["decision"] != "deny" || m["reason"] != "approval_cancelled" {
		t.Fatalf("waiting check: %s", r.body)
	}
	for _, s := range []string{"s1", "s2"} {
		if p := e.resolvedPayload(s); p["reason"] != "approval_cancelled" {
			t.Fatalf("%s: %v", s, p)
		}
	}
	a, err := e.srv.Broker().Get(ctx, id)
	must(t, err)
	if a.State != StateResolved || a.Decision.Reason != "approval_cancelled" {
		t.Fatalf("approval %+v", a)
	}
	if r := e.call("POST", "/v1/check", e.tokens.Agent, e.check("s3", cmdAllow, true)); r.code != 503 {
		t.Fatalf("check after shutdown: %d", r.code)
	}
}

// TestRestoreSessions checks that the session settings a person switched
// come back from the event log after a restart, the last switch of each
// session winning, and that changes the server cannot verify — unsigned,
// signed under another approver token, replayed — are not restored.
func TestRestoreSessions(t *testing.T) {
	e := newEnv(t)
	ap := e.tokens.Approver
	ctx := context.Background()
	e.call("PUT", "/v1/sessions/s1/policy", ap, map[string]any{"mode": "plan"})
	e.call("PUT", "/v1/sessions/s1/policy", ap, map[string]any{"sandbox": "read-only"})
	e.call("PUT", "/v1/sessions/s2/policy", ap, map[string]any{"network": false})
	e.call("PUT", "/v1/sessions/s3/policy", ap, map[string]any{"mode": "dontAsk"})
	e.call("PUT", "/v1/sessions/s3/policy", ap, map[string]any{"mode": nil})
	// A rule remembered in a file is a policy.changed of another scope.
	_, err := e.store.Append(ctx, "s4", eventlog.Draft{Type: eventlog.TypePolicyChanged,
		Payload: json.RawMessage(`{"change":"rule_added","rule":"Bash(ls)","scope":"project"}`)})
	must(t, err)

	// restart starts a second server on the same log, as a restarted
	// serve would, and restores its sessions.
	restart := func(tokens Tokens) (*engine.Sessions, *Server) {
		t.Helper()
		sessions := engine.NewSessions()
		srv, err := New(Options{Engine: e.srv.opts.Engine, Store: e.store, Sessions: sessions, Tokens: tokens})
		must(t, err)
		t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
		return sessions, srv
	}
	restored, _ := restart(e.tokens)
	for _, s := range []string{"s1", "s2", "s3", "s4"} {
		want, _ := e.sessions.Get(s)
		if got, _ := restored.Get(s); !got.Equal(want) {
			t.Errorf("session %s: restored %s, had %s", s, mustJSON(t, got), mustJSON(t, want))
		}
	}
	if got, _ := restored.Get("s1"); got.Mode == nil || *got.Mode != policy.ModePlan || got.Sandbox == nil || *got.Sandbox != policy.SandboxReadOnly {
		t.Fatalf("s1 restored as %s", mustJSON(t, got))
	}

	// Under other tokens nothing verifies, and nothing is restored.
	if other, _ := restart(Tokens{Agent: "a2", Approver: "another-approver-token"}); func() bool { v, ok := other.Get("s1"); return ok && v != (engine.SessionSettings{}) }() {
		t.Fatal("settings signed under another approver token were restored")
	}

	// Forged and replayed changes are skipped.
	firstChange := func(session string) json.RawMessage {
		for ev, err := range e.store.Query(ctx, eventlog.Filter{Session: session, Types: []eventlog.Type{eventlog.TypePolicyChanged}}) {
			must(t, err)
			return ev.Payload
		}
		t.Fatalf("no change of %s", session)
		return nil
	}
	firstS1, firstS3 := firstChange("s1"), firstChange("s3")
	for _, forged := range []struct{ session, payload string }{
		{"s5", `{"scope":"session","actor":"user","changed":["mode"],"before":{},"after":{"mode":"bypassPermissions"},"n":1}`},
		{"s5", `{"scope":"session","actor":"user","changed":["mode"],"before":{},"after":{"mode":"bypassPermissions"},"n":1,"sig":"00ff"}`},
		{"s5", `{"scope":"session","after":{"mode":"yolo"}}`},
		{"s1", string(firstS1)}, // s1's first switch, appended again
		// s3 went to dontAsk and back; its first switch, appended again,
		// starts from the settings s3 has now, and only its count shows
		// it is a replay.
		{"s3", string(firstS3)},
	} {
		_, err := e.store.Append(ctx, forged.session, eventlog.Draft{Type: eventlog.TypePolicyChanged, Payload: json.RawMessage(forged.payload)})
		must(t, err)
	}
	again, srv := restart(e.tokens)
	if v, ok := again.Get("s5"); ok {
		t.Errorf("a forged change was restored: %s", mustJSON(t, v))
	}
	if got, _ := again.Get("s1"); got.Sandbox == nil || *got.Sandbox != policy.SandboxReadOnly {
		t.Errorf("a replayed change took s1 back to %s", mustJSON(t, got))
	}
	if got, ok := again.Get("s3"); ok {
		t.Errorf("a replayed change set s3 to %s", mustJSON(t, got))
	}
	// The restored server goes on counting: its next change verifies too.
	ts := httptest.NewServer(srv)
	defer ts.Close()
	req, _ := http.NewRequest("PUT", ts.URL+"/v1/sessions/s1/policy", strings.NewReader(`{"network":false}`))
	req.Header.Set("Authorization", "Bearer "+ap)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT on the restored server: %d", resp.StatusCode)
	}
	if last, _ := restart(e.tokens); func() bool { v, _ := last.Get("s1"); return v.Network == nil || *v.Network }() {
		t.Error("the change made after the restore was not restored")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// TestRestoreSessionsFailsClosed: a switch deleted from the log (by
// whoever can write to it) does not take the session back to its older
// settings: the count kept outside the log shows it missing, and the
// session asks for every call. A switch that loosened the session is not
// restored once it is old, and one that tightened it is.
func TestRestoreSessionsFailsClosed(t *testing.T) {
	project := realDir(t)
	must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	db := filepath.Join(t.TempDir(), "events.db")
	heads := filepath.Join(t.TempDir(), SessionHeadsFile(db))
	withHeads := func(o *Options, _ *policy.File) { o.SessionHeads = heads }
	e := newEnvAt(t, project, sqliteLog(t, db), withHeads)
	ap := e.tokens.Approver
	e.call("PUT", "/v1/sessions/s1/policy", ap, map[string]any{"mode": "bypassPermissions"})
	e.call("PUT", "/v1/sessions/s1/policy", ap, map[string]any{"mode": "plan"})
	e.call("PUT", "/v1/sessions/s2/policy", ap, map[string]any{"mode": "bypassPermissions", "sandbox": "read-only"})
	evs := e.events("s1", eventlog.TypePolicyChanged)
	if len(evs) != 2 {
		t.Fatalf("s1 has %d changes", len(evs))
	}
	// The tightening switch of s1 is deleted behind the server's back.
	conn, err := sql.Open("sqlite", db)
	must(t, err)
	_, err = conn.Exec("DELETE FROM events WHERE id = ?", evs[1].ID)
	must(t, err)
	must(t, conn.Close())

	restart := func(clock func() time.Time) *engine.Sessions {
		t.Helper()
		sessions := engine.NewSessions()
		srv, err := New(Options{Engine: e.srv.opts.Engine, Store: e.store, Sessions: sessions, Tokens: e.tokens, SessionHeads: heads, Clock: clock})
		must(t, err)
		t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
		return sessions
	}
	// A start whose reading of the log fails half way lowers no count.
	_, err = New(Options{Engine: e.srv.opts.Engine, Store: failingQuery{e.store, 1}, Sessions: engine.NewSessions(), Tokens: e.tokens, SessionHeads: heads})
	if err == nil {
		t.Fatal("a restore that could not read the log started")
	}
	var counts map[string]int
	raw, err := os.ReadFile(heads)
	must(t, err)
	must(t, json.Unmarshal(raw, &counts))
	if counts["s1"] != 2 {
		t.Fatalf("counts after a failed start: %v", counts)
	}
	got := restart(time.Now)
	if v, _ := got.Get("s1"); v.Mode != nil || v.Approval == nil || *v.Approval != policy.ApprovalAlways {
		t.Fatalf("s1 after its last switch was deleted: %s, want approval always", mustJSON(t, v))
	}
	if v, _ := got.Get("s2"); v.Mode == nil || *v.Mode != policy.ModeBypass {
		t.Fatalf("s2 right after the restart: %s", mustJSON(t, v))
	}
	// A day later, s2's bypass is not restored, its read-only sandbox is.
	got = restart(func() time.Time { return time.Now().Add(25 * time.Hour) })
	if v, _ := got.Get("s2"); v.Mode != nil || v.Sandbox == nil || *v.Sandbox != policy.SandboxReadOnly {
		t.Fatalf("s2 a day later: %s", mustJSON(t, v))
	}
}

// failingQuery is a store whose Query fails after after events.
type failingQuery struct {
	eventlog.Store
	after int
}

func (f failingQuery) Query(ctx context.Context, filter eventlog.Filter) iter.Seq2[eventlog.Event, error] {
	return func(yield func(eventlog.Event, error) bool) {
		n := 0
		for e, err := range f.Store.Query(ctx, filter) {
			if n == f.after {
				yield(eventlog.Event{}, errors.New("the connection dropped"))
				return
			}
			n++
			if !yield(e, err) {
				return
			}
		}
	}
}

// TestStatsAddUp: the overview's counts add up — every call that came in
// the window is allowed, denied or pending, and "asked" is a part of them
// — and a call is counted in the hour it came, not the hour it was
// answered; a call that came before the window is not counted. A log
// holds calls decided at once in two shapes: a model.tool_call_requested
// and then the decision (written before), or one decision that carries
// the call; both count once.
func TestStatsAddUp(t *testing.T) {
	e := newEnv(t)
	ap := e.tokens.Approver
	now := time.Now().UTC()
	at := func(h int) time.Time {
		return now.Truncate(time.Hour).Add(time.Duration(h) * time.Hour).Add(5 * time.Minute)
	}
	ev := func(when time.Time, typ eventlog.Type, payload string) eventlog.Draft {
		return eventlog.Draft{Time: when, Type: typ, Payload: json.RawMessage(payload)}
	}
	_, err := e.store.Append(context.Background(), "hist",
		// Came 30 hours ago, answered 20 hours ago: before the window.
		ev(at(-30), eventlog.TypeToolCallRequested, `{"toolCallId":"tc_old","tool":"Bash"}`),
		ev(at(-30), eventlog.TypePermissionRequested, `{"toolCallId":"tc_old","reason":"execute_effect"}`),
		ev(at(-20), eventlog.TypePermissionResolved, `{"toolCallId":"tc_old","decision":"allow","reason":"user_approved"}`),
		// Came 5 hours ago, answered 3 hours ago: counted 5 hours ago.
		ev(at(-5), eventlog.TypeToolCallRequested, `{"toolCallId":"tc_late","tool":"Bash","agent":"coder"}`),
		ev(at(-5), eventlog.TypePermissionRequested, `{"toolCallId":"tc_late","reason":"execute_effect"}`),
		ev(at(-3), eventlog.TypePermissionResolved, `{"toolCallId":"tc_late","decision":"deny","reason":"user_denied"}`),
		// Came 3 hours ago, allowed by policy at once (as logs written
		// before one event per such call have it).
		ev(at(-3), eventlog.TypeToolCallRequested, `{"toolCallId":"tc_now","tool":"Read"}`),
		ev(at(-3), eventlog.TypePermissionResolved, `{"toolCallId":"tc_now","decision":"allow","reason":"read_only"}`),
		// Came 2 hours ago, allowed at once: one event carries the call.
		ev(at(-2), eventlog.TypePermissionResolved, `{"toolCallId":"tc_one","tool":"Read","decision":"allow","reason":"read_only","input":{"file_path":"a"},"agent":"reader"}`),
	)
	must(t, err)
	// And one waiting now.
	e.ask("live", cmdAsk)

	var st Stats
	r := e.call("GET", "/v1/stats?since=24h", ap, nil)
	r.decode(t, &st)
	if want := (Counts{Calls: 4, Allow: 2, Deny: 1, Pending: 1, Ask: 2}); st.Totals != want {
		t.Fatalf("totals %+v, want %+v", st.Totals, want)
	}
	if c := st.Totals; c.Allow+c.Deny+c.Pending != c.Calls || c.Ask > c.Calls {
		t.Errorf("the totals do not add up: %+v", c)
	}
	byHour := map[time.Time]Counts{}
	for _, h := range st.Hourly {
		byHour[h.Hour] = h.Counts
		if h.Allow+h.Deny+h.Pending != h.Calls {
			t.Errorf("hour %s does not add up: %+v", h.Hour, h.Counts)
		}
	}
	if got := byHour[at(-5).Truncate(time.Hour)]; got != (Counts{Calls: 1, Deny: 1, Ask: 1}) {
		t.Errorf("the hour the late answer's call came: %+v, want it denied there", got)
	}
	if got := byHour[at(-3).Truncate(time.Hour)]; got != (Counts{Calls: 1, Allow: 1}) {
		t.Errorf("the hour of the late answer: %+v, want only the call that came then", got)
	}
	if got := byHour[at(-2).Truncate(time.Hour)]; got != (Counts{Calls: 1, Allow: 1}) {
		t.Errorf("the hour of the call decided in one event: %+v, want it allowed there", got)
	}
	agents := map[string]int{}
	for _, a := range st.Agents {
		agents[a.Name] = a.Count
	}
	if agents["coder"] != 1 || agents["reader"] != 1 {
		t.Errorf("agents %+v, want coder and reader once each", st.Agents)
	}

	// Finer periods, for a range where everything came within an hour.
	r = e.call("GET", "/v1/stats?since=24h&bucket=10m", ap, nil)
	st = Stats{}
	r.decode(t, &st)
	if r.code != 200 || st.Bucket != "10m0s" || len(st.Hourly) != 4 || st.Hourly[0].Hour != at(-5).Truncate(10*time.Minute) {
		t.Errorf("bucket=10m: %d, bucket %q, periods %+v", r.code, st.Bucket, st.Hourly)
	}
	if r := e.call("GET", "/v1/stats?bucket=7m", ap, nil); r.code != 400 || !strings.Contains(string(r.body), "one of 1m") {
		t.Errorf("bucket=7m: %d %s, want 400 naming the buckets", r.code, r.body)
	}
}
