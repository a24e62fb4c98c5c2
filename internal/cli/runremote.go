package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/server"
)

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
