package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog/spool"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/notify"
	"github.com/toolgate/toolgate/internal/server"
	"github.com/toolgate/toolgate/internal/webui"
	"github.com/toolgate/toolgate/pathres"
	"github.com/toolgate/toolgate/policy"
)

// serveGCPercent is the garbage collector's target for the server when
// $GOGC is not set. A decision allocates a few kilobytes that die at once,
// while what lives on (rules, sessions, pending questions) is small; with
// Go's default of 100 the collector runs so often that it takes about a
// fifth of the server's CPU under load. At 400 the heap may grow to five
// times what is live, a few tens of megabytes.
const serveGCPercent = 400

// tuneGC sets the collector's target for a long-running server, unless the
// user chose one with $GOGC.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
}

// shutdownGrace bounds a graceful shutdown of the server.
const shutdownGrace = 15 * time.Second

func serveCmd() *cobra.Command {
	var (
		pf                 policyFlags
		addr, stateDir, db string
		timeout            time.Duration
		allowRemote        bool
		classifierCmd      []string
		classifierURL      string
		committed          bool
		profiling          bool
		notifyHooks        []string
		notifyArgv         bool
		publicURL          string
		workspace          string
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the permission server: HTTP API, event streams and the approval page",
		Long: `serve runs the HTTP API of docs/api.md on loopback. Agents check calls
with POST /v1/check using the agent token; a person answers the questions
on the web page (open the one-time login link it prints) or with
toolgate approve, which uses the approver token.

The tokens are created on first start in the state directory (--state-dir,
default $XDG_STATE_HOME/toolgate or ~/.local/state/toolgate), mode 0600, and
reused afterwards. The server refuses a non-loopback --addr unless
--allow-remote is given. SIGINT or SIGTERM stops it: pending approvals are
denied with reason approval_cancelled and the event log is closed.

Each session is bound to a workspace when it starts: --workspace (or
--project) for every session, else the one a person sets for the session,
else the project root of the session's first check. A later call whose cwd
is outside that workspace writes outside it. /, system directories and the
home directory are never a workspace: a session that starts there has
none. A session belongs to the agent token that started it; further agent
tokens are the files agent-NAME.token of the state directory.

Notifications of pending approvals go to the webhooks listed in the file
notify of the state directory and in $TOOLGATE_NOTIFY. A webhook URL is a
secret, and the server's command line is readable by every local process
and by agents running ps: --notify is refused unless --notify-insecure-argv
accepts that.`,
		Example: `  # the server, with the approval page, on 127.0.0.1:8765
  toolgate serve

  # every session bound to one workspace, a person given two minutes
  toolgate serve --workspace ~/src/app --timeout 2m`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkListenAddr(addr, allowRemote); err != nil {
				return err
			}
			if timeout <= 0 {
				return usageError("--timeout must be positive, got %s", timeout)
			}
			if stateDir == "" {
				return usageError("no state directory: give --state-dir or set $XDG_STATE_HOME")
			}
			tuneGC()
			tokens, db, layer, err := openState(c, &pf, stateDir, db)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(c.ErrOrStderr(), nil))
			policyFor := engine.FromFiles(pf.managed, pf.user, layer)
			sessions := engine.NewSessions()
			eng, err := engine.New(engine.Options{Policy: policyFor, Project: pf.project, Sessions: sessions, Logger: logger})
			if err != nil {
				return err
			}
			opened, err := openStore(c.Context(), db, false, tokens.ChainKey())
			if err != nil {
				return err
			}
			instance, release, err := server.ClaimInstance(stateDir, db)
			if err != nil {
				opened.Close()
				return err
			}
			defer release()
			// What is decided while the log cannot be written is kept in
			// the state directory and appended once it can.
			store, err := spool.Wrap(opened, filepath.Join(stateDir, server.OutageFile(db, instance)), &spool.Options{Logger: logger})
			if err != nil {
				opened.Close()
				return err
			}
			defer store.Close()
			broker := server.NewBroker(server.BrokerOptions{Timeout: timeout})
			gopts := gate.Options{
				Timeout: timeout, NewID: broker.NewID, LogKey: tokens.LogKey(), Instance: instance,
				Rules: gate.PolicyFiles{User: pf.user, Committed: committed},
			}
			switch {
			case len(classifierCmd) > 0 && classifierURL != "":
				return usageError("give --classifier-command or --classifier-url, not both")
			case len(classifierCmd) > 0:
				gopts.Classifier = &approval.CommandClassifier{Argv: classifierCmd}
			case classifierURL != "":
				gopts.Classifier = &approval.HTTPClassifier{URL: classifierURL}
			}
			g, err := gate.New(eng, store, broker, gopts)
			if err != nil {
				return err
			}
			project := pf.project
			if project != "" {
				project = pathres.Real(project)
			}
			if workspace == "" {
				workspace = project
			} else if !filepath.IsAbs(workspace) {
				return usageError("--workspace %q: give an absolute directory", workspace)
			} else if project != "" && pathres.Real(filepath.Clean(workspace)) != project {
				return usageError("--workspace %s and --project %s differ: give one", workspace, pf.project)
			}
			if project == "" && workspace != "" {
				// GET /v1/policy shows the workspace's policy.
				project = pathres.Real(filepath.Clean(workspace))
			}
			var hosts []string
			if publicURL != "" {
				u, err := url.Parse(publicURL)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return usageError("--public-url %q: want an http or https URL such as https://gate.example.net", publicURL)
				}
				// Requests through it carry its host: accepted as this
				// server's, with any other name refused.
				hosts = append(hosts, u.Host)
			}
			// A webhook URL is a secret, and a command line is not: every
			// local process, and an agent running ps, reads it.
			if len(notifyHooks) > 0 && !notifyArgv {
				return usageError("--notify puts a webhook URL, which is a secret, on the server's command line, where every local process (and an agent that runs ps) can read it: list it in %s or in $%s instead, or give --notify-insecure-argv to accept that",
					filepath.Join(stateDir, NotifyFile), NotifyEnv)
			}
			if len(notifyHooks) > 0 {
				fmt.Fprintf(c.ErrOrStderr(), "warning: the --notify webhook URLs are on the command line, readable by every local process and by agents running ps; list them in %s or in $%s instead\n",
					filepath.Join(stateDir, NotifyFile), NotifyEnv)
			}
			fileHooks, err := readNotifyFile(filepath.Join(stateDir, NotifyFile))
			if err != nil {
				return err
			}
			var hooks []notify.Hook
			for _, h := range notifyEnvHooks(os.Getenv(NotifyEnv)) {
				hook, err := notify.ParseHook(h)
				if err != nil {
					return usageError("$%s: %v", NotifyEnv, err)
				}
				hooks = append(hooks, hook)
			}
			// The commands this server runs (POST /v1/run) inherit its
			// environment: the webhooks, secrets, leave it once read.
			if err := os.Unsetenv(NotifyEnv); err != nil {
				return err
			}
			for _, h := range append(fileHooks, notifyHooks...) {
				hook, err := notify.ParseHook(h)
				if err != nil {
					return usageError("--notify: %v", err)
				}
				hooks = append(hooks, hook)
			}
			if u, err := url.Parse(db); err == nil && isPostgres(db) {
				if _, has := u.User.Password(); has {
					fmt.Fprintf(c.ErrOrStderr(), "warning: the --db connection string holds a password, readable on the command line by every local process and by agents running ps; set $PGPASSWORD or use a .pgpass file instead\n")
				}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			base := "http://" + ln.Addr().String()
			var notifier *notify.Notifier
			if len(hooks) > 0 {
				linkBase := publicURL
				if linkBase == "" {
					linkBase = base
				}
				notifier = notify.New(hooks, notify.NewLinks(nil), linkBase, logger)
			}
			srv, err := server.New(server.Options{
				Notifier: notifier,
				Engine:   eng, Store: store, Sessions: sessions, Broker: broker, Gate: g,
				SessionHeads: filepath.Join(stateDir, server.SessionHeadsFile(db)),
				EndedGrants:  filepath.Join(stateDir, server.EndedGrantsFile(db)),
				Instance:     instance,
				Timeout:      timeout, Tokens: tokens, UI: webui.Handler(), Profiling: profiling,
				Workspace: workspace, Hosts: hosts,
				StateDir: stateDir, CredentialPaths: []string{stateDir, db},
				PolicyFor: func(cwd string) (*policy.Set, string, error) {
					root := project
					if root == "" {
						root, _ = engine.FindRoot(pathres.Real(cwd))
					}
					set, err := policyFor(root)
					return set, root, err
				},
				Logger: logger,
			})
			if err != nil {
				ln.Close()
				return err
			}
			if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !allowRemote && !tcp.IP.IsLoopback() {
				ln.Close()
				return usageError("--addr %s resolved to %s, which is not a loopback address: give 127.0.0.1 or pass --allow-remote", addr, tcp.IP)
			}
			out := c.OutOrStdout()
			fmt.Fprintf(out, "toolgate listening on %s\n", base)
			fmt.Fprintf(out, "  approval page (one-time login link, valid for %d minutes): %s\n", int(server.LoginCodeTTL.Minutes()), srv.LoginLink(base))
			fmt.Fprintf(out, "  agent token:    %s\n", filepath.Join(stateDir, server.AgentTokenFile))
			fmt.Fprintf(out, "  approver token: %s (keep it from agents)\n", filepath.Join(stateDir, server.ApproverTokenFile))
			fmt.Fprintf(out, "  event log:      %s\n", shownDB(db))

			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
			defer cancel()
			serr := srv.Shutdown(sctx)
			if err := <-errc; err != nil {
				return err
			}
			if err := store.Close(); err != nil {
				return fmt.Errorf("close the event log: %w", err)
			}
			fmt.Fprintln(out, "toolgate stopped")
			return serr
		},
	}
	pf.register(c)
	fl := c.Flags()
	fl.StringVar(&addr, "addr", "127.0.0.1:8765", "address to listen on (loopback unless --allow-remote)")
	fl.StringVar(&stateDir, "state-dir", server.DefaultStateDir(), "directory of the tokens and, by default, the event log")
	fl.StringVar(&db, "db", "", "event log: a SQLite file (default events.db in the state directory) or a postgres:// connection string")
	fl.DurationVar(&timeout, "timeout", gate.DefaultTimeout, "how long a person has to answer before the call is denied")
	fl.BoolVar(&allowRemote, "allow-remote", false, "allow listening on an address other machines can reach")
	stringsVar(fl, &classifierCmd, "classifier-command", "auto mode: a program (one --classifier-command per argument) that decides asks first")
	fl.StringVar(&classifierURL, "classifier-url", "", "auto mode: an HTTP endpoint that decides asks first")
	stringsVar(fl, &notifyHooks, "notify", "announce pending approvals to a webhook: URL (generic JSON), slack=URL or ntfy=URL (repeatable). A webhook URL is a secret and every local process can read a command line: list webhooks in the file notify of the state directory or in $"+NotifyEnv+"; --notify needs --notify-insecure-argv")
	fl.BoolVar(&notifyArgv, "notify-insecure-argv", false, "accept --notify webhook URLs on the command line, where every local process and every agent running ps can read them")
	fl.StringVar(&publicURL, "public-url", "", "the server's address as a phone reaches it, for the answer links in notifications (default the listen address)")
	fl.StringVar(&workspace, "workspace", "", "bind every session to this workspace, whatever the cwd of its calls (default: each session's first check's project root)")
	fl.BoolVar(&profiling, "pprof", false, "serve Go's runtime profiles at /debug/pprof/ to the approver token (go tool pprof -http=: with an Authorization header)")
	fl.BoolVar(&committed, "save-project-rules-committed", false, `write "always allow in this project" rules to .toolgate/policy.toml instead of the personal policy.local.toml`)
	return c
}

// openState loads the server's tokens from stateDir and returns them with
// the event log to use (db, else events.db in stateDir) and the command
// line's policy layer, in which the state directory and the log are
// credential paths.
func openState(c *cobra.Command, pf *policyFlags, stateDir, db string) (server.Tokens, string, *policy.File, error) {
	tokens, err := server.LoadTokens(stateDir)
	if err != nil {
		return server.Tokens{}, "", nil, err
	}
	if db == "" {
		db = filepath.Join(stateDir, "events.db")
	}
	layer, err := pf.cliLayer(c)
	if err != nil {
		return server.Tokens{}, "", nil, err
	}
	if err := protectStateDir(layer, stateDir); err != nil {
		return server.Tokens{}, "", nil, err
	}
	if err := protectEventLog(layer, db); err != nil {
		return server.Tokens{}, "", nil, err
	}
	return tokens, db, layer, nil
}

// protectStateDir adds the state directory (tokens and event log) to the
// credential paths of layer, so that an agent's tools cannot read the
// approver token or rewrite the log, wherever --state-dir puts them.
func protectStateDir(layer *policy.File, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return protect(layer, "--state-dir", dir, pathres.Real(abs)+"/**")
}

// protectEventLog makes a SQLite event log outside the state directory a
// credential path too, with its -wal and -shm files: an agent that could
// write it could rewrite the history, and the log is what session settings
// are restored from.
func protectEventLog(layer *policy.File, db string) error {
	if isPostgres(db) {
		return nil
	}
	abs, err := filepath.Abs(db)
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	return protect(layer, "--db", db, filepath.Join(pathres.Real(filepath.Dir(abs)), filepath.Base(abs))+"*")
}

// protect adds pattern, the real path that flag's value names, to the
// credential paths of layer. A path the rule syntax cannot hold is a usage
// error: the server does not start with its secrets unprotected.
func protect(layer *policy.File, flag, value, pattern string) error {
	r, err := policy.ParseRule("Read("+filepath.ToSlash(pattern)+")", policy.Deny, policy.Position{File: flag})
	if err != nil {
		return usageError("%s %s cannot be protected as a credential path (%v): choose a path without glob characters", flag, value, err)
	}
	r.Layer = policy.LayerCLI
	layer.CredentialPaths = append(layer.CredentialPaths, r)
	return nil
}

// checkListenAddr refuses an address that is not on loopback unless
// allowRemote is set.
func checkListenAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError("--addr %q: %v (want HOST:PORT, such as 127.0.0.1:8765)", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	where := host
	if host == "" {
		where = "every interface"
	}
	return usageError("refusing to listen on %s (--addr %s): other machines could reach the server; use a loopback address such as 127.0.0.1:8765, or pass --allow-remote", where, addr)
}

// shownDB is db as it may be printed: a connection string without its
// password.
func shownDB(db string) string {
	if !isPostgres(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "(PostgreSQL)"
	}
	return u.Redacted()
}

// NotifyFile is the file in the state directory that lists webhooks, one
// a line as --notify takes them. Webhook URLs are secrets (an ntfy topic,
// a Slack hook): in this file, which is a credential path for the engine,
// an agent cannot read them, while a --notify flag shows in ps.
const NotifyFile = "notify"

// NotifyEnv is the environment variable that lists webhooks, as --notify
// takes them, separated by white space: a way to give them that keeps
// them off the command line. (The environment of a process is readable
// only by its user, and reading it is a credential read for the engine.)
const NotifyEnv = "TOOLGATE_NOTIFY"

// notifyEnvHooks splits the value of NotifyEnv.
func notifyEnvHooks(v string) []string { return strings.Fields(v) }

// readNotifyFile returns the webhooks listed in path, skipping blank lines
// and # comments; a missing file lists none.
func readNotifyFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the webhooks: %w", err)
	}
	var out []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := notify.ParseHook(line); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, line)
	}
	return out, nil
}
