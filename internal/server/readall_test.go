package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAll checks that a body is read whole whatever length its client
// declared, and that the cap of MaxBody still holds when the declared
// length lies.
func TestReadAll(t *testing.T) {
	body := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name     string
		declared int64
		r        func() io.Reader
	}{
		{"exact", 300, func() io.Reader { return strings.NewReader(body) }},
		{"declared shorter", 10, func() io.Reader { return strings.NewReader(body) }},
		{"declared longer", 5000, func() io.Reader { return strings.NewReader(body) }},
		{"undeclared", -1, func() io.Reader { return strings.NewReader(body) }},
		{"above the cap", MaxBody + 1, func() io.Reader { return strings.NewReader(body) }},
		{"one byte a read", 300, func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(tc.r(), tc.declared)
			if err != nil || string(got) != body {
				t.Errorf("readAll(declared %d) = %d bytes, %v; want the %d bytes", tc.declared, len(got), err, len(body))
			}
		})
	}
	grown := strings.Repeat("y", preallocBody+300)
	if got, err := readAll(strings.NewReader(grown), MaxBody); err != nil || string(got) != grown {
		t.Errorf("readAll of %d bytes declared as %d = %d bytes, %v; want them all", len(grown), MaxBody, len(got), err)
	}
	// A declared length is not trusted with memory before the bytes come:
	// a body declared as MaxBody that sends none holds a small buffer.
	if got, err := readAll(strings.NewReader(""), MaxBody); err != nil || len(got) != 0 || cap(got) > preallocBody+1 {
		t.Errorf("readAll of an empty body declared as %d bytes = %d bytes of a %d-byte buffer, %v; want none of at most %d", MaxBody, len(got), cap(got), err, preallocBody+1)
	}
	if _, err := readAll(iotest.ErrReader(errors.New("broken")), 10); err == nil || err.Error() != "broken" {
		t.Errorf("readAll of a failing reader: %v, want its error", err)
	}

	// A client that declares a small body and sends more than MaxBody is
	// refused all the same.
	big := bytes.Repeat([]byte("x"), MaxBody+10)
	req := httptest.NewRequest(http.MethodPost, "/v1/check", bytes.NewReader(big))
	req.ContentLength = 10
	rec := httptest.NewRecorder()
	var dst map[string]any
	err := decodeBody(rec, req, &dst)
	var he *apiError
	if !errors.As(err, &he) || he.code != http.StatusRequestEntityTooLarge {
		t.Errorf("decodeBody of %d bytes declared as 10: %v, want a 413", len(big), err)
	}
}
