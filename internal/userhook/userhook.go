// Package userhook runs the user hooks a policy defines ([policy.Hook]): a
// command, run through /bin/sh -c with the call as JSON on its stdin, or an
// http endpoint the same JSON is posted to. A hook answers by its exit
// status and what it prints:
//
//   - exit 0 with nothing on stdout: no opinion (pass);
//   - exit 0 with a JSON object on stdout: {"decision": "allow"|"deny"|"ask",
//     "reason": "…", "updatedInput": {…}} ("action" is taken for
//     "decision"; Claude Code's hookSpecificOutput form is read too);
//   - exit 2: deny, with stderr as the reason;
//   - anything else — another exit status, a signal, the time limit, a
//     program that cannot start, output that is not such an object, output
//     past [MaxOutput] — is an error, which the gate takes as a deny naming
//     the hook.
//
// An http hook answers with a 2xx status and the same JSON body (empty for
// no opinion); any other status, a redirect, a timeout or a body that does
// not parse is an error.
//
// A command hook runs in the call's working directory with a clean
// environment (PATH, HOME and TOOLGATE_HOOK_EVENT only), in a process group
// of its own that is killed whole when its time limit passes.
package userhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// MaxOutput is the most a hook may print on stdout (or answer in an http
// body), and the most of its stderr that is kept.
const MaxOutput = 1 << 20

// MaxReasonBytes is the longest reason kept from a hook.
const MaxReasonBytes = 2000

// Input is what a hook is told of a call, as JSON: on a command hook's stdin
// and as an http hook's request body. The names follow Claude Code's hooks.
type Input struct {
	HookEventName policy.HookEvent `json:"hook_event_name"`
	SessionID     string           `json:"session_id,omitempty"`
	ToolUseID     string           `json:"tool_use_id,omitempty"`
	Cwd           string           `json:"cwd"`
	ToolName      string           `json:"tool_name"`
	ToolInput     map[string]any   `json:"tool_input"`
	// PermissionMode is the mode the call was judged in, when known.
	PermissionMode string `json:"permission_mode,omitempty"`
	// Decision is the gate's decision so far (PreToolUse and
	// PermissionRequest).
	Decision *Verdict `json:"decision,omitempty"`
	// ToolResponse is what the tool did (PostToolUse).
	ToolResponse *ToolResponse `json:"tool_response,omitempty"`
}

// Verdict is the gate's decision as a hook is told it.
type Verdict struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Message  string `json:"message,omitempty"`
}

// ToolResponse is what a call that ran produced, as a PostToolUse hook is
// told it.
type ToolResponse struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Outcome is what a hook's run came to.
type Outcome string

// The outcomes.
const (
	// Pass: the hook had no opinion.
	Pass Outcome = "pass"
	// Allow, Deny and Ask: the hook's answer.
	Allow Outcome = "allow"
	Deny  Outcome = "deny"
	Ask   Outcome = "ask"
	// Failed: the hook timed out, crashed, could not start or printed
	// something that does not parse. The gate denies.
	Failed Outcome = "error"
)

// Result is one run of a hook.
type Result struct {
	Outcome Outcome
	// Reason is the hook's reason (its stderr for exit 2, its JSON
	// "reason"), or, for Failed, what went wrong.
	Reason string
	// UpdatedInput is the input the hook asks to run instead; nil when it
	// asks for no change. Only PreToolUse hooks may give one.
	UpdatedInput map[string]any
	// ExitCode is the command's exit status; -1 when it has none (an http
	// hook, a command that did not start or was killed).
	ExitCode int
	// Status is an http hook's response status, 0 otherwise.
	Status   int
	Duration time.Duration
}

// Runner runs hooks. The zero value is ready to use.
type Runner struct {
	// Home is HOME in a command hook's environment; default
	// os.UserHomeDir.
	Home string
	// Shell runs a command hook's command as Shell -c command; default
	// /bin/sh.
	Shell string
}

// Run runs h for the call in, within h's time limit (the default when it
// sets none) and ctx, and returns what it came to. It never fails: every
// problem is a Failed result whose Reason says what went wrong.
func (r *Runner) Run(ctx context.Context, h *policy.Hook, in *Input) Result {
	start := time.Now()
	if h.Timeout <= 0 {
		c := *h
		c.Timeout = policy.DefaultHookTimeout
		h = &c
	}
	body, err := json.Marshal(in)
	var res Result
	switch {
	case err != nil:
		res = failed("its input could not be encoded: %v", err)
	case h.Type == policy.HookHTTP:
		res = r.runHTTP(ctx, h, body)
	case h.Type == policy.HookCommand:
		res = r.runCommand(ctx, h, in, body)
	default:
		res = failed("unknown hook type %q", h.Type)
	}
	if res.Outcome != Failed && res.UpdatedInput != nil && h.Event != policy.HookPreToolUse {
		res = failed("it gave updatedInput, which only a PreToolUse hook may give")
	}
	res.Duration = time.Since(start)
	return res
}

func failed(format string, args ...any) Result {
	return Result{Outcome: Failed, Reason: cut(fmt.Sprintf(format, args...)), ExitCode: -1}
}

func (r *Runner) runCommand(ctx context.Context, h *policy.Hook, in *Input, stdin []byte) Result {
	if fi, err := os.Stat(in.Cwd); err != nil || !fi.IsDir() {
		return failed("the call's working directory %q cannot be entered", in.Cwd)
	}
	home := r.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	shell := r.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	tctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, shell, "-c", h.Command)
	cmd.Dir = in.Cwd
	cmd.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home,
		"TOOLGATE_HOOK_EVENT=" + string(h.Event),
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownGroup(cmd)
	// A child that left the group and holds the pipes open is not waited
	// for past this.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return failed("the call was cancelled while it ran: %v", ctx.Err())
	case tctx.Err() != nil:
		return failed("it did not finish within its time limit of %s and was killed", h.Timeout)
	case code == 2:
		why := strings.TrimSpace(stderr.String())
		if why == "" {
			why = "the hook exited with status 2 and gave no reason on stderr"
		}
		return Result{Outcome: Deny, Reason: cut(why), ExitCode: 2}
	case err != nil && code < 0:
		return failed("it could not run: %v", err)
	case code != 0:
		res := failed("it exited with status %d%s", code, tail(stderr.String()))
		res.ExitCode = code
		return res
	case errors.Is(err, exec.ErrWaitDelay):
		return failed("it left a process holding its output open")
	case stdout.over:
		return failed("it printed more than %d bytes on stdout", MaxOutput)
	}
	res := parseAnswer(stdout.Bytes())
	res.ExitCode = 0
	return res
}

func (r *Runner) runHTTP(ctx context.Context, h *policy.Hook, body []byte) Result {
	tctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return failed("its request could not be made: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "toolgate-hook")
	client := &http.Client{
		// No proxy from the environment, no redirect followed: the
		// hook's URL is the one the policy names.
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return failed("the call was cancelled while it ran: %v", ctx.Err())
		case tctx.Err() != nil:
			return failed("it did not answer within its time limit of %s", h.Timeout)
		}
		return failed("its request failed: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxOutput+1))
	var res Result
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		res = failed("it answered HTTP %d%s", resp.StatusCode, tail(string(data)))
	case err != nil && tctx.Err() != nil:
		res = failed("it did not answer within its time limit of %s", h.Timeout)
	case err != nil:
		res = failed("its answer could not be read: %v", err)
	case len(data) > MaxOutput:
		res = failed("its answer is longer than %d bytes", MaxOutput)
	default:
		res = parseAnswer(data)
	}
	res.ExitCode, res.Status = -1, resp.StatusCode
	return res
}

// answer is the JSON a hook may print.
type answer struct {
	Decision     string         `json:"decision"`
	Action       string         `json:"action"`
	Reason       string         `json:"reason"`
	UpdatedInput map[string]any `json:"updatedInput"`
	// Claude Code's form.
	HookSpecificOutput *struct {
		HookEventName            string         `json:"hookEventName"`
		PermissionDecision       string         `json:"permissionDecision"`
		PermissionDecisionReason string         `json:"permissionDecisionReason"`
		UpdatedInput             map[string]any `json:"updatedInput"`
		Decision                 *struct {
			Behavior     string         `json:"behavior"`
			Message      string         `json:"message"`
			UpdatedInput map[string]any `json:"updatedInput"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
	// Claude Code fields that do not bear on the decision.
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput *bool  `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
}

// parseAnswer reads what a hook printed: nothing, or one JSON object of the
// [answer] form.
func parseAnswer(out []byte) Result {
	if len(bytes.TrimSpace(out)) == 0 {
		return Result{Outcome: Pass}
	}
	if !utf8.Valid(out) {
		return failed("it printed something that is not UTF-8 text")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var a answer
	if err := dec.Decode(&a); err != nil {
		return failed("it printed something that is not a hook answer (a JSON object with decision, reason, updatedInput): %v: %s", err, excerpt(out))
	}
	if dec.More() {
		return failed("it printed more than one JSON value: %s", excerpt(out))
	}
	var decisions []string
	reason := a.Reason
	input := a.UpdatedInput
	add := func(name, d string) error {
		if d == "" {
			return nil
		}
		switch strings.ToLower(d) {
		case "allow", "approve":
			d = "allow"
		case "deny", "block":
			d = "deny"
		case "ask":
		default:
			return fmt.Errorf("%s %q is not allow, deny or ask", name, d)
		}
		decisions = append(decisions, d)
		return nil
	}
	errs := []error{add("decision", a.Decision), add("action", a.Action)}
	if h := a.HookSpecificOutput; h != nil {
		errs = append(errs, add("permissionDecision", h.PermissionDecision))
		reason = cmpOr(reason, h.PermissionDecisionReason)
		input = moreInput(input, h.UpdatedInput)
		if d := h.Decision; d != nil {
			errs = append(errs, add("decision.behavior", d.Behavior))
			reason = cmpOr(reason, d.Message)
			input = moreInput(input, d.UpdatedInput)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return failed("its answer does not parse: %v", err)
	}
	out2 := Pass
	for _, d := range decisions {
		if out2 != Pass && string(out2) != d {
			return failed("its answer says both %s and %s", out2, d)
		}
		out2 = Outcome(d)
	}
	if input != nil && len(input) == 0 {
		return failed("it gave an empty updatedInput, or two different ones")
	}
	return Result{Outcome: out2, Reason: cut(reason), UpdatedInput: input}
}

// moreInput returns the updated input given, a or b; the same object given
// twice counts once, and two different ones are an error (nil, false).
func moreInput(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	if b != nil && !reflect.DeepEqual(a, b) {
		return conflicting
	}
	return a
}

// conflicting marks two different updated inputs in one answer.
var conflicting = map[string]any{}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// cut keeps at most MaxReasonBytes of s, on a character boundary.
func cut(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxReasonBytes {
		return s
	}
	n := MaxReasonBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func tail(stderr string) string {
	if s := strings.TrimSpace(stderr); s != "" {
		return ": " + s
	}
	return ""
}

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// capped keeps the first MaxOutput bytes written to it. It has no
// ReadFrom, so that io.Copy goes through Write.
type capped struct {
	buf  bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); len(p) > room {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte  { return c.buf.Bytes() }
func (c *capped) String() string { return c.buf.String() }

// AllowBlocked says why an allow from hook h cannot turn decision d into
// an allow, or "" when it can. A hook is not a person: its allow lifts
// only an ask that an allow rule or a mode could lift too (the default
// risk table, an untrusted MCP server). A deny of any kind, an ask rule, a
// protected path, a destructive effect, what cannot be judged, approval =
// "always" and an ask another hook gave all stand.
func AllowBlocked(h *policy.Hook, d *engine.Decision) string {
	switch {
	case h.NoAllow != "":
		return "its allow does not count: " + h.NoAllow
	case d.Decision == policy.Deny:
		return fmt.Sprintf("the call is denied (%s), and a hook never loosens a deny", d.Reason)
	case d.Decision == policy.Allow:
		return ""
	case d.Source == engine.SourceHook:
		return "another hook made the call ask"
	case d.Hard, d.Risk == risk.Destructive, d.Source == engine.SourceRule, d.Source == engine.SourceSafety:
		return fmt.Sprintf("the call must be confirmed by a person (%s), which a hook cannot do", d.Reason)
	}
	switch d.Reason {
	case engine.ReasonPolicyAlways, engine.ReasonRuleAsk, engine.ReasonProtectedPath, engine.ReasonDestructive, engine.ReasonUnknownCommand:
		return fmt.Sprintf("the call must be confirmed by a person (%s), which a hook cannot do", d.Reason)
	}
	return ""
}
