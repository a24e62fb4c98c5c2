package policy

import (
	"net/netip"
	"strings"
)

// parseDomainPattern parses "domain:example.com" or "domain:*.example.com".
func parseDomainPattern(spec string) (string, error) {
	s := strings.TrimSpace(spec)
	host, ok := strings.CutPrefix(s, "domain:")
	if !ok {
		return "", &specError{0, "expected domain:HOST, e.g. WebFetch(domain:example.com) or WebFetch(domain:*.example.com)"}
	}
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
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

// matchHost reports whether host (lower case, no port) matches the pattern.
// "*.example.com" matches subdomains but not example.com itself.
func matchHost(pattern, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if pattern == "*" {
		return host != ""
	}
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
	}
	return host == pattern
}
