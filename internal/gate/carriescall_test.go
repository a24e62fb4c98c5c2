package gate

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
)

// TestCarriesCall checks which events the readers of the log take as the
// one that records a call: a model.tool_call_requested whatever its
// input, a permission.resolved only when its input is a JSON object.
func TestCarriesCall(t *testing.T) {
	for _, tc := range []struct {
		typ   eventlog.Type
		input string
		want  bool
	}{
		{eventlog.TypeToolCallRequested, `{"command":"ls"}`, true},
		{eventlog.TypeToolCallRequested, ``, true},
		{eventlog.TypePermissionResolved, `{"command":"ls"}`, true},
		{eventlog.TypePermissionResolved, `{}`, true},
		{eventlog.TypePermissionResolved, " \n{}", true},
		{eventlog.TypePermissionResolved, ``, false},
		{eventlog.TypePermissionResolved, `null`, false},
		{eventlog.TypePermissionResolved, `["ls"]`, false},
		{eventlog.TypePermissionResolved, `"ls"`, false},
		{eventlog.TypePermissionRequested, `{"command":"ls"}`, false},
		{eventlog.TypeToolStarted, `{"command":"ls"}`, false},
	} {
		if got := CarriesCall(tc.typ, json.RawMessage(tc.input)); got != tc.want {
			t.Errorf("CarriesCall(%s, %q) = %v, want %v", tc.typ, tc.input, got, tc.want)
		}
	}

	// What the gate writes: a decision made at once carries its call (an
	// input that is an object even when the request had none), one
	// that answers a question does not (its model.tool_call_requested does).
	for _, tc := range []struct {
		res  PermissionResolved
		want bool
	}{
		{PermissionResolved{ToolCallID: "c", CallRequest: callRequest(&engine.Request{Tool: "shell"})}, true},
		{PermissionResolved{ToolCallID: "c"}, false},
	} {
		raw, err := json.Marshal(tc.res)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		if got := CarriesCall(eventlog.TypePermissionResolved, p.Input); got != tc.want {
			t.Errorf("CarriesCall of %s = %v, want %v", raw, got, tc.want)
		}
	}
}
