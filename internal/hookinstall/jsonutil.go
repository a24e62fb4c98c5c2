package hookinstall

import (
	"encoding/json"
)

func jsonUnquote(b []byte, s *string) error { return json.Unmarshal(b, s) }

func isJSONNumber(s string) bool {
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}
