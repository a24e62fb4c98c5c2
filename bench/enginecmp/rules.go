// Package enginecmp asks one authorization question of toolgate's rule
// matching, of cedar-go and of OPA (in two forms: rules compiled into
// Rego, and rules as data), so that their costs can be compared side by
// side: may an agent call a tool (a shell command, a read
// or an edit of a path), given n rules of path globs and command prefixes?
//
// Every engine gets the same rules, generated deterministically, and the
// same requests, with paths already absolute and commands already split,
// so that only rule evaluation is compared. The rules that decide the
// requests come last, so an engine that tries rules in order must try them
// all.
package enginecmp

import (
	"fmt"
	"strings"
)

// Outcome is the answer to a request: a deny rule matched, an allow rule
// matched (and no deny rule), or no rule matched.
type Outcome string

// The outcomes.
const (
	Deny    Outcome = "deny"
	Allow   Outcome = "allow"
	NoMatch Outcome = "nomatch"
)

// Family is what a call does: runs a command, reads a path or writes one.
type Family string

// The families.
const (
	Shell Family = "shell"
	Read  Family = "read"
	Write Family = "write"
)

// Kind is how a rule matches: by command prefix or by path glob.
type Kind string

// The rule kinds.
const (
	Prefix Kind = "prefix" // a command, or a command followed by more words
	Glob   Kind = "glob"   // a directory below the project root and all below it
)

// Rule is one rule as every engine reads it.
type Rule struct {
	Effect Outcome // Deny or Allow
	Family Family
	Kind   Kind
	// Pattern is the command prefix ("git status") for Prefix rules, or
	// the directory, relative to the project root, for Glob rules
	// ("src/pkg1"): the rule covers everything below it.
	Pattern string
}

// Root is the project root the rules are relative to.
const Root = "/work/project"

// Home is the user's home directory in the requests.
const Home = "/home/agent"

// Rules returns n rules: n-3 rules that match none of the Requests, in
// four kinds (deny reads below a directory, allow a command prefix, allow
// edits below a directory, deny a command prefix), followed by the three
// rules that decide the Requests. Below 3 it returns those 3 alone.
func Rules(n int) []Rule {
	rules := make([]Rule, 0, max(n, 3))
	for i := range n - 3 {
		switch i % 4 {
		case 0:
			rules = append(rules, Rule{Deny, Read, Glob, fmt.Sprintf("vendor%d", i)})
		case 1:
			rules = append(rules, Rule{Allow, Shell, Prefix, fmt.Sprintf("prog%d sub%d", i, i)})
		case 2:
			rules = append(rules, Rule{Allow, Write, Glob, fmt.Sprintf("src/pkg%d", i)})
		case 3:
			rules = append(rules, Rule{Deny, Shell, Prefix, fmt.Sprintf("tool%d run%d", i, i)})
		}
	}
	return append(rules,
		Rule{Allow, Shell, Prefix, "git status"},
		Rule{Deny, Read, Glob, "secrets"},
		Rule{Allow, Write, Glob, "docs"},
	)
}

// Request is one call: a command split into words, or an absolute path.
type Request struct {
	Name   string
	Family Family
	Words  []string // for Shell: the program and its arguments
	Path   string   // for Read and Write: absolute, already resolved
	Want   Outcome
}

// Command returns the command line the words spell, as the engines that
// match text read it.
func (r *Request) Command() string { return strings.Join(r.Words, " ") }

// Requests are the calls asked of every engine at every size: allowed by
// a command prefix, denied by a path glob, allowed by a path glob, and
// matched by no rule, as a command and as a read.
var Requests = []Request{
	{Name: "shell-allow", Family: Shell, Words: []string{"git", "status", "--short"}, Want: Allow},
	{Name: "read-deny", Family: Read, Path: Root + "/secrets/prod/api.key", Want: Deny},
	{Name: "edit-allow", Family: Write, Path: Root + "/docs/guide.md", Want: Allow},
	{Name: "shell-nomatch", Family: Shell, Words: []string{"make", "build"}, Want: NoMatch},
	{Name: "read-nomatch", Family: Read, Path: Root + "/README.md", Want: NoMatch},
}

// Sizes are the rule counts compared.
var Sizes = []int{10, 100, 1000, 10000}

// Engine answers requests under one rule set.
type Engine interface {
	// Prepare turns a request into the engine's own input, once, and
	// returns what answers it: the part that is timed. An error is the
	// engine failing to evaluate, never a decision.
	Prepare(r *Request) (Decide, error)
}

// Decide answers one prepared request.
type Decide func() (Outcome, error)

// Engines are the compared engines by name, each built from a rule set.
var Engines = []struct {
	Name string
	New  func(rules []Rule) (Engine, error)
}{
	{"toolgate", NewToolgate},
	{"cedar", NewCedar},
	{"opa", NewOPA},
	{"opa-data", NewOPAData},
}
