package cli

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/server"
)

// agentClient returns an API client for the server at base with the agent
// token read from tokenFile, or agent.token in stateDir.
func agentClient(base, stateDir, tokenFile string) (*apiClient, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError("--server %q is not an http:// or https:// URL", base)
	}
	path := tokenFile
	if path == "" {
		if stateDir == "" {
			return nil, usageError("no agent token: give --token-file or --state-dir")
		}
		path = filepath.Join(stateDir, server.AgentTokenFile)
	}
	tok, err := server.ReadTokenFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usageError("no agent token at %s: start toolgate serve first, or give --token-file", path)
		}
		return nil, err
	}
	return &apiClient{base: strings.TrimSuffix(u.String(), "/"), token: tok, http: &http.Client{}}, nil
}

// runRemote has the server at a decide and run req (POST /v1/run), prints
// the output and returns the exit status as run does: the program's, or
// 126 with the reason when the call was not allowed.
func runRemote(c *cobra.Command, a *apiClient, req *engine.Request) error {
	var resp server.RunResponse
	if err := a.do(c.Context(), "POST", "/v1/run", req, &resp); err != nil {
		// No answer is no allow: nothing ran here.
		return &exitError{deniedExit, fmt.Errorf("denied: %w", err)}
	}
	if resp.Decision != "allow" {
		return &exitError{deniedExit, fmt.Errorf("denied (%s): %s", resp.Reason, resp.Message)}
	}
	printOutput(c.OutOrStdout(), resp.Stdout)
	printOutput(c.ErrOrStderr(), resp.Stderr)
	for _, cut := range []struct {
		name string
		cut  bool
	}{{"output", resp.StdoutTruncated}, {"error output", resp.StderrTruncated}} {
		if cut.cut {
			fmt.Fprintf(c.ErrOrStderr(), "toolgate: the server returned only the first %d bytes of the %s\n", server.MaxRunOutput, cut.name)
		}
	}
	code := resp.ExitCode
	switch {
	case resp.Error != "":
		if code == 0 {
			code = 1
		}
		return &exitError{code, errors.New(resp.Error)}
	case code != 0:
		return silentExit(code)
	}
	return nil
}
