package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/eventlog"
	"github.com/toolgate/toolgate/policy"
)

// TestRememberedRules: "always allow" answers are written to the policy
// files the engine loads, so the next such call is allowed by the rule;
// a rule that does not parse is not saved and the answer counts once.
func TestRememberedRules(t *testing.T) {
	cases := []struct {
		name     string
		answer   approval.Answer
		file     string // relative to project ("P/") or home ("H/")
		want     string // the rule in the file; "" means no file written
		nextAsks bool
		write    bool // the call writes P/src/new.txt instead of running npm
	}{
		{"project answer goes to the local file", approval.Answer{Kind: approval.AllowProject}, "P/" + policy.LocalFile, "Bash(npm run test -- --watch)", false, false},
		{"user answer goes to the user file", approval.Answer{Kind: approval.AllowUser}, "H/.config/toolgate/policy.toml", "Bash(npm run test -- --watch)", false, false},
		{"edited rule is saved as edited", approval.Answer{Kind: approval.AllowProject, Rule: "Bash(npm run:*)"}, "P/" + policy.LocalFile, "Bash(npm run:*)", false, false},
		{"a rule that does not parse is not saved", approval.Answer{Kind: approval.AllowProject, Rule: "Bash(npm"}, "P/" + policy.LocalFile, "", true, false},
		// A path in the project is kept relative to the project root, so
		// that the rule travels with it; in the user's policy, which holds
		// for every project, it is kept absolute.
		{"project path rule is project-relative", approval.Answer{Kind: approval.AllowProject}, "P/" + policy.LocalFile, `"Write(src/new.txt)"`, false, true},
		{"user path rule is absolute", approval.Answer{Kind: approval.AllowUser}, "H/.config/toolgate/policy.toml", `"Write(P/src/new.txt)"`, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			project, home := realDir(t), realDir(t)
			must(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
			userFile := filepath.Join(home, ".config", "toolgate", "policy.toml")
			eng, err := engine.New(engine.Options{Policy: engine.FromFiles(filepath.Join(home, "none.toml"), userFile), Home: home})
			must(t, err)
			_, store := engineAndStore(t, nil, project, home)
			asked := 0
			ap := approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
				asked++
				return c.answer, nil
			})
			g, err := New(eng, store, ap, Options{Rules: PolicyFiles{User: userFile}})
			must(t, err)
			req := func() *engine.Request {
				if c.write {
					return &engine.Request{Tool: "Write", Input: map[string]any{"file_path": filepath.Join(project, "src/new.txt"), "content": "x"}, Cwd: project, Session: "s1"}
				}
				return &engine.Request{Tool: "Bash", Input: map[string]any{"command": "npm run test -- --watch"}, Cwd: project, Session: "s1"}
			}
			c.want = strings.ReplaceAll(c.want, "P/", project+"/")
			d, err := g.Check(context.Background(), req(), "")
			must(t, err)
			if d.Decision != policy.Allow {
				t.Fatalf("first call: %s", d.Decision)
			}
			path := strings.NewReplacer("P/", project+"/", "H/", home+"/").Replace(c.file)
			data, err := os.ReadFile(path)
			switch {
			case c.want == "" && err == nil:
				t.Fatalf("%s was written:\n%s", path, data)
			case c.want != "" && (err != nil || !strings.Contains(string(data), c.want)):
				t.Fatalf("%s does not hold %s: %v\n%s", path, c.want, err, data)
			}
			d, err = g.Check(context.Background(), req(), "")
			must(t, err)
			if (asked == 2) != c.nextAsks {
				t.Fatalf("second call asked=%v (%s/%s), want asked=%v", asked == 2, d.Decision, d.Reason, c.nextAsks)
			}
			changes := 0
			for e, err := range store.Query(context.Background(), eventlog.Filter{Types: []eventlog.Type{eventlog.TypePolicyChanged}}) {
				must(t, err)
				changes++
				if !strings.Contains(string(e.Payload), c.want) || !strings.Contains(string(e.Payload), path) {
					t.Errorf("policy.changed %s does not name the rule and file", e.Payload)
				}
			}
			if (changes == 1) != (c.want != "") {
				t.Fatalf("%d policy.changed events", changes)
			}
		})
	}
}

// TestNoProjectNoProjectRule: "always allow in this project" for a call
// made outside any project (in the home directory) writes nothing — a
// policy file there would make the whole home one project — and the call
// is allowed once.
func TestNoProjectNoProjectRule(t *testing.T) {
	home := realDir(t)
	t.Setenv("HOME", home)
	userFile := filepath.Join(home, ".config", "toolgate", "policy.toml")
	eng, err := engine.New(engine.Options{Policy: engine.FromFiles(filepath.Join(home, "none.toml"), userFile), Home: home})
	must(t, err)
	_, store := engineAndStore(t, nil, home, home)
	ap := approval.ApproverFunc(func(context.Context, *approval.Request) (approval.Answer, error) {
		return approval.Answer{Kind: approval.AllowProject}, nil
	})
	g, err := New(eng, store, ap, Options{Rules: PolicyFiles{User: userFile}})
	must(t, err)
	d, err := g.Check(context.Background(), &engine.Request{Tool: "Bash", Input: map[string]any{"command": "make build"}, Cwd: home, Session: "s1"}, "")
	must(t, err)
	if d.Decision != policy.Allow || !strings.Contains(d.Message, "outside any project") {
		t.Fatalf("%s: %s", d.Decision, d.Message)
	}
	if _, err := os.Stat(filepath.Join(home, ".toolgate")); err == nil {
		t.Fatal("a .toolgate directory was made in the home directory")
	}
}
