package cli

import (
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/gate"
	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/internal/mcpproxy"
	"github.com/toolgate/toolgate/internal/server"
)

func mcpCmd() *cobra.Command {
	var (
		pf                   policyFlags
		name, stateDir, db   string
		session, cwd         string
		serverURL, tokenFile string
		upstreamURL          string
		trusted              bool
	)
	c := &cobra.Command{
		Use:   "mcp --name SERVER [flags] {--url URL | -- COMMAND [ARGS...]}",
		Short: "Serve MCP on stdio in front of an MCP server, gating every tool call",
		Long: `mcp takes an MCP server's place in an agent's configuration: it serves MCP on
its standard input and output, starts the real server (COMMAND ARGS) as a child
over stdio (or, with --url, speaks streamable HTTP to a server at URL), and
forwards to it. Every tools/call is decided as the tool
mcp__SERVER__TOOL with the call's arguments as input, so rules such as
mcp__github__create_issue(repo:myorg/*) apply; arguments that name paths
(path, paths, file_path, source, destination, file, directory, a file:// uri)
are judged as file paths, so reading .env through the server is a credential
read, and a string under any other name that looks like a path (absolute, or
starting with ~, ./ or ../) is judged as a read.
tools/list hides what the mode does not offer (plan mode: read-only tools).

The server's annotations (readOnlyHint, destructiveHint, openWorldHint) count
only for a trusted server: one named in trusted_mcp_servers or given
--trusted. An untrusted server's calls ask unless an allow rule names the
tool. A refused call returns a tool error with the reason. A call that needs
a person goes to a running toolgate serve when --server or $TOOLGATE_SERVER
is set. With a server, the proxy's own policy (its rule flags, --mode,
--trusted and the policy files) is applied first: a call it denies is
denied and reported to the server, whose log records it (agent_denied);
every other call is the server's to decide and record. Without a server,
when the MCP client declared the elicitation capability, the person is
asked through the client (an allow/deny form showing the tool, its
arguments, why it asks and the risk): allow runs the call once, and
decline, dismissing the form, an error or no answer within the approval
timeout (30s) deny it; the answer is recorded as the user's with channel
mcp-elicitation. The answer comes from the MCP client, which runs beside
the agent, so it is as trustworthy as that client's own permission prompt:
set mcp_elicitation = false in a policy file to never ask through the
client. Without elicitation the call is denied. Every decision is recorded
in the event log.`,
		Example: `  toolgate mcp --name fs --trusted -- npx -y @modelcontextprotocol/server-filesystem .`,
		Args:    cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if name == "" {
				return usageError("--name is required: the server's name in rules (mcp__NAME__TOOL)")
			}
			var upstream mcp.Transport
			switch {
			case upstreamURL != "" && len(args) > 0:
				return usageError("give either --url or a command after --, not both")
			case upstreamURL != "":
				u, err := url.Parse(upstreamURL)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return usageError("--url %q is not an http:// or https:// URL", upstreamURL)
				}
				upstream = &mcp.StreamableClientTransport{Endpoint: upstreamURL}
			case len(args) == 0:
				return usageError("no server: give the command that starts it after --, or --url")
			}
			if stateDir == "" {
				return usageError("no state directory: give --state-dir or set $XDG_STATE_HOME")
			}
			if cwd == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				cwd = wd
			}
			abs, err := filepath.Abs(cwd)
			if err != nil {
				return usageError("--cwd: %v", err)
			}
			tokens, db, layer, err := openState(c, &pf, stateDir, db)
			if err != nil {
				return err
			}
			eng, err := engine.New(engine.Options{Policy: engine.FromFiles(pf.managed, pf.user, layer), Project: pf.project})
			if err != nil {
				return err
			}
			ctx := c.Context()
			store, err := openStore(ctx, db, false, tokens.ChainKey())
			if err != nil {
				return err
			}
			defer store.Close()
			g, err := gate.New(eng, store, nil, gate.Options{Headless: true, LogKey: tokens.LogKey()})
			if err != nil {
				return err
			}
			opts := mcpproxy.Options{Name: name, Trusted: trusted, Gate: g, Engine: eng, Cwd: abs, Session: session}
			if !c.Flags().Changed("server") {
				// A client that starts the proxy hands it the environment
				// a project may set; the server deciding its calls must
				// not come from there.
				home, _ := os.UserHomeDir()
				for _, cl := range []hook.Client{hook.ClaudeCode, hook.Gemini} {
					if why := projectHookEnv(cl, abs, home); why != "" {
						return usageError("the toolgate server and token in the environment may come from the project, not from you: %s; name the server with --server, or remove the setting from the project", why)
					}
				}
			}
			if serverURL != "" {
				api, err := agentServer(serverURL, stateDir, tokenFile, false)
				if err != nil {
					return err
				}
				opts.Remote = apiDecider{api}
			}
			if upstream == nil {
				child := exec.CommandContext(ctx, args[0], args[1:]...)
				child.Stderr = c.ErrOrStderr()
				upstream = &mcp.CommandTransport{Command: child}
			}
			p, err := mcpproxy.New(ctx, upstream, opts)
			if err != nil {
				return err
			}
			defer p.Close()
			err = p.Serve(ctx, &mcp.IOTransport{Reader: io.NopCloser(c.InOrStdin()), Writer: nopWriteCloser{c.OutOrStdout()}})
			if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
				return err
			}
			return nil
		},
	}
	pf.register(c)
	fl := c.Flags()
	fl.SetInterspersed(false)
	fl.StringVar(&name, "name", "", "the server's name in rules: its tools are mcp__NAME__TOOL (required)")
	fl.StringVar(&upstreamURL, "url", "", "the server's streamable HTTP endpoint, instead of a command")
	fl.BoolVar(&trusted, "trusted", false, "trust the server's annotations, as trusted_mcp_servers does")
	fl.StringVar(&stateDir, "state-dir", server.DefaultStateDir(), "directory of the tokens and, by default, the event log")
	fl.StringVar(&db, "db", "", "event log: a SQLite file (default events.db in the state directory) or a postgres:// connection string")
	fl.StringVar(&session, "session", "mcp", "the session the calls are recorded in")
	fl.StringVar(&cwd, "cwd", "", "the directory the calls are judged from (default the current directory)")
	fl.StringVar(&serverURL, "server", os.Getenv("TOOLGATE_SERVER"), "a running toolgate serve that decides the calls and asks a person (default $TOOLGATE_SERVER)")
	fl.StringVar(&tokenFile, "token-file", "", "agent token file for --server (default $TOOLGATE_TOKEN, else agent.token in the state directory)")
	return c
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
