package webfetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the connections a test server accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// server is a test server on 127.0.0.1 that records what it was asked.
type server struct {
	*httptest.Server
	ln   *countingListener
	addr netip.AddrPort

	mu       sync.Mutex
	requests []*http.Request
}

func (s *server) conns() int64 { return s.ln.n.Load() }

func (s *server) seen() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// hostPort is the server's 127.0.0.1:port.
func (s *server) hostPort() string { return s.addr.String() }

// newServer starts a server whose handler understands:
//
//	/ok               200 "ok"
//	/to?u=URL         302 to URL
//	/hops?n=N&u=URL   302 to /hops?n=N-1, and at 0 to URL
//	/loop?i=I         302 to /loop?i=I+1, forever
//	/body?n=N         200 with N bytes
//	/slow             waits for the request to be cancelled
//	/status?c=C&u=URL status C with Location URL
func newServer(t *testing.T, tlsServer bool) *server {
	t.Helper()
	s := &server{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Clone(context.Background()))
		s.mu.Unlock()
		q := r.URL.Query()
		switch r.URL.Path {
		case "/ok":
			fmt.Fprint(w, "ok")
		case "/to":
			http.Redirect(w, r, q.Get("u"), http.StatusFound)
		case "/hops":
			n, _ := strconv.Atoi(q.Get("n"))
			if n <= 0 {
				http.Redirect(w, r, q.Get("u"), http.StatusFound)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hops?n=%d&u=%s", n-1, url.QueryEscape(q.Get("u"))), http.StatusFound)
		case "/loop":
			i, _ := strconv.Atoi(q.Get("i"))
			http.Redirect(w, r, fmt.Sprintf("/loop?i=%d", i+1), http.StatusMovedPermanently)
		case "/body":
			n, _ := strconv.Atoi(q.Get("n"))
			w.Write([]byte(strings.Repeat("x", n)))
		case "/slow":
			<-r.Context().Done()
		case "/status":
			c, _ := strconv.Atoi(q.Get("c"))
			if u := q.Get("u"); u != "" {
				w.Header().Set("Location", u)
			}
			w.WriteHeader(c)
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewUnstartedServer(h)
	s.ln = &countingListener{Listener: srv.Listener}
	srv.Listener = s.ln
	if tlsServer {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	s.Server = srv
	s.addr = netip.MustParseAddrPort(srv.Listener.Addr().String())
	return s
}

// env is a set of test servers: a and b may be reached, forbidden may
// not, and must never see a connection.
type env struct {
	a, b, forbidden *server
}

func newEnv(t *testing.T) *env {
	e := &env{a: newServer(t, false), b: newServer(t, false), forbidden: newServer(t, false)}
	t.Cleanup(func() {
		if n := e.forbidden.conns(); n != 0 {
			t.Errorf("the forbidden server accepted %d connections", n)
		}
	})
	return e
}

// allow lets the fetcher reach exactly the given servers.
func allow(servers ...*server) func(string, netip.AddrPort) bool {
	return func(_ string, addr netip.AddrPort) bool {
		for _, s := range servers {
			if s.addr == addr {
				return true
			}
		}
		return false
	}
}

func (e *env) fetcher(t *testing.T, opts Options) *Fetcher {
	if opts.AllowPrivate == nil {
		opts.AllowPrivate = allow(e.a, e.b)
	}
	f := New(opts)
	t.Cleanup(f.Close)
	return f
}

func TestRedirectChainAllowed(t *testing.T) {
	e := newEnv(t)
	var checked []string
	f := e.fetcher(t, Options{Check: func(_ context.Context, u *url.URL) error {
		checked = append(checked, u.String())
		return nil
	}})
	final := e.a.URL + "/ok"
	start := e.a.URL + "/to?u=" + url.QueryEscape(e.b.URL+"/to?u="+url.QueryEscape(final))
	h := http.Header{"Authorization": {"Bearer secret"}, "Cookie": {"s=1"}, "X-Keep": {"yes"}}
	resp, err := f.Get(context.Background(), start, h)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Body) != "ok" || resp.Truncated || resp.URL.String() != final {
		t.Fatalf("got %d %q truncated=%v url=%s", resp.Status, resp.Body, resp.Truncated, resp.URL)
	}
	var got []string
	for _, hop := range resp.Hops {
		got = append(got, fmt.Sprintf("%d %s", hop.Status, hop.URL))
	}
	want := []string{
		"302 " + start,
		"302 " + e.b.URL + "/to?u=" + url.QueryEscape(final),
		"200 " + final,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(checked, "\n") != strings.Join(hopURLs(resp), "\n") {
		t.Errorf("Check saw %v, want every hop", checked)
	}
	if resp.Hops[0].Addr != e.a.addr || resp.Hops[1].Addr != e.b.addr {
		t.Errorf("hop addresses %v %v, want %v %v", resp.Hops[0].Addr, resp.Hops[1].Addr, e.a.addr, e.b.addr)
	}
	// The first hop gets the credentials; after the host changed, no one
	// does, not even the first host again.
	ra, rb := e.a.seen(), e.b.seen()
	if len(ra) != 2 || len(rb) != 1 {
		t.Fatalf("requests: a %d, b %d", len(ra), len(rb))
	}
	if ra[0].Header.Get("Authorization") == "" || ra[0].Header.Get("Cookie") == "" {
		t.Error("the first hop lost the caller's headers")
	}
	for _, r := range []*http.Request{rb[0], ra[1]} {
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			t.Errorf("%s got credentials after the host changed: %v", r.URL, r.Header)
		}
		if r.Header.Get("X-Keep") != "yes" {
			t.Errorf("%s lost X-Keep", r.URL)
		}
	}
}

// hopURLs lists the URLs of the hops.
func hopURLs(r *Response) []string {
	var out []string
	for _, h := range r.Hops {
		out = append(out, h.URL.String())
	}
	return out
}

func TestSameHostKeepsCredentials(t *testing.T) {
	e := newEnv(t)
	f := e.fetcher(t, Options{})
	_, err := f.Get(context.Background(), e.a.URL+"/to?u=/ok", http.Header{"Authorization": {"Bearer x"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range e.a.seen() {
		if r.Header.Get("Authorization") != "Bearer x" {
			t.Errorf("%s: Authorization dropped on a same-host redirect", r.URL)
		}
	}
}

// TestRedirectRefused is the table of redirects that must stop the fetch
// before anything is sent to their target.
func TestRedirectRefused(t *testing.T) {
	e := newEnv(t)
	fp := strconv.Itoa(int(e.forbidden.addr.Port()))
	tests := []struct {
		name  string
		to    string
		is    error  // errors.Is target, or nil
		class string // PrivateAddressError class, when is is nil
	}{
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", nil, "cloud metadata"},
		{"loopback on another port", "http://127.0.0.1:" + fp + "/", nil, "loopback"},
		{"decimal address", "http://2130706433:" + fp + "/", ErrHost, ""},
		{"hex address", "http://0x7f000001:" + fp + "/", ErrHost, ""},
		{"short address", "http://127.1:" + fp + "/", ErrHost, ""},
		{"octal address", "http://0177.0.0.1:" + fp + "/", ErrHost, ""},
		{"mapped IPv6", "http://[::ffff:127.0.0.1]:" + fp + "/", nil, "loopback"},
		{"IPv6 loopback", "http://[::1]:" + fp + "/", nil, "loopback"},
		{"unspecified", "http://0.0.0.0:" + fp + "/", nil, "unspecified"},
		{"private", "http://10.0.0.1/", nil, "private"},
		{"CGNAT", "http://100.64.0.1/", nil, "carrier-grade NAT"},
		{"localhost by name", "http://localhost:" + fp + "/", nil, "loopback"},
		{"file", "file:///etc/passwd", ErrScheme, ""},
		{"gopher", "gopher://127.0.0.1:" + fp + "/", ErrScheme, ""},
		{"no host", "http:///x", ErrHost, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var checked []string
			f := e.fetcher(t, Options{Check: func(_ context.Context, u *url.URL) error {
				checked = append(checked, u.String())
				return nil
			}})
			start := e.a.URL + "/to?u=" + url.QueryEscape(tc.to)
			_, err := f.Get(context.Background(), start, nil)
			var he *HopError
			if !errors.As(err, &he) {
				t.Fatalf("got %v, want a *HopError", err)
			}
			if he.Hop != 1 || len(he.Hops) != 1 || !strings.Contains(err.Error(), "hop 1") {
				t.Errorf("error %q: hop %d after %d hops, want hop 1", err, he.Hop, len(he.Hops))
			}
			if tc.is != nil {
				if !errors.Is(err, tc.is) {
					t.Errorf("got %v, want %v", err, tc.is)
				}
				if len(checked) != 1 {
					t.Errorf("Check was called for a URL refused before it: %v", checked)
				}
				return
			}
			var pe *PrivateAddressError
			if !errors.As(err, &pe) || pe.Class != tc.class {
				t.Errorf("got %v, want a %s address refused", err, tc.class)
			}
			if !strings.Contains(err.Error(), tc.class) || !strings.Contains(err.Error(), he.URL) {
				t.Errorf("error %q does not name the class and the URL", err)
			}
		})
	}
}

func TestFirstURLRefused(t *testing.T) {
	e := newEnv(t)
	f := e.fetcher(t, Options{})
	for _, u := range []string{e.forbidden.URL + "/ok", "ftp://example.com/", "http://2130706433:" + strconv.Itoa(int(e.forbidden.addr.Port()))} {
		_, err := f.Get(context.Background(), u, nil)
		var he *HopError
		if !errors.As(err, &he) || he.Hop != 0 || he.URL != u || len(he.Hops) != 0 {
			t.Errorf("Get(%s) = %v, want a hop 0 error", u, err)
		}
	}
}

func TestErrorRedactsPassword(t *testing.T) {
	e := newEnv(t)
	_, err := e.fetcher(t, Options{}).Get(context.Background(), "http://me:hunter2@"+e.forbidden.hostPort()+"/", nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("got %v, want an error without the password", err)
	}
}

func TestLocalhostRefusedAtDial(t *testing.T) {
	e := newEnv(t)
	var hosts []string
	var mu sync.Mutex
	f := New(Options{AllowPrivate: func(host string, addr netip.AddrPort) bool {
		mu.Lock()
		hosts = append(hosts, host+" "+addr.Addr().String())
		mu.Unlock()
		return false
	}})
	defer f.Close()
	_, err := f.Get(context.Background(), "http://localhost:"+strconv.Itoa(int(e.a.addr.Port()))+"/ok", nil)
	var pe *PrivateAddressError
	if !errors.As(err, &pe) || pe.Host != "localhost" || pe.Class != "loopback" {
		t.Fatalf("got %v, want the loopback address refused", err)
	}
	if len(hosts) == 0 || !strings.HasPrefix(hosts[0], "localhost ") {
		t.Errorf("AllowPrivate saw %v, want it asked about localhost's addresses", hosts)
	}
	if n := e.a.conns(); n != 0 {
		t.Errorf("the server accepted %d connections", n)
	}
	// With the address allowed, the same URL is fetched.
	f2 := e.fetcher(t, Options{})
	if _, err := f2.Get(context.Background(), "http://localhost:"+strconv.Itoa(int(e.a.addr.Port()))+"/ok", nil); err != nil {
		t.Errorf("allowed localhost: %v", err)
	}
}

func TestMappedAddressAllowed(t *testing.T) {
	e := newEnv(t)
	// AllowPrivate sees the unmapped address: the allowed server is
	// reached however its address is written.
	u := "http://[::ffff:127.0.0.1]:" + strconv.Itoa(int(e.a.addr.Port())) + "/ok"
	resp, err := e.fetcher(t, Options{}).Get(context.Background(), u, nil)
	if err != nil || string(resp.Body) != "ok" || resp.Hops[0].Addr != e.a.addr {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

func TestDowngradeRefused(t *testing.T) {
	e := newEnv(t)
	secure := newServer(t, true)
	pool := x509.NewCertPool()
	pool.AddCert(secure.Certificate())
	// b is allowed: only the downgrade stops the fetch.
	f := e.fetcher(t, Options{AllowPrivate: allow(secure, e.b), TLSConfig: &tls.Config{RootCAs: pool}})
	resp, err := f.Get(context.Background(), secure.URL+"/to?u=/ok", nil)
	if err != nil || string(resp.Body) != "ok" {
		t.Fatalf("https to https: %v", err)
	}
	_, err = f.Get(context.Background(), secure.URL+"/to?u="+url.QueryEscape(e.b.URL+"/ok"), nil)
	if !errors.Is(err, ErrDowngrade) || !strings.Contains(err.Error(), e.b.URL+"/ok") {
		t.Errorf("got %v, want the downgrade refused", err)
	}
	if n := e.b.conns(); n != 0 {
		t.Errorf("the http target accepted %d connections", n)
	}
}

func TestCheckDeniesHop3(t *testing.T) {
	e := newEnv(t)
	denied := errors.New("host not allowed by policy")
	var checked []string
	f := e.fetcher(t, Options{Check: func(_ context.Context, u *url.URL) error {
		checked = append(checked, u.String())
		if u.Host == e.b.hostPort() {
			return denied
		}
		return nil
	}})
	target := e.b.URL + "/ok"
	_, err := f.Get(context.Background(), e.a.URL+"/hops?n=2&u="+url.QueryEscape(target), nil)
	var he *HopError
	if !errors.As(err, &he) || !errors.Is(err, denied) {
		t.Fatalf("got %v, want the check's error in a HopError", err)
	}
	if he.Hop != 3 || he.URL != target || len(he.Hops) != 3 || !strings.Contains(err.Error(), "hop 3, "+target) {
		t.Errorf("error %q: hop %d url %s after %d hops, want hop 3 %s", err, he.Hop, he.URL, len(he.Hops), target)
	}
	if len(checked) != 4 || checked[3] != target {
		t.Errorf("Check saw %v", checked)
	}
	if n := e.b.conns(); n != 0 {
		t.Errorf("the denied host accepted %d connections", n)
	}
}

func TestTooManyRedirects(t *testing.T) {
	e := newEnv(t)
	f := e.fetcher(t, Options{MaxRedirects: 3})
	_, err := f.Get(context.Background(), e.a.URL+"/loop?i=0", nil)
	var he *HopError
	if !errors.Is(err, ErrTooManyRedirects) || !errors.As(err, &he) || he.Hop != 4 || !strings.HasSuffix(he.URL, "/loop?i=4") {
		t.Fatalf("got %v, want too many redirects at hop 4", err)
	}
	if n := len(e.a.seen()); n != 4 {
		t.Errorf("%d requests, want 4 (the URL and 3 redirects)", n)
	}
	// The default follows 10; a negative maximum follows none.
	e2 := newEnv(t)
	if _, err := e2.fetcher(t, Options{}).Get(context.Background(), e2.a.URL+"/loop?i=0", nil); !errors.Is(err, ErrTooManyRedirects) || len(e2.a.seen()) != 11 {
		t.Errorf("default: %v after %d requests", err, len(e2.a.seen()))
	}
	e3 := newEnv(t)
	if _, err := e3.fetcher(t, Options{MaxRedirects: -1}).Get(context.Background(), e3.a.URL+"/loop?i=0", nil); !errors.Is(err, ErrTooManyRedirects) || len(e3.a.seen()) != 1 {
		t.Errorf("none: %v after %d requests", err, len(e3.a.seen()))
	}
}

func TestRedirectWithoutLocation(t *testing.T) {
	e := newEnv(t)
	resp, err := e.fetcher(t, Options{}).Get(context.Background(), e.a.URL+"/status?c=302", nil)
	if err != nil || resp.Status != 302 || len(resp.Hops) != 1 {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

func TestBodyLimit(t *testing.T) {
	e := newEnv(t)
	f := e.fetcher(t, Options{MaxBody: 100})
	for _, tc := range []struct {
		n         int
		wantLen   int
		truncated bool
	}{{99, 99, false}, {100, 100, false}, {101, 100, true}, {1 << 20, 100, true}} {
		resp, err := f.Get(context.Background(), fmt.Sprintf("%s/body?n=%d", e.a.URL, tc.n), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Body) != tc.wantLen || resp.Truncated != tc.truncated {
			t.Errorf("n=%d: %d bytes truncated=%v, want %d %v", tc.n, len(resp.Body), resp.Truncated, tc.wantLen, tc.truncated)
		}
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t)
	f := e.fetcher(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := f.Get(ctx, e.a.URL+"/slow", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("the fetch did not stop when cancelled")
	}
	f2 := e.fetcher(t, Options{Timeout: 50 * time.Millisecond})
	if _, err := f2.Get(context.Background(), e.a.URL+"/slow", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want context.DeadlineExceeded", err)
	}
}

func TestNoProxy(t *testing.T) {
	f := New(Options{})
	if f.transport.Proxy != nil {
		t.Error("the transport must not take a proxy from the environment")
	}
	if f.client.Jar != nil {
		t.Error("the client must not keep cookies")
	}
}

func TestCheckAddr(t *testing.T) {
	f := New(Options{})
	for addr, want := range map[string]string{
		"93.184.216.34:443":           "",
		"[2606:4700::1111]:443":       "",
		"127.0.0.1:80":                "loopback",
		"127.9.9.9:80":                "loopback",
		"[::1]:80":                    "loopback",
		"[::ffff:169.254.169.254]:80": "cloud metadata",
		"[64:ff9b::7f00:1]:80":        "loopback",
		"[2002:7f00:1::]:80":          "loopback",
		"[fd00:ec2::254]:80":          "cloud metadata",
		"10.1.2.3:80":                 "private",
		"172.16.0.1:80":               "private",
		"192.168.1.1:80":              "private",
		"[fc00::1]:80":                "private",
		"169.254.1.1:80":              "link-local",
		"[fe80::1]:80":                "link-local",
		"100.64.0.1:80":               "carrier-grade NAT",
		"0.0.0.0:80":                  "unspecified",
		"[::]:80":                     "unspecified",
		"239.1.2.3:80":                "multicast",
	} {
		err := f.checkAddr("example.com", netip.MustParseAddrPort(addr))
		var pe *PrivateAddressError
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want allowed", addr, err)
		case want != "" && (!errors.As(err, &pe) || pe.Class != want):
			t.Errorf("%s: %v, want a %s address refused", addr, err, want)
		}
	}
}

// TestOddAddressSpellings: an IPv4 address written any way but dotted
// decimal is refused before anything is asked or dialed; names and
// dotted decimal addresses go on to the check.
func TestOddAddressSpellings(t *testing.T) {
	f := New(Options{})
	defer f.Close()
	for host, refused := range map[string]bool{
		"2130706433": true, "0x7f000001": true, "0177.0.0.1": true, "127.1": true, "127.0.0.1.": true,
		"\uff11\uff12\uff17.0.0.1": true, "0x7f.1": true,
		"127.0.0.1": false, "1.2.3.4.5": false, "example.com": false, "1.2.3.a": false, "[::1]": false,
	} {
		u := &url.URL{Scheme: "http", Host: host}
		err := f.vet(context.Background(), nil, u)
		if got := errors.Is(err, ErrHost); got != refused {
			t.Errorf("%s: %v, want refused=%v", host, err, refused)
		}
	}
}
