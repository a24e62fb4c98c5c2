package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/hookinstall"
)

// agentClient is an agent client as init and doctor find it on this
// machine: its program on PATH and its settings directory.
type agentClient struct {
	client    hookinstall.Client
	program   string // the program's name
	bin       string // where PATH finds it, "" when it does not
	configDir string // the settings directory, "" when it does not exist
	home      string
}

// findClients looks for every supported client: its program on PATH
// (claude, gemini, codex) and its settings directory (~/.claude,
// ~/.gemini, $CODEX_HOME or ~/.codex).
func findClients() []agentClient {
	var out []agentClient
	for _, c := range hookinstall.Clients {
		out = append(out, findClient(c))
	}
	return out
}

func findClient(c hookinstall.Client) agentClient {
	home, _ := os.UserHomeDir()
	ac := agentClient{client: c, home: home}
	ac.program = map[hookinstall.Client]string{hookinstall.ClaudeCode: "claude", hookinstall.Gemini: "gemini", hookinstall.Codex: "codex"}[c]
	if p, err := exec.LookPath(ac.program); err == nil {
		ac.bin = p
	}
	if p, err := hookinstall.SettingsPath(ac.options("")); err == nil {
		if fi, err := os.Stat(filepath.Dir(p)); err == nil && fi.IsDir() {
			ac.configDir = filepath.Dir(p)
		}
	}
	return ac
}

func (ac agentClient) found() bool { return ac.bin != "" || ac.configDir != "" }

// where says how the client was found.
func (ac agentClient) where() string {
	var w []string
	if ac.bin != "" {
		w = append(w, ac.program+" on PATH")
	}
	if ac.configDir != "" {
		w = append(w, tildePath(ac.configDir))
	}
	return strings.Join(w, ", ")
}

// options are the hook install options of the client's user settings,
// with command as the hook's program.
func (ac agentClient) options(command string) hookinstall.Options {
	return hookinstall.Options{Client: ac.client, Scope: hookinstall.User, Home: ac.home, CodexHome: os.Getenv("CODEX_HOME"), Command: command}
}
