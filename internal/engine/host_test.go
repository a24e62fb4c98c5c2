package engine

import (
	"net/netip"
	"testing"
)

func TestHostFact(t *testing.T) {
	tests := []struct{ host, host2, private string }{
		{"2130706433", "127.0.0.1", "loopback"},
		{"0x7f000001", "127.0.0.1", "loopback"},
		{"0177.0.0.1", "127.0.0.1", "loopback"},
		{"127.1", "127.0.0.1", "loopback"},
		{"0", "0.0.0.0", "unspecified"},
		{"169.254.43518", "169.254.169.254", "cloud metadata"},
		{"[::ffff:169.254.169.254]", "::ffff:169.254.169.254", "cloud metadata"},
		{"64:ff9b::7f00:1", "64:ff9b::7f00:1", "loopback"},
		{"2002:7f00:1::", "2002:7f00:1::", "loopback"},
		{"ＬＯＣＡＬＨＯＳＴ", "localhost", "loopback"},
		{"127。0。0。1", "127.0.0.1", "loopback"},
		{"10.1.2.3", "10.1.2.3", "private"},
		{"100.64.0.1", "100.64.0.1", "carrier-grade NAT"},
		{"metadata.google.internal", "metadata.google.internal", "cloud metadata"},
		{"example.com.", "example.com", ""},
		{"8.8.8.8", "8.8.8.8", ""},
		{"256.1.1.1", "256.1.1.1", ""},
		{"1.2.3.4.5", "1.2.3.4.5", ""},
		{"bücher.de", "xn--bcher-kva.de", ""},
		{"0\u034f", "0.0.0.0", "unspecified"},
		{"127.0.0.\u0661", "127.0.0.\u0661", ""},
	}
	for _, tc := range tests {
		f := hostFact(tc.host)
		if f.Host != tc.host2 || f.Private != tc.private {
			t.Errorf("hostFact(%q) = %q %q, want %q %q", tc.host, f.Host, f.Private, tc.host2, tc.private)
		}
	}
}

// FuzzNormalizeHost checks that every IPv4 spelling normalizeHost accepts
// is the address a strict parser reads from the canonical form, and that no
// spelling of a loopback address escapes classification.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"2130706433", "0x7f.1", "0177.0.0.01", "127.1", "[::1]", "ｌｏｃａｌｈｏｓｔ", "1.2.3.4", "a.b", "0x", "09"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := normalizeHost(s)
		if a, ok := parseIPv4Loose(h); ok && a.String() != h {
			t.Fatalf("normalizeHost(%q) = %q, not canonical (%s)", s, h, a)
		}
		if a, err := netip.ParseAddr(h); err == nil && a.Unmap().IsLoopback() && hostFact(s).Private == "" {
			t.Fatalf("loopback %q (%q) not classified", s, h)
		}
	})
}
