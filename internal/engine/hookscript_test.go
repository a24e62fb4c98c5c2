package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestHookScriptsProtected: a user hook runs in the call's working
// directory, so a script it names by a relative path is one the agent
// could write before the call that runs it: writing a file of that
// relative path under any directory asks, as writing a hook named by an
// absolute path does, in every mode and whatever allow rules say.
func TestHookScriptsProtected(t *testing.T) {
	w := newWorld(t)
	hooks := func(command string) layers {
		return layers{user: `mode = "bypassPermissions"
[permissions]
allow = ["Write(**)", "Edit(**)", "Bash(echo:*)", "Bash(cp:*)"]
[[hooks]]
event = "PreToolUse"
command = "` + command + `"
`}
	}
	w.run(t, []tcase{
		{name: "write the ./ script", l: hooks("./check.sh"), tool: "Write", input: fp("$P/check.sh"), want: policy.Ask, reason: ReasonProtectedPath},
		{name: "write the ./ script in another directory", l: hooks("./check.sh"), tool: "Write", input: fp("$P/src/check.sh"), want: policy.Ask, reason: ReasonProtectedPath},
		{name: "interpreter and a script under a directory", l: hooks("python3 hooks/check.py --strict"), tool: "Write", input: fp("$P/src/hooks/check.py"), want: policy.Ask, reason: ReasonProtectedPath},
		{name: "shell redirect into the script", l: hooks("sh scripts/gate.sh"), tool: "Bash", input: sh("echo 'exit 0' > scripts/gate.sh"), want: policy.Ask, reason: ReasonProtectedPath},
		{name: "a parent-relative script", l: hooks("../tools/gate"), tool: "Bash", input: sh("cp /bin/true $P/src/tools/gate"), want: policy.Ask, reason: ReasonProtectedPath},
		{name: "absolute script", l: hooks("$P/gate.sh"), tool: "Write", input: fp("$P/gate.sh"), want: policy.Ask, reason: ReasonProtectedPath},
		{name: "another file is not protected", l: hooks("./check.sh"), tool: "Write", input: fp("$P/src/other.sh"), want: policy.Allow},
		{name: "a program found through PATH protects nothing", l: hooks("toolgate-check --strict"), tool: "Write", input: fp("$P/toolgate-check"), want: policy.Allow},
	})
}
