package server

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultBodyTimeout is how long a request has, from when its handling
// begins, to send its body.
const DefaultBodyTimeout = 30 * time.Second

// setBodyDeadline gives r until the body timeout to send its body: a
// stalled upload is cut off then, and its connection closed. The deadline
// is on reading only, and [decodeBody] lifts it once the body is read, so
// a check that waits for a person and an event stream stay open as long as
// they need.
func (s *Server) setBodyDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))
}

// liftBodyDeadline removes the deadline of setBodyDeadline, once the body
// is read or for a response that outlives it.
func liftBodyDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

// checkHost refuses a request whose Host header is not an address of this
// server: a web page whose name was rebound to 127.0.0.1 (DNS rebinding)
// reaches the server with its own name as Host, and is refused before any
// handler reads the request. Accepted are the address the connection came
// to ("127.0.0.1:8765"), on loopback also localhost, 127.0.0.1 and [::1]
// at that port, and each of Options.Hosts.
func (s *Server) checkHost(r *http.Request) *apiError {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if hostAllowed(r.Host, local, r.TLS != nil, s.opts.Hosts) {
		return nil
	}
	return errorf(http.StatusMisdirectedRequest, "Host %q is not this server's address: use the address it listens on (such as http://127.0.0.1:8765), or give the name with --public-url", clip(r.Host, 80))
}

// hostAllowed reports whether host, a request's Host header, names the
// server listening at local; extra are the further names accepted, each a
// host or host:port.
func hostAllowed(host string, local net.Addr, tls bool, extra []string) bool {
	host = strings.ToLower(strings.TrimSpace(host))
	if host == "" {
		return false
	}
	for _, h := range extra {
		h = strings.ToLower(h)
		if host == h || (!strings.Contains(strings.TrimPrefix(h, "["), ":") && hostOnly(host) == h) {
			return true
		}
	}
	tcp, ok := local.(*net.TCPAddr)
	if !ok {
		return false
	}
	name, port := hostOnly(host), ""
	if name != host {
		port = host[len(name)+1:]
	}
	switch {
	case port == "" && tls:
		port = "443"
	case port == "":
		port = "80"
	}
	if port != strconv.Itoa(tcp.Port) {
		return false
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]"))
	if ip != nil && ip.Equal(tcp.IP) && !tcp.IP.IsUnspecified() {
		return true
	}
	if tcp.IP.IsLoopback() {
		return name == "localhost" || name == "127.0.0.1" || name == "[::1]"
	}
	return false
}

// hostOnly returns host without its port.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return host
}
