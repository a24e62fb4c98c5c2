package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/internal/hookinstall"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/policy"
)

// agentServer returns a client of the toolgate serve an agent-side command
// (hook, mcp, run) puts its calls to, with the agent token; nil when there
// is none to use.
//
// The server is addr (--server), else $TOOLGATE_SERVER. When neither names
// one and discover is set, it is [DefaultServer] if an agent token is found
// and something listens there; otherwise there is none. The token comes from
// tokenFile when given, else $TOOLGATE_TOKEN, else agent.token in stateDir. A
// server that was named must have an http:// or https:// URL and a token, or
// the error says what is missing.
func agentServer(addr, stateDir, tokenFile string, discover bool) (*apiClient, error) {
	if addr == "" {
		addr = os.Getenv("TOOLGATE_SERVER")
	}
	named := addr != ""
	if !named {
		if !discover {
			return nil, nil
		}
		addr = DefaultServer
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError("--server %q is not an http:// or https:// URL", addr)
	}
	tok, path := "", tokenFile
	if path == "" {
		tok = os.Getenv("TOOLGATE_TOKEN")
		if tok == "" && stateDir != "" {
			path = filepath.Join(stateDir, server.AgentTokenFile)
		}
	}
	if path != "" {
		t, err := server.ReadTokenFile(path)
		switch {
		case err == nil:
			tok = t
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("agent token %s: %v", path, err)
		case tokenFile != "" || named:
			return nil, usageError("no agent token at %s: start toolgate serve first, or give --token-file or $TOOLGATE_TOKEN", path)
		}
	}
	if tok == "" {
		if named {
			return nil, usageError("the toolgate server %s was named but there is no agent token: set $TOOLGATE_TOKEN or give --state-dir or --token-file", addr)
		}
		return nil, nil
	}
	if !named {
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
		}
		conn, err := net.DialTimeout("tcp", host, 500*time.Millisecond)
		if err != nil {
			return nil, nil // no server runs: decide locally
		}
		conn.Close()
	}
	return &apiClient{base: strings.TrimSuffix(u.String(), "/"), token: tok, http: &http.Client{}}, nil
}

// hookServerReserve is how much of its budget the hook keeps for itself
// when it waits for the server: to answer the client, or to record an
// after-tool call in the local log, once the server has not answered.
const hookServerReserve = 5 * time.Second

// hookBudget is how long the client lets the hook run
// ([hookinstall.Budget]); tests shorten it.
var hookBudget = hookinstall.Budget

// agentServer returns the server the hook puts call to, as [agentServer]
// finds it, with a deadline: the hook's budget for the call's client and
// phase from when the hook started, less [hookServerReserve] (a quarter
// of a shorter budget). A server that does not answer by then gets the
// call denied with a reason that says so, before the client or the guard
// stops the hook, which would deny with none (or, without a guard, let
// the tool run).
func (hf *hookFlags) agentServer(call *hook.Call) (*apiClient, error) {
	api, err := agentServer(hf.server, hf.stateDir, "", true)
	if api == nil || err != nil {
		return api, err
	}
	if b := hookBudget(call.Client, call.Phase); b > 0 {
		api.limit = b - min(hookServerReserve, b/4)
		start := hf.started
		if start.IsZero() {
			start = time.Now()
		}
		api.deadline = start.Add(api.limit)
	}
	return api, nil
}

// checkWait puts req to the server (POST /v1/check with "wait") and returns
// its decision once it is settled: allow or deny. Anything else — no
// answer, an answer without a decision, a question still open — is an
// error, which every caller turns into a deny.
func (a *apiClient) checkWait(ctx context.Context, req *engine.Request) (*engine.Decision, error) {
	body := struct {
		*engine.Request
		Wait bool `json:"wait"`
	}{req, true}
	var resp server.CheckResponse
	if err := a.do(ctx, http.MethodPost, "/v1/check", body, &resp); err != nil {
		return nil, err
	}
	if resp.Decision == nil {
		return nil, errors.New("the server's answer holds no decision")
	}
	switch resp.Decision.Decision {
	case policy.Allow, policy.Deny:
		return resp.Decision, nil
	}
	return nil, fmt.Errorf("the server answered %q although it was asked to wait for a person", resp.Decision.Decision)
}

// reportDenied tells the server that the agent's side denied req, by
// (what denied it) for reason, so that its log records the deny (POST
// /v1/check with "denied"). The call stays denied whatever happens; an
// error says the server did not record it.
func (a *apiClient) reportDenied(ctx context.Context, req *engine.Request, reason, by string) error {
	body := struct {
		Tool    string              `json:"tool"`
		Input   map[string]any      `json:"input"`
		Cwd     string              `json:"cwd"`
		Project string              `json:"project,omitempty"`
		Session string              `json:"session"`
		Denied  *server.AgentDenial `json:"denied"`
	}{req.Tool, req.Input, req.Cwd, req.Project, req.Session, &server.AgentDenial{Reason: reason, By: by}}
	var resp server.CheckResponse
	if err := a.do(ctx, http.MethodPost, "/v1/check", body, &resp); err != nil {
		return err
	}
	if resp.Decision == nil || resp.Decision.Decision != policy.Deny {
		return errors.New("the server did not record the call as denied")
	}
	return nil
}

// apiDecider decides an MCP proxy's calls through a running server.
type apiDecider struct{ api *apiClient }

// Denied implements [mcpproxy.Decider]: the server records the deny.
func (d apiDecider) Denied(ctx context.Context, req *engine.Request, reason string) error {
	return d.api.reportDenied(ctx, req, reason, "the MCP proxy's policy")
}

// Decide implements [mcpproxy.Decider]. The proxy runs a call as the
// client sent it, so an allow of an input a user hook changed is a deny.
func (d apiDecider) Decide(ctx context.Context, req *engine.Request) (*engine.Decision, error) {
	dec, err := d.api.checkWait(ctx, req)
	if err == nil && dec.Decision == policy.Allow && dec.UpdatedInput != nil {
		out := *dec
		out.Decision, out.Reason, out.Source = policy.Deny, engine.ReasonHook, engine.SourceHook
		out.Message = "a user hook changed the call's input, and the MCP proxy runs a call only as the client sent it"
		return &out, nil
	}
	return dec, err
}

// reportOutput reports a finished call's output, as the client handed it
// to the hook, to the server (POST /v1/sessions/{id}/tool-output), which
// records it in its log, and returns the classes of prompt injection
// found. An output over [server.MaxToolOutput] bytes is sent as its start
// and its whole length; the classes found in the rest here are added.
func (a *apiClient) reportOutput(ctx context.Context, session string, call *hook.Call) ([]string, error) {
	out := reportedOutput(call)
	sent := out.Output
	if len(sent) > server.MaxToolOutput {
		cut := server.MaxToolOutput
		for cut > 0 && !utf8.RuneStart(sent[cut]) {
			cut--
		}
		sent = sent[:cut]
	}
	body := server.ToolOutputReport{ToolUseID: out.ToolUseID, Tool: out.Tool, Client: out.Client, Output: string(sent), OutputBytes: len(out.Output)}
	var resp server.ToolOutputResponse
	if err := a.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(session)+"/tool-output", body, &resp); err != nil {
		return nil, err
	}
	if resp.Injection == nil {
		return nil, errors.New("the server's answer holds no injection classes")
	}
	if len(sent) == len(out.Output) {
		return resp.Injection, nil
	}
	classes := resp.Injection
	for _, c := range gate.SuspectedInjection(out.Output) {
		if !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	return classes, nil
}
