package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/secrets"
)

// Kind is the shape of a webhook's body.
type Kind string

// The webhook kinds.
const (
	// KindJSON posts the [Message] as JSON.
	KindJSON Kind = "json"
	// KindSlack posts a Slack incoming-webhook message (text and blocks
	// with two link buttons).
	KindSlack Kind = "slack"
	// KindNtfy posts to an ntfy topic URL: the text as the body, a title,
	// a priority and two "view" actions.
	KindNtfy Kind = "ntfy"
)

// Hook is one place notifications go.
type Hook struct {
	Kind Kind
	URL  string
}

// ParseHook parses "KIND=URL" (or a bare URL, which is KindJSON).
func ParseHook(s string) (Hook, error) {
	h := Hook{Kind: KindJSON, URL: s}
	if k, u, ok := strings.Cut(s, "="); ok && !strings.Contains(k, "/") {
		h.Kind, h.URL = Kind(k), u
	}
	switch h.Kind {
	case KindJSON, KindSlack, KindNtfy:
	default:
		return Hook{}, fmt.Errorf("notify: unknown webhook kind %q in %q (want json, slack or ntfy)", h.Kind, s)
	}
	u, err := url.Parse(h.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Hook{}, fmt.Errorf("notify: webhook %q is not an http or https URL", h.URL)
	}
	return h, nil
}

// Pending is what a notification says about one approval.
type Pending struct {
	ID          string    `json:"id"`
	Session     string    `json:"session"`
	Tool        string    `json:"tool"`
	Summary     string    `json:"summary"`
	Risk        string    `json:"risk"`
	Reason      string    `json:"reason"`
	Destructive bool      `json:"destructive"`
	Deadline    time.Time `json:"deadline"`
}

// Message is the body of a KindJSON notification.
type Message struct {
	Type    string  `json:"type"` // "approval.pending"
	Pending Pending `json:"approval"`
	// Count is how many approvals this notification announces, at least
	// 1: Pending, the latest, and those that arrived since the last
	// notification to the same place and were folded into this one.
	Count int `json:"count"`
	// Sessions is how many sessions those approvals belong to, at least 1.
	Sessions int `json:"sessions"`
	// Page is the approval on the web page; ApproveURL and DenyURL open
	// a page that answers it once (allow once, or deny) until the
	// deadline.
	Page       string `json:"page"`
	ApproveURL string `json:"approve_url"`
	DenyURL    string `json:"deny_url"`
}

// Limits bound how often a notifier pushes to one place, so that an agent
// that asks many questions cannot flood a person's phone: the questions
// are folded together, and the fact that something is pending is never
// dropped — a folded notification says how many it stands for.
type Limits struct {
	// Window is how long after a notification about a session the next
	// ones about it are held and folded into one (default 5 s); the first
	// question of a quiet session goes out at once.
	Window time.Duration
	// Every and Burst are each place's token bucket: at most Burst
	// notifications at once, then one every Every (defaults 3 s and 5).
	// Questions that wait for a token are folded into the next
	// notification, whatever their session.
	Every time.Duration
	Burst int
}

// DefaultLimits are the limits of [New].
var DefaultLimits = Limits{Window: 5 * time.Second, Every: 3 * time.Second, Burst: 5}

// Notifier sends a notification to every hook when an approval is
// pending. Sending never blocks the caller and never fails it: each hook
// is posted to in the background with a timeout, and failures are logged.
// Notifications to one hook go out one at a time, within its [Limits].
type Notifier struct {
	hooks  []Hook
	links  *Links
	base   string
	client *http.Client
	log    *slog.Logger
	limits Limits
	clock  func() time.Time

	mu    sync.Mutex
	boxes []*outbox // one for each hook
}

// New returns a notifier that posts to hooks, with answer links under
// base (the server's address as the person's phone reaches it, such as
// https://gate.example.net), within [DefaultLimits]. log may be nil.
func New(hooks []Hook, links *Links, base string, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.Default()
	}
	n := &Notifier{
		hooks: hooks, links: links, base: strings.TrimRight(base, "/"), log: log,
		limits: DefaultLimits, clock: time.Now,
		client: &http.Client{
			Timeout:       10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	for _, h := range hooks {
		n.boxes = append(n.boxes, &outbox{hook: h, wake: make(chan struct{}, 1), waiting: map[string]*batch{}, last: map[string]time.Time{}})
	}
	return n
}

// SetLimits replaces the limits; call it before the first [Notifier.Notify].
// Zero fields keep their defaults.
func (n *Notifier) SetLimits(l Limits) {
	if l.Window <= 0 {
		l.Window = DefaultLimits.Window
	}
	if l.Every <= 0 {
		l.Every = DefaultLimits.Every
	}
	if l.Burst <= 0 {
		l.Burst = DefaultLimits.Burst
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.limits = l
}

// Links returns the link signer of the notifier.
func (n *Notifier) Links() *Links { return n.links }

// MaxSummary is the longest summary, in bytes, a notification carries.
const MaxSummary = 300

// Message builds the notification of p, with fresh links valid until the
// approval's deadline. Agent-supplied text has secrets redacted, then
// what a screen would act on rather than show (control characters,
// bidirectional-text overrides) escaped, and is then cut, on a character
// boundary: it is sent to third parties, and read on a phone by a person
// who decides from it.
func (n *Notifier) Message(p Pending) Message {
	p.Summary = clip(termtext.Escape(secrets.Redact(p.Summary)), MaxSummary)
	p.Session = termtext.Escape(p.Session)
	return Message{
		Type: "approval.pending", Pending: p, Count: 1, Sessions: 1,
		Page:       n.base + "/#approval/" + url.PathEscape(p.ID),
		ApproveURL: n.base + "/a/" + n.links.Sign(p.ID, ActionApprove, p.Deadline),
		DenyURL:    n.base + "/a/" + n.links.Sign(p.ID, ActionDeny, p.Deadline),
	}
}

// outbox is what waits to be sent to one hook.
type outbox struct {
	hook    Hook
	wake    chan struct{}
	running bool                 // a goroutine is sending
	waiting map[string]*batch    // session → what waits for it
	last    map[string]time.Time // session → when a notification about it went out
	tokens  float64
	refill  time.Time
}

// batch is the questions of one session folded together.
type batch struct {
	latest Pending
	count  int
	seq    uint64 // arrival order of latest
}

// Notify announces p to every hook, in the background, within the
// notifier's [Limits].
func (n *Notifier) Notify(p Pending) {
	if n == nil || len(n.hooks) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ob := range n.boxes {
		b := ob.waiting[p.Session]
		if b == nil {
			b = &batch{}
			ob.waiting[p.Session] = b
		}
		b.latest, b.seq = p, arrival.Add(1)
		b.count++
		if !ob.running {
			ob.running = true
			if ob.refill.IsZero() {
				ob.tokens, ob.refill = float64(n.limits.Burst), n.clock()
			}
			go n.run(ob)
		}
		select {
		case ob.wake <- struct{}{}:
		default:
		}
	}
}

// arrival orders the questions across sessions.
var arrival atomic.Uint64

// run sends what waits in ob, folding and pacing it, until nothing waits.
func (n *Notifier) run(ob *outbox) {
	for {
		n.mu.Lock()
		if len(ob.waiting) == 0 {
			ob.running = false
			n.mu.Unlock()
			return
		}
		l, now := n.limits, n.clock()
		ob.tokens = min(float64(l.Burst), ob.tokens+float64(now.Sub(ob.refill))/float64(l.Every))
		ob.refill = now
		for s, t := range ob.last {
			if now.Sub(t) >= l.Window {
				delete(ob.last, s) // that session is quiet again
			}
		}
		var ready []string
		next := time.Duration(-1)
		for s := range ob.waiting {
			t, held := ob.last[s]
			if !held {
				ready = append(ready, s)
				continue
			}
			if d := l.Window - now.Sub(t); next < 0 || d < next {
				next = d
			}
		}
		if len(ready) > 0 && ob.tokens >= 1 {
			ob.tokens--
			var latest *batch
			count := 0
			for _, s := range ready {
				b := ob.waiting[s]
				count += b.count
				if latest == nil || b.seq > latest.seq {
					latest = b
				}
				delete(ob.waiting, s)
				ob.last[s] = now
			}
			n.mu.Unlock()
			m := n.Message(latest.latest)
			m.Count, m.Sessions = count, len(ready)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := n.send(ctx, ob.hook, m); err != nil {
				n.log.Warn("notification failed", "kind", ob.hook.Kind, "url", redactURL(ob.hook.URL), "approval", m.Pending.ID, "approvals", count, "error", err)
			}
			cancel()
			continue
		}
		if len(ready) > 0 {
			next = time.Duration((1 - ob.tokens) * float64(l.Every))
		}
		n.mu.Unlock()
		t := time.NewTimer(max(next, time.Millisecond))
		select {
		case <-t.C:
		case <-ob.wake:
		}
		t.Stop()
	}
}

// send posts m to h in h's shape.
func (n *Notifier) send(ctx context.Context, h Hook, m Message) error {
	req, err := Request(ctx, h, m)
	if err != nil {
		return err
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", redactURL(h.URL), resp.Status)
	}
	return nil
}

// Request builds the HTTP request that delivers m to h.
func Request(ctx context.Context, h Hook, m Message) (*http.Request, error) {
	p := m.Pending
	text := fmt.Sprintf("%s wants to run %s (risk %s, %s)", p.Session, p.Summary, p.Risk, p.Reason)
	title := "toolgate: approval needed"
	if m.Count > 1 {
		text += fmt.Sprintf(" — and %d more approvals are waiting", m.Count-1)
		if m.Sessions > 1 {
			text += fmt.Sprintf(" (%d sessions)", m.Sessions)
		}
		title = fmt.Sprintf("toolgate: %d approvals needed", m.Count)
	}
	var body []byte
	var err error
	header := http.Header{}
	switch h.Kind {
	case KindSlack:
		body, err = json.Marshal(map[string]any{
			"text": "toolgate: " + text,
			"blocks": []any{
				map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*toolgate approval* — " + slackEscape(text)}},
				map[string]any{"type": "actions", "elements": []any{
					map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Allow once"}, "url": m.ApproveURL, "style": "primary"},
					map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Deny"}, "url": m.DenyURL, "style": "danger"},
				}},
			},
		})
		header.Set("Content-Type", "application/json")
	case KindNtfy:
		body = []byte(text)
		header.Set("Title", title)
		header.Set("Tags", "lock")
		prio := "default"
		if p.Destructive {
			prio = "high"
		}
		header.Set("Priority", prio)
		header.Set("Click", m.Page)
		header.Set("Actions", fmt.Sprintf("view, Allow once, %s; view, Deny, %s", m.ApproveURL, m.DenyURL))
		header.Set("Content-Type", "text/plain; charset=utf-8")
	default:
		body, err = json.Marshal(m)
		header.Set("Content-Type", "application/json")
	}
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}

func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// clip puts s on one line and cuts it to at most n bytes, on a character
// boundary. Redact before clipping: a secret cut in two is no longer
// recognised, and its first part would go out.
func clip(s string, n int) string {
	return termtext.Clip(strings.Join(strings.Fields(s), " "), n)
}

// redactURL hides a webhook URL's path and query, which often hold its
// secret (Slack's do).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(webhook)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}
