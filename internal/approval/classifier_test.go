package approval

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestVerdictValidate(t *testing.T) {
	for _, c := range []struct {
		v  Verdict
		ok bool
	}{
		{Verdict{Decision: "allow"}, true},
		{Verdict{Decision: "deny", Reason: "writes outside the project"}, true},
		{Verdict{Decision: "ask"}, true},
		{Verdict{}, false},
		{Verdict{Decision: "Allow"}, false},
		{Verdict{Decision: "allow_once"}, false},
	} {
		if err := c.v.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: Validate() = %v", c.v, err)
		}
	}
}

func TestClassifierFunc(t *testing.T) {
	var c Classifier = ClassifierFunc(func(_ context.Context, r *Request) (Verdict, error) {
		return Verdict{Decision: "ask", Reason: r.Summary}, nil
	})
	v, err := c.Classify(context.Background(), npmTest())
	if err != nil || v != (Verdict{Decision: "ask", Reason: "Bash: npm test"}) {
		t.Fatalf("got %+v, %v", v, err)
	}
}

func TestCommandClassifier(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string
		want    Verdict
		wantErr string
	}{
		{"allow", `cat >/dev/null; echo '{"decision":"allow","reason":"tests only read the project"}'`,
			Verdict{Decision: "allow", Reason: "tests only read the project"}, ""},
		{"reads the request", `grep -q '"summary":"Bash: npm test"' && echo '{"decision":"deny"}'`, Verdict{Decision: "deny"}, ""},
		{"ask", `echo '{"decision":"ask"}'`, Verdict{Decision: "ask"}, ""},
		{"exit 1", `echo 'model unavailable' >&2; exit 1`, Verdict{}, "failed: exit status 1: model unavailable"},
		{"exit 2", `exit 2`, Verdict{}, "exit status 2"},
		{"no output", `true`, Verdict{}, "no verdict"},
		{"not json", `echo allow`, Verdict{}, "bad verdict"},
		{"unknown field", `echo '{"decision":"allow","kind":"allow_once"}'`, Verdict{}, `unknown field "kind"`},
		{"two verdicts", `echo '{"decision":"allow"}{"decision":"deny"}'`, Verdict{}, "more than one"},
		{"unknown decision", `echo '{"decision":"maybe"}'`, Verdict{}, "unknown verdict decision"},
		{"too much output", `echo '{"decision":"allow"}'; head -c 1100000 /dev/zero | tr '\0' ' '`, Verdict{}, "wrote more than 1048576 bytes"},
	} {
		// Not parallel: writing a script while another test starts a
		// program can make exec fail with "text file busy".
		t.Run(c.name, func(t *testing.T) {
			prog := script(t, c.body)
			got, err := (&CommandClassifier{Argv: []string{prog}}).Classify(context.Background(), npmTest())
			if got != c.want {
				t.Errorf("verdict %+v, want %+v", got, c.want)
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), prog)):
				t.Errorf("error %v, want one naming %s and containing %q", err, prog, c.wantErr)
			}
		})
	}
}

func TestCommandClassifierNoProgram(t *testing.T) {
	v, err := (&CommandClassifier{}).Classify(context.Background(), npmTest())
	if err == nil || v.Validate() == nil {
		t.Fatalf("got %+v, %v", v, err)
	}
}

func TestCommandClassifierCancel(t *testing.T) {
	c := &CommandClassifier{Argv: []string{script(t, `exec sleep 30`)}, WaitDelay: 100 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	v, err := c.Classify(ctx, npmTest())
	if !errors.Is(err, context.DeadlineExceeded) || v != (Verdict{}) {
		t.Fatalf("got %+v, %v", v, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
}

func TestHTTPClassifier(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    Verdict
		wantErr []string
	}{
		{"allow", reply(http.StatusOK, `{"decision":"allow","reason":"read-only"}`), Verdict{Decision: "allow", Reason: "read-only"}, nil},
		{"ask", reply(http.StatusOK, `{"decision":"ask"}`), Verdict{Decision: "ask"}, nil},
		{"unknown decision", reply(http.StatusOK, `{"decision":"allow_once"}`), Verdict{}, []string{"unknown verdict decision"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			got, err := (&HTTPClassifier{URL: srv.URL}).Classify(context.Background(), npmTest())
			if got != c.want {
				t.Errorf("verdict %+v, want %+v", got, c.want)
			}
			checkErr(t, err, c.wantErr, srv.URL)
		})
	}
	for _, c := range hookCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			got, err := (&HTTPClassifier{URL: srv.URL}).Classify(context.Background(), npmTest())
			if got != (Verdict{}) {
				t.Errorf("verdict %+v, want none", got)
			}
			checkErr(t, err, c.wantErr, srv.URL)
		})
	}
}

func TestHTTPClassifierSigned(t *testing.T) {
	v := &verifier{token: "tok", secret: "k", answer: `{"decision":"deny","reason":"no"}`, got: make(chan *Request, 1)}
	srv := httptest.NewServer(v)
	defer srv.Close()
	got, err := (&HTTPClassifier{URL: srv.URL, Token: "tok", Secret: "k"}).Classify(context.Background(), npmTest())
	if err != nil || got != (Verdict{Decision: "deny", Reason: "no"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if r := <-v.got; r.Summary != "Bash: npm test" {
		t.Errorf("the hook received %+v", r)
	}
	_, err = (&HTTPClassifier{URL: srv.URL, Token: "tok", Secret: "wrong"}).Classify(context.Background(), npmTest())
	checkErr(t, err, []string{"classifier hook", "HTTP 401 Unauthorized", "bad signature"}, srv.URL)
}

func TestHTTPClassifierCancel(t *testing.T) {
	srv := hang(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	v, err := (&HTTPClassifier{URL: srv.URL}).Classify(ctx, npmTest())
	if !errors.Is(err, context.Canceled) || v != (Verdict{}) {
		t.Fatalf("got %+v, %v", v, err)
	}
}

func TestHTTPClassifierBadURL(t *testing.T) {
	_, err := (&HTTPClassifier{URL: "ws://example.com"}).Classify(context.Background(), npmTest())
	if err == nil || !strings.Contains(err.Error(), "http:// or https://") {
		t.Fatalf("error %v", err)
	}
}
