package gate

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// ReportedOutput is a tool call's output as an agent's client reports it
// after the call ran (a hook's PostToolUse): what the client says, not
// what the gate saw run. It decides nothing.
type ReportedOutput struct {
	// Tool is the tool's name as the client gives it.
	Tool string
	// Client names the agent client, when known.
	Client string
	// ToolUseID is the client's id of the call, when it sends one. It is
	// recorded as toolUseId, never as the gate's toolCallId.
	ToolUseID string
	// Output is the output, or its start when OutputBytes is larger.
	Output []byte
	// OutputBytes is the output's whole length; below len(Output) it is
	// len(Output).
	OutputBytes int
	// ExitCode is the exit code the client reports, when it reports one.
	ExitCode *int
}

// ReportedDrafts returns the events that record out in a session's log,
// timed now: a tool.completed with a redacted preview of the output
// ([Preview]) and one injection.suspected per class of prompt injection
// the output shows ([InjectionEvents]), every secret redacted by r as the
// gate redacts what it records. It also returns those classes, in the
// order of the events.
func ReportedDrafts(out ReportedOutput, r *Redactor, now time.Time) ([]eventlog.Draft, []string, error) {
	preview, truncated := Preview(out.Output)
	size := max(out.OutputBytes, len(out.Output))
	completed := map[string]any{
		"tool":            out.Tool,
		"outputBytes":     size,
		"stdoutPreview":   preview,
		"stdoutTruncated": truncated || size > len(out.Output),
	}
	if out.Client != "" {
		completed["client"] = out.Client
	}
	if out.ToolUseID != "" {
		completed["toolUseId"] = out.ToolUseID
	}
	if out.ExitCode != nil {
		completed["exitCode"] = *out.ExitCode
	}
	payloads := []struct {
		typ eventlog.Type
		v   any
	}{{eventlog.TypeToolCompleted, completed}}
	var classes []string
	for _, ev := range InjectionEvents("", out.Output, nil) {
		classes = append(classes, string(ev.Class))
		payloads = append(payloads, struct {
			typ eventlog.Type
			v   any
		}{eventlog.TypeInjectionSuspected, struct {
			InjectionSuspected
			ToolUseID string `json:"toolUseId,omitempty"`
			Tool      string `json:"tool"`
		}{ev, out.ToolUseID, out.Tool}})
	}
	drafts := make([]eventlog.Draft, len(payloads))
	for i, p := range payloads {
		raw, err := json.Marshal(p.v)
		if err == nil {
			raw, err = r.Payload(raw)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("gate: encode %s: %w", p.typ, err)
		}
		drafts[i] = eventlog.Draft{Time: now, Type: p.typ, Payload: raw}
	}
	return drafts, classes, nil
}
