package engine

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// normalizeHost turns a host as written into the name or address a
// resolver would use: fullwidth letters and ideographic dots folded to
// ASCII, lower case, no trailing dot or brackets, and IPv4 literals in any
// spelling inet_aton accepts (2130706433, 0x7f000001, 0177.0.0.1, 127.1)
// rewritten in dotted decimal.
func normalizeHost(h string) string {
	var b strings.Builder
	for _, r := range h {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0 // fullwidth forms
		case r == 0x3002 || r == 0xFF0E || r == 0xFF61:
			r = '.' // ideographic and halfwidth full stops
		}
		b.WriteRune(r)
	}
	s := strings.TrimSuffix(strings.ToLower(strings.Trim(b.String(), "[]")), ".")
	// IDNA mapping can turn a name into an address ("0" and a combining
	// mark is "0"), so the address forms are checked after it.
	s = strings.TrimSuffix(policy.ASCIIHost(s), ".")
	if a, ok := parseIPv4Loose(s); ok {
		return a.String()
	}
	return s
}

// parseIPv4Loose parses the forms of an IPv4 address that inet_aton and
// URL parsers in browsers and HTTP clients accept: one to four parts, each
// decimal, 0x-hex or 0-octal, the last part filling the remaining bytes.
func parseIPv4Loose(s string) (netip.Addr, bool) {
	if s == "" || strings.ContainsAny(s, ":") {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		if p == "" && base != 16 {
			return netip.Addr{}, false
		}
		if p == "" {
			p = "0"
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i, v := range vals[:last] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	nat64l  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixto4  = netip.MustParsePrefix("2002::/16")
	cgnat   = netip.MustParsePrefix("100.64.0.0/10")
	bench   = netip.MustParsePrefix("198.18.0.0/15")
	thisNet = netip.MustParsePrefix("0.0.0.0/8")
)

// embeddedIPv4 returns the IPv4 address that an IPv6 address carries
// (mapped, compatible, NAT64, 6to4), if any.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if a.Is4() {
		return a, true
	}
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), true
	case nat64.Contains(a) || nat64l.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixto4.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0 && b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] == 0 &&
		b[8] == 0 && b[9] == 0 && b[10] == 0 && b[11] == 0 && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true // ::a.b.c.d
	}
	return netip.Addr{}, false
}

// hostFact classifies a host: loopback, private, link-local, CGNAT,
// unspecified and cloud-metadata targets are reported as private, in every
// spelling of the address.
func hostFact(host string) HostFact {
	h := normalizeHost(host)
	f := HostFact{Host: h}
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "ip6-localhost" || h == "ip6-loopback" || h == "localhost.localdomain":
		f.Private = "loopback"
	case h == "metadata.google.internal" || h == "metadata" || h == "instance-data" || h == "metadata.azure.com":
		f.Private = "cloud metadata"
	case strings.HasSuffix(h, ".internal") || strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".localdomain"):
		f.Private = "internal name"
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return f
	}
	if v4, ok := embeddedIPv4(a); ok {
		a = v4
	}
	switch s := a.String(); {
	case s == "169.254.169.254" || s == "fd00:ec2::254" || s == "100.100.100.200" || s == "169.254.170.2":
		f.Private = "cloud metadata"
	case a.IsLoopback():
		f.Private = "loopback"
	case a.IsPrivate():
		f.Private = "private"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		f.Private = "link-local"
	case a.IsUnspecified() || a.Is4() && thisNet.Contains(a):
		f.Private = "unspecified"
	case a.Is4() && (cgnat.Contains(a) || bench.Contains(a)):
		f.Private = "carrier-grade NAT"
	case a.IsMulticast():
		f.Private = "multicast"
	}
	return f
}

// CanonicalHost returns host as a resolver would use it: fullwidth forms
// and ideographic dots folded, lower case, IDNA-mapped, without brackets
// or a trailing dot, and an IPv4 address in any spelling inet_aton accepts
// (2130706433, 0x7f.1, 0177.0.0.1, 127.1) written in dotted decimal.
func CanonicalHost(host string) string { return normalizeHost(host) }

// PrivateTarget reports why host — a name, or an IP literal in any
// spelling (decimal, hex, octal, short, IPv4-mapped IPv6) — must not be
// reached without a rule that allows it: "loopback", "private",
// "link-local", "carrier-grade NAT", "cloud metadata", "internal name",
// "unspecified" or "multicast". It returns "" for a public target.
func PrivateTarget(host string) string { return hostFact(host).Private }
