package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/internal/hookinstall"
)

// TestHookServerDeadline: a server that takes a call and never answers
// gets the hook's call denied, with a reason that says so, before the
// client's time for the hook runs out (here a budget of 4 s, of which the
// hook waits 3 s); an after-tool call is recorded in the local log
// instead. The budget the hook goes by is the installed entry's.
func TestHookServerDeadline(t *testing.T) {
	var asked atomic.Int32
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		io.Copy(io.Discard, r.Body) // so that the server sees the hook go
		<-r.Context().Done()        // until the hook gives up
	}))
	defer hung.Close()
	var budgets []string
	hookBudget = func(c hook.Client, p hook.Phase) time.Duration {
		budgets = append(budgets, string(c)+" "+hookinstall.Budget(c, p).String())
		return 4 * time.Second
	}
	t.Cleanup(func() { hookBudget = hookinstall.Budget })
	env := newHookEnv(t)
	t.Setenv("TOOLGATE_TOKEN", "agent-token")
	tools := map[string]string{"claude-code": "Write", "gemini": "write_file", "codex": "Bash"}
	for _, client := range []string{"claude-code", "gemini", "codex"} {
		t.Run(client, func(t *testing.T) {
			asked.Store(0)
			input := map[string]any{"file_path": filepath.Join(env.project, "a.txt"), "content": "x", "command": "ls"}
			start := time.Now()
			code, out, stderr := runHookCLI(t, client, payloadFor(client, tools[client], env.project, input, nil), append(env.flags, "--server", hung.URL)...)
			took := time.Since(start)
			d, reason := hookDecision(t, client, out)
			if code != 2 || d != "deny" || !strings.Contains(reason, "did not answer within 3s") || !strings.Contains(stderr, hung.URL) {
				t.Errorf("exit %d, %s (%s), stderr %q; want a deny saying the server did not answer", code, d, reason, stderr)
			}
			if asked.Load() != 1 || took < 3*time.Second || took >= 4*time.Second {
				t.Errorf("asked the server %d times, answered after %s; want once, after 3s and before 4s", asked.Load(), took)
			}
		})
	}
	t.Run("after the tool", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "local.db")
		payload := `{"session_id":"late","cwd":"` + env.project + `","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cat x"},"tool_use_id":"toolu_1","tool_response":{"stdout":"hello","stderr":""}}`
		start := time.Now()
		code, out, stderr := runHookCLI(t, "claude-code", payload, append(env.flags, "--server", hung.URL, "--db", db)...)
		if took := time.Since(start); code != 0 || took >= 4*time.Second {
			t.Fatalf("exit %d after %s: %s %s", code, took, out, stderr)
		}
		if got := afterEvents(t, db, "late"); !slices.Equal(got, []string{"tool.completed toolu_1"}) {
			t.Errorf("the local log holds %q", got)
		}
	})
	want := []string{"claude-code 10m0s", "gemini 9m55s", "codex 9m50s", "claude-code 1m0s"}
	if !slices.Equal(budgets, want) {
		t.Errorf("the hook went by budgets %q, want the installed entries' %q", budgets, want)
	}
}
