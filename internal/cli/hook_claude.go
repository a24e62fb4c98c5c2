package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/claudeimport"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/hook"
	"github.com/toolgate/toolgate/policy"
)

// claudeManagedSettings is where Claude Code reads the settings an
// administrator manages on Linux.
const claudeManagedSettings = "/etc/claude-code/managed-settings.json"

// claudeSettingsFiles are the Claude Code settings files a hook can see
// for a call made in cwd: the managed ones, the user's, and the shared and
// local ones of the project ($CLAUDE_PROJECT_DIR, which Claude Code sets
// for its hooks, and cwd).
func claudeSettingsFiles(home, cwd string) []string {
	files := []string{claudeManagedSettings}
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	seen := map[string]bool{}
	for _, dir := range []string{os.Getenv("CLAUDE_PROJECT_DIR"), cwd} {
		if dir == "" || seen[dir] {
			continue
		}
		seen[dir] = true
		files = append(files, filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, ".claude", "settings.local.json"))
	}
	return files
}

// claudeOwnRule returns what Claude Code's own settings say of the shell
// call, and why: Deny when a permissions.deny rule of a settings file the
// hook can see matches any command of the line (matched as toolgate
// matches a deny rule: through wrappers, chains and substitutions), or
// when a settings file cannot be read or holds a Bash rule toolgate
// cannot match; Ask when a permissions.ask rule matches; Allow (and "")
// when none does.
//
// Claude Code matches its rules against the input a hook hands back, so a
// command handed back wrapped in `toolgate sandbox` would no longer match
// them. The hook does not rely on Claude Code matching the unwrapped
// command as toolgate does (a project's settings file is as much the
// agent's as its workspace): it denies a call a deny rule matches, and
// asks, unwrapped, for one an ask rule matches. A settings file it cannot
// read is a rule it cannot see, and denies. Rules given on Claude Code's
// command line (--settings, --disallowedTools) are not visible to a hook.
func claudeOwnRule(ctx context.Context, home string, call *hook.Call) (policy.Decision, string) {
	var deny, ask []string
	origin := map[string]string{}
	for _, file := range claudeSettingsFiles(home, call.Request.Cwd) {
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return policy.Deny, fmt.Sprintf("%s cannot be read (%v)", file, err)
		}
		var s struct {
			Permissions struct {
				Deny []json.RawMessage `json:"deny"`
				Ask  []json.RawMessage `json:"ask"`
			} `json:"permissions"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			return policy.Deny, fmt.Sprintf("%s is not JSON that can be read (%v)", file, err)
		}
		for _, g := range []struct {
			raws  []json.RawMessage
			rules *[]string
		}{{s.Permissions.Deny, &deny}, {s.Permissions.Ask, &ask}} {
			for _, raw := range g.raws {
				var text string
				if json.Unmarshal(raw, &text) != nil || !strings.HasPrefix(text, "Bash") {
					continue
				}
				rule, _, why := claudeimport.Rule(text)
				if why != "" {
					continue
				}
				if _, err := policy.ParseRules(policy.LayerUser, nil, nil, []string{rule}); err != nil {
					// A rule toolgate cannot read may still be one Claude
					// Code applies.
					return policy.Deny, fmt.Sprintf("%s has the rule %s, which toolgate cannot match", file, text)
				}
				*g.rules = append(*g.rules, rule)
				origin[rule] = fmt.Sprintf("%s in %s", text, file)
			}
		}
	}
	for _, g := range []struct {
		rules []string
		eff   policy.Decision
	}{{deny, policy.Deny}, {ask, policy.Ask}} {
		if len(g.rules) == 0 {
			continue
		}
		rule, problem := claudeRuleMatch(ctx, home, call, g.rules)
		if problem != "" {
			return policy.Deny, problem
		}
		if rule == "" {
			continue
		}
		if o := origin[rule]; o != "" {
			return g.eff, "its rule " + o + " matches"
		}
		return g.eff, "its rule " + rule + " matches"
	}
	return policy.Allow, ""
}

// claudeRuleMatch returns the rule of rules that matches the call, as
// toolgate matches a deny rule; "" when none does. problem says why the
// rules cannot be matched, when they cannot.
func claudeRuleMatch(ctx context.Context, home string, call *hook.Call, rules []string) (rule, problem string) {
	f, err := policy.ParseRules(policy.LayerUser, nil, nil, rules)
	if err != nil {
		return "", fmt.Sprintf("Claude Code's rules cannot be read together (%v)", err)
	}
	set, err := policy.Merge(f)
	if err != nil {
		return "", fmt.Sprintf("Claude Code's rules cannot be read together (%v)", err)
	}
	eng, err := engine.New(engine.Options{Policy: engine.Fixed(set), Home: home})
	if err != nil {
		return "", fmt.Sprintf("Claude Code's rules cannot be matched (%v)", err)
	}
	req := call.Request
	d := eng.Check(ctx, &req)
	if d.Reason != engine.ReasonRuleDeny {
		return "", ""
	}
	return d.Rule, ""
}
