package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testnote"
)

// The agent client tests run the real Claude Code, Gemini CLI and Codex,
// installed from npm into $TOOLGATE_AGENTS (a directory whose
// node_modules/.bin holds claude, gemini, codex and
// mcp-server-filesystem; .ci/run installs them there), against a model
// server of the test's own on 127.0.0.1. Nothing leaves loopback.
//
//	npm install --prefix /opt/toolgate-agents @anthropic-ai/claude-code@2.1.332 \
//	    @google/gemini-cli@0.61.0 @openai/codex@0.171.0 \
//	    @modelcontextprotocol/server-filesystem@2026.8.31
//	TOOLGATE_AGENTS=/opt/toolgate-agents go test ./e2e -run Agent -v

// agentsEnv names the directory the agent clients are installed in.
const agentsEnv = "TOOLGATE_AGENTS"

// requireAgent returns the path of the agent client program name (claude,
// gemini, codex, mcp-server-filesystem) from $TOOLGATE_AGENTS. It skips
// the test when the clients are not installed, or fails it when
// TOOLGATE_E2E=1 says they must run.
func requireAgent(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv(agentsEnv)
	why := ""
	var bin string
	if dir == "" {
		why = "$" + agentsEnv + " is not set"
	} else {
		bin = filepath.Join(dir, "node_modules", ".bin", name)
		if _, err := os.Stat(bin); err != nil {
			why = bin + " is missing"
		}
	}
	if why != "" {
		how := "npm install --prefix DIR @anthropic-ai/claude-code @google/gemini-cli @openai/codex @modelcontextprotocol/server-filesystem; " + agentsEnv + "=DIR"
		if os.Getenv("TOOLGATE_E2E") == "1" {
			t.Fatalf("TOOLGATE_E2E=1 but %s: %s", why, how)
		}
		testnote.Skip(t, "agent client suite", why, how+" go test ./e2e -run Agent")
	}
	if testing.Short() && os.Getenv("TOOLGATE_E2E") != "1" {
		testnote.Skip(t, "agent client suite", "-short", agentsEnv+"=DIR go test ./e2e -run Agent")
	}
	return bin
}

// agentEnv is the environment an agent client runs in: this process's
// without HOME, XDG_* and TOOLGATE_*, with home as HOME, the server's
// configuration and state directories (so the hooks toolgate runs read
// the server's policy and log), and extra added last.
func (s *server) agentEnv(home string, extra ...string) []string {
	env := cleanEnv()
	for _, kv := range s.env {
		if !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "TOOLGATE_SERVER="+s.base, "TOOLGATE_TOKEN="+s.agent)
	return append(env, extra...)
}

// agentHome makes a private, empty home directory for one client run.
func agentHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "agent-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

// runAgent runs a client program to its end in dir with env, within
// limit, and returns what it printed. The process group is killed at the
// limit, so a client that hangs fails the test instead of stopping it.
func runAgent(t *testing.T, limit time.Duration, dir string, env []string, bin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.SysProcAttr = newProcessGroup()
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("%s %s did not end within %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), limit, out.String(), errb.String())
	}
	return out.String(), errb.String(), err
}
