package server

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/policy"
)

// openFDs counts the file descriptors of the process.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestThousandStalledUploads opens 1,000 connections to the server as
// Serve runs it, each sending its headers and then part of a body that
// never comes: to the API with and without a token, chunked, to the
// unauthenticated pages, and with a Host the server refuses. Within the
// body timeout every one is closed: the server holds no goroutine and no
// descriptor for them.
func TestThousandStalledUploads(t *testing.T) {
	const timeout = 500 * time.Millisecond
	e := newEnv(t, func(o *Options, _ *policy.File) { o.BodyTimeout = timeout })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go func() { _ = e.srv.Serve(ln) }()
	addr := ln.Addr().String()
	auth := "Authorization: Bearer " + e.tokens.Agent + "\r\n"
	heads := []string{
		"POST /v1/check HTTP/1.1\r\nHost: " + addr + "\r\n" + auth + "Content-Length: 1000\r\n\r\n{\"tool\":",
		"POST /v1/check HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 1000\r\n\r\n{",
		"POST /v1/sessions/s1/events HTTP/1.1\r\nHost: " + addr + "\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"typ",
		"POST /v1/check HTTP/1.1\r\nHost: evil.example\r\n" + auth + "Content-Length: 1000\r\n\r\n{",
		"POST /v1/check HTTP/1.1\r\nHost: evil.example\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"typ",
		"GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 1000\r\n\r\nx",
		"POST /a/token HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nmessage=",
		"GET /nowhere HTTP/1.1\r\nHost: " + addr + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
	}
	runtime.GC()
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	const n = 1000
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for i := range n {
		c, err := net.Dial("tcp", addr)
		must(t, err)
		conns = append(conns, c)
		_, err = io.WriteString(c, heads[i%len(heads)])
		must(t, err)
	}
	// Soon past the body timeout, each stalled upload is cut off.
	var gs, fs int
	for limit := start.Add(timeout + 3*time.Second); ; time.Sleep(50 * time.Millisecond) {
		gs, fs = runtime.NumGoroutine()-goroutines, openFDs(t)-fds-n
		if gs < 20 && fs < 20 {
			break
		}
		if time.Now().After(limit) {
			t.Fatalf("%s after the first of %d stalled uploads, the server holds %d more goroutines and %d more descriptors",
				time.Since(start).Round(time.Millisecond), n, gs, fs)
		}
	}
	t.Logf("%d stalled uploads; after %s the server holds %d more goroutines and %d more descriptors",
		n, time.Since(start).Round(time.Millisecond), gs, fs)
	// Each connection was closed by the server: reading it ends.
	deadline := time.Now().Add(2 * time.Second)
	open := 0
	for _, c := range conns {
		must(t, c.SetReadDeadline(deadline))
		if _, err := io.Copy(io.Discard, c); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				open++
			}
		}
	}
	if open > 0 {
		t.Fatalf("%d of %d stalled uploads are still open after the body timeout", open, n)
	}
}

// TestClipRedactsFirst: a value echoed in an error message is cut after
// its secrets are redacted, on a character boundary, so a token across
// the cut leaves no part of itself behind.
func TestClipRedactsFirst(t *testing.T) {
	const tok = "ghp_R8x2LqvP0wZ3nT7kY1mJ5cH9bF4dS6gA2eQk"
	for _, at := range []int{200 - 34, 200 - 20, 200 - 6} {
		pad := at - 1
		s := strings.Repeat("é", pad/2) + strings.Repeat("x", pad%2) + " " + tok + " /tmp"
		got := clip(s, 200)
		for i := 0; i+8 <= len(tok)-4; i++ {
			if part := tok[4+i : 4+i+8]; strings.Contains(got, part) {
				t.Fatalf("at %d: %q of the token is in %q", at, part, got)
			}
		}
		if !utf8.ValidString(got) {
			t.Fatalf("at %d: cut inside a character: %q", at, got)
		}
	}
}
