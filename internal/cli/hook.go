package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/policy"
	msqlite "modernc.org/sqlite"
)

// hookFlags locate a running server and the event log of a hook.
type hookFlags struct {
	server, stateDir, db string
	noWrap               bool
	started              time.Time // when the hook began, for its server deadline
}

func (f *hookFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.server, "server", "", "URL of a running toolgate serve to ask a person through (default $TOOLGATE_SERVER, else "+DefaultServer+" when its agent token is in the state directory)")
	fl.StringVar(&f.stateDir, "state-dir", server.DefaultStateDir(), "state directory of the server, where agent.token is (the token may also come from $TOOLGATE_TOKEN)")
	fl.BoolVar(&f.noWrap, "no-sandbox-wrap", false, "hand an allowed shell command back as it is instead of wrapped in toolgate sandbox")
	fl.StringVar(&f.db, "db", "", "event log the decisions and after-tool events are recorded in when no server takes them: a SQLite file (default events.db in the state directory) or a postgres:// connection string")
}

func hookCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "hook",
		Short: "Answer an agent client's tool hook (Claude Code, Gemini CLI, Codex)",
		Long: `hook reads the JSON a client hands its tool hook on stdin, decides the
call as toolgate check does, and answers in the client's format.

Before a tool runs (PreToolUse, BeforeTool) the answer is allow, deny or,
for Claude Code only, ask. When toolgate serve is running (found through
--server, $TOOLGATE_SERVER or the state directory's agent.token; the token
may come from $TOOLGATE_TOKEN) a call the local policy does not deny is put
to it with POST /v1/check and "wait": the server's policy decides, and a
question is answered by a person on its page while the hook waits; a call
the local policy denies is reported to it ("denied"), so that its log
records the deny. Without a server, a question goes to Claude Code as ask
(an interactive session asks its person; claude -p blocks the call; in
bypassPermissions mode, which may run it unasked, it is a deny) and is
a deny for Gemini CLI and Codex, whose ask would hang or run the tool; the
decision is recorded in the event log (--db, else events.db in the state
directory) before the hook answers, as one permission.resolved event
that carries the call.

After a tool runs (PostToolUse, AfterTool) the output is recorded as
tool.completed with injection.suspected events for output that looks
like prompt injection; the model is warned of those. They are reported
to the server when one is in use, so that they land in its log, else
(or when the server does not take them) recorded in the event log
(--db, else events.db in the state directory).

Gemini CLI's web_fetch names its URLs inside a prompt: it is judged as a
WebFetch of each URL the prompt holds (and of the raw.githubusercontent.com
URL Gemini CLI fetches for a github.com blob), allowed only when every one
is allowed; a prompt without a URL is denied.

The clients' own tools are decided by a table (see README, Agent
clients): those that change only the agent's state (TodoWrite,
AskUserQuestion, write_todos, update_plan, ...) are allowed; scheduling (CronCreate, ScheduleWakeup), Skill and ExitPlanMode
ask in every mode and are denied in plan mode; EnterWorktree and Gemini's
save_memory are judged as the writes they make; the rest stay unknown.

$TOOLGATE_SERVER and $TOOLGATE_TOKEN are not taken from a project: when
the hook is given no --server and a project file the client hands its
hooks' environment from sets one of them (Claude Code's .claude/settings.json
or settings.local.json "env", Gemini CLI's .env or .gemini/.env of the
directory or one above it), the hook denies the call.

The client's project directory is the hook's own working directory (the
client starts its hooks there): a call whose cwd the client names through
a link in it that leads out of it (Codex's exec_command workdir) is judged
against the project, not the directory the link leads to.

It never fails open: bad or empty input, an unknown tool, a policy that
does not load, an unreachable server that was asked for, a server that
does not answer within the time the installed hook entry gives the hook
(less 5 s), or any error of its own prints the client's deny JSON and
exits 2 with the reason on stderr.

An allowed shell command (Bash, run_shell_command, and Codex's
exec_command, which its hooks name Bash) is handed back to the client
wrapped (Claude Code's and Codex's updatedInput, Gemini CLI's tool_input)
so that it runs under toolgate sandbox
with the mode, network, workspace and writable roots the policy gives it
(danger-full-access: the whole file system writable, credentials still
masked), when this machine has Landlock and mount namespaces; otherwise
it goes unwrapped and the reason says why. --no-sandbox-wrap turns this
off, as does wrap_hooks = false in a policy file (a project the user
does not trust cannot set it). Codex runs the wrapped command in the
call's own working directory; its apply_patch gets no input back.`,
		Example: `  # install the hook for Claude Code in your own settings
  toolgate hook install claude-code`,
	}
	for _, cl := range hook.Clients {
		c.AddCommand(hookClientCmd(cl))
	}
	c.AddCommand(hookInstallCmds()...)
	return c
}

func hookClientCmd(client hook.Client) *cobra.Command {
	var pf policyFlags
	var hf hookFlags
	c := &cobra.Command{
		Use:   string(client),
		Short: "Answer a " + string(client) + " tool hook read as JSON on stdin",
		Long: "The " + string(client) + ` hook: it reads the JSON the client hands its
tool hook on stdin and answers in the client's format, as toolgate hook
--help describes. toolgate hook install writes it into the client's
settings; you rarely run it yourself.`,
		Example: "  # what toolgate hook install writes\n  toolgate hook install " + string(client) + "\n\n" +
			"  # try it by hand\n  echo '{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"cwd\":\"/tmp\"}' | toolgate hook " + string(client),
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if processExits {
				// One call, then the process exits: its few megabytes
				// are not worth collecting (three collections, most of a
				// tenth of the hook's CPU), unless they grow past 256 MiB.
				debug.SetGCPercent(-1)
				debug.SetMemoryLimit(256 << 20)
			}
			reply := runHook(c, client, &pf, &hf)
			c.OutOrStdout().Write(reply.Stdout)
			if reply.Stderr != "" {
				io.WriteString(c.ErrOrStderr(), reply.Stderr)
			}
			if reply.Code != 0 {
				return silentExit(reply.Code)
			}
			return nil
		},
	}
	pf.register(c)
	hf.register(c)
	// A flag error must deny too: cobra reports it before RunE runs.
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		reply := hook.Fail(client, err.Error())
		c.OutOrStdout().Write(reply.Stdout)
		io.WriteString(c.ErrOrStderr(), reply.Stderr)
		return silentExit(reply.Code)
	})
	return c
}

// engine is [policyFlags.engine] with the hook's state directory and
// event log as credential paths too, wherever --state-dir and --db put
// them.
func (f *hookFlags) engine(c *cobra.Command, pf *policyFlags) (*engine.Engine, error) {
	layer, err := pf.cliLayer(c)
	if err != nil {
		return nil, err
	}
	if f.stateDir != "" {
		if err := protectStateDir(layer, f.stateDir); err != nil {
			return nil, err
		}
	}
	if f.db != "" {
		if err := protectEventLog(layer, f.db); err != nil {
			return nil, err
		}
	}
	// A hook process decides one call and exits: the inotify watches
	// of the process's path cache would cost more than they save.
	return engine.New(engine.Options{
		Policy:      engine.FromFiles(pf.managed, pf.user, layer),
		Project:     pf.project,
		NoPathCache: true,
	})
}

// runHook answers one hook; whatever happens, including a panic, the
// reply is an explicit answer.
func runHook(c *cobra.Command, client hook.Client, pf *policyFlags, hf *hookFlags) (reply hook.Reply) {
	hf.started = time.Now()
	defer func() {
		if r := recover(); r != nil {
			reply = hook.Fail(client, fmt.Sprintf("internal error: %v", r))
		}
	}()
	data, err := io.ReadAll(io.LimitReader(c.InOrStdin(), hook.MaxPayload+1))
	if err != nil {
		return hook.Fail(client, fmt.Sprintf("reading the hook input: %v", err))
	}
	call, err := hook.Parse(client, data)
	if err != nil {
		return hook.Fail(client, err.Error())
	}
	// The client starts its hook in the directory of its session. A cwd
	// the agent named through a link in it (Codex's exec_command workdir)
	// must not make the directory the link leads to the workspace.
	wd, err := os.Getwd()
	if err != nil {
		return hook.Fail(client, fmt.Sprintf("the hook's working directory, the client's project directory, cannot be read: %v", err))
	}
	call.SetProject(wd)
	if hf.server == "" {
		home, _ := os.UserHomeDir()
		if why := projectHookEnv(client, call.Request.Cwd, home); why != "" {
			return hook.Fail(client, "the toolgate server and token in the hook's environment may come from the project, not from you: "+why+
				"; name the server in the hook's command with --server, or remove the setting from the project")
		}
	}
	if call.Phase == hook.After {
		patterns, err := recordAfter(c.Context(), call, hf)
		if err != nil {
			return hook.Fail(client, fmt.Sprintf("recording the tool's output: %v", err))
		}
		return hook.AfterAnswer(client, patterns)
	}
	return decideBefore(c, call, pf, hf)
}

func decideBefore(c *cobra.Command, call *hook.Call, pf *policyFlags, hf *hookFlags) hook.Reply {
	client := call.Client
	ctx := c.Context()
	eng, err := hf.engine(c, pf)
	if err != nil {
		return hook.Fail(client, err.Error())
	}
	// A call is judged as the requests of call.Checks (one per URL for a
	// Gemini CLI web_fetch): it runs only when each is allowed.
	checks := call.Checks()
	var d *engine.Decision
	var read *engine.Call // the engine's reading of the check d decides
	for _, req := range checks {
		if m, err := policy.ParseMode(call.PermissionMode); call.PermissionMode != "" && err == nil {
			// The client's mode may make the gate stricter (plan), never
			// looser: the agent's side cannot loosen its own gate.
			req.Mode = string(m)
			req.ModeNoLooser = true
		}
		rd, rc := eng.Decide(ctx, &req, nil)
		if u, ok := req.Input["url"].(string); ok && req.Tool != call.Request.Tool {
			rd.Message = strings.TrimPrefix(rd.Message+"; ", "; ") + "judged as " + req.Tool + " " + u
		}
		if rd.Decision == policy.Deny || rd.Reason == engine.ReasonPolicyError {
			d, read = rd, rc
			break
		}
		if d == nil || d.Decision == policy.Allow {
			d, read = rd, rc
		}
	}
	api, apiErr := hf.agentServer(call)
	if d.Decision == policy.Deny || d.Reason == engine.ReasonPolicyError {
		// A local deny is final; it is recorded where the decisions are:
		// the server's log when a server is in use, else the local one.
		reply := hook.Answer(client, hook.Verdict{Decision: policy.Deny, Reason: describe(d)})
		if d.Reason == engine.ReasonPolicyError {
			reply = hook.Fail(client, d.Message)
		}
		if api != nil && apiErr == nil {
			denied := call.Request
			denied.Session = hookSession(call)
			err := api.reportDenied(ctx, &denied, describe(d), "the "+string(client)+" hook's policy")
			if err == nil {
				return reply
			}
			// The server did not take it: the local log records it.
			if lerr := hf.record(ctx, eng, call, read, d, gate.ActorPolicy); lerr != nil {
				return hook.Fail(client, fmt.Sprintf("%s; the deny could not be recorded: the server: %v; the local log: %v", describe(d), err, lerr))
			}
			return reply
		}
		if err := hf.record(ctx, eng, call, read, d, gate.ActorPolicy); err != nil {
			return hook.Fail(client, fmt.Sprintf("%s; the deny could not be recorded: %v", describe(d), err))
		}
		return reply
	}
	if apiErr != nil {
		return hook.Fail(client, apiErr.Error())
	}
	if api != nil {
		allow := func(call *hook.Call, v hook.Verdict) hook.Reply { return hf.allow(ctx, eng, call, v) }
		if len(checks) == 1 {
			return askServer(ctx, api, call, checks[0], allow)
		}
		var reasons []string
		for _, req := range checks {
			reply := askServer(ctx, api, call, req, func(cc *hook.Call, v hook.Verdict) hook.Reply {
				if cc != call {
					return hook.Answer(client, hook.Verdict{Decision: policy.Deny, Reason: describe(d) +
						"; a user hook changed the input of one of the call's checks, which cannot be handed back for a call judged in parts"})
				}
				reasons = append(reasons, v.Reason)
				return hook.Reply{}
			})
			if reply.Stdout != nil {
				return reply // a deny or a failure
			}
		}
		return allow(call, hook.Verdict{Decision: policy.Allow, Reason: strings.Join(reasons, "; "), Input: call.Request.Input})
	}
	// Without a server the hook decides alone, and records its decision
	// in the local log before it answers.
	actor := gate.ActorPolicy
	shown := describe(d) // what the client is told
	if h := unrunHook(d, call.Request.Tool); h != nil {
		shown += "; the policy's " + h.String() + " would judge this call, and user hooks run only in toolgate serve: start it so the hook asks it"
		d = &engine.Decision{Decision: policy.Deny, Reason: engine.ReasonHook, Risk: d.Risk, Source: engine.SourceHook,
			RuleOrigin: h.Origin(), PolicyVersion: d.PolicyVersion,
			Message: fmt.Sprintf("the policy would decide %s (%s), but its %s would judge the call and user hooks run only in toolgate serve", d.Decision, d.Reason, h)}
		actor = gate.ActorSystem
	} else if d.Decision == policy.Ask && !canAsk(call) {
		shown += "; this call needs a person's approval and " + string(client) + " cannot ask one" + bypassNote(call) + ": start `toolgate serve` so the hook waits for the answer on its page, or allow the call in the policy"
		asked := *d
		d = &asked
		d.Decision, d.Reason = policy.Deny, engine.ReasonNoApprover
		d.Message = fmt.Sprintf("it asks (%s: %s), and %s cannot ask a person without toolgate serve", asked.Reason, asked.Message, client)
		actor = gate.ActorSystem
	}
	if err := hf.record(ctx, eng, call, read, d, actor); err != nil {
		return hook.Fail(client, fmt.Sprintf("recording the decision: %v", err))
	}
	if d.Decision == policy.Deny {
		return hook.Answer(client, hook.Verdict{Decision: policy.Deny, Reason: shown})
	}
	v := hook.Verdict{Decision: d.Decision, Reason: shown, Input: carried(call, call.Request.Input)}
	if d.Decision == policy.Allow {
		return hf.allow(ctx, eng, call, v)
	}
	return hook.Answer(client, v)
}

// allow answers an allowed call; a shell command goes back wrapped in
// `toolgate sandbox` (see [hook.Wrap]) unless --no-sandbox-wrap is given,
// the policy sets wrap_hooks = false, or the sandbox is missing here,
// which the reason then says.
func (f *hookFlags) allow(ctx context.Context, eng *engine.Engine, call *hook.Call, v hook.Verdict) hook.Reply {
	client := call.Client
	if f.noWrap {
		return hook.Answer(client, v)
	}
	if !hook.Wrappable(client, call.Request.Tool, call.Request.Input) {
		return hook.Answer(client, v)
	}
	if client == hook.ClaudeCode {
		home, _ := os.UserHomeDir()
		switch eff, why := claudeOwnRule(ctx, home, call); eff {
		case policy.Allow:
		case policy.Ask:
			// Claude Code asks its person, who sees the command as it
			// runs: outside the sandbox, which its rule would not match.
			if !canAsk(call) {
				return hook.Answer(client, hook.Verdict{Decision: policy.Deny,
					Reason: v.Reason + "; but Claude Code's own settings ask for it (" + why + "), and Claude Code cannot ask a person" + bypassNote(call)})
			}
			v.Decision = policy.Ask
			v.Reason += "; Claude Code's own settings ask for it: " + why + "; if approved it runs outside toolgate sandbox"
			return hook.Answer(client, v)
		default:
			return hook.Answer(client, hook.Verdict{Decision: policy.Deny,
				Reason: v.Reason + "; but Claude Code's own settings refuse it: " + why})
		}
	}
	conf, err := eng.Confinement(&call.Request)
	if err != nil {
		return hook.Fail(client, fmt.Sprintf("confining the shell call: %v", err))
	}
	if !conf.WrapHooks {
		return hook.Answer(client, v)
	}
	self, err := os.Executable()
	if err != nil {
		return hook.Fail(client, fmt.Sprintf("finding the toolgate binary for the sandbox: %v", err))
	}
	var creds []string
	if f.stateDir != "" {
		creds = append(creds, f.stateDir)
	}
	if f.db != "" && !strings.Contains(f.db, "://") {
		creds = append(creds, f.db)
	}
	cache := ""
	if f.stateDir != "" {
		cache = filepath.Join(f.stateDir, shellrun.ProbeCacheFile)
	}
	rep, err := shellrun.ProbeCached(ctx, shellrun.PolicyFor(conf, shellrun.Options{CredentialPaths: creds}), cache)
	switch {
	case err != nil:
		v.Reason += "; not run in the sandbox: " + err.Error()
		return hook.Answer(client, v)
	case rep.FS != "landlock" || rep.Mask != "mountns":
		v.Reason += "; not run in the sandbox: it lacks Landlock or a mount namespace here (" + strings.Join(rep.Missing, "; ") + ")"
		return hook.Answer(client, v)
	}
	wrapped, _, err := hook.WrapInput(client, call.Request.Tool, call.Request.Input, hook.ConfineFor(self, conf, creds))
	if err != nil {
		return hook.Fail(client, fmt.Sprintf("wrapping the shell command in the sandbox: %v", err))
	}
	v.Input = wrapped
	v.Reason += "; runs in toolgate sandbox (" + string(conf.Sandbox) + ")"
	return hook.Answer(client, v)
}

// carried returns in when call's client takes the input of an allow back
// ([hook.CarriesInput]) and the call was judged as it was sent, else nil.
func carried(call *hook.Call, in map[string]any) map[string]any {
	if call.Rewritten || !hook.CarriesInput(call.Client, call.Request.Tool) {
		return nil
	}
	return in
}

// describe is the reason a client shows for a decision.
func describe(d *engine.Decision) string {
	s := fmt.Sprintf("toolgate: %s (%s)", d.Decision, d.Reason)
	if d.Message != "" {
		s += ": " + d.Message
	}
	return s
}

// askServer puts r, one of the call's checks, to a running server and
// waits for its answer. An allow of an input a user hook of the server's
// policy changed is handed back as that input, to a client whose answer
// carries one, and denied to any other: the client must not run the call
// as it was. Any other allow is handed to allow with the call's own input.
func askServer(ctx context.Context, api *apiClient, call *hook.Call, r engine.Request, allow func(*hook.Call, hook.Verdict) hook.Reply) hook.Reply {
	d, err := api.checkWait(ctx, &engine.Request{Tool: r.Tool, Input: r.Input, Cwd: r.Cwd, Project: r.Project, Session: r.Session})
	if err != nil {
		return hook.Fail(call.Client, err.Error())
	}
	if d.Decision == policy.Allow && d.UpdatedInput != nil {
		if call.Rewritten || !hook.CarriesInput(call.Client, call.Request.Tool) {
			return hook.Answer(call.Client, hook.Verdict{Decision: policy.Deny, Reason: describe(d) +
				"; a user hook changed the call's input, and " + string(call.Client) + "'s hook answer cannot carry a changed input"})
		}
		changed := *call
		changed.Request.Input = d.UpdatedInput
		return allow(&changed, hook.Verdict{Decision: policy.Allow, Reason: describe(d), Input: d.UpdatedInput})
	}
	if d.Decision == policy.Allow {
		return allow(call, hook.Verdict{Decision: policy.Allow, Reason: describe(d), Input: carried(call, call.Request.Input)})
	}
	return hook.Answer(call.Client, hook.Verdict{Decision: policy.Deny, Reason: describe(d)})
}

// logStore opens the local event log: --db, else events.db in the state
// directory, chained under the server's key when the state directory
// holds its approver token. It also returns the key the server's gate
// redacts with, so that the hook records as the server would.
func (hf *hookFlags) logStore(ctx context.Context) (eventlog.Store, []byte, error) {
	db := hf.db
	if db == "" {
		if hf.stateDir == "" {
			return nil, nil, errors.New("no event log: give --db or --state-dir")
		}
		if err := os.MkdirAll(hf.stateDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("state directory: %v", err)
		}
		db = filepath.Join(hf.stateDir, "events.db")
	}
	var tokens server.Tokens
	if hf.stateDir != "" {
		tok, err := server.ReadTokenFile(filepath.Join(hf.stateDir, server.ApproverTokenFile))
		switch {
		case err == nil:
			tokens.Approver = tok
		case !errors.Is(err, os.ErrNotExist):
			return nil, nil, fmt.Errorf("approver token: %v", err)
		}
	}
	var chain, logKey []byte
	if tokens.Approver != "" {
		chain, logKey = tokens.ChainKey(), tokens.LogKey()
	}
	if processExits {
		// A commit syncs the write-ahead log with fdatasync(2), as SQLite
		// built for Linux does: the data and the size it was appended to,
		// without the timestamps fsync(2) also waits for. The process
		// exits next, so the switch, which is process-wide, changes no
		// other store.
		_, _ = msqlite.Fdatasync(true)
	}
	store, err := openStore(ctx, db, false, chain)
	if err != nil {
		return nil, nil, err
	}
	return store, logKey, nil
}

// hookWALBytes is how large the local log's write-ahead log may grow before
// a hook copies it into the database file (see [leaveLog]): about thirty
// calls' worth, which the next hook reads in well under a millisecond.
const hookWALBytes = 1 << 20

// leaveLog is done with the log a hook recorded in, its appends committed
// (synced to disk). A hook running as its own process, which exits next,
// leaves a SQLite log open for the exit to close: closing it would copy
// the write-ahead log into the database file and delete it (two syncs),
// and the next hook would create it again (two more), where the append
// itself took one. It trims the write-ahead log instead once it has grown
// past hookWALBytes; a trim that cannot be done now is done by a later
// hook. Anything else, and any store run in-process, is closed.
func leaveLog(ctx context.Context, store eventlog.Store) {
	if s, ok := store.(*sqlite.Store); ok && processExits {
		_ = s.TrimWAL(ctx, hookWALBytes, 100*time.Millisecond)
		return
	}
	store.Close()
}

// hookSession is the session a hook's call is recorded in: the client's,
// else one per client.
func hookSession(call *hook.Call) string {
	if call.Request.Session != "" {
		return call.Request.Session
	}
	return "hook-" + string(call.Client)
}

// record records a before-tool decision the hook made without a server
// in the local log, as the gate records an immediate decision
// ([gate.Gate.Record]): one permission.resolved that carries the call, written
// before the hook answers. The store is opened only here, so a hook that
// puts its calls to a server opens none.
//
// read is the engine's reading of the call (nil when it has none), from
// which the gate tells whether the command must be recorded as markers.
func (hf *hookFlags) record(ctx context.Context, eng *engine.Engine, call *hook.Call, read *engine.Call, d *engine.Decision, actor gate.Actor) error {
	store, logKey, err := hf.logStore(ctx)
	if err != nil {
		return err
	}
	defer leaveLog(ctx, store)
	g, err := gate.New(eng, store, nil, gate.Options{Headless: true, LogKey: logKey})
	if err != nil {
		return err
	}
	req := call.Request
	req.Session = hookSession(call)
	_, err = g.RecordCall(ctx, &req, read, "", d, actor)
	return err
}

// recordAfter records a finished call, with the injection patterns its
// output shows, and returns those patterns. When a server is in use the
// call is reported to it (POST /v1/sessions/{id}/tool-output), so that it
// lands in the server's log; when there is none, or the named server does
// not take it, the hook appends to the local log itself (SQLite allows
// several writers), chained under the server's key when the state
// directory holds its approver token.
func recordAfter(ctx context.Context, call *hook.Call, hf *hookFlags) ([]string, error) {
	session := hookSession(call)
	api, apiErr := hf.agentServer(call)
	var serverErr error
	if api != nil && apiErr == nil {
		patterns, err := api.reportOutput(ctx, session, call)
		if err == nil {
			return patterns, nil
		}
		serverErr = err
	} else if apiErr != nil {
		serverErr = apiErr
	}
	patterns, err := hf.recordAfterLocally(ctx, session, call)
	if err != nil && serverErr != nil {
		return nil, fmt.Errorf("the server: %v; the local log: %v", serverErr, err)
	}
	return patterns, err
}

// recordAfterLocally records a finished call in the local event log as
// the server would ([gate.ReportedDrafts]).
func (hf *hookFlags) recordAfterLocally(ctx context.Context, session string, call *hook.Call) ([]string, error) {
	store, logKey, err := hf.logStore(ctx)
	if err != nil {
		return nil, err
	}
	defer leaveLog(ctx, store)
	drafts, patterns, err := gate.ReportedDrafts(reportedOutput(call), gate.NewRedactor(logKey), time.Now())
	if err != nil {
		return nil, err
	}
	if _, err := store.Append(ctx, session, drafts...); err != nil {
		return nil, err
	}
	return patterns, nil
}

// reportedOutput is what the hook reports of a finished call.
func reportedOutput(call *hook.Call) gate.ReportedOutput {
	return gate.ReportedOutput{Tool: call.ClientTool, Client: string(call.Client), ToolUseID: call.ToolUseID, Output: call.Output}
}

// unrunHook returns the first PreToolUse user hook of d's policy that
// would judge a call of tool, when d does not deny it already. User hooks
// run in the gate, which records each run; an entry point that decides
// with the engine alone runs none, and must not skip a hook that might
// have denied.
func unrunHook(d *engine.Decision, tool string) *policy.Hook {
	if d.Decision == policy.Deny {
		return nil
	}
	for _, h := range d.Hooks {
		if h.Event == policy.HookPreToolUse && h.Matches(tool) {
			return h
		}
	}
	return nil
}

// canAsk reports whether a call's client asks its person when the hook
// answers ask: Claude Code does, except in bypassPermissions mode, where
// it may run the call without asking.
func canAsk(call *hook.Call) bool {
	return hook.CanAsk(call.Client) && call.PermissionMode != string(policy.ModeBypass)
}

// bypassNote says why Claude Code cannot ask, when its mode is the reason.
func bypassNote(call *hook.Call) string {
	if call.Client == hook.ClaudeCode && !canAsk(call) {
		return " in bypassPermissions mode"
	}
	return ""
}
