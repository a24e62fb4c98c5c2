package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/secrets"
)

// MaxBody is the largest request body the server reads, in bytes.
const MaxBody = 1 << 20

// idPattern is what a session, turn or approval id may look like. Its
// repetition makes a large program, compiled at first use rather than when
// the program starts.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`) })

// validID reports whether s may be used as an id. An id is recorded as it
// is, so one that holds what looks like a secret is not valid.
func validID(s string) bool { return idPattern().MatchString(s) && !secrets.Contains(s) }

// checkID returns an error naming field when s is not a valid id.
func checkID(field, s string) error {
	if s == "" {
		return fmt.Errorf("%s is required", field)
	}
	if idPattern().MatchString(s) && secrets.Contains(s) {
		return fmt.Errorf("%s looks like a secret (%s): ids are recorded as they are, so choose one that is not", field, secrets.Scan(s)[0].Rule)
	}
	if !validID(s) {
		return fmt.Errorf("%s %q is not a valid id: use 1 to 128 letters, digits, '_', '.', ':' or '-'", field, clip(s, 40))
	}
	return nil
}

// apiError is an error with the HTTP status it is answered with.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) *apiError {
	return &apiError{code, fmt.Sprintf(format, args...)}
}

// writeJSON writes v as the JSON body of a response with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	h := w.Header()
	h["Content-Type"] = headerJSON
	h["Cache-Control"] = headerNoStore
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeError answers with {"error": msg}; an *apiError chooses the status,
// any other error is a 500.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{http.StatusInternalServerError, err.Error()}
	}
	writeJSON(w, ae.code, map[string]string{"error": ae.msg})
}

// decodeBody reads r's JSON body into dst: at most [MaxBody] bytes (413
// over), one JSON value without unknown fields or trailing data (400). The
// errors name the field at fault.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	body := http.MaxBytesReader(w, r.Body, MaxBody)
	data, err := readAll(body, r.ContentLength)
	if err == nil {
		// Read in time: what follows (a wait for a person) may be long.
		liftBodyDeadline(w)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", MaxBody)
		}
		return errorf(http.StatusBadRequest, "reading the request body: %v", err)
	}
	return decodeJSON(data, dst)
}

// preallocBody bounds the buffer [readAll] makes before a byte of the
// body has come: a client that declares a large body and sends none holds
// no more than this.
const preallocBody = 64 << 10

// readAll reads r to its end into a buffer of the declared length (a
// client's Content-Length, up to preallocBody), so that a body read whole
// is read in one go; a body longer or shorter than declared is read all
// the same, the buffer growing as bytes come.
func readAll(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 || declared > MaxBody {
		return io.ReadAll(r)
	}
	// One byte more than declared, so that the end is seen without growing.
	buf := make([]byte, 0, min(declared, preallocBody)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// decodeJSON decodes data as [decodeBody] does.
func decodeJSON(data []byte, dst any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errorf(http.StatusBadRequest, "the request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return errorf(http.StatusBadRequest, "%s", describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(http.StatusBadRequest, "the request body holds data after the JSON object: send exactly one JSON value")
	}
	return nil
}

// describeJSONError turns a decoding error into a message that names the
// field and says what was expected.
func describeJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: the body ends in the middle of a value"
	case errors.As(err, &te):
		if field := jsonPath(te.Field); field != "" {
			return fmt.Sprintf("field %q must be %s, not a JSON %s", field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("the body must be a JSON object, not a JSON %s", te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Sprintf("unknown field %s: see docs/api.md for the fields this endpoint takes", f)
	}
	return "malformed JSON: " + strings.TrimPrefix(msg, "json: ")
}

// jsonPath drops the names of embedded Go structs ("Request.session")
// from a decoding error's field path, leaving the JSON names.
func jsonPath(field string) string {
	var parts []string
	for p := range strings.SplitSeq(field, ".") {
		if p != "" && !unicode.IsUpper(rune(p[0])) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	}
	return "a " + goKind
}

// clip redacts the secrets of s, then cuts it to at most n bytes (see
// [termtext.Clip]), for an error message: a secret cut in two is no
// longer recognised.
func clip(s string, n int) string { return termtext.Clip(secrets.Redact(s), n) }
