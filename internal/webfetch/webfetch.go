// Package webfetch fetches a URL for an allowed WebFetch call without
// letting the fetch go where the policy would not: every URL of a
// redirect chain is checked before it is requested, and every connection
// is checked against the address it actually reaches, so neither a
// redirect nor DNS can lead the fetch to a private address.
package webfetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/engine"
)

// Defaults for the zero values of [Options].
const (
	DefaultMaxRedirects = 10
	DefaultMaxBody      = 10 << 20
	DefaultTimeout      = 30 * time.Second
)

// Errors that stop a fetch at a hop; they are returned inside a
// [*HopError] and can be told apart with errors.Is.
var (
	// ErrScheme: the URL's scheme is not http or https.
	ErrScheme = errors.New("only http and https URLs are fetched")
	// ErrDowngrade: a redirect from https to http.
	ErrDowngrade = errors.New("redirect from https to http refused")
	// ErrTooManyRedirects: the chain is longer than MaxRedirects.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrHost: the URL has no host, or writes an IPv4 address in a
	// spelling other than dotted decimal (2130706433, 0x7f.1, 127.1),
	// which resolvers disagree about.
	ErrHost = errors.New("refused host")
)

// Options configure a [Fetcher]. The zero value is usable: no check, no
// private address, the defaults above.
type Options struct {
	// Check is called with the URL asked for and with every redirect
	// target, before it is requested; a non-nil error stops the fetch and
	// is returned wrapped in a *HopError. It is not called for URLs that
	// are refused before it (bad scheme, downgrade, bad host).
	Check func(ctx context.Context, u *url.URL) error
	// AllowPrivate reports whether the fetch may connect to addr, a
	// private, loopback, link-local, carrier-grade NAT, cloud metadata,
	// unspecified or multicast address, for the URL host host (a name or
	// an IP literal, as written in the URL). addr is what the connection
	// would actually reach, after DNS, with IPv4-mapped IPv6 addresses
	// unmapped. Nil means never.
	AllowPrivate func(host string, addr netip.AddrPort) bool
	// MaxRedirects is how many redirects are followed; 0 means
	// DefaultMaxRedirects and a negative value means none.
	MaxRedirects int
	// MaxBody is how many bytes of the final body are read; 0 means
	// DefaultMaxBody. A longer body is cut and Response.Truncated set.
	MaxBody int64
	// Timeout bounds the whole fetch, every hop and the body; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// TLSConfig, if set, is used (cloned) for https connections.
	TLSConfig *tls.Config
	// UserAgent is sent when the caller's header has none.
	UserAgent string
}

// Fetcher fetches URLs under [Options]. It is safe for concurrent use; it
// keeps idle connections, which [Fetcher.Close] releases.
type Fetcher struct {
	opts      Options
	transport *http.Transport
	client    *http.Client
}

// New returns a Fetcher. Its transport never uses a proxy (HTTP_PROXY and
// the like are ignored, so they cannot reroute a fetch), keeps no cookies
// and does not follow redirects by itself.
func New(opts Options) *Fetcher {
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	if opts.MaxRedirects < 0 {
		opts.MaxRedirects = 0
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	f := &Fetcher{opts: opts}
	f.transport = &http.Transport{
		Proxy:                  nil,
		DialContext:            f.dial,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: 1 << 20,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
	}
	if opts.TLSConfig != nil {
		f.transport.TLSClientConfig = opts.TLSConfig.Clone()
	}
	f.client = &http.Client{
		Transport: f.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return f
}

// Close releases idle connections.
func (f *Fetcher) Close() { f.transport.CloseIdleConnections() }

// Hop is one URL of a redirect chain that was requested.
type Hop struct {
	URL *url.URL
	// Addr is the address the request was sent to.
	Addr netip.AddrPort
	// Status is the HTTP status of the response.
	Status int
}

// Response is the result of a fetch.
type Response struct {
	// URL is the final URL, the one whose body this is.
	URL *url.URL
	// Hops are the URLs requested, in order: the URL asked for first,
	// the final URL last.
	Hops   []Hop
	Status int
	Header http.Header
	// Body is the body, at most MaxBody bytes of it.
	Body []byte
	// Truncated reports that the body was longer than MaxBody.
	Truncated bool
}

// HopError is how a fetch fails: Hop is 0 for the URL asked for and n for
// the target of the n-th redirect, URL the URL of that hop (its password,
// if any, redacted), and Hops the hops that were answered before the
// failure (including the failing one when reading its body failed). Err
// is the cause: one of the Err values of this package, a
// *PrivateAddressError, the Check's error, a network error, or the
// context's error (context.Canceled, context.DeadlineExceeded).
type HopError struct {
	Hop  int
	URL  string
	Hops []Hop
	Err  error
}

func (e *HopError) Error() string {
	return fmt.Sprintf("webfetch: hop %d, %s: %v", e.Hop, e.URL, e.Err)
}

func (e *HopError) Unwrap() error { return e.Err }

// PrivateAddressError reports a connection refused because its address is
// private and AllowPrivate did not allow it. No packet was sent to it.
type PrivateAddressError struct {
	// Host is the host as written in the URL.
	Host string
	// Addr is the address the connection would have reached.
	Addr netip.AddrPort
	// Class is the kind of address, as engine.PrivateTarget names it:
	// "loopback", "private", "link-local", "cloud metadata", ...
	Class string
}

func (e *PrivateAddressError) Error() string {
	switch a, err := netip.ParseAddr(e.Host); {
	case err == nil && a == e.Addr.Addr():
		return fmt.Sprintf("refused to connect to %s: %s address", e.Addr, e.Class)
	case err == nil:
		return fmt.Sprintf("refused to connect to %s (written %s): %s address", e.Addr, e.Host, e.Class)
	}
	return fmt.Sprintf("refused to connect to %s (%s resolves to it): %s address", e.Addr, e.Host, e.Class)
}

// Get fetches rawURL with a GET request carrying header (which may be
// nil), following redirects as [Options] allow. On a redirect to another
// host (name or port) the Authorization, Proxy-Authorization and Cookie
// headers are dropped for the rest of the chain. A redirect response
// without a Location is returned as the final response.
func (f *Fetcher) Get(ctx context.Context, rawURL string, header http.Header) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	header = header.Clone()
	if header == nil {
		header = http.Header{}
	}
	if header.Get("User-Agent") == "" && f.opts.UserAgent != "" {
		header.Set("User-Agent", f.opts.UserAgent)
	}
	var hops []Hop
	fail := func(hop int, u string, err error) (*Response, error) {
		return nil, &HopError{Hop: hop, URL: u, Hops: hops, Err: err}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return fail(0, rawURL, err)
	}
	var prev *url.URL
	for hop := 0; ; hop++ {
		if err := f.vet(ctx, prev, u); err != nil {
			return fail(hop, u.Redacted(), err)
		}
		if prev != nil && !strings.EqualFold(prev.Host, u.Host) {
			for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2"} {
				header.Del(h)
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return fail(hop, u.Redacted(), err)
		}
		req.Header = header.Clone()
		var addr netip.AddrPort
		trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
			if ap, err := netip.ParseAddrPort(ci.Conn.RemoteAddr().String()); err == nil {
				addr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
			}
		}}
		req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
		resp, err := f.client.Do(req)
		if err != nil {
			return fail(hop, u.Redacted(), cause(err))
		}
		hops = append(hops, Hop{URL: u, Addr: addr, Status: resp.StatusCode})
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			body, truncated, err := readBody(resp.Body, f.opts.MaxBody)
			resp.Body.Close()
			if err != nil {
				return fail(hop, u.Redacted(), cause(err))
			}
			return &Response{URL: u, Hops: hops, Status: resp.StatusCode, Header: resp.Header, Body: body, Truncated: truncated}, nil
		}
		// Drain a little of the redirect's body so the connection can be
		// reused.
		io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
		next, err := u.Parse(loc)
		if err != nil {
			return fail(hop+1, loc, fmt.Errorf("bad Location header: %w", err))
		}
		if hop >= f.opts.MaxRedirects {
			return fail(hop+1, next.Redacted(), fmt.Errorf("%w: more than %d", ErrTooManyRedirects, f.opts.MaxRedirects))
		}
		prev, u = u, next
	}
}

// vet checks a URL before it is requested: scheme, downgrade, host, then
// the caller's Check.
func (f *Fetcher) vet(ctx context.Context, prev, u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	default:
		return fmt.Errorf("%w: scheme %q", ErrScheme, u.Scheme)
	}
	if prev != nil && prev.Scheme == "https" && u.Scheme == "http" {
		return ErrDowngrade
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: the URL names no host", ErrHost)
	}
	// Resolvers disagree about odd spellings of an address, so only the
	// dotted decimal one is fetched. The engine's parser decides what is
	// an address, so the two never disagree either.
	if canon := engine.CanonicalHost(host); canon != host {
		if a, err := netip.ParseAddr(canon); err == nil && a.Is4() {
			return fmt.Errorf("%w: %q is the IPv4 address %s in a non-standard spelling", ErrHost, host, canon)
		}
	}
	if f.opts.Check != nil {
		c := *u
		if u.User != nil {
			user := *u.User
			c.User = &user
		}
		if err := f.opts.Check(ctx, &c); err != nil {
			return err
		}
	}
	return nil
}

// dial connects only to addresses that are public or that AllowPrivate
// allows; the check runs on the address actually dialed, after DNS.
func (f *Fetcher) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{
		Timeout: 15 * time.Second,
		Control: func(_, resolved string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(resolved)
			if err != nil {
				return fmt.Errorf("cannot check address %q: %w", resolved, err)
			}
			return f.checkAddr(host, ap)
		},
	}
	return d.DialContext(ctx, network, address)
}

// checkAddr decides whether a connection for host may reach ap.
func (f *Fetcher) checkAddr(host string, ap netip.AddrPort) error {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	class := engine.PrivateTarget(ap.Addr().String())
	if class == "" {
		return nil
	}
	if f.opts.AllowPrivate != nil && f.opts.AllowPrivate(host, ap) {
		return nil
	}
	return &PrivateAddressError{Host: host, Addr: ap, Class: class}
}

// cause strips the *url.Error and *net.OpError around the errors a caller
// tells apart, which HopError already locates.
func cause(err error) error {
	var pe *PrivateAddressError
	if errors.As(err, &pe) {
		return pe
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// readBody reads at most limit bytes of r, reporting whether there was
// more.
func readBody(r io.Reader, limit int64) ([]byte, bool, error) {
	var b bytes.Buffer
	n, err := b.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if n > limit {
		return b.Bytes()[:limit], true, nil
	}
	return b.Bytes(), false, nil
}
