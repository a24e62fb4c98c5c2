package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
)

// TestMCPElicitation runs `toolgate mcp` without a server in front of the
// real server-filesystem, for an MCP client (the go-sdk's) that declares
// elicitation and answers the person's way: it allows writing one file
// and declines the other. Only the allowed file is written, and the log
// records both answers as the user's through mcp-elicitation — on the
// latest protocol, where the question travels in the call's result, and
// on 2025-11-25, where the proxy sends elicitation/create.
func TestMCPElicitation(t *testing.T) {
	fsServer := requireAgent(t, "mcp-server-filesystem")
	bin, err := buildToolgate()
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"", "2025-11-25"} {
		name := version
		if name == "" {
			name = "latest"
		}
		t.Run(name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			home, project, state := filepath.Join(root, "home"), filepath.Join(root, "home", "proj"), filepath.Join(root, "state")
			if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			env := append(cleanEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
				"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"), "TOOLGATE_MANAGED_POLICY="+filepath.Join(root, "none.toml"))
			cmd := exec.Command(bin, "mcp", "--name", "fs", "--state-dir", state, "--session", "elicit", "--", fsServer, project)
			cmd.Dir, cmd.Env = project, env
			var stderr lockedBuffer
			cmd.Stderr = &stderr

			allowed, declined := filepath.Join(project, "allowed.txt"), filepath.Join(project, "declined.txt")
			var asked []string
			client := mcp.NewClient(&mcp.Implementation{Name: "person", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, r.Params.Message)
					if strings.Contains(r.Params.Message, allowed) {
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow"}}, nil
					}
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connecting to toolgate mcp: %v\n%s", err, stderr.String())
			}
			defer cs.Close()

			for _, f := range []string{allowed, declined} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": f, "content": "from the agent"}})
				if err != nil {
					t.Fatalf("write_file %s: %v\n%s", f, err, stderr.String())
				}
				if res.IsError != (f == declined) {
					t.Fatalf("write_file %s: isError %t: %v", f, res.IsError, res.Content)
				}
			}
			if b, err := os.ReadFile(allowed); err != nil || string(b) != "from the agent" {
				t.Fatalf("the allowed call did not run: %q %v", b, err)
			}
			if _, err := os.Stat(declined); !os.IsNotExist(err) {
				t.Fatalf("the declined call ran: %v", err)
			}
			if len(asked) != 2 || !strings.Contains(asked[0], "mcp__fs__write_file") || !strings.Contains(asked[0], "untrusted_mcp_server") {
				t.Fatalf("the person was asked %q", asked)
			}

			st, err := sqlite.Open(filepath.Join(state, "events.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var got []string
			for e, err := range st.Query(ctx, eventlog.Filter{Session: "elicit", Types: []eventlog.Type{eventlog.TypePermissionRequested, eventlog.TypePermissionResolved}}) {
				if err != nil {
					t.Fatal(err)
				}
				var p struct{ Decision, Reason, Actor, AskedOf, Channel string }
				if err := json.Unmarshal(e.Payload, &p); err != nil {
					t.Fatal(err)
				}
				got = append(got, strings.Join([]string{string(e.Type), p.Decision, p.Reason, p.Actor + p.AskedOf, p.Channel}, " "))
			}
			want := []string{
				"permission.requested  untrusted_mcp_server user mcp-elicitation",
				"permission.resolved allow user_approved user mcp-elicitation",
				"permission.requested  untrusted_mcp_server user mcp-elicitation",
				"permission.resolved deny user_denied user mcp-elicitation",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
