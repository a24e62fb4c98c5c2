// Package jsonerr words the errors of encoding/json for the person who
// wrote the input: where the input stops being JSON, which field has the
// wrong kind of value and what kind it must have — not the decoder's own
// wording ("invalid character 'o' in literal null", "cannot unmarshal
// number into Go struct field").
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Describe says what is wrong with data, which failed to decode into an
// object with err. want names, for a field, the kind of value it must
// hold ("a string", "an object such as {...}"); a field it does not name
// is said to need the kind of Go value it decodes into. The text has no
// leading capital and no final period, so it can follow "hook input: ".
func Describe(data []byte, err error, want map[string]string) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return "it is empty"
	case errors.As(err, &syn):
		at := max(int(syn.Offset)-1, 0)
		near := data[min(at, len(data)):min(at+20, len(data))]
		return fmt.Sprintf("it is not JSON: %q at byte %d is not what JSON has there", near, at+1)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Sprintf("it is a JSON %s, not an object", typ.Value)
	case errors.As(err, &typ):
		w := want[typ.Field]
		if w == "" {
			w = kindOf(typ.Type.Kind().String())
		}
		return fmt.Sprintf("field %q is a JSON %s; it must be %s", typ.Field, typ.Value, w)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the JSON ends early, after %d bytes", len(data))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + f
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// kindOf names the JSON value a Go kind decodes from.
func kindOf(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	}
	return "another kind of value"
}
