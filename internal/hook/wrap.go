package hook

import (
	"errors"
	"strings"

	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/shellrun"
	"github.com/toolgate/toolgate/policy"
)

// Confine is how a shell command the hook allows runs under `toolgate
// sandbox` when the client executes it.
type Confine struct {
	// Self is the absolute path of the toolgate binary.
	Self string
	// Mode is "read-only" or "workspace-write".
	Mode          string
	Network       bool
	Workspace     string
	WritableRoots []string
	// CredentialPaths are masked in the sandbox besides its defaults.
	CredentialPaths []string
}

// ConfineFor returns the Confine of a call the engine confines as c: the
// sandbox [shellrun.PolicyFor] gives it, as toolgate run confines it, with
// creds masked besides the sandbox's defaults.
func ConfineFor(self string, c engine.Confinement, creds []string) Confine {
	p := shellrun.PolicyFor(c, shellrun.Options{CredentialPaths: creds})
	return Confine{Self: self, Mode: string(p.Mode), Network: p.Network, Workspace: p.Workspace,
		WritableRoots: p.WritableRoots, CredentialPaths: p.CredentialPaths}
}

// Quote returns s as one word of a POSIX shell: in single quotes, each
// single quote of s written as a closing quote, a backslashed quote and
// an opening quote. The shell reads it back as s exactly.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Wrap returns the command line that runs command with bash under
// `toolgate sandbox` as c says, requiring Landlock and the mount namespace
// (--require): a hook wraps a command only where it found both, and should
// either be missing when the command runs, nothing runs instead of the
// command running with less. It fails for a command or path holding a
// NUL byte, which no command line can carry, and for a Confine without an
// absolute Self or a workspace.
func Wrap(c Confine, command string) (string, error) {
	if !strings.HasPrefix(c.Self, "/") || c.Workspace == "" {
		return "", errors.New("no toolgate binary or workspace to run the command in the sandbox with")
	}
	words := []string{Quote(c.Self), "sandbox", "--require", "landlock", "--require", "mountns", "--sandbox", Quote(c.Mode)}
	if c.Network {
		words = append(words, "--network")
	}
	words = append(words, "--workspace", Quote(c.Workspace))
	for _, r := range c.WritableRoots {
		words = append(words, "--writable-root", Quote(r))
	}
	for _, p := range c.CredentialPaths {
		words = append(words, "--credential-path", Quote(p))
	}
	words = append(words, "--", "bash", "-c", Quote(command))
	line := strings.Join(words, " ")
	if strings.ContainsRune(line, 0) {
		return "", errors.New("the command holds a NUL byte")
	}
	return line, nil
}

// Wrappable reports whether [WrapInput] wraps a call's command: only a
// command judged as bash, for the sandbox runs it with bash, of a client
// whose answer carries the input back ([CarriesInput]).
func Wrappable(client Client, tool string, input map[string]any) bool {
	if t, known := policy.Canonical(tool); !known || t != policy.ToolShell || !CarriesInput(client, tool) {
		return false
	}
	if engine.ShellOf(&engine.Request{Tool: tool}) != "bash" {
		return false
	}
	cmd, ok := input["command"].(string)
	return ok && cmd != ""
}

// WrapInput returns a copy of a shell call's input with its command
// wrapped by [Wrap], every other field kept. ok is false when the call is
// not one whose command the client's answer carries back (a tool other
// than a bash shell, or an input without a "command" string).
func WrapInput(client Client, tool string, input map[string]any, c Confine) (wrapped map[string]any, ok bool, err error) {
	if !Wrappable(client, tool, input) {
		return nil, false, nil
	}
	line, err := Wrap(c, input["command"].(string))
	if err != nil {
		return nil, false, err
	}
	wrapped = make(map[string]any, len(input))
	for k, v := range input {
		wrapped[k] = v
	}
	wrapped["command"] = line
	return wrapped, true, nil
}

// CarriesInput reports whether client's allow of a call of tool (the name
// the call is judged under) hands the tool input back, so that the input
// that runs is the one judged, or wrapped. Claude Code (updatedInput) and
// Gemini CLI (tool_input) take it back for every tool. Codex 0.171 runs
// the updatedInput of a PreToolUse allow, keeping the call's working
// directory; it is handed back for its shell (exec_command, whose hook
// is named Bash, with the command as "command") only: its apply_patch
// hook names the patch "command" where toolgate judges it as "patch".
func CarriesInput(client Client, tool string) bool {
	switch client {
	case ClaudeCode, Gemini:
		return true
	case Codex:
		t, known := policy.Canonical(tool)
		return known && t == policy.ToolShell
	}
	return false
}
