package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/policy"
)

// login signs a browser in as the page does: GET /login?code=, then POST
// /v1/login from the server's own origin. It returns the session token.
func (e *testEnv) login(t *testing.T) string {
	t.Helper()
	code := e.srv.LoginCode()
	r := e.call("POST", "/v1/login", "", map[string]string{"code": code}, "Origin", e.ts.URL)
	if r.code != 200 {
		t.Fatalf("POST /v1/login: %d %s", r.code, r.body)
	}
	tok, _ := r.json(t)["token"].(string)
	if tok == "" {
		t.Fatalf("POST /v1/login gave no token: %s", r.body)
	}
	return tok
}

// TestBrowserLogin: the login link's code, redeemed by the page, becomes a
// session token sent in a header; the link sets no cookie, opening it
// does not use the code up, and the code works once.
func TestBrowserLogin(t *testing.T) {
	e := newEnv(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(url string) *http.Response {
		t.Helper()
		resp, err := noRedirect.Get(url)
		must(t, err)
		resp.Body.Close()
		return resp
	}
	code := e.srv.LoginCode()
	for range 2 { // a chat app's preview of the link does not spend it
		resp := get(e.ts.URL + "/login?code=" + code)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/#login="+code {
			t.Fatalf("login link: %d %v", resp.StatusCode, resp.Header)
		}
		for _, c := range resp.Cookies() {
			if c.Value != "" || c.MaxAge >= 0 {
				t.Fatalf("the login link set a cookie: %+v", c)
			}
		}
	}
	if resp := get(e.ts.URL + "/login?code=nope"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("wrong code: %d", resp.StatusCode)
	}

	// Only the server's own page redeems it.
	body := map[string]string{"code": code}
	for _, hdr := range [][]string{
		nil,
		{"Origin", "http://127.0.0.1:1"},
		{"Origin", "null"},
		{"Origin", e.ts.URL, "Sec-Fetch-Site", "same-site"},
	} {
		if r := e.call("POST", "/v1/login", "", body, hdr...); r.code != 403 || strings.Contains(string(r.body), `"token":`) {
			t.Fatalf("redeem with %q: %d %s", hdr, r.code, r.body)
		}
	}
	r := e.call("POST", "/v1/login", "", body, "Origin", e.ts.URL, "Sec-Fetch-Site", "same-origin")
	if r.code != 200 || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("redeem: %d %v %s", r.code, r.header, r.body)
	}
	var v struct {
		Token          string
		Expires, Until time.Time
	}
	r.decode(t, &v)
	now := time.Now()
	if v.Token == "" || v.Expires.Sub(now) > WebSessionIdle || v.Expires.Sub(now) < WebSessionIdle-time.Minute ||
		v.Until.Sub(now) > WebSessionMaxAge || v.Until.Sub(now) < WebSessionMaxAge-time.Minute {
		t.Fatalf("session %+v at %v", v, now)
	}
	// The code works once.
	if r := e.call("POST", "/v1/login", "", body, "Origin", e.ts.URL); r.code != 403 {
		t.Fatalf("second redeem: %d %s", r.code, r.body)
	}
	if resp := get(e.ts.URL + "/login?code=" + code); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("used link: %d", resp.StatusCode)
	}

	// The token is the credential: a GET needs no Origin, a change needs
	// the server's own.
	who := e.call("GET", "/v1/whoami", "", nil, SessionHeader, v.Token).json(t)
	if who["role"] != "approver" || who["expires"] == nil || who["until"] == nil {
		t.Fatalf("whoami %v", who)
	}
	if _, ok := who["csrf"]; ok {
		t.Fatalf("whoami still hands out a csrf value: %v", who)
	}
	if r := e.call("GET", "/v1/approvals", "", nil, SessionHeader, v.Token, "Sec-Fetch-Site", "same-origin"); r.code != 200 {
		t.Fatalf("GET with the session: %d %s", r.code, r.body)
	}
	id := e.ask("s1", cmdAsk)
	if r := e.call("POST", "/v1/approvals/"+id, "", map[string]any{"answer": "allow_once"}, SessionHeader, v.Token, "Origin", e.ts.URL); r.code != 200 {
		t.Fatalf("same-origin answer: %d %s", r.code, r.body)
	}
	if got := e.pending("s1"); len(got) != 0 {
		t.Fatalf("the page's answer was not taken: %+v", got)
	}
	// A bearer token has nothing to renew; the approver can make a new link.
	if r := e.call("POST", "/v1/web-session", e.tokens.Approver, nil); r.code != 400 {
		t.Fatalf("renew a bearer token: %d %s", r.code, r.body)
	}
	link := e.call("POST", "/v1/login-link", e.tokens.Approver, nil).json(t)["link"].(string)
	if !strings.HasPrefix(link, e.ts.URL+"/login?code=") {
		t.Fatalf("link %q", link)
	}
}

// TestBrowserCredentialStaysHome reproduces the attack of a second server
// on the same host (an agent's dev server the person opens in the same
// browser): cookies do not keep ports apart, so whatever a browser holds in
// a cookie for 127.0.0.1:8765 reaches that server, which replays it with
// no Origin, or with any Origin it likes, or the page it serves sends it
// cross-origin. None of it answers the agent's question, and none of it
// reads anything.
func TestBrowserCredentialStaysHome(t *testing.T) {
	e := newEnv(t)
	tok := e.login(t)
	id := e.ask("s1", cmdAsk)
	port := e.ts.Listener.Addr().(*net.TCPAddr).Port
	devServer := fmt.Sprintf("http://127.0.0.1:%d", port+1)

	other := &auth{tokens: Tokens{Agent: "x", Approver: "another-approver-token"}, clock: time.Now}
	now := time.Now()
	signed := func(a *auth, issued, expires time.Time) string {
		return a.token(&webSession{id: randomHex(16), issued: issued, expires: expires})
	}
	i, rest, _ := strings.Cut(tok, ".")
	issued, _ := strconv.ParseInt(i, 10, 64)

	grab := map[string]any{"answer": "allow_user", "rule": "Bash"}
	path := "/v1/approvals/" + id
	cases := []struct {
		name  string
		host  string // "" for the server's own address
		hdr   []string
		want  int
		reads bool // a GET of /v1/whoami, else the answer
	}{
		// The credential in a cookie is no credential, with or without Origin.
		{"cookie, no Origin", "", []string{"Cookie", legacyCookie + "=" + tok}, 401, false},
		{"cookie, own Origin", "", []string{"Cookie", legacyCookie + "=" + tok, "Origin", e.ts.URL}, 401, false},
		{"cookie, whoami", "", []string{"Cookie", legacyCookie + "=" + tok}, 401, true},
		// The session token itself, from anywhere but the server's page.
		{"token, no Origin", "", []string{SessionHeader, tok}, 403, false},
		{"token, dev server's Origin", "", []string{SessionHeader, tok, "Origin", devServer}, 403, false},
		{"token, dev server's Origin, whoami", "", []string{SessionHeader, tok, "Origin", devServer}, 403, true},
		{"token, localhost Origin", "", []string{SessionHeader, tok, "Origin", fmt.Sprintf("http://localhost:%d", port)}, 403, false},
		{"token, https Origin", "", []string{SessionHeader, tok, "Origin", fmt.Sprintf("https://127.0.0.1:%d", port)}, 403, false},
		{"token, same-site fetch", "", []string{SessionHeader, tok, "Origin", e.ts.URL, "Sec-Fetch-Site", "same-site"}, 403, false},
		{"token, same-site fetch, whoami", "", []string{SessionHeader, tok, "Sec-Fetch-Site", "same-site"}, 403, true},
		{"token, cross-site fetch", "", []string{SessionHeader, tok, "Origin", e.ts.URL, "Sec-Fetch-Site", "cross-site"}, 403, false},
		// A name rebound to 127.0.0.1.
		{"token, rebound Host", "evil.example:" + strconv.Itoa(port), []string{SessionHeader, tok, "Origin", "http://evil.example:" + strconv.Itoa(port)}, 421, false},
		{"token, rebound Host, whoami", "evil.example:" + strconv.Itoa(port), []string{SessionHeader, tok}, 421, true},
		// Lapsed, ended, forged.
		{"lapsed token", "", []string{SessionHeader, signed(e.srv.auth, now.Add(-2*time.Hour), now.Add(-time.Second)), "Origin", e.ts.URL}, 401, false},
		{"session past its limit", "", []string{SessionHeader, signed(e.srv.auth, now.Add(-WebSessionMaxAge-time.Second), now.Add(time.Hour)), "Origin", e.ts.URL}, 401, false},
		{"another server's token", "", []string{SessionHeader, signed(other, now, now.Add(time.Hour)), "Origin", e.ts.URL}, 401, false},
		{"issue time moved", "", []string{SessionHeader, strconv.FormatInt(issued+3600, 10) + "." + rest, "Origin", e.ts.URL}, 401, false},
		{"signature cut short", "", []string{SessionHeader, tok[:len(tok)-2], "Origin", e.ts.URL}, 401, false},
		{"the token as a bearer token", "", []string{"Authorization", "Bearer " + tok, "Origin", e.ts.URL}, 401, false},
	}
	for _, tc := range cases {
		method, p, body := "POST", path, any(grab)
		if tc.reads {
			method, p, body = "GET", "/v1/whoami", nil
		}
		req, err := http.NewRequest(method, e.ts.URL+p, strings.NewReader(mustJSON(t, body)))
		must(t, err)
		if tc.host != "" {
			req.Host = tc.host
		}
		for i := 0; i+1 < len(tc.hdr); i += 2 {
			req.Header.Set(tc.hdr[i], tc.hdr[i+1])
		}
		resp, err := e.ts.Client().Do(req)
		must(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, resp.StatusCode, got, tc.want)
		}
		if strings.Contains(string(got), `"role"`) || strings.Contains(string(got), "approver\"") {
			t.Errorf("%s: the answer tells something: %s", tc.name, got)
		}
	}
	if got := e.pending("s1"); len(got) != 1 || got[0].ID != id {
		t.Fatalf("the agent's question was answered by a refused request: pending %+v", got)
	}
	if n := len(e.events("s1", "permission.resolved")); n != 0 {
		t.Fatalf("%d permission.resolved events after refused requests", n)
	}
	// The page itself still answers.
	if r := e.call("POST", path, "", map[string]any{"answer": "deny"}, SessionHeader, tok, "Origin", e.ts.URL, "Sec-Fetch-Site", "same-origin"); r.code != 200 {
		t.Fatalf("the page's own answer: %d %s", r.code, r.body)
	}
}

// TestBrowserSessionLapses: a session token lapses WebSessionIdle after it
// was issued unless the page renews it, and no renewal takes the session
// past WebSessionMaxAge from its login.
func TestBrowserSessionLapses(t *testing.T) {
	var offset atomic.Int64 // how far the server's clock is ahead
	e := newEnv(t, func(o *Options, _ *policy.File) {
		o.Clock = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	advance := func(d time.Duration) { offset.Add(int64(d)) }
	status := func(tok string) int {
		return e.call("GET", "/v1/whoami", "", nil, SessionHeader, tok).code
	}
	renew := func(tok string) string {
		t.Helper()
		r := e.call("POST", "/v1/web-session", "", nil, SessionHeader, tok, "Origin", e.ts.URL)
		if r.code != 200 {
			t.Fatalf("renew at +%v: %d %s", time.Duration(offset.Load()), r.code, r.body)
		}
		return r.json(t)["token"].(string)
	}

	first := e.login(t)
	idle := e.login(t) // never renewed
	if r := e.call("POST", "/v1/web-session", "", nil, SessionHeader, first); r.code != 403 {
		t.Fatalf("renew without Origin: %d %s", r.code, r.body)
	}
	advance(WebSessionIdle - time.Minute)
	if status(idle) != 200 {
		t.Fatal("a token stopped working before it lapsed")
	}
	tok := renew(first)
	advance(2 * time.Minute)
	if got := status(idle); got != 401 {
		t.Fatalf("a token past WebSessionIdle: %d, want 401", got)
	}
	if got := status(first); got != 401 {
		t.Fatalf("the token before a renewal, past WebSessionIdle: %d, want 401", got)
	}
	if got := status(tok); got != 200 {
		t.Fatalf("the renewed token: %d, want 200", got)
	}
	// Renewed every 50 minutes, the session still ends after WebSessionMaxAge.
	elapsed := WebSessionIdle + time.Minute
	for elapsed < WebSessionMaxAge-time.Minute {
		step := min(50*time.Minute, WebSessionMaxAge-time.Minute-elapsed)
		advance(step)
		elapsed += step
		tok = renew(tok)
	}
	if got := status(tok); got != 200 {
		t.Fatalf("a minute before the end: %d, want 200", got)
	}
	advance(2 * time.Minute)
	if got := status(tok); got != 401 {
		t.Fatalf("past WebSessionMaxAge: %d, want 401", got)
	}
	if r := e.call("POST", "/v1/web-session", "", nil, SessionHeader, tok, "Origin", e.ts.URL); r.code != 401 {
		t.Fatalf("renew past WebSessionMaxAge: %d %s", r.code, r.body)
	}
}

// TestBrowserStreamEndsWithToken: an event stream opened with a session
// token ends when the token lapses, so a session does not outlive its
// limit by keeping a stream open; the page reopens it with a renewed one.
func TestBrowserStreamEndsWithToken(t *testing.T) {
	var offset atomic.Int64
	e := newEnv(t, func(o *Options, _ *policy.File) {
		o.Clock = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	tok := e.login(t)
	offset.Store(int64(WebSessionIdle - 2*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/v1/events", nil)
	must(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(SessionHeader, tok)
	resp, err := e.ts.Client().Do(req)
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	start := time.Now()
	_, err = io.Copy(io.Discard, bufio.NewReader(resp.Body))
	if err != nil || ctx.Err() != nil {
		t.Fatalf("the stream did not end with its token: %v (%v)", err, ctx.Err())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the stream ended %v after it opened, want about 2s", d)
	}
	if got := e.call("GET", "/v1/events", "", nil, SessionHeader, tok).code; got != 401 {
		t.Fatalf("reopen with the lapsed token: %d, want 401", got)
	}
}
