package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/internal/sandbox"
	"github.com/toolgate/toolgate/internal/server"
)

// silentExit ends the command line with a code and no message: the
// confined program's own exit status.
type silentExit int

func (e silentExit) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// sandboxCmd is `toolgate sandbox`: run one program confined.
func sandboxCmd() *cobra.Command {
	var (
		mode, workspace       string
		network, report       bool
		roots, creds, require []string
	)
	cmd := &cobra.Command{
		Use:   "sandbox [flags] -- PROGRAM [ARGS...]",
		Short: "Run one program under the operating system's sandbox",
		Long: `Run one program under the operating system's sandbox and exit with its status.

The program may write only under the workspace, the writable roots and a
private temporary directory (TMPDIR, removed afterwards); with --sandbox
read-only, only the private temporary directory. Reads are allowed, except
credential files, which are masked: the workspace's .env files and keys,
~/.ssh, ~/.aws, ~/.config/gcloud, ~/.netrc, ~/.docker/config.json, ~/.kube,
~/.gnupg, toolgate's state directory and every --credential-path. With the
network off (the default), TCP, UDP and AF_UNIX sockets are refused.

Linux confines the program with Landlock, a mount and a network namespace and
seccomp. A mechanism the system refuses is named on stderr, once, and the
program runs with the others; --report prints which are active as JSON.
The program runs in its own process group: SIGINT and SIGTERM are passed on
to the group, and whatever is left of it when the program exits is killed,
with the processes that left the group (setsid, a double fork).

Exit status: the program's, 128+N when signal N ended it; 126 when the
sandbox could not be set up, 127 when the program was not found, 2 for bad
flags.`,
		Example: `  toolgate sandbox -- make test
  toolgate sandbox --network --writable-root ~/.cache/go-build -- go test ./...
  toolgate sandbox --sandbox read-only --report -- python3 audit.py`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("no program given: toolgate sandbox [flags] -- PROGRAM [ARGS...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := sandbox.ParseMode(mode)
			if err != nil {
				return usageError("--sandbox: %v", err)
			}
			if workspace == "" {
				if workspace, err = os.Getwd(); err != nil {
					return usageError("no workspace: give --workspace (%v)", err)
				}
			}
			p := sandbox.Policy{Mode: m, Network: network, Workspace: workspace, WritableRoots: roots,
				CredentialPaths: append([]string{server.DefaultStateDir()}, creds...)}
			c := sandbox.Command(cmd.Context(), p, args[0], args[1:]...)
			// The program's stderr and toolgate's notes share a writer; one
			// that is not a file is copied to from another goroutine.
			stderr := cmd.ErrOrStderr()
			if _, ok := stderr.(*os.File); !ok {
				stderr = &lockedWriter{w: stderr}
			}
			c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), stderr
			c.Dir, _ = os.Getwd()
			c.KillEscapees = true
			c.Require = require

			sigs := make(chan os.Signal, 4)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
			defer signal.Stop(sigs)
			rep, err := c.Start()
			if err != nil {
				var se *sandbox.StartError
				switch {
				case errors.Is(err, sandbox.ErrPolicy):
					return usageError("%v", err)
				case errors.As(err, &se):
					return &exitError{se.Code, err}
				}
				return &exitError{126, err}
			}
			for _, m := range rep.Missing {
				fmt.Fprintln(stderr, "toolgate sandbox: missing protection:", m)
			}
			if report {
				b, _ := json.Marshal(rep)
				fmt.Fprintf(stderr, "toolgate sandbox: %s\n", b)
			}
			done := make(chan struct{})
			go func() {
				for {
					select {
					case s := <-sigs:
						_ = c.Signal(s.(syscall.Signal))
					case <-done:
						return
					}
				}
			}()
			code, err := c.Wait()
			close(done)
			if err != nil && cmd.Context().Err() == nil {
				return &exitError{126, err}
			}
			if code != 0 {
				return silentExit(code)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	fl.StringVar(&mode, "sandbox", string(sandbox.WorkspaceWrite), "what the program may write: read-only or workspace-write")
	fl.BoolVar(&network, "network", false, "allow the network")
	fl.StringVar(&workspace, "workspace", "", "the directory the program may write (default: the current directory)")
	stringsVar(fl, &roots, "writable-root", "a further directory the program may write (repeatable)")
	stringsVar(fl, &creds, "credential-path", "a further file or directory to mask (repeatable)")
	fl.BoolVar(&report, "report", false, "print the active mechanisms as JSON on stderr")
	stringsVar(fl, &require, "require", "a mechanism the program must not run without: landlock or mountns (repeatable); when it is missing nothing runs (exit 126)")
	return cmd
}
