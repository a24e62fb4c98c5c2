package toolgate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/policy"
)

// A compound command is allowed only if every command in it is: a rule for
// git status does not allow what follows the semicolon.
func Example() {
	dir, _ := os.MkdirTemp("", "toolgate-example")
	defer os.RemoveAll(dir)
	project := filepath.Join(dir, "project")
	_ = os.MkdirAll(filepath.Join(project, ".git"), 0o755)

	rules, _ := policy.ParseRules(policy.LayerProject, []string{"Bash(git status:*)"}, nil, []string{"Read(.env)"})
	set, _ := policy.Merge(rules)
	eng, _ := toolgate.NewEngine(toolgate.Options{Policy: toolgate.FixedPolicy(set), Home: dir})

	for _, cmd := range []string{"git status --short", "git status; rm -rf ~", "cat .env"} {
		d := eng.Check(context.Background(), &toolgate.Request{
			Tool:  "Bash",
			Input: map[string]any{"command": cmd},
			Cwd:   project,
		})
		fmt.Printf("%-22s %-5s %s\n", cmd, d.Decision, d.Reason)
	}
	// Output:
	// git status --short     allow rule_allow
	// git status; rm -rf ~   deny  sandbox_rejected
	// cat .env               deny  rule_deny
}
