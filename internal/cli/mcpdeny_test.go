package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPProxyLocalDeny: the proxy's own deny rule holds with a server
// too. With --server and --deny mcp__fs__create_directory, while the
// server's policy allows the tool, the call is refused, the real
// server-filesystem never creates the directory, and the server's log
// holds the request and a deny (agent_denied) with the proxy's reason; a
// call the proxy's policy does not deny is still the server's. Without a
// server the local deny is in the local log.
func TestMCPProxyLocalDeny(t *testing.T) {
	bin := filesystemServer(t)
	t.Run("with a server", func(t *testing.T) {
		rs := startServe(t, "--allow", "mcp__fs__create_directory", "--allow", "mcp__fs__list_allowed_directories")
		w := &mcpWorld{project: rs.project, stateDir: rs.stateDir, none: filepath.Join(rs.project, "none.toml"), bin: bin}
		local := filepath.Join(t.TempDir(), "local.db")
		cs := w.proxy(t, "--server", rs.url, "--db", local, "--deny", "mcp__fs__create_directory")
		target := filepath.Join(rs.project, "made")
		out, isErr := mcpCall(t, cs, "create_directory", map[string]any{"path": target})
		if !isErr || !strings.Contains(out, "rule_deny") {
			t.Fatalf("create_directory: %q (isError %t)", out, isErr)
		}
		if _, err := os.Stat(target); !os.IsNotExist(err) {
			t.Fatalf("the upstream tool ran: %v", err)
		}
		calls := loggedCalls(t, filepath.Join(rs.stateDir, "events.db"), "s1")
		if len(calls) != 1 {
			t.Fatalf("%d calls in the server's log, want 1", len(calls))
		}
		r := calls[0].resolved
		msg, _ := r["message"].(string)
		if calls[0].requested["tool"] != "mcp__fs__create_directory" || r["decision"] != "deny" || r["reason"] != "agent_denied" ||
			r["actor"] != "system" || !strings.Contains(msg, "MCP proxy's policy") || !strings.Contains(msg, "rule_deny") {
			t.Fatalf("the server's log: %v %v", calls[0].requested, r)
		}
		// The server decides what the proxy's policy does not deny.
		if out, isErr := mcpCall(t, cs, "list_allowed_directories", map[string]any{}); isErr {
			t.Fatalf("list_allowed_directories: %q", out)
		}
		calls = loggedCalls(t, filepath.Join(rs.stateDir, "events.db"), "s1")
		if len(calls) != 2 || calls[1].resolved["decision"] != "allow" || calls[1].resolved["reason"] != "rule_allow" {
			t.Fatalf("the server's log: %v", calls)
		}
		if _, err := os.Stat(local); err == nil {
			if n := len(loggedCalls(t, local, "s1")); n != 0 {
				t.Fatalf("%d calls in the local log although the server recorded them", n)
			}
		}
	})
	t.Run("without a server", func(t *testing.T) {
		w := newMCPWorld(t)
		w.bin = bin
		cs := w.proxy(t, "--trusted", "--allow", "mcp__fs__create_directory", "--deny", "mcp__fs__create_directory")
		target := filepath.Join(w.project, "made")
		if out, isErr := mcpCall(t, cs, "create_directory", map[string]any{"path": target}); !isErr || !strings.Contains(out, "rule_deny") {
			t.Fatalf("create_directory: %q (isError %t)", out, isErr)
		}
		if _, err := os.Stat(target); !os.IsNotExist(err) {
			t.Fatalf("the upstream tool ran: %v", err)
		}
		calls := loggedCalls(t, filepath.Join(w.stateDir, "events.db"), "s1")
		if len(calls) != 1 || calls[0].resolved["decision"] != "deny" || calls[0].resolved["reason"] != "rule_deny" || calls[0].resolved["rule"] != "mcp__fs__create_directory" {
			t.Fatalf("the local log: %v", calls)
		}
	})
}
