package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// Role is what a request's credential may do.
type Role int

// The roles.
const (
	// RoleAgent may check calls and read and write its own sessions.
	RoleAgent Role = iota + 1
	// RoleApprover may do everything.
	RoleApprover
)

// String returns "agent" or "approver".
func (r Role) String() string {
	switch r {
	case RoleAgent:
		return "agent"
	case RoleApprover:
		return "approver"
	}
	return "none"
}

// Web sign-in settings.
const (
	// CookieName is the cookie that carries a browser's approver session.
	CookieName = "toolgate_session"
	// CSRFHeader must carry the session's CSRF value on every
	// cookie-authenticated request that changes something.
	CSRFHeader = "X-Toolgate-CSRF"
	// LoginCodeTTL is how long a login code works.
	LoginCodeTTL = 10 * time.Minute
	// WebSessionTTL is how long a browser stays signed in.
	WebSessionTTL = 12 * time.Hour
)

// TypeApprovalForbidden is the event written to a session when an agent
// token tries to answer one of its approvals or change its policy.
const TypeApprovalForbidden eventlog.Type = "approval.forbidden"

// principal is who made a request.
type principal struct {
	role   Role
	id     string // "approver", or the agentID of the agent token
	cookie bool   // authenticated by the browser cookie
	csrf   string // the cookie session's CSRF value
}

// approverID is the principal id of the approver, by token or cookie.
const approverID = "approver"

type webSession struct {
	csrf    string
	expires time.Time
}

// auth holds the login codes. A browser session is its cookie alone: the
// expiry and a random id, signed under the approver token, so that every
// server holding the same token (several behind one load balancer, or one
// restarted) accepts it, and nothing forges one without the token.
type auth struct {
	tokens Tokens
	clock  func() time.Time

	mu    sync.Mutex
	codes map[string]time.Time // login code → expiry
}

// sign returns the signature of the parts under the approver token, for
// the purpose named first.
func (a *auth) sign(parts ...string) string { return mac(a.tokens.Approver, parts...) }

// mac returns the HMAC-SHA256 under key of the parts, in hex. Each part is
// preceded by its length, so no two lists of parts sign alike; the first
// names the purpose, so no signature stands for another kind.
func mac(key string, parts ...string) string {
	m := hmac.New(sha256.New, []byte(key))
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		m.Write(n[:])
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// newSession returns the cookie of a browser session that expires at exp.
func (a *auth) newSession(exp time.Time) (string, *webSession) {
	id := randomHex(16)
	e := strconv.FormatInt(exp.Unix(), 10)
	cookie := e + "." + id + "." + a.sign("toolgate web session v1", e, id)
	return cookie, &webSession{csrf: a.sign("toolgate csrf v1", id), expires: exp}
}

// session returns the browser session of cookie, if it is signed under the
// approver token and has not expired.
func (a *auth) session(cookie string) (*webSession, bool) {
	e, rest, ok1 := strings.Cut(cookie, ".")
	id, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(id) != 32 {
		return nil, false
	}
	if !hmac.Equal([]byte(sig), []byte(a.sign("toolgate web session v1", e, id))) {
		return nil, false
	}
	unix, err := strconv.ParseInt(e, 10, 64)
	if err != nil {
		return nil, false
	}
	exp := time.Unix(unix, 0)
	if !a.clock().Before(exp) {
		return nil, false
	}
	return &webSession{csrf: a.sign("toolgate csrf v1", id), expires: exp}, true
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newCode returns a fresh one-time login code.
func (a *auth) newCode() string {
	code := randomHex(16)
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	for c, exp := range a.codes {
		if now.After(exp) {
			delete(a.codes, c)
		}
	}
	a.codes[code] = now.Add(LoginCodeTTL)
	return code
}

// redeem uses up code and returns a new browser session for it.
func (a *auth) redeem(code string) (cookie string, ws *webSession, ok bool) {
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, found := a.codes[code]
	if !found {
		return "", nil, false
	}
	delete(a.codes, code)
	if now.After(exp) {
		return "", nil, false
	}
	cookie, ws = a.newSession(now.Add(WebSessionTTL))
	return cookie, ws, true
}

// authenticate returns who sent r, or false.
func (a *auth) authenticate(r *http.Request) (principal, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok {
			return principal{}, false
		}
		tok = strings.TrimSpace(tok)
		if subtle.ConstantTimeCompare([]byte(tok), []byte(a.tokens.Approver)) == 1 {
			return principal{role: RoleApprover, id: approverID}, true
		}
		for _, agent := range append([]string{a.tokens.Agent}, a.tokens.Agents...) {
			if subtle.ConstantTimeCompare([]byte(tok), []byte(agent)) == 1 {
				return principal{role: RoleAgent, id: agentID(agent)}, true
			}
		}
		return principal{}, false
	}
	c, err := r.Cookie(CookieName)
	if err != nil {
		return principal{}, false
	}
	ws, ok := a.session(c.Value)
	if !ok {
		return principal{}, false
	}
	return principal{role: RoleApprover, id: approverID, cookie: true, csrf: ws.csrf}, true
}

var crossOrigin = http.NewCrossOriginProtection()

// checkCSRF rejects a cookie-authenticated request that changes something
// unless it carries the session's CSRF header and comes from the server's
// own origin.
func checkCSRF(r *http.Request, p principal) *apiError {
	if !p.cookie {
		return nil
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host || u.Scheme != requestScheme(r) {
			return errorf(http.StatusForbidden, "cross-origin request refused: Origin %q is not this server's", clip(origin, 80))
		}
	}
	if err := crossOrigin.Check(r); err != nil {
		return errorf(http.StatusForbidden, "cross-origin request refused: %v", err)
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(p.csrf)) != 1 {
		return errorf(http.StatusForbidden, "missing or wrong %s header: send the csrf value from GET /v1/whoami", CSRFHeader)
	}
	return nil
}

func requestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// handler is an API handler given who is asking.
type handler func(w http.ResponseWriter, r *http.Request, p principal) error

// authed wraps h: the request needs a credential of at least role need.
// An agent on an approver endpoint gets 403, after forbidden (if not nil)
// has recorded the attempt.
func (s *Server) authed(need Role, h handler, forbidden func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.auth.authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
			writeError(w, errorf(http.StatusUnauthorized, "missing or unknown token: send \"Authorization: Bearer TOKEN\" with a token from the state directory, or sign in with the login link"))
			return
		}
		if err := checkCSRF(r, p); err != nil {
			writeError(w, err)
			return
		}
		if p.role < need {
			if forbidden != nil {
				forbidden(r)
			}
			writeError(w, errorf(http.StatusForbidden, "this needs the approver token; the agent token may not %s", describeAction(r)))
			return
		}
		if err := h(w, r, p); err != nil {
			writeError(w, err)
		}
	})
}

func describeAction(r *http.Request) string {
	return r.Method + " " + r.URL.Path
}

// forbiddenEvent records in session that an agent token tried an approver
// action.
func (s *Server) forbiddenEvent(r *http.Request, session, action, toolCallID string) {
	if session == "" {
		return
	}
	payload, _ := json.Marshal(map[string]string{
		"action": action, "toolCallId": toolCallID, "method": r.Method, "path": r.URL.Path,
		"message": "an agent token tried an approver action and was refused",
	})
	ctx, cancel := s.appendContext()
	defer cancel()
	if _, err := s.store.Append(ctx, session, eventlog.Draft{Time: s.clock(), Type: TypeApprovalForbidden, Payload: payload}); err != nil {
		s.log.Error("record approval.forbidden", "session", session, "err", err)
	}
}

// handleLogin redeems a one-time login code for a browser session.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	code := r.URL.Query().Get("code")
	cookie, ws, ok := s.auth.redeem(code)
	if code == "" || !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("This login link is unknown, already used or expired. Run `toolgate login-link` for a fresh one, or restart `toolgate serve`.\n"))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: cookie, Path: "/", HttpOnly: true,
		// Behind a proxy that ends TLS, the proxy's word is taken: it only
		// makes the cookie stricter.
		Secure:   r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
		SameSite: http.SameSiteStrictMode, Expires: ws.expires, MaxAge: int(WebSessionTTL / time.Second),
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// handleWhoami tells the caller its role and, for a browser, its CSRF value.
func (s *Server) handleWhoami(w http.ResponseWriter, _ *http.Request, p principal) error {
	writeJSON(w, http.StatusOK, map[string]string{"role": p.role.String(), "csrf": p.csrf})
	return nil
}

// handleLoginLink makes a fresh one-time login link (approver).
func (s *Server) handleLoginLink(w http.ResponseWriter, r *http.Request, _ principal) error {
	writeJSON(w, http.StatusOK, map[string]string{"link": s.LoginLink(requestScheme(r) + "://" + r.Host)})
	return nil
}

// LoginCode returns a fresh one-time code for GET /login?code=, valid for
// [LoginCodeTTL].
func (s *Server) LoginCode() string { return s.auth.newCode() }

// LoginLink returns a fresh one-time login link on the server at base
// (such as "http://127.0.0.1:8765").
func (s *Server) LoginLink(base string) string {
	return strings.TrimSuffix(base, "/") + "/login?code=" + s.LoginCode()
}
