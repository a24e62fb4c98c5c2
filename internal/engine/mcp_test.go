package engine

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestMCPCalls: the paths an MCP call's arguments name are judged as a file
// tool's are, and a server's annotations set the effect only when the server
// is trusted.
func TestMCPCalls(t *testing.T) {
	w := newWorld(t)
	ro := &MCPTool{ReadOnly: true}
	roTrusted := &MCPTool{Trusted: true, ReadOnly: true}
	writeTrusted := &MCPTool{Trusted: true, Destructive: true}
	cases := []struct {
		name   string
		cli    *policy.File
		tool   string
		input  map[string]any
		mcp    *MCPTool
		want   policy.Decision
		reason Reason
	}{
		{name: "trusted read of .env is a credential read", tool: "mcp__fs__read_text_file", input: map[string]any{"path": "$P/.env"}, mcp: roTrusted, want: policy.Deny, reason: ReasonCredential},
		{name: "untrusted read of .env is a credential read", tool: "mcp__fs__read_text_file", input: map[string]any{"path": "$P/.env"}, mcp: ro, want: policy.Deny, reason: ReasonCredential},
		{name: "paths array with a credential", tool: "mcp__fs__read_multiple_files", input: map[string]any{"paths": []any{"$P/README.md", "$H/.ssh/id_rsa"}}, mcp: roTrusted, want: policy.Deny, reason: ReasonCredential},
		{name: "file uri names a credential", tool: "mcp__fs__read_resource", input: map[string]any{"uri": "file://$P/.env"}, mcp: roTrusted, want: policy.Deny, reason: ReasonCredential},
		{name: "http uri is no path", tool: "mcp__fs__read_resource", input: map[string]any{"uri": "https://example.com/.env"}, mcp: roTrusted, want: policy.Allow, reason: ReasonReadOnly},
		{name: "trusted read-only inside the workspace is allowed", tool: "mcp__fs__read_text_file", input: map[string]any{"path": "$P/README.md"}, mcp: roTrusted, want: policy.Allow, reason: ReasonReadOnly},
		{name: "untrusted read-only annotation is ignored", tool: "mcp__fs__read_text_file", input: map[string]any{"path": "$P/README.md"}, mcp: ro, want: policy.Ask, reason: ReasonUntrustedMCP},
		{name: "trusted destructive write asks", tool: "mcp__fs__write_file", input: map[string]any{"path": "$P/x.txt", "content": "x"}, mcp: writeTrusted, want: policy.Ask, reason: ReasonDestructive},
		{name: "trusted write with an allow rule is allowed", cli: cli(t, "", []string{"mcp__fs__write_file"}, nil, nil), tool: "mcp__fs__write_file", input: map[string]any{"path": "$P/x.txt", "content": "x"}, mcp: writeTrusted, want: policy.Allow, reason: ReasonRuleAllow},
		{name: "write to a protected path asks even with an allow rule", cli: cli(t, "", []string{"mcp__fs__write_file"}, nil, nil), tool: "mcp__fs__write_file", input: map[string]any{"path": "$P/.git/hooks/pre-commit", "content": "x"}, mcp: writeTrusted, want: policy.Ask, reason: ReasonProtectedPath},
		{name: "untrusted write names a credential path", cli: cli(t, "", []string{"mcp__fs__write_file"}, nil, nil), tool: "mcp__fs__write_file", input: map[string]any{"destination": "$P/.env"}, want: policy.Deny, reason: ReasonCredential},
		{name: "untrusted write outside the workspace", cli: cli(t, "", []string{"mcp__fs__write_file"}, nil, nil), tool: "mcp__fs__write_file", input: map[string]any{"destination": "$D/outside/notes.txt"}, want: policy.Deny, reason: ReasonSandbox},
		{name: "plan mode hides a trusted write", cli: cli(t, "plan", nil, nil, nil), tool: "mcp__fs__write_file", input: map[string]any{"path": "$P/x.txt"}, mcp: writeTrusted, want: policy.Deny, reason: ReasonModePlan},
		{name: "plan mode offers a trusted read", cli: cli(t, "plan", nil, nil, nil), tool: "mcp__fs__read_text_file", input: map[string]any{"path": "$P/README.md"}, mcp: roTrusted, want: policy.Allow, reason: ReasonReadOnly},
		{name: "plan mode refuses an untrusted read", cli: cli(t, "plan", nil, nil, nil), tool: "mcp__fs__read_text_file", input: map[string]any{"path": "$P/README.md"}, mcp: ro, want: policy.Deny, reason: ReasonModePlan},
		{name: "plan mode offers an untrusted tool an allow rule names", cli: cli(t, "plan", []string{"mcp__gh__search"}, nil, nil), tool: "mcp__gh__search", input: map[string]any{"q": "x"}, mcp: ro, want: policy.Allow, reason: ReasonRuleAllow},
		{name: "plan mode: an untrusted tool may write the paths it names", cli: cli(t, "plan", []string{"mcp__fs__read_text_file"}, nil, nil), tool: "mcp__fs__read_text_file", input: map[string]any{"path": "$P/README.md"}, mcp: ro, want: policy.Deny, reason: ReasonSandbox},
		{name: "an unlisted argument naming a credential is a credential read", tool: "mcp__fs__read_text_file", input: map[string]any{"target": "$H/.ssh/id_rsa"}, mcp: roTrusted, want: policy.Deny, reason: ReasonCredential},
		{name: "a relative path under an unlisted argument is judged", tool: "mcp__fs__read_text_file", input: map[string]any{"filename": "./.env"}, mcp: roTrusted, want: policy.Deny, reason: ReasonCredential},
		{name: "a path nested in an unlisted argument is judged", tool: "mcp__fs__read_text_file", input: map[string]any{"options": map[string]any{"roots": []any{"$P/README.md", "$P/.env"}}}, mcp: roTrusted, want: policy.Deny, reason: ReasonCredential},
		{name: "text in an unlisted argument is no path", tool: "mcp__fs__search", input: map[string]any{"query": "read /etc/passwd\nplease", "q": "http://x/y"}, mcp: roTrusted, want: policy.Allow, reason: ReasonReadOnly},
		{name: "a path of the wrong type is invalid", tool: "mcp__fs__read_text_file", input: map[string]any{"path": 3}, mcp: roTrusted, want: policy.Deny, reason: ReasonInvalidArguments},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := w.engine(t, layers{cli: tc.cli})
			in := map[string]any{}
			for k, v := range tc.input {
				switch x := v.(type) {
				case string:
					in[k] = w.expand(x)
				case []any:
					var out []any
					for _, s := range x {
						out = append(out, w.expand(s.(string)))
					}
					in[k] = out
				default:
					in[k] = w.expandAny(v)
				}
			}
			d := e.Check(context.Background(), &Request{Tool: tc.tool, Input: in, Cwd: w.project, MCP: tc.mcp})
			if d.Decision != tc.want || d.Reason != tc.reason {
				t.Fatalf("got %s (%s): %s; want %s (%s)", d.Decision, d.Reason, d.Message, tc.want, tc.reason)
			}
		})
	}
}

// expandAny expands the strings anywhere in v.
func (w *world) expandAny(v any) any {
	switch x := v.(type) {
	case string:
		return w.expand(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = w.expandAny(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = w.expandAny(e)
		}
		return out
	}
	return v
}
