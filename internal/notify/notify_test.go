package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestLinks(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	l := NewLinks(clock)
	deadline := now.Add(time.Minute)
	approve := l.Sign("tc_1", ActionApprove, deadline)
	deny := l.Sign("tc_1", ActionDeny, deadline)
	other := l.Sign("tc_2", ActionApprove, deadline)

	c, err := l.Check(approve)
	if err != nil || c.Approval != "tc_1" || c.Action != ActionApprove || !c.Expires.Equal(deadline) {
		t.Fatalf("Check = %+v, %v", c, err)
	}
	bad := []struct{ name, token string }{
		{"empty", ""},
		{"no mac", strings.Split(approve, ".")[0]},
		{"mac of another link", strings.Split(approve, ".")[0] + "." + strings.Split(other, ".")[1]},
		{"flipped byte", approve[:3] + string(rune(approve[3]^1)) + approve[4:]},
		{"another server's link", NewLinks(clock).Sign("tc_1", ActionApprove, deadline)},
		{"huge", strings.Repeat("a", 5000) + ".b"},
	}
	for _, b := range bad {
		if _, err := l.Check(b.token); !errors.Is(err, ErrTampered) {
			t.Errorf("%s: %v, want ErrTampered", b.name, err)
		}
	}
	if _, err := l.Use(approve); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{approve, deny} {
		if _, err := l.Use(tok); !errors.Is(err, ErrUsed) {
			t.Fatalf("second use: %v, want ErrUsed", err)
		}
	}
	if _, err := l.Check(other); err != nil {
		t.Fatalf("a link of another approval was spent: %v", err)
	}
	now = deadline
	if _, err := l.Use(other); !errors.Is(err, ErrExpired) {
		t.Fatalf("expired link: %v", err)
	}
	for _, err := range []error{ErrTampered, ErrExpired, ErrUsed} {
		if !strings.Contains(Describe(err), "link") {
			t.Errorf("Describe(%v) = %q", err, Describe(err))
		}
	}
}

func TestParseHook(t *testing.T) {
	cases := []struct {
		in   string
		want Hook
		err  bool
	}{
		{"https://hooks.example.com/x", Hook{KindJSON, "https://hooks.example.com/x"}, false},
		{"slack=https://hooks.slack.com/services/T/B/C", Hook{KindSlack, "https://hooks.slack.com/services/T/B/C"}, false},
		{"ntfy=https://ntfy.sh/my-topic", Hook{KindNtfy, "https://ntfy.sh/my-topic"}, false},
		{"json=https://h.example/a=b", Hook{KindJSON, "https://h.example/a=b"}, false},
		{"teams=https://x.example", Hook{}, true},
		{"file:///etc/passwd", Hook{}, true},
		{"slack=notaurl", Hook{}, true},
	}
	for _, c := range cases {
		got, err := ParseHook(c.in)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParseHook(%q) = %+v, %v", c.in, got, err)
		}
	}
}

// TestShapes posts each kind to a real server and checks what a Slack or
// ntfy endpoint would read.
func TestShapes(t *testing.T) {
	type received struct {
		header http.Header
		body   []byte
	}
	got := make(chan received, 10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.Header, b}
	}))
	defer ts.Close()
	n := New(nil, NewLinks(nil), "https://gate.example.net/", nil)
	p := Pending{ID: "tc_9", Session: "s1", Tool: "Bash", Summary: "Bash: curl -H 'Authorization: Bearer ghp_R8x2LqvP0wZ3nT7kY1mJ5cH9bF4dS6gA2eQk' <b>x</b>",
		Risk: "network", Reason: "network_request", Destructive: true, Deadline: time.Now().Add(time.Minute)}
	m := n.Message(p)
	if strings.Contains(m.Pending.Summary, "ghp_R8x2") {
		t.Fatalf("a secret was sent out: %s", m.Pending.Summary)
	}
	if !strings.HasPrefix(m.ApproveURL, "https://gate.example.net/a/") || !strings.HasPrefix(m.DenyURL, "https://gate.example.net/a/") {
		t.Fatalf("links %s %s", m.ApproveURL, m.DenyURL)
	}
	for _, kind := range []Kind{KindJSON, KindSlack, KindNtfy} {
		if err := n.send(context.Background(), Hook{kind, ts.URL}, m); err != nil {
			t.Fatal(err)
		}
		r := <-got
		switch kind {
		case KindJSON:
			var back Message
			if err := json.Unmarshal(r.body, &back); err != nil || back.ApproveURL != m.ApproveURL || back.Pending.ID != "tc_9" {
				t.Errorf("json: %v %s", err, r.body)
			}
		case KindSlack:
			var s struct {
				Text   string `json:"text"`
				Blocks []struct {
					Type     string `json:"type"`
					Elements []struct {
						URL string `json:"url"`
					} `json:"elements"`
				} `json:"blocks"`
			}
			if err := json.Unmarshal(r.body, &s); err != nil || s.Text == "" || len(s.Blocks) != 2 ||
				s.Blocks[1].Elements[0].URL != m.ApproveURL || s.Blocks[1].Elements[1].URL != m.DenyURL {
				t.Errorf("slack: %v %s", err, r.body)
			}
			if strings.Contains(string(r.body), "<b>") {
				t.Errorf("slack: markup not escaped: %s", r.body)
			}
		case KindNtfy:
			actions := r.header.Get("Actions")
			if !strings.Contains(actions, "view, Allow once, "+m.ApproveURL) || !strings.Contains(actions, "view, Deny, "+m.DenyURL) ||
				r.header.Get("Priority") != "high" || r.header.Get("Title") == "" || !strings.Contains(string(r.body), "s1 wants to run") {
				t.Errorf("ntfy: %v %s", r.header, r.body)
			}
		}
	}
	// A failing endpoint is an error naming it without its secret path.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	defer bad.Close()
	err := n.send(context.Background(), Hook{KindSlack, bad.URL + "/services/SECRET"}, m)
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "403") {
		t.Fatalf("failing hook: %v", err)
	}
}

// FuzzLinks: no token but the ones Sign made checks out, and checking
// never panics.
func FuzzLinks(f *testing.F) {
	l := NewLinks(nil)
	good := l.Sign("tc_1", ActionApprove, time.Now().Add(time.Hour))
	f.Add(good)
	f.Add("")
	f.Add(".")
	f.Add(good[:len(good)-1])
	f.Fuzz(func(t *testing.T, token string) {
		c, err := l.Check(token)
		if err == nil && token != good {
			t.Fatalf("forged token %q accepted as %+v", token, c)
		}
	})
}

// FuzzParseHook: a hook is either refused or an http(s) URL of a known kind.
func FuzzParseHook(f *testing.F) {
	for _, s := range []string{"https://x.example/a", "slack=https://h.example/s", "ntfy=http://n", "teams=x", "=", "slack="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHook(s)
		if err != nil {
			return
		}
		if h.Kind != KindJSON && h.Kind != KindSlack && h.Kind != KindNtfy {
			t.Fatalf("kind %q from %q", h.Kind, s)
		}
		if u := strings.ToLower(h.URL); !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			t.Fatalf("URL %q from %q", h.URL, s)
		}
	})
}

// receiver is a real webhook endpoint that keeps what it was sent.
type receiver struct {
	ts     *httptest.Server
	mu     sync.Mutex
	bodies []string
	msgs   []Message
	at     []time.Time
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m Message
		_ = json.Unmarshal(b, &m)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b)+"\n"+fmt.Sprint(req.Header))
		r.msgs = append(r.msgs, m)
		r.at = append(r.at, time.Now())
		r.mu.Unlock()
	}))
	t.Cleanup(r.ts.Close)
	return r
}

// settle waits until nothing arrived for quiet, and returns what did.
func (r *receiver) settle(t *testing.T, quiet time.Duration) ([]string, []Message) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		n := len(r.bodies)
		last := time.Time{}
		if n > 0 {
			last = r.at[n-1]
		}
		r.mu.Unlock()
		if n > 0 && time.Since(last) > quiet {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies), slices.Clone(r.msgs)
}

// TestSecretAcrossTheCut puts a token across the place where the summary
// is cut, for every kind of webhook: no part of it that could identify it
// goes out.
func TestSecretAcrossTheCut(t *testing.T) {
	const token = "ghp_R8x2LqvP0wZ3nT7kY1mJ5cH9bF4dS6gA2eQk"
	for _, kind := range []Kind{KindJSON, KindSlack, KindNtfy} {
		for _, at := range []int{MaxSummary - 34, MaxSummary - 20, MaxSummary - 6} {
			t.Run(fmt.Sprintf("%s/%d", kind, at), func(t *testing.T) {
				r := newReceiver(t)
				n := New([]Hook{{kind, r.ts.URL}}, NewLinks(nil), "https://gate.example.net", nil)
				head := "Bash: echo "
				pad := at - len(head) - 1
				summary := head + strings.Repeat("é", pad/2) + strings.Repeat("x", pad%2) + " " + token + " https://api.example"
				n.Notify(Pending{ID: "tc_1", Session: "s1", Tool: "Bash", Summary: summary, Deadline: time.Now().Add(time.Minute)})
				bodies, _ := r.settle(t, 200*time.Millisecond)
				if len(bodies) != 1 {
					t.Fatalf("%d notifications, want 1", len(bodies))
				}
				for i := 0; i+8 <= len(token)-4; i++ {
					if part := token[4+i : 4+i+8]; strings.Contains(bodies[0], part) {
						t.Fatalf("part %q of the token went out:\n%s", part, bodies[0])
					}
				}
				if !utf8.ValidString(bodies[0]) {
					t.Fatalf("the summary was cut inside a character:\n%q", bodies[0])
				}
			})
		}
	}
}

// TestBidiControlsEscaped: a summary whose right-to-left override makes
// it read otherwise than it runs reaches no webhook with the override in
// it; the person sees the escape.
func TestBidiControlsEscaped(t *testing.T) {
	for _, kind := range []Kind{KindJSON, KindSlack, KindNtfy} {
		t.Run(string(kind), func(t *testing.T) {
			r := newReceiver(t)
			n := New([]Hook{{kind, r.ts.URL}}, NewLinks(nil), "https://gate.example.net", nil)
			n.Notify(Pending{ID: "tc_1", Session: "s\u202e1", Tool: "Bash", Summary: "Bash: echo safe \u202e; rm -rf ~ #\u2066x\x1b[2J", Deadline: time.Now().Add(time.Minute)})
			bodies, _ := r.settle(t, 200*time.Millisecond)
			if len(bodies) != 1 {
				t.Fatalf("%d notifications, want 1", len(bodies))
			}
			body := bodies[0]
			// JSON would carry ESC as \u001b; a visible escape is \\x1b.
			visible := strings.ReplaceAll(body, `\\`, "")
			for _, bad := range []string{"\u202e", "\u2066", "\x1b", `\u001b`} {
				if strings.Contains(visible, bad) {
					t.Fatalf("the webhook got %q unescaped:\n%s", bad, body)
				}
			}
			if !strings.Contains(body, "202e") {
				t.Fatalf("the override is not shown at all:\n%s", body)
			}
		})
	}
}

// TestNotifyFolds: an agent that asks 400 questions at once does not
// send 400 pushes; the pushes that go out say how many approvals wait, and
// together they account for every one.
func TestNotifyFolds(t *testing.T) {
	limits := Limits{Window: 400 * time.Millisecond, Every: 300 * time.Millisecond, Burst: 2}
	cases := []struct {
		name     string
		sessions int
	}{
		{"one session", 1},
		{"a session each", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newReceiver(t)
			n := New([]Hook{{KindJSON, r.ts.URL}}, NewLinks(nil), "https://gate.example.net", nil)
			n.SetLimits(limits)
			start := time.Now()
			for i := range 400 {
				n.Notify(Pending{ID: fmt.Sprintf("tc_%d", i), Session: fmt.Sprintf("s%d", i%c.sessions), Tool: "Bash",
					Summary: "Bash: true", Deadline: time.Now().Add(time.Minute)})
			}
			sent := time.Since(start)
			_, msgs := r.settle(t, time.Second)
			// The bucket's burst, then at most one a period over the time
			// the questions took to arrive, and the last fold.
			limit := limits.Burst + int(sent/limits.Every) + 2
			if len(msgs) > limit {
				t.Fatalf("%d pushes for 400 questions in %s, want at most %d", len(msgs), sent, limit)
			}
			total := 0
			for _, m := range msgs {
				if m.Count < 1 {
					t.Fatalf("a push counts %d approvals", m.Count)
				}
				total += m.Count
			}
			if total != 400 {
				t.Fatalf("the pushes announce %d approvals, want 400", total)
			}
			if last := msgs[len(msgs)-1]; last.Pending.ID != "tc_399" {
				t.Fatalf("the last push is about %s, want the latest question tc_399", last.Pending.ID)
			}
		})
	}
}
