package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/internal/gate"
)

// MaxToolOutput is the most bytes of output an agent may report in one
// POST /v1/sessions/{id}/tool-output; a larger one is refused with 413.
// An agent with more sends the output's start and its whole length as
// output_bytes. JSON-escaped, it still fits in [MaxBody].
const MaxToolOutput = 128 << 10

// ToolOutputReport is the body of POST /v1/sessions/{id}/tool-output: a
// tool call's output as the agent's client reports it after the call ran.
type ToolOutputReport struct {
	ToolUseID   string `json:"tool_use_id,omitempty"`
	Tool        string `json:"tool"`
	Client      string `json:"client,omitempty"`
	Output      string `json:"output"`
	OutputBytes int    `json:"output_bytes,omitempty"`
	ExitCode    *int   `json:"exit_code,omitempty"`
}

// ToolOutputResponse answers a [ToolOutputReport]: the classes of prompt
// injection found in the output, each recorded as injection.suspected.
type ToolOutputResponse struct {
	Injection []string `json:"injection"`
}

// handleToolOutput: POST /v1/sessions/{id}/tool-output. The agent
// reports what its client says a tool's output was; the server records
// it as the hook records it in a local log ([gate.ReportedDrafts]):
// tool.completed with a redacted preview and injection.suspected per
// class found. It decides nothing. The session rule is that of
// POST /v1/sessions/{id}/events.
func (s *Server) handleToolOutput(w http.ResponseWriter, r *http.Request, p principal) error {
	session, err := pathID(r, "session id")
	if err != nil {
		return err
	}
	var body ToolOutputReport
	if err := decodeBody(w, r, &body); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(body.Tool) == "":
		return errorf(http.StatusBadRequest, `field "tool" is required`)
	case len(body.Tool) > 200:
		return errorf(http.StatusBadRequest, `field "tool" is %d bytes; at most 200`, len(body.Tool))
	case len(body.Client) > 200:
		return errorf(http.StatusBadRequest, `field "client" is %d bytes; at most 200`, len(body.Client))
	case len(body.ToolUseID) > 200:
		return errorf(http.StatusBadRequest, `field "tool_use_id" is %d bytes; at most 200`, len(body.ToolUseID))
	case len(body.Output) > MaxToolOutput:
		return errorf(http.StatusRequestEntityTooLarge, `field "output" is %d bytes; an agent may report at most %d (%d KiB): send the start and the whole length as "output_bytes"`,
			len(body.Output), MaxToolOutput, MaxToolOutput>>10)
	case body.OutputBytes < 0:
		return errorf(http.StatusBadRequest, `field "output_bytes" is negative`)
	}
	drafts, classes, err := gate.ReportedDrafts(gate.ReportedOutput{
		Tool: body.Tool, Client: body.Client, ToolUseID: body.ToolUseID,
		Output: []byte(body.Output), OutputBytes: body.OutputBytes, ExitCode: body.ExitCode,
	}, s.gate.Redactor(), s.clock())
	if err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	if _, err := s.claim(r.Context(), session, p, "", ""); err != nil {
		return err
	}
	ctx, cancel := s.appendContext()
	defer cancel()
	if _, err := s.store.Append(ctx, session, drafts...); err != nil {
		return fmt.Errorf("write the event log: %w", err)
	}
	if classes == nil {
		classes = []string{}
	}
	writeJSON(w, http.StatusOK, ToolOutputResponse{Injection: classes})
	return nil
}
