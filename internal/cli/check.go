package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/risk"
)

// maxRequest bounds one request line in batch mode.
const maxRequest = 16 << 20

func checkCmd() *cobra.Command {
	var pf policyFlags
	var batch bool
	c := &cobra.Command{
		Use:   "check",
		Short: "Decide one tool call read as JSON on stdin",
		Long: `check reads a request such as
  {"tool":"Bash","input":{"command":"git status && rm -rf /"},"cwd":"/abs/dir"}
on stdin and prints one decision as JSON. With --batch it reads JSON Lines
and prints one decision line per request, in order; a bad line gets a deny
with reason invalid_request so the outputs stay aligned. check runs no user
hook: a call a PreToolUse hook of the policy would judge is denied with
reason hook (toolgate serve runs them).

A single request that is not valid (not JSON, no "tool", no absolute
"cwd") is a usage error: the deny is printed and check exits 2.`,
		Example: `  echo '{"tool":"Bash","input":{"command":"git status"},"cwd":"'"$PWD"'"}' | toolgate check

  # many at once, one JSON object per line
  toolgate check --batch < requests.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			eng, err := pf.engine(c)
			if err != nil {
				return err
			}
			out := json.NewEncoder(c.OutOrStdout())
			out.SetEscapeHTML(false)
			if batch {
				return checkBatch(c, eng, out)
			}
			req, err := readRequest(c)
			if err != nil {
				return err
			}
			d := checkOne(c, eng, req)
			if err := out.Encode(d); err != nil {
				return err
			}
			if d.Reason == engine.ReasonInvalidRequest {
				// The deny is printed for whoever reads the decision; the
				// request itself was wrong.
				return usageError("%s", d.Message)
			}
			return nil
		},
	}
	pf.register(c)
	c.Flags().BoolVar(&batch, "batch", false, "read JSON Lines, write one decision line per request")
	return c
}

// readRequest reads one request from standard input: at most maxRequest
// bytes, exactly one JSON value, no unknown field. Bad input is a usage
// error (exit 2).
func readRequest(c *cobra.Command) (*engine.Request, error) {
	data, err := io.ReadAll(io.LimitReader(c.InOrStdin(), maxRequest+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRequest {
		return nil, usageError("request is larger than %d bytes", maxRequest)
	}
	req, err := engine.DecodeRequest(data)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return req, nil
}

func checkBatch(c *cobra.Command, eng *engine.Engine, out *json.Encoder) error {
	sc := bufio.NewScanner(c.InOrStdin())
	sc.Buffer(make([]byte, 64<<10), maxRequest)
	line := 0
	for sc.Scan() {
		line++
		req, err := engine.DecodeRequest(sc.Bytes())
		var d *engine.Decision
		if err != nil {
			d = &engine.Decision{Decision: policy.Deny, Reason: engine.ReasonInvalidRequest, Risk: risk.Execute,
				Source: engine.SourceTool, Message: fmt.Sprintf("line %d: %v", line, err)}
		} else {
			d = checkOne(c, eng, req)
		}
		if err := out.Encode(d); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return usageError("line %d: %v", line+1, err)
	}
	return nil
}

// checkOne decides req with the engine alone. A call a PreToolUse user
// hook would judge is denied: check runs no hook.
func checkOne(c *cobra.Command, eng *engine.Engine, req *engine.Request) *engine.Decision {
	d := eng.Check(c.Context(), req)
	if h := unrunHook(d, req.Tool); h != nil {
		return &engine.Decision{Decision: policy.Deny, Reason: engine.ReasonHook, Risk: d.Risk, Source: engine.SourceHook,
			RuleOrigin: h.Origin(), PolicyVersion: d.PolicyVersion,
			Message: fmt.Sprintf("the policy would decide %s (%s), but its %s would judge the call and toolgate check runs no hook: put the call to toolgate serve", d.Decision, d.Reason, h)}
	}
	return d
}
