package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	type obj struct {
		Name  string         `json:"name"`
		Count int            `json:"count"`
		Args  map[string]any `json:"args"`
		On    bool           `json:"on"`
	}
	for _, c := range []struct{ in, want string }{
		{``, "it is empty"},
		{`nonsense`, `it is not JSON: "onsense" at byte 2 is not what JSON has there`},
		{`{"name":`, "the JSON ends early, after 8 bytes"},
		{`[1]`, "it is a JSON array, not an object"},
		{`{"name":3}`, `field "name" is a JSON number; it must be a string`},
		{`{"count":"x"}`, `field "count" is a JSON string; it must be a number`},
		{`{"args":"ls"}`, `field "args" is a JSON string; it must be an object such as {"command":"ls"}`},
		{`{"on":1}`, `field "on" is a JSON number; it must be true or false`},
		{`{"other":1}`, `unknown field "other"`},
	} {
		dec := json.NewDecoder(strings.NewReader(c.in))
		dec.DisallowUnknownFields()
		var o obj
		err := dec.Decode(&o)
		if err == nil {
			t.Fatalf("%s decoded", c.in)
		}
		got := Describe([]byte(c.in), err, map[string]string{"args": `an object such as {"command":"ls"}`})
		if got != c.want {
			t.Errorf("Describe(%s) = %q, want %q", c.in, got, c.want)
		}
		for _, leak := range []string{"invalid character", "Go struct", "unmarshal", "literal"} {
			if strings.Contains(got, leak) {
				t.Errorf("Describe(%s) = %q says %q", c.in, got, leak)
			}
		}
	}
}
