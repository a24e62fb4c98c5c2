package policy

import (
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// parseDomainPattern parses "domain:example.com" or "domain:*.example.com".
func parseDomainPattern(spec string) (string, error) {
	s := strings.TrimSpace(spec)
	host, ok := strings.CutPrefix(s, "domain:")
	if !ok {
		return "", &specError{0, "expected domain:HOST, e.g. WebFetch(domain:example.com) or WebFetch(domain:*.example.com)"}
	}
	host = ASCIIHost(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), "."))
	if h, ok := strings.CutPrefix(host, "["); ok {
		host = strings.TrimSuffix(h, "]")
	}
	if host == "" {
		return "", &specError{7, "expected a host name after domain:"}
	}
	if host != "*" {
		rest := strings.TrimPrefix(host, "*.")
		if strings.ContainsAny(rest, "*/:@ ") {
			if _, err := netip.ParseAddr(rest); err != nil {
				return "", &specError{7, "a host pattern is a name, *.name or an IP address: no paths, ports or other wildcards"}
			}
		}
	}
	return host, nil
}

// ASCIIHost returns the ASCII (punycode) form of an internationalized host
// name, so bücher.de and xn--bcher-kva.de are one host. A name that does
// not convert is returned as it is.
func ASCIIHost(h string) string {
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			if a, err := idna.Lookup.ToASCII(h); err == nil {
				return a
			}
			return h
		}
	}
	return h
}

// matchHost reports whether host (lower case, no port) matches the pattern.
// "*.example.com" matches subdomains but not example.com itself.
func matchHost(pattern, host string) bool {
	host = ASCIIHost(strings.TrimSuffix(strings.ToLower(host), "."))
	if pattern == "*" {
		return host != ""
	}
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
	}
	return host == pattern
}
