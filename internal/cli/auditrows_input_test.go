package cli

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/eventlog"
)

// TestDecisionRowInput checks the row of a decision by what its
// permission.resolved carries: a call decided at once shows its input,
// and a decision whose input is no JSON object is still a row, of its tool.
func TestDecisionRowInput(t *testing.T) {
	for _, tc := range []struct {
		payload, call string
	}{
		{`{"toolCallId":"c1","tool":"Bash","input":{"command":"ls"},"decision":"allow"}`, "Bash: ls"},
		{`{"toolCallId":"c1","tool":"Bash","input":["ls"],"decision":"deny"}`, "Bash"},
		{`{"toolCallId":"c1","tool":"Bash","input":null,"decision":"deny"}`, "Bash"},
		{`{"toolCallId":"c1","tool":"Bash","decision":"deny"}`, "Bash"},
	} {
		d := newDecisionRows(nil)
		r, ok := d.add(eventlog.Event{Session: "s", Seq: 1, Time: time.Unix(1_700_000_000, 0),
			Type: eventlog.TypePermissionResolved, Payload: []byte(tc.payload)})
		if !ok || r.Call != tc.call {
			t.Errorf("row of %s = %q, %v; want %q, true", tc.payload, r.Call, ok, tc.call)
		}
	}
}
