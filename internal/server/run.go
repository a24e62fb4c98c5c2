package server

import (
	"context"
	"net/http"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/internal/tools"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// MaxRunOutput is how much of each of a run's output streams POST /v1/run
// returns; the rest is cut and the stream marked truncated.
const MaxRunOutput = 1 << 20

// RunResponse is the answer to POST /v1/run.
type RunResponse struct {
	// Decision, Reason and Message are the gate's decision. Only an
	// allowed call was run.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	// ExitCode is the program's exit status (0 for a built-in tool that
	// succeeded); 0 for a call that did not run.
	ExitCode int `json:"exit_code"`
	// Stdout and Stderr are the first MaxRunOutput bytes of each stream,
	// with bytes that are not UTF-8 replaced by U+FFFD; the *Truncated
	// flags say that more was cut.
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	// Artifact is the id under which a built-in tool's full output is
	// kept in the server's state directory.
	Artifact string `json:"artifact,omitempty"`
	// Sandbox is the report of the sandbox a shell command ran in.
	Sandbox *sandbox.Report `json:"sandbox,omitempty"`
	// Error says why an allowed call failed to run to its end (it could
	// not be started, timed out, or was cancelled); tool.failed records
	// it too.
	Error string `json:"error,omitempty"`
}

// handleRun decides one call and, when it is allowed, runs it on the
// server's machine: POST /v1/run. It always waits for a person.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request, p principal) error {
	if s.opts.StateDir == "" {
		return errorf(http.StatusNotImplemented, "this server runs no calls: it was started without a state directory for them")
	}
	body, req, err := s.readCall(w, r, p)
	if err != nil {
		return err
	}
	if body.Denied != nil {
		// Denied on the agent's side: recorded, never run, wherever it is.
		if !s.track() {
			return errorf(http.StatusServiceUnavailable, "the server is shutting down")
		}
		defer s.running.Done()
		resp := s.refuse(r.Context(), &req, body.Turn, body.Denied)
		writeJSON(w, http.StatusOK, RunResponse{Decision: resp.Decision.Decision.String(), Reason: string(resp.Reason), Message: resp.Message})
		return nil
	}
	// The server runs the call as its own user: only in the session's
	// workspace, never where no workspace was bound.
	if req.Workspace == NoWorkspace || !pathres.Within(pathres.Real(req.Workspace), pathres.Real(req.Cwd)) {
		return errorf(http.StatusForbidden, "field \"cwd\" %q is not in the session's workspace %q: the server runs calls only there", clip(req.Cwd, 200), clip(req.Workspace, 200))
	}
	if !s.track() {
		return errorf(http.StatusServiceUnavailable, "the server is shutting down")
	}
	defer s.running.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()
	asked := make(chan string, 1) // the id of the call's question, once it asks
	ctx = withAgent(ctx, s.gate.Redactor().String(req.Agent))
	ctx = withRegistered(ctx, func(a Approval) {
		select {
		case asked <- a.ID:
		default: // only the first question of a call is kept
		}
	})

	shell := shellrun.Options{
		StateDir: s.opts.StateDir, CredentialPaths: s.opts.CredentialPaths,
		// One byte more than is returned shows that output was cut.
		MaxOutput: MaxRunOutput + 1,
	}
	d, res, runErr := tools.RunCall(ctx, s.gate, s.opts.Engine, &req, body.Turn, shell,
		tools.Options{StateDir: s.opts.StateDir, Workspace: req.Workspace})
	if d == nil {
		// Nothing was decided, so nothing ran: deny.
		d = &engine.Decision{Decision: policy.Deny, Reason: engine.ReasonPolicyError, Message: "the call could not be decided"}
		if runErr != nil {
			d.Message += ": " + runErr.Error()
		}
	}
	select {
	case id := <-asked:
		s.broker.finish(id, s.redacted(d), nil)
	default:
	}
	s.met.countDecision(d.Decision.String(), string(d.Reason))
	if runErr != nil {
		s.log.Error("run", "session", req.Session, "tool", req.Tool, "err", runErr)
	}
	resp := RunResponse{Decision: d.Decision.String(), Reason: string(d.Reason), Message: d.Message}
	if d.Decision != policy.Allow {
		writeJSON(w, http.StatusOK, resp)
		return nil
	}
	resp.ExitCode, resp.Artifact, resp.Sandbox = res.ExitCode, res.Artifact, res.Sandbox
	resp.Stdout, resp.StdoutTruncated = bounded(res.Stdout)
	resp.Stderr, resp.StderrTruncated = bounded(res.Stderr)
	if runErr != nil {
		resp.Error = runErr.Error()
		if resp.ExitCode == 0 {
			resp.ExitCode = 1
		}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// bounded returns the first MaxRunOutput bytes of b as a string, not
// cutting a UTF-8 sequence in two, and whether anything was cut.
func bounded(b []byte) (string, bool) {
	if len(b) <= MaxRunOutput {
		return string(b), false
	}
	b = b[:MaxRunOutput]
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return string(b), true
}
