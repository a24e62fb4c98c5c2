package argschema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolgate/toolgate/internal/argschema"
	"github.com/toolgate/toolgate/internal/engine"
	"github.com/toolgate/toolgate/internal/tools"
)

// builtin is one schema toolgate writes, compiled by argschema and by
// github.com/google/jsonschema-go, the reference it is checked against.
type builtin struct {
	name string
	src  string
	doc  map[string]any // src decoded, to generate instances from
	ours *argschema.Schema
	ref  *jsonschema.Resolved
}

// builtins compiles every argument schema of the engine and of the
// built-in tools, sorted by name; a schema that does not compile fails tb.
func builtins(tb testing.TB) []builtin {
	tb.Helper()
	var out []builtin
	add := func(name, src string) {
		b := builtin{name: name, src: src}
		var err error
		if b.ours, err = argschema.Compile([]byte(src)); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(src), &s); err != nil {
			tb.Fatalf("%s: reference: %v", name, err)
		}
		if b.ref, err = s.Resolve(nil); err != nil {
			tb.Fatalf("%s: reference: %v", name, err)
		}
		if err := json.Unmarshal([]byte(src), &b.doc); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out = append(out, b)
	}
	for tool, src := range engine.ArgumentSchemas() {
		add("engine/"+string(tool), src)
	}
	x, err := tools.New(tools.Options{StateDir: tb.TempDir(), Shell: tools.NoShell})
	if err != nil {
		tb.Fatal(err)
	}
	for _, tool := range x.Tools("") {
		add("tools/"+string(tool.Name), string(tool.Schema))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// TestBuiltinSchemasCompile checks that every schema of the engine and of
// the executor compiles, and that there are as many as expected.
func TestBuiltinSchemasCompile(t *testing.T) {
	bs := builtins(t)
	engineN, toolsN := 0, 0
	for _, b := range bs {
		if strings.HasPrefix(b.name, "engine/") {
			engineN++
		} else {
			toolsN++
		}
	}
	if engineN != len(engine.ArgumentSchemas()) || toolsN != 8 {
		t.Fatalf("compiled %d engine and %d executor schemas, want %d and 8", engineN, toolsN, len(engine.ArgumentSchemas()))
	}
}

// compare validates the JSON text data against b with argschema, its
// numbers decoded both as float64 and as json.Number, and with the
// reference (float64 numbers): the verdicts must agree. A json.Number
// whose literal is not exactly its float64 is compared with the
// reference only when it has no digits a float64 drops.
func compare(tb testing.TB, b builtin, data []byte) {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var num any
	if dec.Decode(&num) != nil {
		return
	}
	numErr := b.ours.Validate(num) // whatever the float64 decoding says, no panic
	if (numErr == nil) != b.ours.Valid(num) {
		tb.Fatalf("%s %s: Validate = %v, Valid = %v", b.name, data, numErr, b.ours.Valid(num))
	}
	if numErr != nil && numErr.Error() == "" {
		tb.Fatalf("%s %s: an error without a message", b.name, data)
	}
	var flt any
	if json.Unmarshal(data, &flt) != nil {
		return // a number beyond float64
	}
	want := b.ref.Validate(flt)
	got := b.ours.Validate(flt)
	if (got == nil) != (want == nil) {
		tb.Fatalf("%s %s (float64 numbers): argschema says %v, the reference %v", b.name, data, got, want)
	}
	if exact(num) && (numErr == nil) != (want == nil) {
		tb.Fatalf("%s %s (json.Number numbers): argschema says %v, the reference %v", b.name, data, numErr, want)
	}
}

// exact reports whether every json.Number in v is exactly the float64
// encoding/json would decode it to.
func exact(v any) bool {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if i := strings.IndexAny(s, "eE"); len(s) > 64 || i >= 0 && len(s)-i > 4 {
			return false // too long or too large an exponent to check cheaply
		}
		f, err := strconv.ParseFloat(s, 64)
		r, ok := new(big.Rat).SetString(s)
		return err == nil && ok && r.Cmp(new(big.Rat).SetFloat64(f)) == 0
	case []any:
		for _, e := range v {
			if !exact(e) {
				return false
			}
		}
	case map[string]any:
		for _, e := range v {
			if !exact(e) {
				return false
			}
		}
	}
	return true
}

// numbers are literals at and around the bounds the schemas use, as
// decoders give them.
var numbers = []string{"0", "-0", "1", "2", "-1", "1.5", "0.5", "2.0", "1e2", "1E3", "100e-2", "5000", "5001", "4999", "5e3",
	"5000.0", "4999.5", "5000.0000000000000001", "0.99999999999999999999", "123456789012345678901234567890", "1e308", "3"}

var strs = []string{"", "a", "ls", "é", "src/main.go", "git status", "\x00", "日本"}

// gen returns a random value for schema s of doc: mostly of the shape s
// asks for, sometimes not, so that both verdicts are common.
func gen(r *rand.Rand, doc, s map[string]any, depth int) any {
	if ref, ok := s["$ref"].(string); ok {
		defs, _ := doc["$defs"].(map[string]any)
		s, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[k].([]any); ok && r.IntN(4) > 0 {
			if alt, ok := alts[r.IntN(len(alts))].(map[string]any); ok && alt["type"] != nil {
				return gen(r, doc, alt, depth)
			}
		}
	}
	if depth > 4 || r.IntN(8) == 0 {
		return anyValue(r, depth)
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "string":
		return strs[r.IntN(len(strs))]
	case "number", "integer":
		return json.Number(numbers[r.IntN(len(numbers))])
	case "boolean":
		return r.IntN(2) == 0
	case "array":
		items, _ := s["items"].(map[string]any)
		a := []any{}
		for range r.IntN(4) {
			if items != nil {
				a = append(a, gen(r, doc, items, depth+1))
			} else {
				a = append(a, anyValue(r, depth+1))
			}
		}
		return a
	case "object":
		props, _ := s["properties"].(map[string]any)
		m := map[string]any{}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if r.IntN(3) > 0 {
				p, _ := props[name].(map[string]any)
				m[name] = gen(r, doc, p, depth+1)
			}
		}
		if r.IntN(5) == 0 {
			m[[]string{"extra", "lines", "x"}[r.IntN(3)]] = anyValue(r, depth+1)
		}
		return m
	}
	return anyValue(r, depth)
}

// anyValue returns a random JSON value.
func anyValue(r *rand.Rand, depth int) any {
	n := 6
	if depth < 4 {
		n = 8
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return json.Number(numbers[r.IntN(len(numbers))])
	case 3, 4:
		return strs[r.IntN(len(strs))]
	case 5:
		return []any{}
	case 6:
		a := []any{}
		for range 1 + r.IntN(3) {
			a = append(a, anyValue(r, depth+1))
		}
		return a
	}
	m := map[string]any{}
	for range r.IntN(3) {
		m[strs[r.IntN(len(strs))]] = anyValue(r, depth+1)
	}
	return m
}

// TestDifferential checks argschema against the reference on generated
// instances of every built-in schema.
func TestDifferential(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	r := rand.New(rand.NewPCG(7, 11))
	for _, b := range builtins(t) {
		t.Run(b.name, func(t *testing.T) {
			valid := 0
			for range n {
				data, err := json.Marshal(gen(r, b.doc, b.doc, 0))
				if err != nil {
					t.Fatal(err)
				}
				compare(t, b, data)
				var v any
				if json.Unmarshal(data, &v) == nil && b.ours.Valid(v) {
					valid++
				}
			}
			// Both verdicts must be common for the comparison to mean much.
			if b.doc["type"] == "object" && len(b.doc) > 1 && (valid < n/20 || valid > n-n/20) {
				t.Errorf("%d of %d generated instances are valid: the generator does not reach both verdicts", valid, n)
			}
		})
	}
}

// FuzzValidate validates fuzzed JSON against each built-in schema: no
// panic, and the same verdict as the reference.
func FuzzValidate(f *testing.F) {
	bs := builtins(f)
	r := rand.New(rand.NewPCG(3, 5))
	for i, b := range bs {
		for range 4 {
			data, _ := json.Marshal(gen(r, b.doc, b.doc, 0))
			f.Add(uint8(i), data)
		}
	}
	for _, s := range []string{`{"command": "ls"}`, `{"command": ["rm", 1]}`, `{"path": "a", "offset": 1.0}`, `{"pattern": "x", "limit": 5000.0000000000000001}`,
		`{"edits": [{"old_string": "a", "new_string": "b"}], "path": "p"}`, `{"url": ""}`, `{"limit": 1e400, "pattern": "x"}`, `[]`, `null`} {
		f.Add(uint8(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		b := bs[int(which)%len(bs)]
		compare(t, b, data)
	})
}

// Example of what the engine's shell schema says of a bad call.
func ExampleSchema_Validate() {
	s := argschema.MustCompile(engine.ArgumentSchemas()["shell"])
	var v map[string]any
	_ = json.Unmarshal([]byte(`{"command": ["rm", 1], "timeout": "soon"}`), &v)
	fmt.Println(s.Validate(v))
	// Output: input.command[1]: got number, want string; input.timeout: got string, want number
}
