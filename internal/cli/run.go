package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/internal/tools"
	"github.com/toolgate/toolgate/policy"
)

// deniedExit is the exit status of a call that was not allowed, as a
// shell exits for a command it cannot execute.
const deniedExit = 126

// runCmd is `toolgate run`: decide one tool call and run it.
func runCmd() *cobra.Command {
	var (
		pf              policyFlags
		stateDir, db    string
		session, tty    string
		serverURL       string
		tokenFile       string
		approvalTimeout time.Duration
	)
	c := &cobra.Command{
		Use:   "run",
		Short: "Decide one tool call read as JSON on stdin and run it",
		Long: `run reads a request as check does, such as
  {"tool":"Bash","input":{"command":"make test"},"cwd":"/abs/dir"}
decides it through the whole gate, and runs it when it is allowed: a shell
command runs under the operating system's sandbox as the policy and the
session set it (read-only, workspace-write or danger-full-access; network on
or off), in its own process group, killed with everything it started when it
ends, times out ("timeout" in milliseconds, default 2 minutes) or toolgate is
interrupted. Its output is printed as it comes and run exits with its status.

When a person must answer, the question is put on the terminal (/dev/tty);
without a terminal the call is denied. A call that is not allowed exits 126
with the reason on stderr; a request that is not valid (no tool, no
absolute cwd) exits 2. Every step is recorded in the event log (events.db
in the state directory, or --db), each run event with the sandbox's report.

With "run_in_background": true the command keeps running after run exits,
its output in the state directory; toolgate ps lists such processes and
toolgate kill stops one.

With --server (or $TOOLGATE_SERVER) the call goes to that toolgate serve
with the agent token (POST /v1/run): the server decides it, puts a question
on its approval page, and runs the call itself, as its own user, in the
session's workspace; run prints the output it returns and exits as above.
The flags that set the policy, the log and the terminal are the server's
then, not run's. The built-in tools (Read, Write, Edit, LS, Grep,
apply_patch, WebFetch and their aliases) run in toolgate itself, confined to
the workspace; their full output is kept as an artifact (toolgate artifact).`,
		Example: `  echo '{"tool":"Bash","input":{"command":"go test ./..."},"cwd":"'$PWD'"}' | toolgate run --allow 'Bash(go test:*)'`,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			req, err := readRequest(c)
			if err != nil {
				return err
			}
			tool, _ := policy.Canonical(req.Tool)
			if approvalTimeout <= 0 {
				return usageError("--approval-timeout must be positive, got %s", approvalTimeout)
			}
			if req.Session == "" {
				req.Session = session
			}
			if serverURL != "" {
				a, err := agentServer(serverURL, stateDir, tokenFile, false)
				if err != nil {
					return err
				}
				return runRemote(c, a, req)
			}
			if stateDir == "" {
				return usageError("no state directory: give --state-dir or set $XDG_STATE_HOME")
			}
			tokens, db, layer, err := openState(c, &pf, stateDir, db)
			if err != nil {
				return err
			}
			eng, err := engine.New(engine.Options{Policy: engine.FromFiles(pf.managed, pf.user, layer), Project: pf.project})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			store, err := openStore(ctx, db, false, tokens.ChainKey())
			if err != nil {
				return err
			}
			defer store.Close()
			var approver approval.Approver
			if term, closeTerm := openTerminal(tty); term != nil {
				defer closeTerm()
				approver = term
			}
			g, err := gate.New(eng, store, approver, gate.Options{Timeout: approvalTimeout, LogKey: tokens.LogKey()})
			if err != nil {
				return err
			}
			opts := shellrun.Options{
				Stdout: c.OutOrStdout(), Stderr: c.ErrOrStderr(), KillEscapees: true, StateDir: stateDir,
				CredentialPaths: []string{stateDir, db},
			}
			var (
				d   *engine.Decision
				res gate.Result
			)
			// The built-in tools (read, write, edit, list, search, patch,
			// fetch) run in this process; their output is kept as
			// artifacts in the state directory.
			d, res, err = tools.RunCall(ctx, g, eng, req, "", opts,
				tools.Options{StateDir: stateDir, Workspace: pf.project, Mode: policy.Mode(pf.mode)})
			if tool != policy.ToolShell && err == nil && d != nil && d.Decision == policy.Allow {
				printOutput(c.OutOrStdout(), string(res.Stdout))
				printOutput(c.ErrOrStderr(), string(res.Stderr))
			}
			switch {
			case d == nil || d.Decision != policy.Allow:
				msg := "denied"
				if d != nil {
					msg = fmt.Sprintf("denied (%s): %s", d.Reason, d.Message)
				}
				if err != nil {
					msg += " (" + err.Error() + ")"
				}
				if d != nil && d.Reason == engine.ReasonInvalidRequest {
					return &exitError{2, errors.New(msg)} // the request itself is wrong
				}
				return &exitError{deniedExit, errors.New(msg)}
			case err != nil:
				code := res.ExitCode
				if code == 0 {
					code = 1
				}
				return &exitError{code, err}
			case res.ExitCode != 0:
				return silentExit(res.ExitCode)
			}
			return nil
		},
	}
	pf.register(c)
	fl := c.Flags()
	fl.StringVar(&stateDir, "state-dir", server.DefaultStateDir(), "directory of the tokens, the background processes and, by default, the event log")
	fl.StringVar(&db, "db", "", "event log: a SQLite file (default events.db in the state directory) or a postgres:// connection string")
	fl.StringVar(&session, "session", "cli", "the session the call is recorded in, when the request names none")
	fl.DurationVar(&approvalTimeout, "approval-timeout", gate.DefaultTimeout, "how long to wait for a person's answer before denying")
	fl.StringVar(&tty, "tty", "/dev/tty", "the terminal a person answers on")
	fl.StringVar(&serverURL, "server", os.Getenv("TOOLGATE_SERVER"), "URL of a running toolgate serve to decide and run the call (default $TOOLGATE_SERVER; none: decide and run here)")
	fl.StringVar(&tokenFile, "token-file", "", "agent token file for --server (default $TOOLGATE_TOKEN, else agent.token in the state directory)")
	return c
}

// printOutput writes a call's output that toolgate holds (a built-in
// tool's, or what a server returned) to w. When w is a terminal, control
// characters but newline and tab are escaped: the output comes from a
// file, a web page or a program the terminal's person never gave the
// terminal to, and must not move the cursor, set the clipboard or answer
// the terminal's queries.
func printOutput(w io.Writer, out string) {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			cells := strings.Split(l, "\t")
			for j, c := range cells {
				cells[j] = termtext.Escape(c)
			}
			lines[i] = strings.Join(cells, "\t")
		}
		out = strings.Join(lines, "\n")
	}
	_, _ = io.WriteString(w, out)
}

// openTerminal returns an approver on the terminal at path and what
// closes it, or nil when there is no terminal to ask on.
func openTerminal(path string) (*approval.Terminal, func()) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil
	}
	if !isTerminal(f) {
		f.Close()
		return nil, nil
	}
	term := &approval.Terminal{In: f, Out: f}
	return term, func() { term.Close(); f.Close() }
}

// psCmd is `toolgate ps`: list background processes.
func psCmd() *cobra.Command {
	var stateDir, session string
	c := &cobra.Command{
		Use:   "ps",
		Short: "List the background processes that toolgate run started",
		Long: `ps lists the processes toolgate run started in the background and that
are still running, with their id, session, process id, start time and
command. toolgate kill ID stops one.`,
		Example: `  toolgate ps
  toolgate ps --session s1`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			procs, err := shellrun.List(stateDir, session)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPID\tSTATUS\tSTARTED\tSESSION\tCOMMAND")
			for _, p := range procs {
				status := "exited"
				if p.Running {
					status = "running"
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", p.ID, p.PID, status, p.Started.Local().Format(time.DateTime),
					termtext.Escape(p.Session), termtext.Escape(oneLineCmd(p.Command)))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVar(&stateDir, "state-dir", server.DefaultStateDir(), "the state directory toolgate run kept them in")
	c.Flags().StringVar(&session, "session", "", "list only this session's processes")
	return c
}

func oneLineCmd(s string) string {
	r := []rune(s)
	for i, ch := range r {
		if ch == '\n' || ch == '\t' {
			r[i] = ' '
		}
	}
	if len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return string(r)
}

// killCmd is `toolgate kill ID`: stop a background process.
func killCmd() *cobra.Command {
	var stateDir string
	var grace time.Duration
	c := &cobra.Command{
		Use:   "kill ID",
		Short: "Stop a background process that toolgate run started, with its whole process group",
		Long: `kill sends SIGTERM to the process group of a background process toolgate
run started (its ID as toolgate ps lists it) and, if it is still running
after --grace, SIGKILL.`,
		Example: `  toolgate kill bg_3c9d
  toolgate kill bg_3c9d --grace 10s`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := shellrun.Kill(stateDir, args[0], grace)
			if errors.Is(err, shellrun.ErrNoProcess) {
				return usageError("%v (toolgate ps lists them)", err)
			}
			if err != nil {
				return err
			}
			state := "stopped"
			if !p.Running {
				state = "had already exited; removed"
			}
			fmt.Fprintf(c.OutOrStdout(), "%s %s; its output stays in %s\n", p.ID, state, p.Log)
			return nil
		},
	}
	c.Flags().StringVar(&stateDir, "state-dir", server.DefaultStateDir(), "the state directory toolgate run kept them in")
	c.Flags().DurationVar(&grace, "grace", 2*time.Second, "how long to wait after SIGTERM before SIGKILL")
	return c
}
