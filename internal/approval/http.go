package approval

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxHookResponse caps the body of a hook's response.
const maxHookResponse = 64 << 10

// The headers a signed hook request carries.
const (
	// SignatureHeader carries "sha256=" and the lower-case hex HMAC-SHA256,
	// keyed with the secret, of the timestamp header's value, a '.', and
	// the request body.
	SignatureHeader = "X-Toolgate-Signature"
	// TimestampHeader carries the time the request was signed, in decimal
	// Unix seconds. Receivers should refuse old timestamps to stop replays.
	TimestampHeader = "X-Toolgate-Timestamp"
)

// HTTP is an [Approver] that asks a web hook: it POSTs the [Request] as
// JSON (Content-Type application/json) to URL and reads one [Answer] as
// JSON from a 2xx response.
//
// Anything else is a deny with an error naming the URL (its password
// hidden) and, once there is a response, the HTTP status: a URL that is
// not http or https, a failed connection, a non-2xx status (redirects are
// not followed by the default client), a body over 64 KiB, a body that is
// not exactly one JSON answer with only the known fields, or an unknown
// answer kind. When ctx is done the request is abandoned and the error
// wraps ctx.Err().
//
// An HTTP is safe for concurrent use.
type HTTP struct {
	// URL is the http or https address to POST to. Required.
	URL string
	// Token, when not empty, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Secret, when not empty, signs every request: [TimestampHeader] holds
	// the Unix time in seconds and [SignatureHeader] holds "sha256=" and
	// the hex HMAC-SHA256, keyed with Secret, of that timestamp, a '.',
	// and the exact body. A receiver recomputes it to know the request
	// came from this gate and was not altered or replayed.
	Secret string
	// Client sends the requests; nil means a client that connects within
	// ten seconds, does not follow redirects, and gives up after ten
	// minutes (the gate's own timeout usually ends the wait sooner).
	Client *http.Client
}

// Approve posts the request and returns the answer in the response. On any
// failure the returned answer is a deny and the error says what went wrong.
func (h *HTTP) Approve(ctx context.Context, req *Request) (Answer, error) {
	deny := Answer{Kind: Deny}
	k := hook{label: "approval hook", url: h.URL, token: h.Token, secret: h.Secret, client: h.Client}
	var a Answer
	if err := k.exchange(ctx, req, "answer", &a); err != nil {
		return deny, err
	}
	if err := a.Validate(); err != nil {
		return deny, fmt.Errorf("%s %s: %w", k.label, k.where(), err)
	}
	// The channel is this one, whatever the hook wrote in "via".
	a.Via = ViaWebhook
	return a, nil
}

// hook is a configured web hook: what [HTTP] and [HTTPClassifier] post
// to. label names its role in errors.
type hook struct {
	label, url, token, secret string
	client                    *http.Client
}

// where is the URL as errors show it, with any password hidden.
func (h hook) where() string {
	if u, err := url.Parse(h.url); err == nil {
		return u.Redacted()
	}
	return h.url
}

// exchange posts v as JSON and decodes the response body, which must be
// exactly one JSON value with only known fields, into out. what names the
// value in errors ("answer").
func (h hook) exchange(ctx context.Context, v any, what string, out any) error {
	if h.url == "" {
		return fmt.Errorf("%s: no URL configured", h.label)
	}
	u, err := url.Parse(h.url)
	if err != nil {
		return fmt.Errorf("%s: bad URL: %v", h.label, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %s: the URL must start with http:// or https:// and name a host", h.label, u.Redacted())
	}
	where := u.Redacted()
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s %s: encode request: %w", h.label, where, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: %w", h.label, where, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "toolgate")
	if h.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+h.token)
	}
	if h.secret != "" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		hreq.Header.Set(TimestampHeader, ts)
		hreq.Header.Set(SignatureHeader, sign(h.secret, ts, body))
	}
	client := h.client
	if client == nil {
		client = defaultHookClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", h.label, where, ctx.Err())
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s %s: %w", h.label, where, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxHookResponse+1))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", h.label, where, ctx.Err())
		}
		return fmt.Errorf("%s %s: HTTP %s: reading the body: %w", h.label, where, resp.Status, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		note := ""
		if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
			note = fmt.Sprintf(" (redirects are not followed; set the URL to %q)", loc)
		} else if s := bytes.TrimSpace(b); len(s) > 0 {
			note = fmt.Sprintf(": %q", clip(s, 200))
		}
		return fmt.Errorf("%s %s: HTTP %s, want a 2xx status%s", h.label, where, resp.Status, note)
	}
	if len(b) > maxHookResponse {
		return fmt.Errorf("%s %s: HTTP %s: the body is larger than %d KiB", h.label, where, resp.Status, maxHookResponse>>10)
	}
	if err := decodeStrict(b, what, out); err != nil {
		return fmt.Errorf("%s %s: HTTP %s: %w", h.label, where, resp.Status, err)
	}
	return nil
}

// sign returns the value of [SignatureHeader] for body sent at ts.
func sign(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// defaultHookClient is the client hooks use when none is configured. It
// does not follow redirects, so a request and its credentials go only
// where the user pointed them.
var defaultHookClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConns:           10,
		MaxResponseHeaderBytes: maxHookResponse,
		ForceAttemptHTTP2:      true,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Minute,
}
