// Command checkload is a loopback load generator for a running toolgate
// server: it sends POST /v1/check requests over keep-alive connections
// and reports decisions per second and the latency percentiles.
//
//	checkload -server http://127.0.0.1:8765 -token-file ~/.local/state/toolgate/agent.token \
//	    -conns 32 -duration 10s -cwd "$PWD" -command 'npm test'
//
// It shares the machine with the server it measures, so it spends as
// little CPU as it can: each connection writes a request prepared once and
// reads the response with a small HTTP/1.1 reader of its own (status line,
// Content-Length, body), one request at a time, as a keep-alive client does.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	server := flag.String("server", "http://127.0.0.1:8765", "URL of the toolgate server")
	tokenFile := flag.String("token-file", "", "agent token file (required)")
	conns := flag.Int("conns", 16, "concurrent keep-alive connections")
	duration := flag.Duration("duration", 10*time.Second, "how long to send requests")
	warmup := flag.Duration("warmup", time.Second, "requests sent before measuring starts")
	cwd := flag.String("cwd", "", "working directory of the calls (default the current one)")
	tool := flag.String("tool", "Bash", "tool of the calls")
	command := flag.String("command", "git status", "shell command of the calls")
	sessions := flag.Int("sessions", 16, "sessions the calls are spread over")
	asJSON := flag.Bool("json", false, "print the result as one JSON object (requests, failed, requests_per_s, p50_us, p90_us, p99_us, max_us, decisions)")
	flag.Parse()
	if *tokenFile == "" || *conns < 1 || *sessions < 1 {
		fail(2, "-token-file is required; -conns and -sessions must be at least 1")
	}
	raw, err := os.ReadFile(*tokenFile)
	if err != nil {
		fail(2, err.Error())
	}
	token := strings.TrimSpace(string(raw))
	if *cwd == "" {
		*cwd, _ = os.Getwd()
	}
	u, err := url.Parse(*server)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		fail(2, fmt.Sprintf("-server %q: want http://host:port", *server))
	}
	path := strings.TrimSuffix(u.Path, "/") + "/v1/check"
	requests := make([][]byte, *sessions)
	for i := range requests {
		body, _ := json.Marshal(map[string]any{
			"tool": *tool, "input": map[string]any{"command": *command}, "cwd": *cwd,
			"session": fmt.Sprintf("checkload-%d", i),
		})
		requests[i] = fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, u.Host, token, len(body), body)
	}

	var measuring atomic.Bool
	var failures atomic.Int64
	decisions := map[string]int{}
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	stop := time.Now().Add(*warmup + *duration)
	time.AfterFunc(*warmup, func() { measuring.Store(true) })
	var start time.Time
	var startOnce sync.Once
	var wg sync.WaitGroup
	for c := range *conns {
		wg.Go(func() {
			var mine []time.Duration
			mineDec := map[string]int{}
			var conn *client
			for i := c; time.Now().Before(stop); i += *conns {
				if conn == nil {
					var err error
					if conn, err = dial(u.Host); err != nil {
						failures.Add(1)
						mu.Lock()
						firstErr = cmpErr(firstErr, err)
						mu.Unlock()
						time.Sleep(10 * time.Millisecond)
						continue
					}
				}
				t0 := time.Now()
				decision, err := conn.do(requests[i%len(requests)])
				if err != nil {
					failures.Add(1)
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					conn.close()
					conn = nil
					continue
				}
				if measuring.Load() {
					startOnce.Do(func() { mu.Lock(); start = t0; mu.Unlock() })
					mine = append(mine, time.Since(t0))
					mineDec[decision]++
				}
			}
			if conn != nil {
				conn.close()
			}
			mu.Lock()
			lat = append(lat, mine...)
			for k, v := range mineDec {
				decisions[k] += v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(lat) == 0 {
		fail(1, fmt.Sprintf("no successful request (%d failures; first: %v)", failures.Load(), firstErr))
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	if *asJSON {
		us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
		out, _ := json.Marshal(map[string]any{
			"requests": len(lat), "failed": failures.Load(), "requests_per_s": float64(len(lat)) / elapsed.Seconds(),
			"p50_us": us(pct(0.50)), "p90_us": us(pct(0.90)), "p99_us": us(pct(0.99)), "max_us": us(lat[len(lat)-1]),
			"decisions": decisions,
		})
		fmt.Println(string(out))
		return
	}
	fmt.Printf("requests:    %d in %s over %d connections (%d failed)\n", len(lat), elapsed.Round(time.Millisecond), *conns, failures.Load())
	fmt.Printf("decisions/s: %.0f\n", float64(len(lat))/elapsed.Seconds())
	fmt.Printf("latency:     p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), lat[len(lat)-1])
	fmt.Printf("decisions:   %v\n", decisions)
	if firstErr != nil {
		fmt.Printf("first error: %v\n", firstErr)
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "checkload:", msg)
	os.Exit(code)
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// client is one keep-alive HTTP/1.1 connection.
type client struct {
	conn net.Conn
	r    *bufio.Reader
	body []byte
}

func dial(addr string) (*client, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &client{conn: c, r: bufio.NewReaderSize(c, 8<<10)}, nil
}

func (c *client) close() { _ = c.conn.Close() }

var decisionKey = []byte(`"decision":"`)

// do writes one request and reads its response, returning the decision
// named in the body. Anything but a 200 with a Content-Length body is an
// error; so is a response that closes the connection.
func (c *client) do(req []byte) (string, error) {
	if _, err := c.conn.Write(req); err != nil {
		return "", err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return "", fmt.Errorf("read status line: %w", err)
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) || len(line) < 12 {
		return "", fmt.Errorf("bad status line %q", line)
	}
	status := string(line[9:12])
	length := -1
	closing := false
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return "", fmt.Errorf("read header: %w", err)
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return "", fmt.Errorf("bad header line %q", h)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return "", fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			closing = true
		}
	}
	if length < 0 {
		return "", errors.New("response without Content-Length")
	}
	if cap(c.body) < length {
		c.body = make([]byte, length)
	}
	body := c.body[:length]
	if _, err := io.ReadFull(c.r, body); err != nil {
		return "", fmt.Errorf("read body: %w", err)
	}
	if status != "200" {
		return "", fmt.Errorf("status %s: %s", status, bytes.TrimSpace(body))
	}
	if closing {
		return "", errors.New("server closed the connection")
	}
	_, rest, ok := bytes.Cut(body, decisionKey)
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 0 {
		return "", fmt.Errorf("no decision in %q", body)
	}
	return string(rest[:end]), nil
}
