package approval

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reply returns a handler that answers with status and body.
func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// hookCases are the responses every hook must refuse, whatever it decodes.
var hookCases = []struct {
	name    string
	handler http.HandlerFunc
	wantErr []string
}{
	{"server error", reply(http.StatusInternalServerError, "boom\n"), []string{"HTTP 500 Internal Server Error", `"boom"`}},
	{"forbidden", reply(http.StatusForbidden, ""), []string{"HTTP 403 Forbidden", "want a 2xx status"}},
	{"redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/hook", http.StatusTemporaryRedirect)
	}, []string{"HTTP 307", "redirects are not followed", "https://elsewhere.example/hook"}},
	{"oversize", reply(http.StatusOK, `{"kind":"allow_once"}`+strings.Repeat(" ", 64<<10)), []string{"HTTP 200 OK", "larger than 64 KiB"}},
	{"empty", reply(http.StatusOK, ""), []string{"HTTP 200 OK", "no "}},
	{"no content", reply(http.StatusNoContent, ""), []string{"HTTP 204 No Content", "no "}},
	{"not json", reply(http.StatusOK, "yes"), []string{"HTTP 200 OK", "bad "}},
	{"unknown field", reply(http.StatusOK, `{"kind":"allow_once","decision":"allow","forever":true}`), []string{"HTTP 200 OK", `unknown field "`}},
	{"two values", reply(http.StatusOK, `{} {}`), []string{"more than one JSON value"}},
}

func TestHTTP(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    Answer
		wantErr []string
	}{
		{"allow once", reply(http.StatusOK, `{"kind":"allow_once"}`), Answer{Kind: AllowOnce, Via: ViaWebhook}, nil},
		{"a hook claiming the page", reply(http.StatusOK, `{"kind":"allow_once","via":"page"}`), Answer{Kind: AllowOnce, Via: ViaWebhook}, nil},
		{"project with a rule", reply(http.StatusOK, `{"kind":"allow_project","rule":"Bash(npm test:*)","message":"ok"}`),
			Answer{Kind: AllowProject, Rule: "Bash(npm test:*)", Message: "ok", Via: ViaWebhook}, nil},
		{"deny", reply(http.StatusOK, `{"kind":"deny","message":"not on a Friday"}`), Answer{Kind: Deny, Message: "not on a Friday", Via: ViaWebhook}, nil},
		{"created", reply(http.StatusCreated, `{"kind":"allow_session"}`), Answer{Kind: AllowSession, Via: ViaWebhook}, nil},
		{"body of exactly 64 KiB", reply(http.StatusOK, `{"kind":"allow_user"}`+strings.Repeat(" ", 64<<10-len(`{"kind":"allow_user"}`))),
			Answer{Kind: AllowUser, Via: ViaWebhook}, nil},
		{"unknown kind", reply(http.StatusOK, `{"kind":"allow_always"}`), Answer{Kind: Deny}, []string{"unknown answer kind"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			got, err := (&HTTP{URL: srv.URL + "/hook"}).Approve(context.Background(), npmTest())
			if got != c.want {
				t.Errorf("answer %+v, want %+v", got, c.want)
			}
			checkErr(t, err, c.wantErr, srv.URL+"/hook")
		})
	}
	for _, c := range hookCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			got, err := (&HTTP{URL: srv.URL + "/hook"}).Approve(context.Background(), npmTest())
			if got.Kind != Deny {
				t.Errorf("answer %+v, want a deny", got)
			}
			checkErr(t, err, c.wantErr, srv.URL+"/hook")
		})
	}
}

// checkErr checks that err holds every string in want and names the URL,
// or is nil when want is.
func checkErr(t *testing.T, err error, want []string, url string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("error %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	for _, w := range append(want, url) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// verifier is a receiving hook as its documentation tells one to be
// written: it checks the token and the signature and decodes the request.
type verifier struct {
	token  string
	secret string
	answer string
	got    chan *Request
}

func (v *verifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case r.Method != http.MethodPost:
		http.Error(w, "want POST", http.StatusMethodNotAllowed)
		return
	case r.Header.Get("Content-Type") != "application/json":
		http.Error(w, "want JSON", http.StatusUnsupportedMediaType)
		return
	case v.token != "" && r.Header.Get("Authorization") != "Bearer "+v.token:
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	if v.secret != "" {
		ts := r.Header.Get("X-Toolgate-Timestamp")
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || time.Since(time.Unix(sec, 0)).Abs() > time.Minute {
			http.Error(w, "stale or missing timestamp", http.StatusUnauthorized)
			return
		}
		mac := hmac.New(sha256.New, []byte(v.secret))
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		if !hmac.Equal([]byte(r.Header.Get("X-Toolgate-Signature")), []byte(want)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v.got <- &req
	io.WriteString(w, v.answer)
}

func TestHTTPSendsSignedRequest(t *testing.T) {
	v := &verifier{token: "tok", secret: "s3cret", answer: `{"kind":"allow_once"}`, got: make(chan *Request, 1)}
	srv := httptest.NewServer(v)
	defer srv.Close()
	req := npmTest()
	for _, c := range []struct {
		name    string
		hook    HTTP
		wantErr []string
	}{
		{"signed", HTTP{URL: srv.URL, Token: "tok", Secret: "s3cret"}, nil},
		{"wrong secret", HTTP{URL: srv.URL, Token: "tok", Secret: "guess"}, []string{"HTTP 401 Unauthorized", "bad signature"}},
		{"unsigned", HTTP{URL: srv.URL, Token: "tok"}, []string{"HTTP 401 Unauthorized", "timestamp"}},
		{"no token", HTTP{URL: srv.URL, Secret: "s3cret"}, []string{"HTTP 401 Unauthorized", "bad token"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := c.hook.Approve(context.Background(), req)
			checkErr(t, err, c.wantErr, srv.URL)
			if c.wantErr != nil {
				return
			}
			if a.Kind != AllowOnce {
				t.Errorf("answer %+v", a)
			}
			if diff := cmp.Diff(req, <-v.got); diff != "" {
				t.Errorf("the hook received another request (-sent +received):\n%s", diff)
			}
		})
	}
}

func TestHTTPBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://example.com/hook", "file:///etc/passwd", "localhost:8080/hook", "http://", "/hook", "http://[::1"} {
		a, err := (&HTTP{URL: u}).Approve(context.Background(), npmTest())
		if err == nil || a.Kind != Deny {
			t.Errorf("URL %q: got %+v, %v; want a deny and an error", u, a, err)
			continue
		}
		if u != "" && !strings.Contains(err.Error(), "URL") {
			t.Errorf("URL %q: error %q does not say the URL is wrong", u, err)
		}
	}
}

func TestHTTPHidesPassword(t *testing.T) {
	srv := httptest.NewServer(reply(http.StatusBadGateway, "no"))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1)
	_, err := (&HTTP{URL: u}).Approve(context.Background(), npmTest())
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "user:xxxxx@") {
		t.Fatalf("error %v: want one naming the URL without its password", err)
	}
}

func TestHTTPUnreachable(t *testing.T) {
	srv := httptest.NewServer(reply(http.StatusOK, `{"kind":"allow_once"}`))
	u := srv.URL + "/hook"
	srv.Close()
	a, err := (&HTTP{URL: u}).Approve(context.Background(), npmTest())
	if err == nil || a.Kind != Deny || !strings.Contains(err.Error(), u) {
		t.Fatalf("got %+v, %v; want a deny and an error naming %s", a, err, u)
	}
}

// hang returns a server whose handler waits until the client goes away.
func hang(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv
}

func TestHTTPCancel(t *testing.T) {
	srv := hang(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	a, err := (&HTTP{URL: srv.URL}).Approve(ctx, npmTest())
	if !errors.Is(err, context.DeadlineExceeded) || a.Kind != Deny || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("got %+v, %v", a, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
}
