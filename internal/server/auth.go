package server

import (
	"context"
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
//
// A browser's credential is never a cookie: cookies do not keep the ports
// of one host apart, so a cookie of the server at 127.0.0.1:8765 would
// reach every other server on 127.0.0.1 the person opens in the same
// browser (an agent's dev server, say), which could replay it. Instead the
// page redeems the login code for a session token (POST /v1/login), keeps
// it in its own origin's sessionStorage, and sends it in [SessionHeader]
// on every request. Cookies are no credential at all.
const (
	// SessionHeader carries a browser session's token on every request
	// the page sends.
	SessionHeader = "X-Toolgate-Session"
	// LoginCodeTTL is how long a login code works.
	LoginCodeTTL = 10 * time.Minute
	// WebSessionIdle is how long a browser session token works after it
	// was issued; the open page renews it (POST /v1/web-session) well
	// before, so a session lapses this long after its page was closed or
	// its computer went to sleep.
	WebSessionIdle = time.Hour
	// WebSessionMaxAge bounds a browser session from its login, however
	// often it is renewed: then a fresh login link is needed.
	WebSessionMaxAge = 12 * time.Hour
)

// legacyCookie is the cookie older servers kept the browser session in. It
// is no credential; the login clears it.
const legacyCookie = "toolgate_session"

// TypeApprovalForbidden is the event written to a session when an agent
// token tries to answer one of its approvals or change its policy.
const TypeApprovalForbidden eventlog.Type = "approval.forbidden"

// principal is who made a request.
type principal struct {
	role Role
	id   string      // "approver", or the agentID of the agent token
	web  *webSession // the browser session of SessionHeader, nil for a bearer token
}

// approverID is the principal id of the approver, by token or browser
// session.
const approverID = "approver"

// webSession is a browser session: its random id, when it was signed in,
// and when its current token lapses.
type webSession struct {
	id      string
	issued  time.Time
	expires time.Time
}

// until is when the session ends however often it is renewed.
func (ws *webSession) until() time.Time { return ws.issued.Add(WebSessionMaxAge) }

// auth holds the login codes. A browser session is its token alone: when
// it was signed in, when the token lapses and a random id, signed under
// the approver token, so that every server holding the same token (several
// behind one load balancer, or one restarted) accepts it, and nothing
// forges one without the token.
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

// webSessionPurpose names browser session tokens in their signature.
const webSessionPurpose = "toolgate web session v2"

// token returns the token of ws: "ISSUED.EXPIRES.ID.SIGNATURE".
func (a *auth) token(ws *webSession) string {
	i := strconv.FormatInt(ws.issued.Unix(), 10)
	e := strconv.FormatInt(ws.expires.Unix(), 10)
	return i + "." + e + "." + ws.id + "." + a.sign(webSessionPurpose, i, e, ws.id)
}

// newSession returns a browser session signed in at now.
func (a *auth) newSession(now time.Time) *webSession {
	now = now.Truncate(time.Second)
	return &webSession{id: randomHex(16), issued: now, expires: now.Add(WebSessionIdle)}
}

// renew returns ws with a token that works until WebSessionIdle after now,
// but not past its WebSessionMaxAge.
func (a *auth) renew(ws *webSession, now time.Time) *webSession {
	exp := now.Truncate(time.Second).Add(WebSessionIdle)
	if u := ws.until(); exp.After(u) {
		exp = u
	}
	return &webSession{id: ws.id, issued: ws.issued, expires: exp}
}

// session returns the browser session of token, if it is signed under the
// approver token and neither it has lapsed nor the session reached
// WebSessionMaxAge.
func (a *auth) session(token string) (*webSession, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 4 {
		return nil, false
	}
	i, e, id, sig := parts[0], parts[1], parts[2], parts[3]
	if !hmac.Equal([]byte(sig), []byte(a.sign(webSessionPurpose, i, e, id))) {
		return nil, false
	}
	iu, err1 := strconv.ParseInt(i, 10, 64)
	eu, err2 := strconv.ParseInt(e, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, false
	}
	ws := &webSession{id: id, issued: time.Unix(iu, 0), expires: time.Unix(eu, 0)}
	now := a.clock()
	if !now.Before(ws.expires) || !now.Before(ws.until()) {
		return nil, false
	}
	return ws, true
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

// known reports whether code is a login code that works, without using
// it up.
func (a *auth) known(code string) bool {
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, found := a.codes[code]
	return found && !now.After(exp)
}

// redeem uses up code and returns a new browser session for it.
func (a *auth) redeem(code string) (*webSession, bool) {
	now := a.clock()
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, found := a.codes[code]
	if !found {
		return nil, false
	}
	delete(a.codes, code)
	if now.After(exp) {
		return nil, false
	}
	return a.newSession(now), true
}

// authenticate returns who sent r, or false. The credentials are a bearer
// token in Authorization and a browser session token in SessionHeader;
// cookies are none.
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
	if tok := r.Header.Get(SessionHeader); tok != "" {
		ws, ok := a.session(tok)
		if !ok {
			return principal{}, false
		}
		return principal{role: RoleApprover, id: approverID, web: ws}, true
	}
	return principal{}, false
}

// checkBrowser refuses a request of a browser session (and a login) that
// does not come from the server's own page: its Origin, when sent, must be
// the server's own (scheme and Host, which [Server.checkHost] has already
// matched with the listening address), and must be sent with every request
// that changes something or hands out a token (every non-GET: browsers
// always send it there); its Sec-Fetch-Site, when sent, must be
// same-origin. The session token is not something a browser attaches by
// itself, so this is a second wall, against a token somehow carried to
// another page.
func checkBrowser(r *http.Request) *apiError {
	origin := r.Header.Get("Origin")
	switch {
	case origin != "" && !sameOrigin(r, origin):
		return errorf(http.StatusForbidden, "cross-origin request refused: Origin %q is not this server's (%s://%s)", clip(origin, 80), requestScheme(r), clip(r.Host, 80))
	case origin == "" && r.Method != http.MethodGet && r.Method != http.MethodHead:
		return errorf(http.StatusForbidden, "request refused: a browser session's %s must carry this server's Origin (%s://%s); scripts and tools use the bearer tokens of the state directory", r.Method, requestScheme(r), clip(r.Host, 80))
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return errorf(http.StatusForbidden, "cross-origin request refused: Sec-Fetch-Site is %q, not same-origin", clip(site, 40))
	}
	return nil
}

// sameOrigin reports whether origin, an Origin header, names the server r
// came to: its Host, by the request's scheme (or https when a proxy that
// ends TLS says so).
func sameOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil || !strings.EqualFold(u.Host, r.Host) {
		return false
	}
	return u.Scheme == requestScheme(r) ||
		u.Scheme == "https" && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
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
// has recorded the attempt. A browser session's request must come from
// the server's own page ([checkBrowser]), and ends when its token lapses,
// so that an event stream does not outlive the session.
func (s *Server) authed(need Role, h handler, forbidden func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.auth.authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate"`)
			writeError(w, errorf(http.StatusUnauthorized, "missing, unknown or expired credential: send \"Authorization: Bearer TOKEN\" with a token from the state directory, or sign in with a fresh login link (`toolgate login-link`)"))
			return
		}
		if p.web != nil {
			if err := checkBrowser(r); err != nil {
				writeError(w, err)
				return
			}
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			lapse := time.AfterFunc(p.web.expires.Sub(s.clock()), cancel)
			defer lapse.Stop()
			r = r.WithContext(ctx)
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

// loginPage is where GET /login sends the browser; the page's script
// takes the code from the fragment, which is never sent to a server.
const loginPage = "/#login="

// handleLogin checks a login link's code and sends the browser to the
// page, which redeems it (POST /v1/login). Opening the link, or a chat
// app fetching a preview of it, does not use the code up.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	code := r.URL.Query().Get("code")
	if code == "" || !s.auth.known(code) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("This login link is unknown, already used or expired. Run `toolgate login-link` for a fresh one, or restart `toolgate serve`.\n"))
		return
	}
	// Older servers kept the session in a cookie; it is no credential now.
	http.SetCookie(w, &http.Cookie{Name: legacyCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, loginPage+url.QueryEscape(code), http.StatusSeeOther)
}

// webSessionView is the answer of POST /v1/login and POST /v1/web-session.
type webSessionView struct {
	// Token goes in SessionHeader on every request.
	Token string `json:"token"`
	// Expires is when the token lapses unless renewed.
	Expires time.Time `json:"expires"`
	// Until is when the session ends however often it is renewed.
	Until time.Time `json:"until"`
}

func (a *auth) view(ws *webSession) webSessionView {
	return webSessionView{Token: a.token(ws), Expires: ws.expires.UTC(), Until: ws.until().UTC()}
}

// handleLoginRedeem uses up a login code, sent by the server's own page,
// for a browser session token.
func (s *Server) handleLoginRedeem(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := checkBrowser(r); err != nil {
		writeError(w, err)
		return
	}
	var body struct {
		Code string `json:"code"`
	}
	if err := decodeBody(w, r, &body); err != nil {
		writeError(w, err)
		return
	}
	ws, ok := s.auth.redeem(body.Code)
	if body.Code == "" || !ok {
		writeError(w, errorf(http.StatusForbidden, "this login code is unknown, already used or expired: run `toolgate login-link` for a fresh link"))
		return
	}
	writeJSON(w, http.StatusOK, s.auth.view(ws))
}

// handleRenew gives a browser session a fresh token (the session's own
// limit stays).
func (s *Server) handleRenew(w http.ResponseWriter, _ *http.Request, p principal) error {
	if p.web == nil {
		return errorf(http.StatusBadRequest, "only a browser session is renewed: a bearer token does not lapse")
	}
	writeJSON(w, http.StatusOK, s.auth.view(s.auth.renew(p.web, s.clock())))
	return nil
}

// handleWhoami tells the caller its role and, for a browser session, when
// its token lapses and when the session ends.
func (s *Server) handleWhoami(w http.ResponseWriter, _ *http.Request, p principal) error {
	out := map[string]any{"role": p.role.String()}
	if p.web != nil {
		out["expires"], out["until"] = p.web.expires.UTC(), p.web.until().UTC()
	}
	writeJSON(w, http.StatusOK, out)
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
