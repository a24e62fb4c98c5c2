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
	"time"

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
	// Page is the approval on the web page; ApproveURL and DenyURL open
	// a page that answers it once (allow once, or deny) until the
	// deadline.
	Page       string `json:"page"`
	ApproveURL string `json:"approve_url"`
	DenyURL    string `json:"deny_url"`
}

// Notifier sends a notification to every hook when an approval is
// pending. Sending never blocks the caller and never fails it: each hook
// is posted to in the background with a timeout, and failures are logged.
type Notifier struct {
	hooks  []Hook
	links  *Links
	base   string
	client *http.Client
	log    *slog.Logger
}

// New returns a notifier that posts to hooks, with answer links under
// base (the server's address as the person's phone reaches it, such as
// https://gate.example.net). log may be nil.
func New(hooks []Hook, links *Links, base string, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.Default()
	}
	return &Notifier{
		hooks: hooks, links: links, base: strings.TrimRight(base, "/"), log: log,
		client: &http.Client{
			Timeout:       10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Links returns the link signer of the notifier.
func (n *Notifier) Links() *Links { return n.links }

// Message builds the notification of p, with fresh links valid until the
// approval's deadline. Agent-supplied text is cut and has secrets
// redacted: it is sent to third parties.
func (n *Notifier) Message(p Pending) Message {
	p.Summary = secrets.Redact(clip(p.Summary, 300))
	return Message{
		Type: "approval.pending", Pending: p,
		Page:       n.base + "/#approval/" + url.PathEscape(p.ID),
		ApproveURL: n.base + "/a/" + n.links.Sign(p.ID, ActionApprove, p.Deadline),
		DenyURL:    n.base + "/a/" + n.links.Sign(p.ID, ActionDeny, p.Deadline),
	}
}

// Notify posts the notification of p to every hook, in the background.
func (n *Notifier) Notify(p Pending) {
	if n == nil || len(n.hooks) == 0 {
		return
	}
	m := n.Message(p)
	for _, h := range n.hooks {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := n.send(ctx, h, m); err != nil {
				n.log.Warn("notification failed", "kind", h.Kind, "url", redactURL(h.URL), "approval", p.ID, "error", err)
			}
		}()
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
		header.Set("Title", "toolgate: approval needed")
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

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
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
