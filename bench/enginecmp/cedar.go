package enginecmp

import (
	"fmt"
	"strings"

	"github.com/cedar-policy/cedar-go"
)

// cedarEngine asks cedar-go: each rule is a permit or forbid policy whose
// when condition tests the request's context: its family, and its command
// or path with like patterns (* is cedar's only wildcard, and it crosses
// slashes, which is what a directory-and-below rule needs).
type cedarEngine struct {
	ps *cedar.PolicySet
}

// CedarPolicy returns the rule as a Cedar policy.
func CedarPolicy(r Rule) string {
	effect := "permit"
	if r.Effect == Deny {
		effect = "forbid"
	}
	var cond string
	switch r.Kind {
	case Prefix:
		cond = fmt.Sprintf(`context.family == "shell" && (context.command == "%s" || context.command like "%s *")`, cedarLit(r.Pattern), cedarLit(r.Pattern))
	default:
		cond = fmt.Sprintf(`context.family == "%s" && context.path like "%s/%s/*"`, r.Family, cedarLit(Root), cedarLit(r.Pattern))
	}
	return fmt.Sprintf("%s (principal, action, resource) when { %s };\n", effect, cond)
}

// cedarLit escapes s for a Cedar string or like pattern.
func cedarLit(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, `*`, `\*`).Replace(s)
}

// NewCedar parses the rules as one Cedar policy document.
func NewCedar(rules []Rule) (Engine, error) {
	var doc strings.Builder
	for _, r := range rules {
		doc.WriteString(CedarPolicy(r))
	}
	ps, err := cedar.NewPolicySetFromBytes("rules.cedar", []byte(doc.String()))
	if err != nil {
		return nil, fmt.Errorf("cedar policies: %w", err)
	}
	if got := len(ps.Map()); got != len(rules) {
		return nil, fmt.Errorf("cedar policies: %d policies parsed from %d rules", got, len(rules))
	}
	return &cedarEngine{ps: ps}, nil
}

var (
	cedarPrincipal = cedar.NewEntityUID("Agent", "agent")
	cedarAction    = cedar.NewEntityUID("Action", "call")
	cedarResource  = cedar.NewEntityUID("Tool", "call")
)

// Prepare builds the request's context record. Its Decide answers: a
// satisfied forbid policy denies; otherwise a satisfied permit allows;
// Cedar's default deny with no satisfied policy is no match. A policy that
// fails to evaluate is an error.
func (e *cedarEngine) Prepare(r *Request) (Decide, error) {
	req := cedar.Request{Principal: cedarPrincipal, Action: cedarAction, Resource: cedarResource,
		Context: cedar.NewRecord(cedar.RecordMap{
			"family":  cedar.String(r.Family),
			"command": cedar.String(r.Command()),
			"path":    cedar.String(r.Path),
		})}
	return func() (Outcome, error) {
		d, diag := e.ps.IsAuthorized(nil, req)
		if len(diag.Errors) > 0 {
			return "", fmt.Errorf("cedar: request %s: policy %s: %s", r.Name, diag.Errors[0].PolicyID, diag.Errors[0].Message)
		}
		switch {
		case d == cedar.Allow:
			return Allow, nil
		case len(diag.Reasons) > 0:
			return Deny, nil
		default:
			return NoMatch, nil
		}
	}, nil
}
