package gate

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
	"unsafe"

	"github.com/toolgate/toolgate/secrets"
)

// Redactor replaces the secrets that the secrets package finds in what is
// recorded (an API key, a token, a private key block, a password in a URL,
// the credentials of an Authorization header) by a marker naming their
// kind: "[REDACTED:aws-access-key-id:3f2a9c]". The six hex digits are the
// start of an HMAC of the secret under the redactor's key, so that whoever
// holds the key can tell two calls carrying the same secret apart from two
// carrying different ones, while a short or guessable secret cannot be
// confirmed from the log by hashing candidates. Without a key the marker
// has no hash. A Redactor is safe for use by multiple goroutines.
type Redactor struct {
	key []byte
}

// NewRedactor returns a redactor whose markers are keyed under key (the
// gate's Options.LogKey); nil gives markers without a hash.
func NewRedactor(key []byte) *Redactor { return &Redactor{key: key} }

// String returns s with every secret replaced by its marker, and s itself
// when it holds none: those of s as written, and those of s once its
// shell quoting is taken away (AK”IA…), which the engine's reading of a
// command line finds.
func (r *Redactor) String(s string) string {
	return secrets.RedactQuotedFunc(s, func(f secrets.Finding, secret string) string { return r.marker(f.Rule, secret) })
}

// marker is what stands for secret, found by rule.
func (r *Redactor) marker(rule, secret string) string {
	if r == nil || len(r.key) == 0 {
		return "[REDACTED:" + rule + "]"
	}
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte("toolgate redaction v1\x00"))
	m.Write([]byte(secret))
	return "[REDACTED:" + rule + ":" + hex.EncodeToString(m.Sum(nil))[:6] + "]"
}

// Value returns v, a value decoded from JSON (maps, slices, strings,
// numbers, booleans, nil), with the secrets of every string and object key
// redacted, and whether anything changed. An unchanged v is returned as
// it is; a changed one is a copy, v is left alone.
func (r *Redactor) Value(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		s := r.String(x)
		return s, s != x
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			rk := r.String(k)
			var re any
			var changed bool
			if es, ok := e.(string); ok {
				s := r.field(k, es)
				re, changed = s, s != es
			} else {
				re, changed = r.Value(e)
			}
			if !changed && rk == k {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(x))
				for k2, e2 := range x {
					out[k2] = e2
				}
			}
			if rk != k {
				delete(out, k)
			}
			out[rk] = re
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			re, changed := r.Value(e)
			// An argv array names a secret in the word before it
			// (["mysql", "--password", "S3cr…"]).
			if s, ok := re.(string); ok && i > 0 {
				if prev, ok := x[i-1].(string); ok {
					if t := r.after(prev, argSep, s); t != s {
						re, changed = t, true
					}
				}
			}
			if !changed {
				continue
			}
			if out == nil {
				out = append([]any(nil), x...)
			}
			out[i] = re
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// fieldSep joins an object's key and its string value as they lie in the
// object's JSON form, where the engine looks for secrets: a rule whose
// secret is known by the name before it ("password":"…") finds it there.
const fieldSep = `":"`

// argSep joins two words of an array as a command line joins an argv's
// words, where a rule whose secret is known by the option before it
// (--password S3cr…) finds it.
const argSep = " "

// field returns v, the string value of the key k, with its secrets
// redacted: those of v alone, and those that the key names.
func (r *Redactor) field(k, v string) string {
	return r.after(k, fieldSep, r.String(v))
}

// after returns v with the secrets redacted that a scan of k, sep and v
// joined finds in v: those that what comes before v names.
func (r *Redactor) after(k, sep, v string) string {
	return secrets.RedactAfter(k+sep, v, func(f secrets.Finding, secret string) string { return r.marker(f.Rule, secret) })
}

// Input returns the arguments of a tool call with their secrets redacted:
// in itself when none holds one, else a copy.
func (r *Redactor) Input(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	out, changed := r.Value(in)
	if !changed {
		return in
	}
	return out.(map[string]any)
}

// Payload returns the JSON document raw with the secrets of its strings
// and keys redacted. When it holds none, raw itself comes back, byte for
// byte, so that what was signed over it still verifies.
func (r *Redactor) Payload(raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		_, err := decodeJSON(raw)
		return nil, fmt.Errorf("redact secrets: the payload is not JSON: %w", err)
	}
	return r.valid(raw)
}

// valid is [Redactor.Payload] of raw, which is valid JSON (the output of
// json.Marshal need not be checked again). Should it not be, the error
// of decoding it comes back.
func (r *Redactor) valid(raw []byte) ([]byte, error) {
	// Most payloads hold no secret: their strings are looked at where
	// they lie, and the document is decoded and encoded again only when
	// one of them holds one.
	if !mayHoldSecret(raw) {
		return raw, nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("redact secrets: the payload is not JSON: %w", err)
	}
	// Encoded again even when the decoded document holds no secret: an
	// object that names a key twice decodes to the last value, and the
	// bytes of the others, which the redaction never sees, are not kept.
	red, _ := r.Value(v)
	return encodeJSON(red)
}

// mayHoldSecret reports whether a string of raw, a valid JSON document,
// holds a secret, alone (as written or without its shell quoting), joined
// to its key or joined to the array element before it: every string as
// written, the values of a key named twice too, which decoding drops.
// When it does not, [Redactor.Value] of the decoded document changes
// nothing. Each string is scanned as it decodes; one that decodes to its
// own bytes (no escape, valid UTF-8) is scanned where it lies.
func mayHoldSecret(raw []byte) bool {
	// key is the last object key and colon the index of the colon after
	// it: a string that follows it is its value, looked at with it.
	key, colon := "", -1
	// prev is the last string and prevEnd the index after it: a string
	// that follows it after a comma may be the next word of an argv array,
	// looked at with it.
	prev, prevEnd := "", -1
	var pair []byte // a key and its value, or two words, joined; reused
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		// A string starts here (raw is valid JSON and i is outside any
		// string): find its closing quote.
		start, escaped := i, false
		for i++; i < len(raw) && raw[i] != '"'; i++ {
			if raw[i] == '\\' {
				escaped = true
				i++
			}
		}
		if i >= len(raw) {
			return true // not a JSON string after all: decode the whole
		}
		body := raw[start+1 : i]
		var s string
		if !escaped && utf8.Valid(body) {
			// Looked at in place: the scan keeps nothing of it, and raw
			// does not change while it runs.
			s = unsafe.String(unsafe.SliceData(body), len(body))
		} else if err := json.Unmarshal(raw[start:i+1], &s); err != nil {
			return true
		}
		// A string without a secret is one the redaction leaves alone;
		// one that Contains takes for a secret when no rule redacts it
		// only costs the decoding and encoding.
		if secrets.ContainsQuoted(s) {
			return true
		}
		if colon >= 0 && isSpace(raw[colon+1:start]) {
			pair = append(append(append(pair[:0], key...), fieldSep...), s...)
			if secrets.Contains(unsafe.String(unsafe.SliceData(pair), len(pair))) {
				return true
			}
		}
		colon = -1
		j := i + 1
		for j < len(raw) && isSpace(raw[j:j+1]) {
			j++
		}
		if j < len(raw) && raw[j] == ':' {
			key, colon = s, j
			prevEnd = -1
			continue
		}
		// Two strings with a comma between, neither a key: two elements
		// of one array.
		if prevEnd >= 0 && isComma(raw[prevEnd:start]) {
			pair = append(append(append(pair[:0], prev...), argSep...), s...)
			if secrets.Contains(unsafe.String(unsafe.SliceData(pair), len(pair))) {
				return true
			}
		}
		prev, prevEnd = s, i+1
	}
	return false
}

// isComma reports whether b is one comma between JSON whitespace.
func isComma(b []byte) bool {
	i := bytes.IndexByte(b, ',')
	return i >= 0 && isSpace(b[:i]) && isSpace(b[i+1:])
}

// isSpace reports whether b is JSON whitespace only.
func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// redactJSON returns v with the secrets of its JSON form redacted, decoded
// back into a T, and whether anything changed. It is used on a record
// before it is signed, so that what is signed is what the log holds.
func redactJSON[T any](r *Redactor, v T) (T, bool, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return v, false, err
	}
	red, err := r.valid(raw)
	if err != nil || bytes.Equal(red, raw) {
		return v, false, err
	}
	var out T
	dec := json.NewDecoder(bytes.NewReader(red))
	dec.UseNumber() // as the log's readers decode: numbers keep their text
	if err := dec.Decode(&out); err != nil {
		return v, false, err
	}
	return out, true, nil
}

func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
