package argschema

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// decode decodes the JSON text s twice: numbers as json.Number, as the
// engine decodes requests, and as float64, as json.Unmarshal does.
func decode(t testing.TB, s string) (num, flt any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&num); err != nil {
		t.Fatalf("instance %s: %v", s, err)
	}
	if err := json.Unmarshal([]byte(s), &flt); err != nil {
		t.Fatalf("instance %s: %v", s, err)
	}
	return num, flt
}

func TestCompileRefuses(t *testing.T) {
	tests := []struct {
		schema string
		want   string
	}{
		// Keywords that are not implemented, anywhere in the schema.
		{`{"pattern": "^a"}`, `/pattern: keyword "pattern" is not implemented`},
		{`{"enum": [1, 2]}`, `keyword "enum" is not implemented`},
		{`{"const": 1}`, `keyword "const" is not implemented`},
		{`{"format": "uri"}`, `keyword "format" is not implemented`},
		{`{"$schema": "https://json-schema.org/draft/2020-12/schema"}`, `keyword "$schema" is not implemented`},
		{`{"allOf": [{}]}`, `keyword "allOf" is not implemented`},
		{`{"not": {}}`, `keyword "not" is not implemented`},
		{`{"exclusiveMinimum": 0}`, `keyword "exclusiveMinimum" is not implemented`},
		{`{"minProperties": 1}`, `keyword "minProperties" is not implemented`},
		{`{"prefixItems": [{}]}`, `keyword "prefixItems" is not implemented`},
		{`{"properties": {"a": {"type": "string", "pattern": "x"}}}`, `/properties/a/pattern: keyword "pattern" is not implemented`},
		{`{"items": {"uniqueItems": true}}`, `/items/uniqueItems: keyword`},
		{`{"anyOf": [{}, {"if": {}}]}`, `/anyOf/1/if: keyword`},
		{`{"items": {"multipleOf": 2}}`, `/items/multipleOf: keyword`},
		// Keywords no schema of toolgate uses, so not implemented.
		{`{"maxLength": 2}`, `keyword "maxLength" is not implemented`},
		{`{"maxItems": 2}`, `keyword "maxItems" is not implemented`},
		{`{"title": "t"}`, `keyword "title" is not implemented`},
		{`{"properties": {"a": {"description": "d"}}}`, `/properties/a/description: keyword "description" is not implemented`},
		{`{"$defs": {"a": {"dependentRequired": {}}}, "$ref": "#/$defs/a"}`, `/$defs/a/dependentRequired: keyword`},
		// Keywords whose values have the wrong form.
		{`{"type": "int"}`, `got "int", want one type name`},
		{`{"type": ["string", "null"]}`, `/type: got array, want one type name`},
		{`{"type": 3}`, `got 3, want one type name`},
		{`{"required": "a"}`, `got string, want a list of property names`},
		{`{"required": ["a", "a"]}`, `"a" is listed twice`},
		{`{"required": [1]}`, `got 1 in the list`},
		{`{"minLength": -1}`, `got -1, want an integer from 0 to 2147483647`},
		{`{"minItems": 1.5}`, `got 1.5, want an integer from 0 to`},
		{`{"minItems": "1"}`, `got "1", want an integer from 0 to`},
		{`{"minimum": 1.5}`, `got 1.5, want an integer from -9007199254740992 to 9007199254740992`},
		{`{"maximum": 1e300}`, `got 1e300, want an integer from`},
		{`{"maximum": 9007199254740993}`, `got 9007199254740993, want an integer from`},
		{`{"anyOf": []}`, `want a non-empty list of schemas`},
		{`{"oneOf": {}}`, `want a non-empty list of schemas`},
		{`{"properties": []}`, `want an object of schemas`},
		{`{"properties": {"a": 3}}`, `/properties/a: got number, want a schema`},
		{`{"items": [{}]}`, `/items: got array, want a schema`},
		{`{"additionalProperties": "no"}`, `got "no", want false`},
		{`{"additionalProperties": true}`, `got true, want false`},
		{`{"additionalProperties": {}}`, `got object, want false`},
		// References.
		{`{"$ref": "#/definitions/a"}`, `want a string "#/$defs/name"`},
		{`{"$ref": "https://example.com/s.json"}`, `want a string "#/$defs/name"`},
		{`{"$ref": "#/$defs/missing"}`, `$ref "#/$defs/missing": no such schema`},
		{`{"$defs": []}`, `/$defs: got array`},
		{`{"$defs": {"a/b": {}}}`, `name "a/b": a name with / ~ or % is not accepted`},
		{`{"items": {"$defs": {}}}`, `$defs is accepted at the top of the schema only`},
		{`{"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`, `leads back to itself`},
		{`{"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"oneOf": [{"$ref": "#/$defs/a"}]}}}`, `leads back to itself`},
		// Documents that are not one schema.
		{`3`, `got number, want a schema`},
		{`null`, `got null, want a schema`},
		{`{"type": "string"} {}`, `more than one JSON value`},
		{`{"type": `, `schema: unexpected EOF`},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			s, err := Compile([]byte(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "schema: ") || strings.Contains(err.Error(), ": schema: ") {
				t.Fatalf("Compile = %v, %v; want an error containing %q, once prefixed", s, err, tc.want)
			}
		})
	}
}

func TestMustCompilePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), `"enum"`) {
			t.Fatalf("recovered %v, want the compile error", r)
		}
	}()
	MustCompile(`{"enum": [1]}`)
}

func TestValidate(t *testing.T) {
	const (
		shell = `{"type": "object",
		  "properties": {"command": {"$ref": "#/$defs/cmd"}, "cmd": {"$ref": "#/$defs/cmd"}, "timeout": {"type": "number"}},
		  "anyOf": [{"required": ["command"]}, {"required": ["cmd"]}],
		  "$defs": {"cmd": {"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]}}}`
		read = `{"type": "object", "additionalProperties": false,
		  "properties": {"path": {"type": "string", "minLength": 1}, "offset": {"type": "integer", "minimum": 1}, "limit": {"type": "integer", "minimum": 1, "maximum": 5000}},
		  "required": ["path"]}`
		edits = `{"type": "object", "properties": {"edits": {"type": "array", "items": {"type": "object", "additionalProperties": false,
		  "properties": {"old_string": {"type": "string", "minLength": 1}}, "required": ["old_string"]}}}}`
	)
	tests := []struct {
		name, schema, value string
		want                string // "" when valid; else the problems, as Error gives them
	}{
		// type; integer vs number.
		{"string ok", `{"type": "string"}`, `"a"`, ""},
		{"string refuses number", `{"type": "string"}`, `1`, "input: got number, want string"},
		{"number takes integer", `{"type": "number"}`, `3`, ""},
		{"number takes fraction", `{"type": "number"}`, `1.5`, ""},
		{"integer takes 2", `{"type": "integer"}`, `2`, ""},
		{"integer takes 2.0", `{"type": "integer"}`, `2.0`, ""},
		{"integer takes 1e2", `{"type": "integer"}`, `1e2`, ""},
		{"integer takes 150e-2? no", `{"type": "integer"}`, `150e-2`, "input: got number, want integer"},
		{"integer takes 100e-2", `{"type": "integer"}`, `100e-2`, ""},
		{"integer refuses 1.5", `{"type": "integer"}`, `1.5`, "input: got number, want integer"},
		{"integer refuses string", `{"type": "integer"}`, `"2"`, "input: got string, want integer"},
		{"boolean", `{"type": "boolean"}`, `false`, ""},
		{"boolean refuses 0", `{"type": "boolean"}`, `0`, "input: got number, want boolean"},
		{"null", `{"type": "null"}`, `null`, ""},
		{"null refuses object", `{"type": "null"}`, `{}`, "input: got object, want null"},
		{"array refuses object", `{"type": "array"}`, `{}`, "input: got object, want array"},
		{"object refuses array", `{"type": "object"}`, `[]`, "input: got array, want object"},
		{"no type takes anything", `{}`, `[1, {"a": null}]`, ""},
		{"true", `true`, `1`, ""},
		{"false", `false`, `1`, "input: is not accepted here"},
		// properties, required, additionalProperties.
		{"property type", `{"properties": {"a": {"type": "string"}}}`, `{"a": 1}`, "input.a: got number, want string"},
		{"property absent", `{"properties": {"a": {"type": "string"}}}`, `{"b": 1}`, ""},
		{"properties ignore non-objects", `{"properties": {"a": {"type": "string"}}}`, `"str"`, ""},
		{"required", `{"required": ["a", "b"]}`, `{"a": 1}`, "input.b: is required"},
		{"required both", `{"required": ["a", "b"]}`, `{}`, "input.a: is required; input.b: is required"},
		{"required takes null", `{"required": ["a"]}`, `{"a": null}`, ""},
		{"additional false", `{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1, "z": 2, "b": 3}`, `input: unknown fields "b", "z" (known: a)`},
		{"additional false none known", `{"additionalProperties": false}`, `{"z": 2}`, `input: unknown field "z" (no field is accepted)`},
		{"additional false ok", `{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1}`, ""},
		// items and the counts.
		{"items", `{"items": {"type": "string"}}`, `["a", 2, "c", null]`, "input[1]: got number, want string; input[3]: got null, want string"},
		{"items ok", `{"items": {"type": "string"}}`, `["a"]`, ""},
		{"minItems empty", `{"minItems": 1}`, `[]`, "input: is empty, want at least 1 item"},
		{"minItems", `{"minItems": 3}`, `[1, 2]`, "input: has 2 items, want at least 3"},
		{"minLength empty", `{"minLength": 1}`, `""`, "input: is empty, want at least 1 character"},
		{"minLength counts code points", `{"minLength": 3}`, `"éé"`, "input: has 2 characters, want at least 3"},
		{"minLength ignores numbers", `{"minLength": 2}`, `1`, ""},
		// minimum and maximum, exactly.
		{"minimum", `{"minimum": 1}`, `0`, "input: got 0, want at least 1"},
		{"minimum equal", `{"minimum": 1}`, `1`, ""},
		{"minimum 0.9999", `{"minimum": 1}`, `0.9999`, "input: got 0.9999, want at least 1"},
		{"maximum", `{"maximum": 5000}`, `5001`, "input: got 5001, want at most 5000"},
		{"maximum equal", `{"maximum": 5000}`, `5000.0`, ""},
		{"maximum 5e3", `{"maximum": 5000}`, `5e3`, ""},
		{"maximum negative bound", `{"maximum": -3}`, `-2.5`, "input: got -2.5, want at most -3"},
		{"minimum ignores strings", `{"minimum": 1}`, `"0"`, ""},
		// anyOf, oneOf, $ref.
		{"anyOf needs one of", `{"anyOf": [{"required": ["b"]}, {"required": ["a"]}]}`, `{"c": 1}`, "input: needs one of a, b"},
		{"anyOf one matches", `{"anyOf": [{"required": ["b"]}, {"required": ["a"]}]}`, `{"a": 1}`, ""},
		{"anyOf both match", `{"anyOf": [{"type": "string"}, {"minLength": 1}]}`, `"x"`, ""},
		{"anyOf types", `{"anyOf": [{"type": "string"}, {"type": "boolean"}]}`, `1`, "input: got number, want boolean or string"},
		{"anyOf fitting alternative speaks", `{"anyOf": [{"type": "string", "minLength": 2}, {"type": "boolean"}]}`, `"a"`, "input: has 1 character, want at least 2"},
		{"oneOf none", `{"oneOf": [{"type": "string"}, {"type": "array"}]}`, `{}`, "input: got object, want array or string"},
		{"oneOf two", `{"oneOf": [{"type": "number"}, {"type": "integer"}]}`, `1`, "input: matches alternatives 0 and 1 of oneOf, want exactly one"},
		{"oneOf exactly one", `{"oneOf": [{"type": "number"}, {"type": "integer"}]}`, `1.5`, ""},
		{"ref", `{"$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s"}}}`, `{"a": 1}`, "input.a: got number, want string"},
		{"ref with siblings", `{"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}`, `"a"`, "input: has 1 character, want at least 2"},
		{"recursive ref", `{"$defs": {"t": {"type": "object", "properties": {"c": {"$ref": "#/$defs/t"}}}}, "$ref": "#/$defs/t"}`, `{"c": {"c": {"c": 3}}}`, "input.c.c.c: got number, want object"},
		// The shapes of the tool schemas.
		{"shell string", shell, `{"command": "ls"}`, ""},
		{"shell argv", shell, `{"cmd": ["ls", "-l"]}`, ""},
		{"shell none", shell, `{"timeout": 3}`, "input: needs one of cmd, command"},
		{"shell number", shell, `{"command": 42}`, "input.command: got number, want array or string"},
		{"shell empty", shell, `{"command": ""}`, "input.command: is empty, want at least 1 character"},
		{"shell empty argv", shell, `{"command": []}`, "input.command: is empty, want at least 1 item"},
		{"shell argv element", shell, `{"command": ["rm", 1]}`, "input.command[1]: got number, want string"},
		{"shell timeout", shell, `{"command": "ls", "timeout": "soon"}`, "input.timeout: got string, want number"},
		{"read", read, `{"path": "a", "offset": 2, "limit": 5000}`, ""},
		{"read everything wrong", read, `{"offset": 0.5, "limit": 5001, "lines": 1}`, `input.limit: got 5001, want at most 5000; input.offset: got number, want integer; input.path: is required; input: unknown field "lines" (known: limit, offset, path)`},
		{"edits", edits, `{"edits": [{"old_string": "a"}, {"old_string": ""}, {"x": 1}]}`, `input.edits[1].old_string: is empty, want at least 1 character; input.edits[2].old_string: is required; input.edits[2]: unknown field "x" (known: old_string)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			num, flt := decode(t, tc.value)
			for _, v := range []any{num, flt} {
				err := s.Validate(v)
				if s.Valid(v) != (err == nil) {
					t.Errorf("%T numbers: Valid = %v, Validate = %v", v, s.Valid(v), err)
				}
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != tc.want {
					t.Errorf("%T numbers: Validate(%s)\n got: %q\nwant: %q", v, tc.value, got, tc.want)
				}
			}
		})
	}
}

// TestValidateGoValues checks values built in Go rather than decoded:
// Go numbers are numbers, and what is not JSON fails.
func TestValidateGoValues(t *testing.T) {
	integer := MustCompile(`{"type": "integer", "minimum": 1, "maximum": 5000}`)
	anything := MustCompile(`{"properties": {"a": {}}}`)
	loop := map[string]any{}
	loop["a"] = loop
	recursive := MustCompile(`{"$defs": {"t": {"properties": {"a": {"$ref": "#/$defs/t"}}}}, "$ref": "#/$defs/t"}`)
	tests := []struct {
		name   string
		s      *Schema
		v      any
		wantOK bool
		want   string
	}{
		{"int", integer, 5, true, ""},
		{"int8", integer, int8(5), true, ""},
		{"uint16", integer, uint16(5000), true, ""},
		{"int64 big", integer, int64(math.MaxInt64), false, "got 9223372036854775807, want at most 5000"},
		{"uint64 big", integer, uint64(math.MaxUint64), false, "want at most 5000"},
		{"int negative", integer, -1, false, "got -1, want at least 1"},
		{"float32", integer, float32(2), true, ""},
		{"float32 fraction", integer, float32(2.5), false, "got number, want integer"},
		{"NaN", integer, math.NaN(), false, "got Go type float64, not a JSON value"},
		{"Inf", anything, math.Inf(1), false, "not a JSON value"},
		{"bad json.Number", integer, json.Number("12abc"), false, "got Go type json.Number, not a JSON value"},
		{"json.Number 01", integer, json.Number("01"), false, "not a JSON value"},
		{"json.Number huge", integer, json.Number("1e999999999999"), false, "got 1e999999999999, want at most 5000"},
		{"json.Number tiny", integer, json.Number("1e-999999999999"), false, "got number, want integer"},
		{"[]string", MustCompile(`{"type": "array"}`), []string{"a"}, false, "got Go type []string, not a JSON value"},
		{"nested chan", anything, map[string]any{"a": make(chan int)}, false, "input.a: got Go type chan int"},
		{"unchecked chan", anything, map[string]any{"b": make(chan int)}, true, ""},
		{"nil map", MustCompile(`{"type": "object", "required": ["a"]}`), map[string]any(nil), false, "input.a: is required"},
		{"nil slice", MustCompile(`{"type": "array", "minItems": 1}`), []any(nil), false, "is empty"},
		{"value containing itself", recursive, loop, false, "nested more than 512 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate(tc.v)
			if tc.s.Valid(tc.v) != tc.wantOK || (err == nil) != tc.wantOK {
				t.Fatalf("Valid = %v, Validate = %v; want ok %v", tc.s.Valid(tc.v), err, tc.wantOK)
			}
			if err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestDecimal compares the exact reading of number literals with
// math/big's, on literals chosen to be hard and on random ones.
func TestDecimal(t *testing.T) {
	literals := []string{"0", "-0", "0.0", "0e5", "1", "-1", "1.0", "1.5", "10", "1e1", "1E+1", "100e-2", "150e-2",
		"0.001e3", "0.0015e3", "5000", "5000.000000000000000001", "4999.9999999999999999", "5e3", "50e2", "9007199254740992",
		"9007199254740993", "-9007199254740993", "123456789012345678901234567890", "1e-5", "-1e-5", "12.340e1", "0.5"}
	bounds := []int64{0, 1, -1, 5000, -3, 10, 1 << 53, -(1 << 53), 123}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteByte('-')
		}
		if r.IntN(4) == 0 {
			b.WriteByte('0')
		} else {
			b.WriteByte(byte('1' + r.IntN(9)))
			for range r.IntN(6) {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		if r.IntN(2) == 0 {
			b.WriteByte('.')
			for range 1 + r.IntN(5) {
				b.WriteByte("0000123456789"[r.IntN(13)])
			}
		}
		if r.IntN(2) == 0 {
			b.WriteString([]string{"e", "E", "e-", "e+"}[r.IntN(4)])
			b.WriteString(strconv.Itoa(r.IntN(12)))
		}
		literals = append(literals, b.String())
	}
	for _, lit := range literals {
		d, ok := parseDecimal(lit)
		want, okBig := new(big.Rat).SetString(lit)
		if !ok || !okBig {
			t.Fatalf("%s: parseDecimal ok %v, big ok %v", lit, ok, okBig)
		}
		if got := d.isInteger(); got != want.IsInt() {
			t.Errorf("%s: isInteger = %v, want %v", lit, got, want.IsInt())
		}
		for _, bound := range bounds {
			if got, w := d.cmpInt(bound), want.Cmp(new(big.Rat).SetInt64(bound)); got != w {
				t.Errorf("%s vs %d: cmpInt = %d, want %d", lit, bound, got, w)
			}
		}
	}
	for _, bad := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1.5.5", "0x10", "1 ", "Infinity", "NaN", "--1", "1e5e5"} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("parseDecimal(%q) accepted it", bad)
		}
	}
}

// TestValidateAllocates checks that a valid call allocates nothing.
func TestValidateAllocates(t *testing.T) {
	shell := MustCompile(`{"type": "object",
	  "properties": {"command": {"$ref": "#/$defs/cmd"}, "cmd": {"$ref": "#/$defs/cmd"}, "timeout": {"type": "number"}},
	  "anyOf": [{"required": ["command"]}, {"required": ["cmd"]}],
	  "$defs": {"cmd": {"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]}}}`)
	read := MustCompile(`{"type": "object", "additionalProperties": false,
	  "properties": {"path": {"type": "string", "minLength": 1}, "offset": {"type": "integer", "minimum": 1}, "limit": {"type": "integer", "minimum": 1, "maximum": 5000}},
	  "required": ["path"]}`)
	tests := []struct {
		s *Schema
		v string
	}{
		{shell, `{"cmd": "git status", "timeout": 120000, "description": "status"}`},
		{shell, `{"command": ["git", "status"]}`},
		{read, `{"path": "src/main.go", "offset": 10, "limit": 2000}`},
	}
	for _, tc := range tests {
		num, flt := decode(t, tc.v)
		for _, v := range []any{num, flt} {
			if n := testing.AllocsPerRun(100, func() {
				if err := tc.s.Validate(v); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%s (%T numbers): %v allocations, want 0", tc.v, v, n)
			}
		}
	}
}
