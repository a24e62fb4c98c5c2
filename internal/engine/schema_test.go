package engine

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

func TestToolSchemas(t *testing.T) {
	for tool := range tools {
		schema, ok := compiledSchemas[tool]
		if !ok {
			t.Errorf("tool %s has no argument schema", tool)
			continue
		}
		// Each compiles (a schema that does not panics here).
		if schema() == nil {
			t.Errorf("tool %s: no compiled schema", tool)
		}
	}
	tests := []struct {
		tool policy.Tool
		in   map[string]any
		want string // "" for valid
	}{
		{policy.ToolShell, map[string]any{"command": "ls", "timeout": 5, "description": "list"}, ""},
		{policy.ToolShell, map[string]any{"command": "ls", "timeout": "soon"}, "input.timeout: got string, want number"},
		{policy.ToolShell, map[string]any{"command": "ls", "run_in_background": "yes"}, "input.run_in_background: got string, want boolean"},
		{policy.ToolShell, map[string]any{}, "input: needs one of cmd, command"},
		{policy.ToolRead, map[string]any{"file_path": "a", "offset": 3, "extra": true}, ""},
		{policy.ToolRead, map[string]any{"file_path": "a", "limit": []any{}}, "input.limit: got array, want number"},
		{policy.ToolEdit, map[string]any{"file_path": "a", "old_string": 1}, "input.old_string: got number, want string"},
		{policy.ToolFetch, map[string]any{"url": "https://e.com", "prompt": 3}, "input.prompt: got number, want string"},
		{policy.ToolMCP, map[string]any{"anything": []any{1}}, ""},
		{policy.ToolShell, map[string]any{"command": json.Number("42")}, "input.command: got number, want array or string"},
		{policy.ToolShell, map[string]any{"command": []any{"rm", json.Number("1")}}, "input.command[1]: got number, want string"},
		{policy.ToolShell, map[string]any{"cmd": ""}, "input.cmd: is empty, want at least 1 character"},
		{policy.ToolShell, map[string]any{"command": "ls", "timeout": json.Number("1e3")}, ""},
		{policy.ToolFetch, map[string]any{"prompt": "x"}, "input.url: is required"},
		{policy.ToolSearch, map[string]any{"path": "."}, "input: needs one of pattern, query, regex"},
	}
	for _, tc := range tests {
		err := validateSchema(tc.tool, tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %v: %v", tc.tool, tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %v: got %v, want %q", tc.tool, tc.in, err, tc.want)
		}
	}
}

// TestSchemasConcurrentFirstUse validates from several goroutines at once;
// run with -race (and -run to make it the first use), it checks that
// compiling the schemas at first use is safe.
func TestSchemasConcurrentFirstUse(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := validateSchema(policy.ToolShell, map[string]any{"command": "ls", "timeout": "soon"}); err == nil ||
				!strings.Contains(err.Error(), "input.timeout: got string, want number") {
				t.Errorf("timeout soon: %v", err)
			}
			if err := validateSchema(policy.ToolRead, map[string]any{"file_path": "a"}); err != nil {
				t.Errorf("file_path a: %v", err)
			}
		})
	}
	wg.Wait()
}

// TestValidateSchemaAllocates checks that the schema check of a valid
// call, which runs for every call, allocates nothing.
func TestValidateSchemaAllocates(t *testing.T) {
	tests := []struct {
		tool policy.Tool
		in   map[string]any
	}{
		{policy.ToolShell, map[string]any{"command": "git status", "timeout": json.Number("120000"), "description": "status"}},
		{policy.ToolShell, map[string]any{"cmd": []any{"git", "status"}}},
		{policy.ToolRead, map[string]any{"file_path": "src/main.go", "offset": json.Number("10")}},
		{policy.ToolEdit, map[string]any{"file_path": "a.go", "old_string": "a", "new_string": "b"}},
	}
	for _, tc := range tests {
		if n := testing.AllocsPerRun(100, func() {
			if err := validateSchema(tc.tool, tc.in); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s %v: %v allocations, want 0", tc.tool, tc.in, n)
		}
	}
}
