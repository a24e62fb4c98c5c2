package enginecmp

import (
	"fmt"

	"github.com/toolgate/toolgate/policy"
)

// toolgateEngine is toolgate's rule matching as the engine runs it for one
// command or one path: deny rules matched conservatively, then ask rules,
// then allow rules, each found by the policy Index's FirstCommand or
// FirstPath, as internal/engine's matchRule finds them. The sandbox, credential, safety and mode stages that follow rule
// matching in a full decision are not part of the question and not run.
type toolgateEngine struct {
	set *policy.Set
	idx *policy.Index
	ctx policy.MatchContext
}

// ToolgateRule returns the rule's toolgate spelling: Bash(git status:*),
// Read(secrets/**) or Edit(docs/**).
func ToolgateRule(r Rule) string {
	switch {
	case r.Kind == Prefix:
		return "Bash(" + r.Pattern + ":*)"
	case r.Family == Read:
		return "Read(" + r.Pattern + "/**)"
	default:
		return "Edit(" + r.Pattern + "/**)"
	}
}

// NewToolgate parses the rules as a project policy and builds its index.
func NewToolgate(rules []Rule) (Engine, error) {
	var allow, deny []string
	for _, r := range rules {
		if r.Effect == Deny {
			deny = append(deny, ToolgateRule(r))
		} else {
			allow = append(allow, ToolgateRule(r))
		}
	}
	f, err := policy.ParseRules(policy.LayerProject, allow, nil, deny)
	if err != nil {
		return nil, fmt.Errorf("toolgate rules: %w", err)
	}
	set, err := policy.Merge(f)
	if err != nil {
		return nil, fmt.Errorf("toolgate rules: %w", err)
	}
	if len(set.Rules) != len(rules) {
		return nil, fmt.Errorf("toolgate rules: %d rules parsed from %d", len(set.Rules), len(rules))
	}
	return &toolgateEngine{set: set, idx: set.Index(), ctx: policy.MatchContext{Root: Root, Home: Home}}, nil
}

// Prepare checks the request's family. Its Decide splits a command's
// words into flags and operands on every call, as the engine does for each
// command it judges, and matches.
func (e *toolgateEngine) Prepare(r *Request) (Decide, error) {
	tool := policy.ToolRead
	switch r.Family {
	case Shell:
		if len(r.Words) == 0 {
			return nil, fmt.Errorf("request %s: a shell request needs a program", r.Name)
		}
		tool = policy.ToolShell
	case Read:
	case Write:
		tool = policy.ToolEdit
	default:
		return nil, fmt.Errorf("request %s: family %q is not shell, read or write", r.Name, r.Family)
	}
	return func() (Outcome, error) {
		var view *policy.CommandView
		if tool == policy.ToolShell {
			view = &policy.CommandView{Name: r.Words[0], Args: r.Words[1:], Dir: Root}
			view.Prepare()
		}
		if e.match(policy.Deny, tool, view, r) != nil {
			return Deny, nil
		}
		if rule := e.match(policy.Ask, tool, view, r); rule != nil {
			return "", fmt.Errorf("request %s: ask rule %s matched, and the compared rule sets have none", r.Name, rule)
		}
		if e.match(policy.Allow, tool, view, r) != nil {
			return Allow, nil
		}
		return NoMatch, nil
	}, nil
}

// match returns the first rule of effect eff, in policy order, that
// matches the call: bare rules of the tool, then the index's FirstCommand
// or FirstPath, which the engine's rule matching calls; deny and ask rules
// match conservatively.
func (e *toolgateEngine) match(eff policy.Decision, tool policy.Tool, view *policy.CommandView, r *Request) *policy.Rule {
	conservative := eff != policy.Allow
	var best *policy.Rule
	for _, rule := range e.idx.Bare(eff) {
		if rule.AppliesToTool(tool, "") {
			best = e.idx.Earlier(best, rule)
		}
	}
	if view != nil {
		return e.idx.Earlier(best, e.idx.FirstCommand(eff, view, &e.ctx, conservative))
	}
	return e.idx.Earlier(best, e.idx.FirstPath(eff, tool.PathFamily(), r.Path, &e.ctx, conservative))
}
