package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/notify"
	"github.com/toolgate/toolgate/policy"
)

// DefaultKeepAlive is how often an idle event stream gets a comment line.
const DefaultKeepAlive = 15 * time.Second

// appendTimeout bounds writing one event the server records itself.
const appendTimeout = 10 * time.Second

// Options configure a [Server]. Store, Engine and Tokens are required.
type Options struct {
	// Engine decides calls; it also judges whether a session setting is
	// locked by the policy.
	Engine *engine.Engine
	// Store is the event log the gate writes and the API reads.
	Store eventlog.Store
	// Sessions holds the per-session settings the engine reads (give the
	// same value as engine.Options.Sessions). Nil: PUT
	// /v1/sessions/{id}/policy answers 501. New restores in it the
	// switches the log records, so that they hold across restarts.
	Sessions *engine.Sessions
	// SessionHeads is a file, outside the event log, where the server
	// keeps how many switches of each session it applied (in the state
	// directory, which agents cannot write). At start, a session whose
	// switches the log holds fewer of — a change deleted from the log —
	// asks for every call instead of going back to older settings. ""
	// keeps no such file.
	SessionHeads string
	// EndedGrants is a file, outside the event log, where the server keeps
	// the session approvals and leases that ended, until they could no
	// longer be taken up anyway (in the state directory, which agents
	// cannot write). At start none of them is taken up from the log again,
	// even if the log lost the event that ended it. "" keeps no such file.
	EndedGrants string
	// Broker holds the questions put to people; nil makes one with
	// Timeout.
	Broker *Broker
	// Gate decides and records calls. Nil makes one from Engine, Store and
	// Broker. A gate given here must have been made with Broker as its
	// approver and Broker.NewID as its gate.Options.NewID, and should have
	// Tokens.LogKey() as its gate.Options.LogKey, or it takes up no
	// session approval or lease from the log and other servers do not
	// list its questions.
	Gate *gate.Gate
	// Timeout is how long a person has to answer; default
	// [gate.DefaultTimeout]. It is used for the gate made here and bounds
	// the checks run without "wait".
	Timeout time.Duration
	// Tokens are the agent and approver tokens; both are required.
	Tokens Tokens
	// Hosts are the names, besides the address a connection comes to (and
	// localhost on loopback), that requests may give as their Host: the
	// host of --public-url. Any other Host is refused with 421, against
	// DNS rebinding.
	Hosts []string
	// BodyTimeout is how long a request has to send its body; default
	// [DefaultBodyTimeout].
	BodyTimeout time.Duration
	// Workspace, when set, is the workspace of every session (`toolgate
	// serve --workspace`): an absolute directory, not one that is never a
	// workspace ([NeverWorkspace]). Empty: a session is bound to the
	// workspace a person set for it (PUT /v1/sessions/{id}/policy), else
	// to the project root of its first check's cwd ([WorkspaceFor]).
	Workspace string
	// PolicyFor returns the effective policy for a working directory and
	// the project root it was loaded for, for GET /v1/policy. Nil: that
	// endpoint answers 501.
	PolicyFor func(cwd string) (*policy.Set, string, error)
	// UI serves the web page at "/"; nil serves a short note instead.
	UI http.Handler
	// Profiling serves Go's runtime profiles (net/http/pprof) under
	// /debug/pprof/ to the approver token only. Off: those paths are 404.
	Profiling bool
	// KeepAlive is how often an idle event stream gets a comment line;
	// default [DefaultKeepAlive].
	KeepAlive time.Duration
	// StreamWriteTimeout is how long one write to an event stream may
	// block (a client that stopped reading) before the stream is dropped;
	// default [DefaultStreamWriteTimeout].
	StreamWriteTimeout time.Duration
	// MaxStreams is how many event streams one token may hold open at
	// once; more are refused with 429. Default [DefaultMaxStreams].
	MaxStreams int
	// Logger receives the server's own errors; default slog.Default().
	// Of the lines at Warn and above, one per message and error is written
	// every 10 s, and the next one carries the count of those suppressed:
	// while the event log is down, everything fails the same way many
	// times a second.
	Logger *slog.Logger
	// Clock gives the time; default time.Now.
	Clock func() time.Time
	// Instance names this server among those sharing the event log, the
	// same across its restarts: the id [ClaimInstance] keeps in the state
	// directory. Its questions carry it, so that at start the server
	// records those it held and never resolved (a crash) as denied, and
	// the other servers stop offering them once it has gone silent. A
	// Gate given here must have been made with it as
	// gate.Options.Instance. "": none of this.
	Instance string
	// StateDir, when set, lets POST /v1/run run calls on this machine as
	// this process's user: the built-in tools keep their artifacts and
	// snapshots there, background commands their output and registry.
	// "": /v1/run answers 501.
	StateDir string
	// CredentialPaths are masked from the commands /v1/run runs, besides
	// the home directory's and the workspace's credential files: the
	// state directory and the event log.
	CredentialPaths []string
	// Notifier, when set, is told of every pending approval (webhooks with
	// answer links); the links are answered at /a/{token}.
	Notifier *notify.Notifier
}

// Server is the toolgate HTTP API. It is an [http.Handler]; [Server.Serve]
// runs it on a listener.
type Server struct {
	opts   Options
	store  eventlog.Store
	gate   *gate.Gate
	broker *Broker
	auth   *auth
	log    *slog.Logger
	clock  func() time.Time
	mux    *http.ServeMux
	met    *metrics

	base   context.Context // ends at Shutdown
	cancel context.CancelFunc

	mu      sync.Mutex
	closing bool
	running sync.WaitGroup // checks in progress
	http    *http.Server
	known   map[string]*sessionInfo
	bindMu  sync.Mutex // one session.bound event written at a time

	hub       *streamHub     // what the event streams follow
	peers     *peers         // what other servers sharing the log hold
	followers sync.WaitGroup // the goroutines that follow the log
	// endedSaved is the gate's count of ended grants last written to
	// Options.EndedGrants; only the grant follower uses it.
	endedSaved uint64

	putMu           sync.Mutex           // one PUT /v1/sessions/{id}/policy at a time
	sessionPolicyMu sync.Mutex           // guards the three below
	sessionN        map[string]int       // each session's settings changes so far
	sessionTime     map[string]time.Time // when each was last switched
	heads           map[string]int       // the counts kept in Options.SessionHeads
	restoring       bool                 // while restoreSessions reads the log
	restoredTo      int64                // the last event the restore read
	changeOutcome   map[int64]string     // why a recent change was refused, "" if taken
	changeOrder     []int64
}

// sessionInfo is what the server learned about a session from its calls
// and its session.bound events.
type sessionInfo struct {
	loaded    bool   // its session.bound events were read from the log
	owner     string // the principal id of the token that started it
	workspace string // the workspace its first check bound it to, "" before one
	cwd       string // the working directory of its latest call
}

// SessionHeadsFile returns the usual name of Options.SessionHeads in the
// state directory for the event log db (a file or a connection string):
// one file a log, so that servers on one state directory but different
// logs keep apart counts.
func SessionHeadsFile(db string) string {
	sum := sha256.Sum256([]byte(db))
	return "session-heads-" + hex.EncodeToString(sum[:6]) + ".json"
}

// maxKnownSessions bounds the sessions the server remembers.
const maxKnownSessions = 100_000

// New returns a server.
func New(opts Options) (*Server, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("server: Options.Store is required")
	case opts.Engine == nil:
		return nil, errors.New("server: Options.Engine is required")
	case opts.Tokens.check() != nil:
		return nil, fmt.Errorf("server: Options.Tokens: %w", opts.Tokens.check())
	case opts.Gate != nil && opts.Broker == nil:
		return nil, errors.New("server: a Gate given in Options needs the Broker it asks")
	}
	if opts.Workspace != "" {
		ws, err := checkWorkspace(opts.Workspace, opts.Engine.Home())
		if err != nil {
			return nil, fmt.Errorf("server: Options.Workspace: %w", err)
		}
		opts.Workspace = ws
	}
	if opts.Timeout <= 0 {
		opts.Timeout = gate.DefaultTimeout
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.StreamWriteTimeout <= 0 {
		opts.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	opts.Logger = rateLimited(opts.Logger, errorLogEvery, time.Now)
	if opts.Broker == nil {
		opts.Broker = NewBroker(BrokerOptions{Timeout: opts.Timeout, Clock: opts.Clock})
	}
	g := opts.Gate
	if g == nil {
		var err error
		g, err = gate.New(opts.Engine, opts.Store, opts.Broker, gate.Options{
			Timeout: opts.Timeout, Clock: opts.Clock, NewID: opts.Broker.NewID, LogKey: opts.Tokens.LogKey(), Instance: opts.Instance,
		})
		if err != nil {
			return nil, err
		}
	}
	s := &Server{
		opts: opts, store: opts.Store, gate: g, broker: opts.Broker,
		auth: &auth{tokens: opts.Tokens, clock: opts.Clock, codes: map[string]time.Time{}},
		log:  opts.Logger, clock: opts.Clock, met: newMetrics(), known: map[string]*sessionInfo{},
		sessionN: map[string]int{}, sessionTime: map[string]time.Time{}, heads: map[string]int{}, changeOutcome: map[int64]string{}, peers: newPeers(), hub: newStreamHub(),
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.broker.mu.Lock()
	s.broker.onWait = s.met.observeWait
	s.broker.ownerOf = s.ownerOf
	s.broker.files = func(r *approval.Request) []File { return snapshotFiles(r, g.Redactor()) }
	if n := opts.Notifier; n != nil {
		s.broker.onPending = func(a Approval) {
			n.Notify(notify.Pending{
				ID: a.ID, Session: a.Session, Tool: a.Request.Tool, Summary: a.Request.Summary,
				Risk: a.Request.Risk, Reason: a.Request.Reason, Destructive: a.Request.Destructive, Deadline: a.Deadline,
			})
		}
	}
	s.broker.mu.Unlock()
	s.routes()
	// The session settings switched before a restart hold again, and from
	// now on the log is followed for what other servers sharing it do.
	ctx, cancel := context.WithTimeout(s.base, restoreTimeout)
	defer cancel()
	since := s.clock().Add(-max(10*time.Minute, 2*opts.Timeout))
	n, err := s.restoreSessions(ctx)
	if err != nil {
		s.cancel()
		return nil, err
	}
	if n > 0 {
		s.log.Info("session settings restored from the event log", "sessions", n)
	}
	// The questions this instance held when it last stopped without
	// shutting down are decided now: denied, as a shutdown denies them.
	if n, err := s.settleOwnQuestions(ctx); err != nil {
		s.cancel()
		return nil, fmt.Errorf("server: settle the questions instance %s left unanswered: %w", opts.Instance, err)
	} else if n > 0 {
		s.log.Warn("questions left unanswered when this server last stopped are recorded as denied", "instance", opts.Instance, "questions", n)
	}
	s.sessionPolicyMu.Lock()
	after := s.restoredTo
	s.sessionPolicyMu.Unlock()
	if after == 0 {
		after = eventlog.ReplayAll
	}
	s.followers.Go(func() { s.follow(s.base, policyStream, eventlog.Filter{AfterID: after}) })
	s.followers.Go(func() { s.follow(s.base, permissionStream, eventlog.Filter{Since: since, AfterID: eventlog.ReplayAll}) })
	if err := s.restoreEnded(); err != nil {
		s.cancel()
		return nil, err
	}
	if opts.Instance != "" {
		s.followers.Go(func() { s.heartbeat(s.base) })
	}
	grantsSince := s.clock().Add(-grantsLookback)
	s.followers.Go(func() {
		s.follow(s.base, grantStream, eventlog.Filter{Since: grantsSince, AfterID: eventlog.ReplayAll})
	})
	return s, nil
}

// restoreTimeout bounds reading the session settings back at start.
const restoreTimeout = time.Minute

// Broker returns the server's approval broker.
func (s *Server) Broker() *Broker { return s.broker }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	m.HandleFunc("GET /login", s.handleLogin)
	m.HandleFunc("GET /a/{token}", s.handleLinkPage)
	m.HandleFunc("POST /a/{token}", s.handleLinkAnswer)
	m.HandleFunc("POST /v1/login", s.handleLoginRedeem)
	m.Handle("POST /v1/web-session", s.authed(RoleApprover, s.handleRenew, nil))
	m.Handle("GET /v1/whoami", s.authed(RoleAgent, s.handleWhoami, nil))
	m.Handle("POST /v1/login-link", s.authed(RoleApprover, s.handleLoginLink, nil))
	m.Handle("POST /v1/check", s.authed(RoleAgent, s.handleCheck, nil))
	m.Handle("POST /v1/run", s.authed(RoleAgent, s.handleRun, nil))
	m.Handle("GET /v1/approvals", s.authed(RoleAgent, s.handleListApprovals, nil))
	m.Handle("GET /v1/approvals/{id}", s.authed(RoleAgent, s.handleGetApproval, nil))
	m.Handle("POST /v1/approvals/{id}", s.authed(RoleApprover, s.handleAnswer, s.forbiddenAnswer))
	m.Handle("POST /v1/sessions/{id}/respond", s.authed(RoleApprover, s.handleRespond, s.forbiddenSession("respond")))
	m.Handle("GET /v1/events", s.authed(RoleAgent, s.handleEvents, nil))
	m.Handle("GET /v1/sessions/{id}/events", s.authed(RoleAgent, s.handleSessionEvents, nil))
	m.Handle("POST /v1/sessions/{id}/events", s.authed(RoleAgent, s.handlePostEvents, nil))
	m.Handle("POST /v1/sessions/{id}/tool-output", s.authed(RoleAgent, s.handleToolOutput, nil))
	m.Handle("GET /v1/sessions/{id}/policy", s.authed(RoleAgent, s.handleGetSessionPolicy, nil))
	m.Handle("PUT /v1/sessions/{id}/policy", s.authed(RoleApprover, s.handlePutSessionPolicy, s.forbiddenSession("set_policy")))
	m.Handle("GET /v1/sessions/{id}/grants", s.authed(RoleAgent, s.handleGrants, nil))
	m.Handle("POST /v1/sessions/{id}/leases", s.authed(RoleApprover, s.handleGrantLease, s.forbiddenSession("grant_lease")))
	m.Handle("DELETE /v1/sessions/{id}/grants/{grant}", s.authed(RoleApprover, s.handleRevokeGrant, s.forbiddenSession("revoke_grant")))
	m.Handle("GET /v1/policy", s.authed(RoleApprover, s.handlePolicy, nil))
	m.Handle("GET /v1/stats", s.authed(RoleApprover, s.handleStats, nil))
	m.Handle("GET /metrics", s.authed(RoleApprover, s.handleMetrics, nil))
	if s.opts.Profiling {
		s.profilingRoutes(m)
	}
	m.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, "no endpoint %s %s: see docs/api.md", r.Method, r.URL.Path))
	})
	ui := s.opts.UI
	if ui == nil {
		ui = http.HandlerFunc(noUI)
	}
	m.Handle("/", ui)
	s.mux = m
}

// noUI is served at "/" when the server has no web page built in.
func noUI(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "toolgate is running. This build has no web page; use the API (docs/api.md) or `toolgate approve`.\n")
}

// ServeHTTP implements [http.Handler].
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The values are shared by every response: the server's handlers
	// set these names, never change a value in place.
	h := w.Header()
	h["X-Content-Type-Options"] = headerNosniff
	h["X-Frame-Options"] = headerDeny
	h["Referrer-Policy"] = headerSameOrigin
	// Before anything else: a request refused at once still has its body
	// read afterwards (to keep the connection), and a body that never
	// comes must not hold it.
	s.setBodyDeadline(w)
	if err := s.checkHost(r); err != nil {
		writeError(w, err)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// The values of the headers every response carries (in canonical form).
var (
	headerNosniff    = []string{"nosniff"}
	headerDeny       = []string{"DENY"}
	headerSameOrigin = []string{"same-origin"}
	headerJSON       = []string{"application/json"}
	headerNoStore    = []string{"no-store"}
)

// Serve answers requests on ln until [Server.Shutdown]; it then returns
// nil.
func (s *Server) Serve(ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.http = hs
	s.mu.Unlock()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the server: no new question is asked, every pending
// approval ends (the gate records a deny with reason approval_cancelled),
// event streams end, and the checks in progress finish writing their
// events. It then stops the listener of [Server.Serve], waiting for the
// open requests until ctx ends. The store is the caller's to close
// afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	hs := s.http
	s.mu.Unlock()
	s.broker.Close()
	s.cancel()
	done := make(chan struct{})
	go func() {
		s.running.Wait()
		s.followers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if hs != nil {
		return hs.Shutdown(ctx)
	}
	return nil
}

// track counts a check in progress; false when the server is shutting
// down.
func (s *Server) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.running.Add(1)
	return true
}

// appendContext bounds an event the server writes itself; it outlives
// the request and the server's shutdown, so a record is never lost.
func (s *Server) appendContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), appendTimeout)
}

// sessionCwd returns the working directory of session's latest call.
func (s *Server) sessionCwd(session string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if info := s.known[session]; info != nil {
		return info.cwd
	}
	return ""
}

func errSessionForbidden(session string) *apiError {
	return errorf(http.StatusForbidden, "an agent token may read only the sessions it started, not %q", session)
}
