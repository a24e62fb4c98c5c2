package server

import (
	"strings"
	"testing"
)

// TestAnswerRecordsWhereGiven: permission.resolved says where the person
// answered — the web page for a browser session, the terminal when
// toolgate approve says so, the API otherwise — and a script with the
// approver token cannot pass its answer off as the page's.
func TestAnswerRecordsWhereGiven(t *testing.T) {
	e := newEnv(t)
	page := e.login(t)
	for _, c := range []struct {
		session string
		body    map[string]any
		headers []string
		token   string
		want    string
	}{
		{"s1", map[string]any{"answer": "allow_once"}, []string{SessionHeader, page, "Origin", e.ts.URL}, "", "page"},
		{"s2", map[string]any{"answer": "allow_once", "via": "terminal"}, nil, e.tokens.Approver, "terminal"},
		{"s3", map[string]any{"answer": "deny"}, nil, e.tokens.Approver, "api"},
		{"s4", map[string]any{"answer": "allow_once", "via": "api"}, nil, e.tokens.Approver, "api"},
		{"s5", map[string]any{"answer": "allow_once", "via": "terminal"}, []string{SessionHeader, page, "Origin", e.ts.URL}, "", "page"},
	} {
		id := e.ask(c.session, cmdAsk)
		if r := e.call("POST", "/v1/approvals/"+id, c.token, c.body, c.headers...); r.code != 200 {
			t.Fatalf("%s: answer: %d %s", c.session, r.code, r.body)
		}
		if got := e.resolvedPayload(c.session); got["via"] != c.want || got["actor"] != "user" {
			t.Errorf("%s: permission.resolved %v, want via %s", c.session, got, c.want)
		}
	}
	id := e.ask("s6", cmdAsk)
	r := e.call("POST", "/v1/approvals/"+id, e.tokens.Approver, map[string]any{"answer": "allow_once", "via": "page"})
	if r.code != 400 || !strings.Contains(string(r.body), `field \"via\" must be \"terminal\" or \"api\", not \"page\"`) {
		t.Fatalf("a bearer token claiming the page: %d %s", r.code, r.body)
	}
	if got := e.pending("s6"); len(got) != 1 {
		t.Fatalf("the refused answer was taken: %+v", got)
	}
}
