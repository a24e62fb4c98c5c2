package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/toolgate/toolgate/internal/hook"
)

// hookEnvVars are the variables that tell a hook which server decides
// its calls and with which token.
var hookEnvVars = []string{"TOOLGATE_SERVER", "TOOLGATE_TOKEN"}

// dotenvDef matches a line of a .env file that sets one of hookEnvVars.
var dotenvDef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:export\s+)?(TOOLGATE_SERVER|TOOLGATE_TOKEN)\s*[=:]`)
})

// projectHookEnv returns why the hook's environment cannot be trusted to
// name its server, or "": a file of the project the call runs in (which
// the repository or the agent may have written) sets $TOOLGATE_SERVER or
// $TOOLGATE_TOKEN, which the client hands on to its hooks. Such a server
// would decide every call the local policy does not deny, and would be
// handed the agent token. Claude Code applies the "env" of a project's
// .claude/settings.json and settings.local.json; Gemini CLI loads the
// .gemini/.env or .env of the directory it runs in or of one above it.
// A server given with --server is not read from the environment, so the
// check applies only when none is.
func projectHookEnv(client hook.Client, cwd, home string) string {
	set := false
	for _, v := range hookEnvVars {
		if os.Getenv(v) != "" {
			set = true
		}
	}
	if !set {
		return ""
	}
	switch client {
	case hook.ClaudeCode:
		for _, file := range claudeSettingsFiles(home, cwd)[1:] {
			if home != "" && file == filepath.Join(home, ".claude", "settings.json") {
				continue // the user's own settings
			}
			data, err := os.ReadFile(file)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Sprintf("%s cannot be read (%v), and it may set the hook's $TOOLGATE_SERVER or $TOOLGATE_TOKEN", file, err)
			}
			var s struct {
				Env map[string]json.RawMessage `json:"env"`
			}
			if json.Unmarshal(data, &s) != nil {
				return fmt.Sprintf("%s is not JSON that can be read, and it may set the hook's $TOOLGATE_SERVER or $TOOLGATE_TOKEN", file)
			}
			for _, v := range hookEnvVars {
				if _, ok := s.Env[v]; ok {
					return fmt.Sprintf("the project's %s sets %s", file, v)
				}
			}
		}
	case hook.Gemini:
		for dir := filepath.Clean(cwd); ; dir = filepath.Dir(dir) {
			if home == "" || dir != filepath.Clean(home) {
				for _, file := range []string{filepath.Join(dir, ".gemini", ".env"), filepath.Join(dir, ".env")} {
					if why := dotenvSets(file); why != "" {
						return why
					}
				}
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return ""
}

// dotenvSets returns why the .env file sets one of hookEnvVars, or "".
func dotenvSets(file string) string {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		fi, serr := os.Stat(file)
		if serr == nil && fi.IsDir() {
			return ""
		}
		return fmt.Sprintf("%s cannot be read (%v), and it may set the hook's $TOOLGATE_SERVER or $TOOLGATE_TOKEN", file, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
	for sc.Scan() {
		if m := dotenvDef().FindStringSubmatch(sc.Text()); m != nil {
			return fmt.Sprintf("%s sets %s", file, m[1])
		}
	}
	return ""
}
