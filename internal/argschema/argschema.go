// Package argschema checks tool arguments, as encoding/json decodes them,
// against the small part of JSON Schema (draft 2020-12) that toolgate's
// own argument schemas are written in.
//
// [Compile] accepts exactly these keywords and refuses every other one,
// so a schema never means less than it says:
//
//   - type: one name (null, boolean, object, array, number, string,
//     integer; a number with no fractional part is an integer, 1.0
//     included)
//   - properties, required, additionalProperties (false only)
//   - items (one schema for every element)
//   - minLength (in Unicode code points), minItems
//   - minimum, maximum (integers of at most 2^53 in magnitude)
//   - anyOf, oneOf
//   - $ref to "#/$defs/name", with $defs at the top of the schema
//
// These are the keywords the schemas of the engine and of the tools
// executor use; a keyword is added here when a schema needs it.
//
// A value is what encoding/json decodes into an any: nil, bool, string,
// float64 or json.Number, []any and map[string]any; Go integers and
// float32 are numbers too. Any other Go type, a NaN or infinite float
// and a json.Number that is not a JSON number are not JSON values: one
// fails every schema it is checked against (a value below a property no
// schema describes is not looked at).
//
// [Schema.Validate] allocates nothing when the value is valid.
package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Schema is a compiled schema. It is safe for concurrent use.
type Schema struct {
	root *node
}

// typeSet is a set of JSON types, one bit each.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tString
	tInteger // a number with no fractional part
)

var typeNames = []struct {
	name string
	t    typeSet
}{
	{"null", tNull}, {"boolean", tBoolean}, {"object", tObject}, {"array", tArray},
	{"number", tNumber}, {"string", tString}, {"integer", tInteger},
}

// String names the types of s, joined by "or".
func (s typeSet) String() string {
	var names []string
	for _, n := range typeNames {
		if s&n.t != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " or ")
}

// node is one compiled schema or subschema.
type node struct {
	never bool    // the schema false: no value is valid
	types typeSet // 0: any type

	props        map[string]*node
	names        []string // the keys of props, sorted (for messages)
	required     []string
	noAdditional bool // additionalProperties: false

	items *node

	minLength, minItems int
	minimum, maximum    *int64

	anyOf, oneOf []*node

	ref    string // "#/$defs/name", resolved into target
	target *node
}

// maxDepth bounds how deep validation descends into a value, against a
// value (built in Go, not decoded) that contains itself.
const maxDepth = 512

// Compile compiles the JSON schema src. It refuses a keyword it does not
// implement, a keyword whose value has the wrong form, a $ref it cannot
// resolve and $refs that lead to themselves without descending into the
// value.
func Compile(src []byte) (*Schema, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if dec.More() {
		return nil, errors.New("schema: more than one JSON value")
	}
	c := &compiler{defs: map[string]*node{}}
	if m, ok := doc.(map[string]any); ok {
		if defs, ok := m["$defs"]; ok {
			dm, ok := defs.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("schema: /$defs: got %s, want an object of schemas", jsonKind(defs))
			}
			for _, name := range slices.Sorted(maps.Keys(dm)) {
				if strings.ContainsAny(name, "/~%") {
					return nil, fmt.Errorf("schema: /$defs: name %q: a name with / ~ or %% is not accepted", name)
				}
				n, err := c.compile(dm[name], "/$defs/"+name, false)
				if err != nil {
					return nil, err
				}
				c.defs[name] = n
			}
		}
	}
	root, err := c.compile(doc, "", true)
	if err != nil {
		return nil, err
	}
	for _, r := range c.refs {
		name, ok := strings.CutPrefix(r.ref, "#/$defs/")
		if r.target = c.defs[name]; !ok || r.target == nil {
			return nil, fmt.Errorf("schema: $ref %q: no such schema; a $ref names one of the top-level $defs, as \"#/$defs/name\"", r.ref)
		}
	}
	if err := checkCycles(root, c.defs); err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

// MustCompile is [Compile] for a schema that is part of the program: it
// panics when src does not compile.
func MustCompile(src string) *Schema {
	s, err := Compile([]byte(src))
	if err != nil {
		panic(err)
	}
	return s
}

type compiler struct {
	defs map[string]*node
	refs []*node
}

// compile compiles the schema v found at ptr (a JSON pointer into the
// schema document); root is true for the document itself.
func (c *compiler) compile(v any, ptr string, root bool) (*node, error) {
	at := ptr
	if at == "" {
		at = "/"
	}
	switch v := v.(type) {
	case bool:
		return &node{never: !v}, nil
	case map[string]any:
		n := &node{}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := c.keyword(n, k, v[k], ptr, root); err != nil {
				if _, located := err.(*schemaError); located {
					return nil, err // from a subschema, which says where
				}
				return nil, &schemaError{fmt.Sprintf("schema: %s/%s: %v", ptr, k, err)}
			}
		}
		return n, nil
	}
	return nil, &schemaError{fmt.Sprintf("schema: %s: got %s, want a schema (an object or a boolean)", at, jsonKind(v))}
}

// schemaError is an error of compile, which names where it is.
type schemaError struct{ msg string }

func (e *schemaError) Error() string { return e.msg }

// keyword compiles keyword k with value v into n.
func (c *compiler) keyword(n *node, k string, v any, ptr string, root bool) error {
	var err error
	switch k {
	case "$defs":
		if !root {
			return errors.New("$defs is accepted at the top of the schema only")
		}
		// Compiled by Compile before the root.
	case "$ref":
		s, ok := v.(string)
		if !ok || !strings.HasPrefix(s, "#/$defs/") {
			return fmt.Errorf("got %s, want a string \"#/$defs/name\"", describe(v))
		}
		n.ref = s
		c.refs = append(c.refs, n)
	case "type":
		n.types, err = compileType(v)
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("got %s, want an object of schemas", jsonKind(v))
		}
		n.props = make(map[string]*node, len(m))
		n.names = slices.Sorted(maps.Keys(m))
		for _, name := range n.names {
			if n.props[name], err = c.compile(m[name], ptr+"/properties/"+name, false); err != nil {
				return err
			}
		}
	case "required":
		n.required, err = compileNames(v)
	case "additionalProperties":
		if v != false {
			return fmt.Errorf("got %s, want false", describe(v))
		}
		n.noAdditional = true
	case "items":
		n.items, err = c.compile(v, ptr+"/items", false)
	case "minLength":
		err = compileInt(v, 0, math.MaxInt32, &n.minLength)
	case "minItems":
		err = compileInt(v, 0, math.MaxInt32, &n.minItems)
	case "minimum":
		n.minimum = new(int64)
		err = compileInt(v, -maxBound, maxBound, n.minimum)
	case "maximum":
		n.maximum = new(int64)
		err = compileInt(v, -maxBound, maxBound, n.maximum)
	case "anyOf":
		n.anyOf, err = c.compileList(v, ptr+"/anyOf")
	case "oneOf":
		n.oneOf, err = c.compileList(v, ptr+"/oneOf")
	default:
		return fmt.Errorf("keyword %q is not implemented; the keywords are $defs, $ref, type, properties, required, additionalProperties, items, minLength, minItems, minimum, maximum, anyOf, oneOf", k)
	}
	return err
}

// compileType compiles the value of type: one type name.
func compileType(v any) (typeSet, error) {
	if s, ok := v.(string); ok {
		for _, n := range typeNames {
			if n.name == s {
				return n.t, nil
			}
		}
	}
	return 0, fmt.Errorf("got %s, want one type name: null, boolean, object, array, number, string or integer", describe(v))
}

func compileNames(v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("got %s, want a list of property names", jsonKind(v))
	}
	names := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("got %s in the list, want a property name (a string)", describe(e))
		}
		if slices.Contains(names, s) {
			return nil, fmt.Errorf("%q is listed twice", s)
		}
		names = append(names, s)
	}
	return names, nil
}

// maxBound is the largest minimum or maximum accepted: every integer up
// to it is exactly a float64.
const maxBound = 1 << 53

// compileInt reads v, an integer from lo to hi, into dst.
func compileInt[T int | int64](v any, lo, hi int64, dst *T) error {
	if num, ok := v.(json.Number); ok {
		if i, err := strconv.ParseInt(string(num), 10, 64); err == nil && i >= lo && i <= hi {
			*dst = T(i)
			return nil
		}
	}
	return fmt.Errorf("got %s, want an integer from %d to %d", describe(v), lo, hi)
}

func (c *compiler) compileList(v any, ptr string) ([]*node, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("got %s, want a non-empty list of schemas", describe(v))
	}
	out := make([]*node, len(list))
	for i, e := range list {
		n, err := c.compile(e, ptr+"/"+strconv.Itoa(i), false)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// checkCycles refuses $refs that lead back to a schema without descending
// into the value (through $ref, anyOf and oneOf only): validating would
// never end.
func checkCycles(root *node, defs map[string]*node) error {
	const (
		unseen = iota
		active
		done
	)
	state := map[*node]int{}
	var visit func(n *node) error
	visit = func(n *node) error {
		switch state[n] {
		case active:
			return errors.New("schema: a $ref leads back to itself without descending into the value")
		case done:
			return nil
		}
		state[n] = active
		next := slices.Concat(n.anyOf, n.oneOf)
		if n.target != nil {
			next = append(next, n.target)
		}
		for _, m := range next {
			if err := visit(m); err != nil {
				return err
			}
		}
		state[n] = done
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		if err := visit(defs[name]); err != nil {
			return err
		}
	}
	return visit(root)
}

// describe renders a schema value for a compile error.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return jsonKind(v)
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch kindOf(v) {
	case tNull:
		return "null"
	case tBoolean:
		return "boolean"
	case tObject:
		return "object"
	case tArray:
		return "array"
	case tNumber:
		return "number"
	case tString:
		return "string"
	}
	return fmt.Sprintf("Go type %T, not a JSON value", v)
}

// kindOf returns the JSON type of v (tNumber for every number), or 0 for
// a value that is not JSON.
func kindOf(v any) typeSet {
	switch v := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBoolean
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case string:
		return tString
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0
		}
		return tNumber
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return 0
		}
		return tNumber
	case json.Number:
		if _, ok := parseDecimal(string(v)); !ok {
			return 0
		}
		return tNumber
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return tNumber
	}
	return 0
}
