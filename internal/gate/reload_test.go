package gate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/internal/eventlog/sqlite"
	"github.com/toolgate/toolgate/policy"
)

// TestRememberedRuleReachesOtherInstances: two gates, each with its own
// engine, over the same policy files and event log (two servers behind
// one address). A rule one of them writes for an "always allow" answer
// is honoured by the other at its next decision, which records the new
// policy version in its permission.resolved event.
func TestRememberedRuleReachesOtherInstances(t *testing.T) {
	cases := []struct {
		answer approval.Kind
		file   string // where the rule goes, relative to the project ("P/") or home ("H/")
	}{
		{approval.AllowProject, "P/" + policy.LocalFile},
		{approval.AllowUser, "H/.config/toolgate/policy.toml"},
	}
	for _, c := range cases {
		t.Run(string(c.answer), func(t *testing.T) {
			project, home := realDir(t), realDir(t)
			must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
			userFile := filepath.Join(home, ".config", "toolgate", "policy.toml")
			db := filepath.Join(t.TempDir(), "events.db")
			type instance struct {
				g     *Gate
				asked atomic.Int32
			}
			start := func(answer approval.Kind) *instance {
				eng, err := engine.New(engine.Options{Policy: engine.FromFiles(filepath.Join(home, "none.toml"), userFile), Home: home})
				must(t, err)
				store, err := sqlite.Open(db, nil)
				must(t, err)
				t.Cleanup(func() { store.Close() })
				in := &instance{}
				ap := approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
					in.asked.Add(1)
					return approval.Answer{Kind: answer}, nil
				})
				in.g, err = New(eng, store, ap, Options{Rules: PolicyFiles{User: userFile}})
				must(t, err)
				return in
			}
			a, b := start(c.answer), start(approval.AllowOnce)
			req := func(session string) *engine.Request {
				return &engine.Request{Tool: "Bash", Input: map[string]any{"command": "npm run test -- --watch"}, Cwd: project, Session: session}
			}
			ctx := context.Background()

			// b has loaded the policy before a writes to it.
			d0, err := b.g.Check(ctx, req("sb"), "")
			must(t, err)
			if d0.Decision != policy.Allow || b.asked.Load() != 1 {
				t.Fatalf("b's first call: %s, asked %d", d0.Decision, b.asked.Load())
			}
			if _, err := a.g.Check(ctx, req("sa"), ""); err != nil {
				t.Fatal(err)
			}
			path := strings.NewReplacer("P/", project+"/", "H/", home+"/").Replace(c.file)
			if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), "Bash(npm run test -- --watch)") {
				t.Fatalf("a did not write the rule to %s: %v\n%s", path, err, data)
			}

			d, err := b.g.Check(ctx, req("sb"), "")
			must(t, err)
			if b.asked.Load() != 1 || d.Decision != policy.Allow || d.Reason != engine.ReasonRuleAllow || !strings.HasPrefix(d.RuleOrigin, path+":") {
				t.Fatalf("b's second call: %s (%s, %s), asked %d times: the rule a wrote is not honoured", d.Decision, d.Reason, d.RuleOrigin, b.asked.Load())
			}
			if d.PolicyVersion == "" || d.PolicyVersion == d0.PolicyVersion {
				t.Fatalf("policy version %q, before the rule %q", d.PolicyVersion, d0.PolicyVersion)
			}
			var got []string
			for e, err := range b.g.store.Query(ctx, eventlog.Filter{Session: "sb", Types: []eventlog.Type{eventlog.TypePermissionResolved}}) {
				must(t, err)
				var p PermissionResolved
				must(t, json.Unmarshal(e.Payload, &p))
				got = append(got, p.PolicyVersion)
			}
			if want := []string{d0.PolicyVersion, d.PolicyVersion}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("permission.resolved carries policy versions %q, want %q", got, want)
			}
		})
	}
}
