// Package notify tells people that a tool call waits for their approval —
// through webhooks in the generic JSON form and the shapes Slack and ntfy
// accept — and gives them signed, single-use, expiring links to answer it
// from a phone.
package notify

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Action is what a link does to its approval.
type Action string

// The actions a link may carry.
const (
	ActionApprove Action = "approve" // allow once
	ActionDeny    Action = "deny"
)

// Errors of [Links.Check] and [Links.Use], for errors.Is.
var (
	// ErrTampered: the link was not made by this server, or was changed.
	ErrTampered = errors.New("the link is not valid")
	// ErrExpired: the link's time is up.
	ErrExpired = errors.New("the link has expired")
	// ErrUsed: the link, or another link of the same approval, was used.
	ErrUsed = errors.New("the link was already used")
)

// Claim is what a valid link says.
type Claim struct {
	Approval string
	Action   Action
	Expires  time.Time
}

// Links signs and checks answer links. A link is an opaque token: the
// approval id, the action and the expiry, MACed with a secret that lives
// only in this process, so links die with it. Every link of one approval
// is spent when any of them is used. It is safe for concurrent use.
type Links struct {
	secret []byte
	clock  func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // approval id → expiry of its links
}

// NewLinks returns a signer with a fresh random secret. clock may be nil
// (time.Now).
func NewLinks(clock func() time.Time) *Links {
	if clock == nil {
		clock = time.Now
	}
	s := make([]byte, 32)
	_, _ = rand.Read(s)
	return &Links{secret: s, clock: clock, used: map[string]time.Time{}}
}

var b64 = base64.RawURLEncoding

// Sign returns the token of a link that does action to the approval id
// until expires.
func (l *Links) Sign(id string, action Action, expires time.Time) string {
	body := make([]byte, 8, 8+len(id)+len(action)+1)
	binary.BigEndian.PutUint64(body, uint64(expires.Unix()))
	body = append(body, action...)
	body = append(body, 0)
	body = append(body, id...)
	return b64.EncodeToString(body) + "." + b64.EncodeToString(l.mac(body))
}

func (l *Links) mac(body []byte) []byte {
	m := hmac.New(sha256.New, l.secret)
	m.Write([]byte("toolgate answer link\x00"))
	m.Write(body)
	return m.Sum(nil)
}

// Check reports what token says, without spending it: a link opened (by
// a person, or by a chat app fetching a preview) does nothing.
func (l *Links) Check(token string) (Claim, error) {
	bodyText, macText, ok := strings.Cut(token, ".")
	if !ok || len(token) > 1024 {
		return Claim{}, ErrTampered
	}
	body, err1 := b64.DecodeString(bodyText)
	mac, err2 := b64.DecodeString(macText)
	if err1 != nil || err2 != nil || len(body) < 10 || !hmac.Equal(mac, l.mac(body)) {
		return Claim{}, ErrTampered
	}
	action, id, ok := strings.Cut(string(body[8:]), "\x00")
	if !ok || id == "" || (Action(action) != ActionApprove && Action(action) != ActionDeny) {
		return Claim{}, ErrTampered
	}
	c := Claim{Approval: id, Action: Action(action), Expires: time.Unix(int64(binary.BigEndian.Uint64(body[:8])), 0)}
	if !l.clock().Before(c.Expires) {
		return c, ErrExpired
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, spent := l.used[id]; spent {
		return c, ErrUsed
	}
	return c, nil
}

// Use checks token and spends every link of its approval, so that a
// second use of it, or of its sibling, does nothing.
func (l *Links) Use(token string) (Claim, error) {
	c, err := l.Check(token)
	if err != nil {
		return c, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, spent := l.used[c.Approval]; spent {
		return c, ErrUsed
	}
	now := l.clock()
	for id, exp := range l.used {
		if now.After(exp) {
			delete(l.used, id) // its links have expired anyway
		}
	}
	l.used[c.Approval] = c.Expires
	return c, nil
}

// Describe turns a link error into a sentence for the page that shows it.
func Describe(err error) string {
	switch {
	case errors.Is(err, ErrExpired):
		return "This link has expired; the call was decided without it."
	case errors.Is(err, ErrUsed):
		return "This link was already used. Nothing was changed."
	case errors.Is(err, ErrTampered):
		return "This link is not valid. Nothing was changed."
	}
	return fmt.Sprintf("The link could not be used: %v", err)
}
