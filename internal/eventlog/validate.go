package eventlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on the envelope's strings, checked by [Validate].
const (
	MaxSessionLen = 256
	MaxTurnLen    = 256
	MaxTypeLen    = 128
)

// Validate reports whether events can be appended to session: the session
// is non-empty, at most [MaxSessionLen] bytes of UTF-8 without control
// characters; each type is non-empty, at most [MaxTypeLen] bytes, without
// spaces or control characters; each turn is at most [MaxTurnLen] bytes of
// UTF-8; each time is zero or within the years 1678–2261 (what Unix
// nanoseconds hold); each payload is empty or a JSON object. The error
// wraps [ErrInvalid] and says which event is wrong and why.
//
// Stores check their input this way before writing anything, so one bad
// event keeps the whole call from being written.
func Validate(session string, events []Draft) error {
	_, err := Prepare(session, events)
	return err
}

// Prepare validates events as [Validate] does and returns the
// [IndexedFieldsOf] of each, so a store parses every payload once.
func Prepare(session string, events []Draft) ([]Fields, error) {
	switch {
	case session == "":
		return nil, fmt.Errorf("%w: session is empty", ErrInvalid)
	case len(session) > MaxSessionLen:
		return nil, fmt.Errorf("%w: session is %d bytes long, the limit is %d", ErrInvalid, len(session), MaxSessionLen)
	case !utf8.ValidString(session) || hasControl(session):
		return nil, fmt.Errorf("%w: session %q is not UTF-8 text without control characters", ErrInvalid, session)
	}
	fields := make([]Fields, len(events))
	for i, d := range events {
		f, err := validateDraft(d)
		if err != nil {
			return nil, fmt.Errorf("%w: event %d of %d for session %q: %s", ErrInvalid, i+1, len(events), session, err)
		}
		fields[i] = f
	}
	return fields, nil
}

var (
	minTime = time.Unix(0, math.MinInt64).Add(24 * time.Hour)
	maxTime = time.Unix(0, math.MaxInt64).Add(-24 * time.Hour)
)

func validateDraft(d Draft) (Fields, error) {
	switch {
	case d.Type == "":
		return Fields{}, fmt.Errorf("type is empty")
	case len(d.Type) > MaxTypeLen:
		return Fields{}, fmt.Errorf("type is %d bytes long, the limit is %d", len(d.Type), MaxTypeLen)
	case !utf8.ValidString(string(d.Type)) || hasControl(string(d.Type)) || bytes.ContainsFunc([]byte(d.Type), unicode.IsSpace):
		return Fields{}, fmt.Errorf("type %q holds spaces, control characters or invalid UTF-8", d.Type)
	case len(d.Turn) > MaxTurnLen:
		return Fields{}, fmt.Errorf("turn is %d bytes long, the limit is %d", len(d.Turn), MaxTurnLen)
	case !utf8.ValidString(d.Turn):
		return Fields{}, fmt.Errorf("turn %q is not UTF-8", d.Turn)
	case !d.Time.IsZero() && (d.Time.Before(minTime) || d.Time.After(maxTime)):
		return Fields{}, fmt.Errorf("time %s is outside the years 1678–2261", d.Time.Format(time.RFC3339))
	}
	return IndexedFieldsOf(d.Type, d.Payload)
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// Fields are the payload fields a [Filter] can select on.
type Fields struct {
	// Decision is the payload's top-level "decision" if it is a string.
	Decision string
	// Tool is the payload's top-level "tool" if it is a string.
	Tool string
}

// IndexedFieldsOf returns the [IndexedFields] of an event of type t: none
// for a type an agent posts ([PostedByAgent]), whatever its payload holds,
// so that no agent event is ever selected as a decision. The payload is
// parsed and checked all the same.
func IndexedFieldsOf(t Type, payload json.RawMessage) (Fields, error) {
	f, err := IndexedFields(payload)
	if err != nil || PostedByAgent(t) {
		return Fields{}, err
	}
	return f, nil
}

// IndexedFields parses payload, which must be empty or a JSON object, and
// returns its top-level string fields "decision" and "tool"; a field that
// is missing or not a string is returned empty. Keys match exactly, as a
// JavaScript reader of the payload sees them, and when a key appears more
// than once its last value counts, as it does for such a reader.
func IndexedFields(payload json.RawMessage) (Fields, error) {
	if len(payload) == 0 {
		return Fields{}, nil
	}
	trimmed := bytes.Trim(payload, " \t\r\n") // JSON's white space, no other
	if len(trimmed) == 0 {
		return Fields{}, errors.New("payload is only white space: give a JSON object, or nothing for {}")
	}
	if trimmed[0] != '{' {
		return Fields{}, fmt.Errorf("payload is not a JSON object: it starts with %q", truncate(trimmed, 20))
	}
	if !json.Valid(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		return Fields{}, fmt.Errorf("payload is not valid JSON: %v", err)
	}
	// trimmed is one valid JSON object: walk its members without decoding
	// the values that are not wanted.
	var f Fields
	for i := skipSpace(trimmed, 1); i < len(trimmed) && trimmed[i] != '}'; {
		keyEnd := endOfValue(trimmed, i)
		key := trimmed[i:keyEnd]
		i = skipSpace(trimmed, skipSpace(trimmed, keyEnd)+1) // past the colon
		valEnd := endOfValue(trimmed, i)
		switch keyName(key) {
		case "decision":
			f.Decision = jsonString(trimmed[i:valEnd])
		case "tool":
			f.Tool = jsonString(trimmed[i:valEnd])
		}
		i = skipSpace(trimmed, valEnd)
		if i < len(trimmed) && trimmed[i] == ',' {
			i = skipSpace(trimmed, i+1)
		}
	}
	return f, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfValue returns the index just past the JSON value starting at b[i],
// which must be valid JSON.
func endOfValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = endOfValue(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	// A number, true, false or null runs to the next delimiter.
	j := i + 1
	for ; j < len(b); j++ {
		switch b[j] {
		case ' ', '\t', '\n', '\r', ',', '}', ']':
			return j
		}
	}
	return j
}

// keyName returns the text of a JSON string literal, without allocating
// when it holds no escapes.
func keyName(raw []byte) string {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		switch inner := raw[1 : len(raw)-1]; string(inner) {
		case "decision":
			return "decision"
		case "tool":
			return "tool"
		}
		return ""
	}
	return jsonString(raw)
}

// jsonString returns the string a JSON string literal holds, or "" when
// raw is not a string.
func jsonString(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
