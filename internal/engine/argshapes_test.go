package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestArgumentNumbersAndNesting decides requests as DecodeRequest reads
// them (numbers kept as their text), with the spellings of numbers that a
// float64 cannot hold or that look like something else (1e400, -0, 1.0,
// 30 digits) and values nested thousands of levels deep. A number is a
// number whatever its spelling: the call is judged on its command or path
// alone, so rm under an allow rule for ls is never allowed, and a read of
// .env stays a credential read. A value nested deeper than the decoder
// accepts is refused before the engine.
func TestArgumentNumbersAndNesting(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t, layers{project: "[permissions]\nallow = ['Bash(ls:*)', 'Read(src/**)', 'Edit(src/**)']"})
	nest := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	for _, c := range []struct {
		name, tool, input string
		want              policy.Decision
		atLeast           bool // ask or deny
		reason            Reason
	}{
		{name: "timeout 1e400 with ls", tool: "Bash", input: `{"command":"ls","timeout":1e400}`, want: policy.Allow},
		{name: "timeout 1e400 with rm", tool: "Bash", input: `{"command":"rm -rf src","timeout":1e400}`, want: policy.Ask, atLeast: true},
		{name: "timeout -0", tool: "Bash", input: `{"command":"ls","timeout":-0}`, want: policy.Allow},
		{name: "timeout 1.0 with rm", tool: "Bash", input: `{"command":"rm -rf src","timeout":1.0}`, want: policy.Ask, atLeast: true},
		{name: "timeout of 30 digits", tool: "Bash", input: `{"command":"ls","timeout":123456789012345678901234567890}`, want: policy.Allow},
		{name: "timeout as a string", tool: "Bash", input: `{"command":"ls","timeout":"1e400"}`, want: policy.Deny, reason: ReasonInvalidArguments},
		{name: "read offset 1e400", tool: "Read", input: `{"file_path":"src/main.go","offset":1e400,"limit":-0}`, want: policy.Allow},
		{name: "read .env offset 1.0", tool: "Read", input: `{"file_path":".env","offset":1.0}`, want: policy.Deny, reason: ReasonCredential},
		{name: "read .env offset -1e-400", tool: "Read", input: `{"file_path":".env","offset":-1e-400}`, want: policy.Deny, reason: ReasonCredential},
		{name: "rm beside a deep unknown field", tool: "Bash", input: `{"command":"rm -rf src","x":` + nest(5000) + `}`, want: policy.Ask, atLeast: true},
		{name: "ls beside a deep unknown field", tool: "Bash", input: `{"command":"ls","x":` + nest(5000) + `}`, want: policy.Allow},
		{name: "deep edits with a protected path", tool: "Edit", input: `{"file_path":"src/main.go","notebook_path":".git/config","edits":` + nest(5000) + `}`, want: policy.Ask, atLeast: true},
		{name: "deep argv word", tool: "exec_command", input: `{"command":["ls",` + nest(5000) + `]}`, want: policy.Deny, reason: ReasonInvalidArguments},
		{name: "deep MCP argument", tool: "mcp__fs__read", input: `{"q":` + nest(5000) + `,"path":".env"}`, want: policy.Deny, reason: ReasonCredential},
		{name: "nested past the decoder's limit", tool: "Bash", input: `{"command":"ls","x":` + nest(20000) + `}`, want: policy.Deny, reason: ReasonInvalidRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := `{"tool":"` + c.tool + `","input":` + c.input + `,"cwd":"` + w.project + `"}`
			req, err := DecodeRequest([]byte(raw))
			var d *Decision
			if err != nil {
				// What check answers for a request that does not decode.
				d = &Decision{Decision: policy.Deny, Reason: ReasonInvalidRequest, Message: err.Error()}
			} else {
				d = e.Check(context.Background(), req)
			}
			ok := d.Decision == c.want || c.atLeast && d.Decision > c.want
			if ok && c.reason != "" && d.Reason != c.reason {
				ok = false
			}
			if !ok {
				t.Fatalf("got %s (%s: %.200s), want %s%s %s", d.Decision, d.Reason, d.Message, c.want, map[bool]string{true: "+"}[c.atLeast], c.reason)
			}
		})
	}
}
