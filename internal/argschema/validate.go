package argschema

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Problem is one way a value fails its schema.
type Problem struct {
	// At is where, below the value validated: "" for the value itself,
	// then ".name" for a property and "[i]" for an array element, as in
	// ".edits[0].old_string".
	At string
	// Keyword is the keyword that fails: "type", "required",
	// "additionalProperties", "minLength", "oneOf"…
	Keyword string
	// Field is the absent property of a "required" problem, whose At is
	// the object's; "" for the other keywords.
	Field string
	// Msg says what is wrong and what is accepted: "got number, want
	// string"; "is required" for a "required" problem.
	Msg string

	want typeSet // the types wanted, for a "type" problem
}

// Error is a value's failure to match its schema: each problem found.
type Error struct {
	Problems []Problem
}

// Error lists the problems sorted, each once, joined by "; ", each
// written where: msg, the value itself written "input" as a tool call
// names its arguments: "input.edits[0].old_string: is empty, want at
// least 1 character; input.path: is required".
func (e *Error) Error() string {
	msgs := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		at := "input" + p.At
		if p.Field != "" {
			at += "." + p.Field
		}
		msgs = append(msgs, at+": "+p.Msg)
	}
	sort.Strings(msgs)
	return strings.Join(slices.Compact(msgs), "; ")
}

// Validate checks v against s. It returns nil or an [*Error] naming each
// problem; it allocates nothing when v is valid.
func (s *Schema) Validate(v any) error {
	if s.root.valid(v, 0) {
		return nil
	}
	var out []Problem
	s.root.check(v, "", 0, &out)
	if len(out) == 0 {
		// The two walks disagree: a defect here, but the value is refused.
		out = append(out, Problem{Keyword: "schema", Msg: "does not match the schema"})
	}
	return &Error{Problems: out}
}

// Valid reports whether v matches s, as Validate does, without saying why.
func (s *Schema) Valid(v any) bool { return s.root.valid(v, 0) }

// valid reports whether v matches n. It is the walk that runs for every
// call, so it allocates nothing; check is its twin that says why not.
func (n *node) valid(v any, depth int) bool {
	if n.never || depth > maxDepth {
		return false
	}
	k := kindOf(v)
	if k == 0 {
		return false
	}
	if n.types != 0 && !n.typeOK(v, k) {
		return false
	}
	if n.target != nil && !n.target.valid(v, depth+1) {
		return false
	}
	switch k {
	case tString:
		if n.minLength > 0 && utf8.RuneCountInString(v.(string)) < n.minLength {
			return false
		}
	case tNumber:
		if n.minimum != nil && cmpNumber(v, *n.minimum) < 0 || n.maximum != nil && cmpNumber(v, *n.maximum) > 0 {
			return false
		}
	case tArray:
		a := v.([]any)
		if len(a) < n.minItems {
			return false
		}
		if n.items != nil {
			for _, e := range a {
				if !n.items.valid(e, depth+1) {
					return false
				}
			}
		}
	case tObject:
		m := v.(map[string]any)
		for _, name := range n.required {
			if _, ok := m[name]; !ok {
				return false
			}
		}
		for name, p := range n.props {
			if e, ok := m[name]; ok && !p.valid(e, depth+1) {
				return false
			}
		}
		if n.noAdditional {
			for name := range m {
				if _, ok := n.props[name]; !ok {
					return false
				}
			}
		}
	}
	if len(n.anyOf) > 0 && n.firstValid(n.anyOf, v, depth) < 0 {
		return false
	}
	if len(n.oneOf) > 0 {
		i := n.firstValid(n.oneOf, v, depth)
		if i < 0 || n.firstValid(n.oneOf[i+1:], v, depth) >= 0 {
			return false
		}
	}
	return true
}

// firstValid returns the index of the first schema of list v matches, or -1.
func (n *node) firstValid(list []*node, v any, depth int) int {
	for i, s := range list {
		if s.valid(v, depth+1) {
			return i
		}
	}
	return -1
}

// typeOK reports whether v, of kind k, has one of n's types.
func (n *node) typeOK(v any, k typeSet) bool {
	return n.types&k != 0 || k == tNumber && n.types&tInteger != 0 && isInteger(v)
}

// check appends to out the problems of v, found at at, against n; it
// finds one at least when valid reports v does not match.
func (n *node) check(v any, at string, depth int, out *[]Problem) {
	add := func(keyword, format string, args ...any) {
		*out = append(*out, Problem{At: at, Keyword: keyword, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case n.never:
		add("false", "is not accepted here")
		return
	case depth > maxDepth:
		add("schema", "is nested more than %d levels deep", maxDepth)
		return
	}
	k := kindOf(v)
	if k == 0 {
		add("type", "got %s", jsonKind(v))
		return
	}
	if n.types != 0 && !n.typeOK(v, k) {
		*out = append(*out, Problem{At: at, Keyword: "type", Msg: fmt.Sprintf("got %s, want %s", jsonKind(v), n.types), want: n.types})
		return
	}
	if n.target != nil {
		n.target.check(v, at, depth+1, out)
	}
	switch k {
	case tString:
		l := utf8.RuneCountInString(v.(string))
		switch {
		case l < n.minLength && l == 0:
			add("minLength", "is empty, want at least %s", plural(n.minLength, "character"))
		case l < n.minLength:
			add("minLength", "has %s, want at least %d", plural(l, "character"), n.minLength)
		}
	case tNumber:
		switch {
		case n.minimum != nil && cmpNumber(v, *n.minimum) < 0:
			add("minimum", "got %s, want at least %d", formatNumber(v), *n.minimum)
		case n.maximum != nil && cmpNumber(v, *n.maximum) > 0:
			add("maximum", "got %s, want at most %d", formatNumber(v), *n.maximum)
		}
	case tArray:
		a := v.([]any)
		switch {
		case len(a) < n.minItems && len(a) == 0:
			add("minItems", "is empty, want at least %s", plural(n.minItems, "item"))
		case len(a) < n.minItems:
			add("minItems", "has %s, want at least %d", plural(len(a), "item"), n.minItems)
		}
		if n.items != nil {
			for i, e := range a {
				n.items.check(e, at+"["+strconv.Itoa(i)+"]", depth+1, out)
			}
		}
	case tObject:
		m := v.(map[string]any)
		for _, name := range n.required {
			if _, ok := m[name]; !ok {
				*out = append(*out, Problem{At: at, Keyword: "required", Field: name, Msg: "is required"})
			}
		}
		for _, name := range n.names {
			if e, ok := m[name]; ok {
				n.props[name].check(e, at+"."+name, depth+1, out)
			}
		}
		var unknown []string
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if _, ok := n.props[name]; !ok && n.noAdditional {
				unknown = append(unknown, strconv.Quote(name))
			}
		}
		if len(unknown) > 0 {
			known := "no field is accepted"
			if len(n.names) > 0 {
				known = "known: " + strings.Join(n.names, ", ")
			}
			add("additionalProperties", "unknown %s %s (%s)", pluralWord(len(unknown), "field"), strings.Join(unknown, ", "), known)
		}
	}
	if len(n.anyOf) > 0 && n.firstValid(n.anyOf, v, depth) < 0 {
		n.checkAlternatives("anyOf", n.anyOf, v, at, depth, out)
	}
	if len(n.oneOf) > 0 {
		var matched []string
		for i, s := range n.oneOf {
			if s.valid(v, depth+1) {
				matched = append(matched, strconv.Itoa(i))
			}
		}
		switch {
		case len(matched) == 0:
			n.checkAlternatives("oneOf", n.oneOf, v, at, depth, out)
		case len(matched) > 1:
			add("oneOf", "matches alternatives %s of oneOf, want exactly one", strings.Join(matched, " and "))
		}
	}
}

// checkAlternatives appends the problems of v against the alternatives
// of an anyOf or oneOf it matches none of. The alternatives that accept
// v's type say what is wrong; when none does, one problem names every
// type wanted. When each alternative misses one property of v, one
// problem names them all: "needs one of cmd, command".
func (n *node) checkAlternatives(keyword string, list []*node, v any, at string, depth int, out *[]Problem) {
	var fitting []Problem
	var want typeSet
	var missing []string // one absent property per alternative, while each has just that
	for _, s := range list {
		var ps []Problem
		s.check(v, at, depth+1, &ps)
		wrongType := false
		for _, p := range ps {
			if p.Keyword == "type" && p.At == at {
				wrongType = true
				want |= p.want
			}
		}
		if wrongType {
			continue
		}
		if len(ps) == 1 && ps[0].Keyword == "required" && ps[0].At == at && len(missing) == len(fitting) {
			missing = append(missing, ps[0].Field)
		}
		fitting = append(fitting, ps...)
	}
	if len(missing) > 1 && len(missing) == len(fitting) {
		sort.Strings(missing)
		*out = append(*out, Problem{At: at, Keyword: keyword, Msg: "needs one of " + strings.Join(slices.Compact(missing), ", ")})
		return
	}
	if len(fitting) > 0 {
		*out = append(*out, fitting...)
		return
	}
	msg := fmt.Sprintf("got %s, want %s", jsonKind(v), want)
	if want == 0 {
		msg = fmt.Sprintf("matches none of the alternatives of %s", keyword)
	}
	*out = append(*out, Problem{At: at, Keyword: "type", Msg: msg, want: want})
}

func plural(n int, word string) string {
	return strconv.Itoa(n) + " " + pluralWord(n, word)
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
