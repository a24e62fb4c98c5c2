package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/termtext"
)

// DefaultServer is the address `toolgate serve` listens on by default.
const DefaultServer = "http://127.0.0.1:8765"

// approveLookback is how far back `toolgate approve` looks for questions
// asked before it started; an approval never waits longer than its
// timeout, so older ones are resolved.
const approveLookback = "1h"

// serverFlags locate a running server and the approver token.
type serverFlags struct {
	server, stateDir, tokenFile string
}

func (f *serverFlags) register(c *cobra.Command) {
	fl := c.Flags()
	def := os.Getenv("TOOLGATE_SERVER")
	if def == "" {
		def = DefaultServer
	}
	fl.StringVar(&f.server, "server", def, "URL of the toolgate server; $TOOLGATE_SERVER sets the default")
	fl.StringVar(&f.stateDir, "state-dir", server.DefaultStateDir(), "state directory of the server, where approver.token is")
	fl.StringVar(&f.tokenFile, "token-file", "", "approver token file (default approver.token in the state directory)")
}

// client returns an API client with the approver token.
func (f *serverFlags) client() (*apiClient, error) {
	u, err := url.Parse(f.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError("--server %q is not an http:// or https:// URL", f.server)
	}
	path := f.tokenFile
	if path == "" {
		if f.stateDir == "" {
			return nil, usageError("no approver token: give --token-file or --state-dir")
		}
		path = filepath.Join(f.stateDir, server.ApproverTokenFile)
	}
	tok, err := server.ReadTokenFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usageError("no approver token at %s: start toolgate serve first, or give --token-file", path)
		}
		return nil, err
	}
	return &apiClient{base: strings.TrimSuffix(u.String(), "/"), token: tok, http: &http.Client{}}, nil
}

// apiClient calls a toolgate server with a bearer token.
type apiClient struct {
	base  string
	token string
	http  *http.Client
	// deadline, when set, ends every call that has not been answered by
	// then; limit is the time it gave, for the error.
	deadline time.Time
	limit    time.Duration
}

// apiStatusError is a response other than 200.
type apiStatusError struct {
	code int
	msg  string
}

func (e *apiStatusError) Error() string {
	return fmt.Sprintf("the server answered %d: %s", e.code, e.msg)
}

func (a *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	if !a.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, a.deadline)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return &unreachableError{msg: fmt.Sprintf("no toolgate server listens at %s: start toolgate serve, or name the server with --server or $TOOLGATE_SERVER", a.base)}
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && !a.deadline.IsZero() && !time.Now().Before(a.deadline) {
			return fmt.Errorf("the toolgate server at %s did not answer within %s, the time the hook gives it before its client would stop the hook", a.base, a.limit.Round(time.Second))
		}
		if ctx.Err() != nil {
			return fmt.Errorf("stopped before the toolgate server at %s answered", a.base)
		}
		return &unreachableError{msg: fmt.Sprintf("cannot reach the toolgate server at %s: %v", a.base, err), err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		return &apiStatusError{resp.StatusCode, e.Error}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// sseMessage is one Server-Sent Events message.
type sseMessage struct {
	id, event string
	data      []byte
}

// follow reads the event stream at path, reconnecting with Last-Event-ID
// whenever it drops, and calls fn for each message until ctx ends.
// onDrop is told when the connection fails.
func (a *apiClient) follow(ctx context.Context, path string, fn func(sseMessage), onDrop func(error)) {
	last := ""
	delay := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := a.stream(ctx, path, last, func(m sseMessage) {
			if m.id != "" {
				last = m.id
			}
			delay = 200 * time.Millisecond
			fn(m)
		})
		if ctx.Err() != nil {
			return
		}
		onDrop(err)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// stream reads one connection of an event stream.
func (a *apiClient) stream(ctx context.Context, path, lastID string, fn func(sseMessage)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return &apiStatusError{resp.StatusCode, strings.TrimSpace(string(data))}
	}
	return readSSE(resp.Body, fn)
}

// readSSE parses an event stream and calls fn for each message.
func readSSE(r io.Reader, fn func(sseMessage)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var m sseMessage
	var data [][]byte
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data != nil {
				m.data = bytes.Join(data, []byte("\n"))
				fn(m)
			}
			m, data = sseMessage{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			m.id = value
		case "event":
			m.event = value
		case "data":
			data = append(data, []byte(value))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

func approveCmd() *cobra.Command {
	var (
		sf      serverFlags
		session string
	)
	c := &cobra.Command{
		Use:   "approve",
		Short: "Answer a running server's approval requests in this terminal",
		Long: `approve connects to a running toolgate serve with the approver token and
asks you, one at a time, about every call waiting for a person: the ones
pending when it starts and each new one as it is asked. A question that is
answered elsewhere (the web page), times out or is withdrawn disappears.

Answer with one key and Enter, the same keys as on the web page:
  a  Allow once
  s  Allow for session (this very call, until the session ends)
  p  Always allow in project (keeps the rule shown in the project's policy)
  u  Always allow for me (keeps the rule shown in your user policy, with
     a path in the project made absolute, since that policy holds for
     every project)
  e  edit the rule that p and u keep
  d  Deny, then an optional message for the model
A destructive call offers only a and d, and a asks you to type what it
deletes.

It runs until interrupted (Ctrl-C) or until its input ends: answers piped
in are used in order, and once the last is used approve stops.`,
		Example: `  # answer in this terminal while an agent works
  toolgate approve

  # only one session's questions, from a server on another port
  toolgate approve --session s1 --server http://127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if session != "" && !validSession(session) {
				return usageError("--session %q is not a valid session id: use 1 to 128 letters, digits, '_', '.', ':' or '-'", session)
			}
			api, err := sf.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			in, ended, piped := watchEOF(c.InOrStdin())
			a := &approver{
				api: api, out: c.OutOrStdout(), errOut: c.ErrOrStderr(),
				term:    &approval.Terminal{In: in, Out: c.OutOrStdout()},
				session: session, seen: map[string]bool{}, cancels: map[string]context.CancelFunc{},
				resolved: map[string]bool{}, wake: make(chan struct{}, 1), ended: ended, echo: piped,
			}
			return a.run(ctx)
		},
	}
	sf.register(c)
	c.Flags().StringVar(&session, "session", "", "answer only this session's approvals")
	return c
}

func validSession(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:-", r)) {
			return false
		}
	}
	return true
}

// approver is the state of `toolgate approve`.
type approver struct {
	api         *apiClient
	out, errOut io.Writer
	term        *approval.Terminal
	session     string

	mu       sync.Mutex
	queue    []server.Approval
	seen     map[string]bool // ids queued once
	resolved map[string]bool // ids known to be resolved
	cancels  map[string]context.CancelFunc
	wake     chan struct{}
	ended    <-chan struct{} // closed once the input ended and its last line was read
	echo     bool            // the input is no terminal, so nothing echoes what was answered
}

// watchEOF returns a reader of in, a channel closed once in has ended
// and all of it was read, and whether in is no terminal. A terminal is
// returned as it is (the approval terminal discards what was typed ahead
// on it; its end shows when a question reads it); any other input is
// passed on one line per read, so that its end is seen only once its
// last line was taken as an answer.
func watchEOF(in io.Reader) (io.Reader, <-chan struct{}, bool) {
	ended := make(chan struct{})
	if f, ok := in.(*os.File); ok && isTerminalFile(f) {
		return in, ended, false
	}
	pr, pw := io.Pipe()
	go func() {
		defer close(ended)
		br := bufio.NewReader(in)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr, ended, true
}

// answerLabel is the page's word for an answer.
func answerLabel(k approval.Kind) string {
	for _, key := range approval.Keys {
		if key.Kind == k {
			return key.Label
		}
	}
	return string(k)
}

// isTerminalFile reports whether f is a character device, as a terminal is.
func isTerminalFile(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (a *approver) run(ctx context.Context) error {
	q := "?state=pending"
	if a.session != "" {
		q += "&session=" + url.QueryEscape(a.session)
	}
	var list struct {
		Approvals []server.Approval `json:"approvals"`
	}
	if err := a.api.do(ctx, http.MethodGet, "/v1/approvals"+q, nil, &list); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "toolgate approve: connected to %s; %d pending. Waiting for questions (Ctrl-C or the end of input stops).\n", a.api.base, len(list.Approvals))
	fmt.Fprintln(a.out, "Keys: a allow once · s allow for session · p always allow in project · u always allow for me · e edit the rule · d deny")
	for _, ap := range list.Approvals {
		a.enqueue(ap)
	}
	path := "/v1/events?type=" + url.QueryEscape(string(eventlog.TypePermissionRequested)+","+string(eventlog.TypePermissionResolved)) + "&since=" + approveLookback
	if a.session != "" {
		path += "&session=" + url.QueryEscape(a.session)
	}
	var dropped bool
	go a.api.follow(ctx, path, func(m sseMessage) {
		if dropped {
			fmt.Fprintln(a.errOut, "toolgate approve: reconnected")
			dropped = false
		}
		a.onEvent(ctx, m)
	}, func(err error) {
		if !dropped {
			fmt.Fprintf(a.errOut, "toolgate approve: lost the event stream (%v); reconnecting\n", termtext.Args(err)...)
			dropped = true
		}
	})
	if a.work(ctx) {
		fmt.Fprintln(a.out, "toolgate approve: the input ended; stopping.")
	}
	return nil
}

// onEvent handles one message of the event stream.
func (a *approver) onEvent(ctx context.Context, m sseMessage) {
	var e eventlog.Event
	if err := json.Unmarshal(m.data, &e); err != nil {
		return
	}
	var p struct {
		ToolCallID string `json:"toolCallId"`
	}
	if json.Unmarshal(e.Payload, &p) != nil || p.ToolCallID == "" {
		return
	}
	switch e.Type {
	case eventlog.TypePermissionResolved:
		a.mu.Lock()
		a.resolved[p.ToolCallID] = true
		if cancel := a.cancels[p.ToolCallID]; cancel != nil {
			cancel()
		}
		a.mu.Unlock()
	case eventlog.TypePermissionRequested:
		a.mu.Lock()
		skip := a.seen[p.ToolCallID] || a.resolved[p.ToolCallID]
		a.mu.Unlock()
		if skip {
			return
		}
		var ap server.Approval
		err := a.api.do(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(p.ToolCallID), nil, &ap)
		if err != nil || ap.State != server.StatePending {
			return
		}
		a.enqueue(ap)
	}
}

func (a *approver) enqueue(ap server.Approval) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen[ap.ID] || a.resolved[ap.ID] {
		return
	}
	a.seen[ap.ID] = true
	a.queue = append(a.queue, ap)
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// work asks about the queued approvals one at a time, oldest first, until
// ctx ends or the input ends; it reports whether the input ended.
func (a *approver) work(ctx context.Context) bool {
	for {
		a.mu.Lock()
		var ap server.Approval
		found := false
		for len(a.queue) > 0 && !found {
			ap, a.queue = a.queue[0], a.queue[1:]
			found = !a.resolved[ap.ID]
		}
		a.mu.Unlock()
		if !found {
			select {
			case <-a.wake:
				continue
			case <-a.ended:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if err := a.ask(ctx, ap); errors.Is(err, approval.ErrInputEnded) {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
	}
}

// ask puts one approval to the person and sends the answer. It returns
// the terminal's error when no answer was given.
func (a *approver) ask(ctx context.Context, ap server.Approval) error {
	qctx, cancel := context.WithDeadline(ctx, ap.Deadline)
	defer cancel()
	a.mu.Lock()
	a.cancels[ap.ID] = cancel
	already := a.resolved[ap.ID]
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.cancels, ap.ID)
		a.mu.Unlock()
	}()
	if already || ap.Request == nil {
		return nil
	}
	fmt.Fprintf(a.out, "\n[%s] session %s, answer by %s\n", termtext.Args(ap.ID, ap.Session, ap.Deadline.Local().Format("15:04:05"))...)
	ans, err := a.term.Approve(qctx, ap.Request)
	if err != nil {
		if qctx.Err() == nil && ctx.Err() == nil && !errors.Is(err, approval.ErrInputEnded) {
			fmt.Fprintf(a.errOut, "toolgate approve: %v\n", termtext.Args(err)...)
		}
		return err
	}
	if a.echo {
		// Nothing echoed the answer read from a pipe: say it.
		echo := answerLabel(ans.Kind)
		if ans.Message != "" {
			echo += ": " + termtext.Escape(ans.Message)
		}
		fmt.Fprintln(a.out, echo)
	}
	body := map[string]string{"answer": string(ans.Kind), "via": approval.ViaTerminal}
	if ans.Message != "" {
		body["message"] = ans.Message
	}
	if ans.Rule != "" && ans.Kind.Remembered() {
		body["rule"] = ans.Rule
	}
	if ans.Confirm != "" {
		body["confirm"] = ans.Confirm
	}
	var res server.Approval
	err = a.api.do(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(ap.ID), body, &res)
	var se *apiStatusError
	switch {
	case errors.As(err, &se) && se.code == http.StatusConflict:
		fmt.Fprintf(a.out, "  already resolved elsewhere: %s\n", termtext.Args(se.msg)...)
	case err != nil:
		fmt.Fprintf(a.errOut, "toolgate approve: answering %s: %v\n", termtext.Args(ap.ID, err)...)
	case res.Decision != nil:
		fmt.Fprintf(a.out, "  → %s (%s)\n", termtext.Args(res.Decision.Decision, res.Decision.Reason)...)
	}
	return nil
}

func loginLinkCmd() *cobra.Command {
	var sf serverFlags
	c := &cobra.Command{
		Use:   "login-link",
		Short: "Print a fresh one-time login link for a running server's approval page",
		Long: `login-link asks a running toolgate serve, with the approver token, for a
new one-time link to its approval page and prints it. A link works once
and for ten minutes; the page it opens stays signed in, in that tab, for
up to 12 hours. Use it when the link serve printed has expired or was
used, or to open the page in another browser.`,
		Example: `  toolgate login-link

  # open it at once
  xdg-open "$(toolgate login-link)"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			api, err := sf.client()
			if err != nil {
				return err
			}
			var out struct {
				Link string `json:"link"`
			}
			if err := api.do(c.Context(), http.MethodPost, "/v1/login-link", nil, &out); err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), out.Link)
			return nil
		},
	}
	sf.register(c)
	return c
}

// unreachableError is a request that reached no toolgate server, as
// opposed to one the server answered with an error.
type unreachableError struct {
	msg string
	err error // the transport's error, when it is not a refused connection
}

func (e *unreachableError) Error() string { return e.msg }
func (e *unreachableError) Unwrap() error { return e.err }
