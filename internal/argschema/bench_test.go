package argschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/argschema"
	"github.com/toolgate/toolgate/internal/engine"
)

// BenchmarkCompile compiles the engine's shell schema, the one a hook
// deciding a shell call compiles.
func BenchmarkCompile(b *testing.B) {
	src := []byte(engine.ArgumentSchemas()["shell"])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := argschema.Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate validates a shell call's arguments as the engine
// decodes them.
func BenchmarkValidate(b *testing.B) {
	s := argschema.MustCompile(engine.ArgumentSchemas()["shell"])
	dec := json.NewDecoder(strings.NewReader(`{"command": "git status", "timeout": 120000, "description": "status"}`))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}
