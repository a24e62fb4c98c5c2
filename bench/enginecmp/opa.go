package enginecmp

import (
	"context"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// opaDataModule is the Rego policy of the rules-as-data variant: one list
// of patterns per effect and family, matched with startswith (a command
// prefix ends at a word, so both sides get a trailing space; a directory
// rule is a path prefix ending in a slash); a deny wins over an allow.
// glob.match would spell the directory rules more directly, but OPA keeps
// only a small number of compiled globs, so with hundreds of rules every
// evaluation would compile them again.
const opaDataModule = `package toolgate

import rego.v1

decision := "deny" if {
	some p in data.rules.deny[input.family]
	startswith(input.subject, p)
} else := "allow" if {
	some p in data.rules.allow[input.family]
	startswith(input.subject, p)
} else := "nomatch"
`

// OPAModule returns the rules compiled into Rego, one Rego rule per rule,
// written so that OPA's rule index can pick the candidates: equality on
// the family and on each word of a command prefix or each segment of a
// directory, the path given as its segments below the project root (and
// one more segment required, for "below"). Written with glob.match on the
// path instead, the path rules are not narrowed by the index, and 10,000
// of them cost OPA over 100 ms a decision.
func OPAModule(rules []Rule) string {
	var m strings.Builder
	m.WriteString("package toolgate\n\nimport rego.v1\n\n")
	m.WriteString("decision := \"deny\" if deny\n\telse := \"allow\" if allow\n\telse := \"nomatch\"\n\n")
	for _, r := range rules {
		fmt.Fprintf(&m, "%s if {\n\tinput.family == %q\n", r.Effect, r.Family)
		if r.Kind == Prefix {
			for i, w := range strings.Fields(r.Pattern) {
				fmt.Fprintf(&m, "\tinput.words[%d] == %q\n", i, w)
			}
		} else {
			segs := strings.Split(r.Pattern, "/")
			for i, seg := range segs {
				fmt.Fprintf(&m, "\tinput.segments[%d] == %q\n", i, seg)
			}
			fmt.Fprintf(&m, "\tinput.segments[%d]\n", len(segs))
		}
		m.WriteString("}\n\n")
	}
	return m.String()
}

// OPAData returns the rules as the data of the rules-as-data variant:
// rules.deny.read, rules.allow.shell and so on, each a list of prefixes in
// rule order.
func OPAData(rules []Rule) map[string]any {
	by := map[string]map[string][]any{"deny": {}, "allow": {}}
	for _, f := range []Family{Shell, Read, Write} {
		by["deny"][string(f)] = []any{}
		by["allow"][string(f)] = []any{}
	}
	for _, r := range rules {
		p := r.Pattern + " "
		if r.Kind == Glob {
			p = Root + "/" + r.Pattern + "/"
		}
		l := by[string(r.Effect)]
		l[string(r.Family)] = append(l[string(r.Family)], p)
	}
	data := map[string]any{}
	for eff, fams := range by {
		m := map[string]any{}
		for f, ps := range fams {
			m[f] = ps
		}
		data[eff] = m
	}
	return map[string]any{"rules": data}
}

type opaEngine struct {
	q rego.PreparedEvalQuery
}

// NewOPA compiles the rules into a Rego module (OPAModule) and prepares
// the query data.toolgate.decision.
func NewOPA(rules []Rule) (Engine, error) {
	return prepareOPA(rego.Module("toolgate.rego", OPAModule(rules)))
}

// NewOPAData prepares the query data.toolgate.decision of a fixed module
// with the rules as data (OPAData), in an in-memory store that hands out
// AST values, so that no evaluation converts them again.
func NewOPAData(rules []Rule) (Engine, error) {
	store := inmem.NewFromObjectWithOpts(OPAData(rules), inmem.OptReturnASTValuesOnRead(true))
	return prepareOPA(rego.Module("toolgate.rego", opaDataModule), rego.Store(store))
}

func prepareOPA(opts ...func(*rego.Rego)) (Engine, error) {
	q, err := rego.New(append([]func(*rego.Rego){rego.Query("data.toolgate.decision")}, opts...)...).
		PrepareForEval(context.Background())
	if err != nil {
		return nil, fmt.Errorf("opa: %w", err)
	}
	return &opaEngine{q: q}, nil
}

// Prepare converts the request to an AST input value once.
func (e *opaEngine) Prepare(r *Request) (Decide, error) {
	words := make([]any, len(r.Words))
	for i, w := range r.Words {
		words[i] = w
	}
	subject := r.Path
	if r.Family == Shell {
		subject = r.Command() + " "
	}
	segments := []any{}
	if rel, ok := strings.CutPrefix(r.Path, Root+"/"); ok {
		for _, seg := range strings.Split(rel, "/") {
			segments = append(segments, seg)
		}
	}
	input, err := ast.InterfaceToValue(map[string]any{
		"family":   string(r.Family),
		"words":    words,
		"path":     r.Path,
		"segments": segments,
		"subject":  subject,
	})
	if err != nil {
		return nil, fmt.Errorf("opa: request %s: %w", r.Name, err)
	}
	ctx := context.Background()
	return func() (Outcome, error) {
		rs, err := e.q.Eval(ctx, rego.EvalParsedInput(input))
		if err != nil {
			return "", fmt.Errorf("opa: request %s: %w", r.Name, err)
		}
		if len(rs) != 1 || len(rs[0].Expressions) != 1 {
			return "", fmt.Errorf("opa: request %s: %d results, want 1", r.Name, len(rs))
		}
		s, ok := rs[0].Expressions[0].Value.(string)
		if !ok {
			return "", fmt.Errorf("opa: request %s: decision %v is not a string", r.Name, rs[0].Expressions[0].Value)
		}
		switch o := Outcome(s); o {
		case Deny, Allow, NoMatch:
			return o, nil
		}
		return "", fmt.Errorf("opa: request %s: decision %q is not deny, allow or nomatch", r.Name, s)
	}, nil
}
