package egress

import (
	"net/netip"
	"testing"
)

// TestBlockedReasonEmbedded checks that IPv6 forms carrying a public IPv4
// address stay usable (DNS64 synthesises NAT64 addresses for every IPv4-only
// site on an IPv6-only network) while the same forms carrying a special IPv4
// address are refused.
func TestBlockedReasonEmbedded(t *testing.T) {
	cases := []struct {
		addr    string
		blocked bool
	}{
		{"8.8.8.8", false},
		{"2606:4700::1111", false},
		{"64:ff9b::808:808", false},
		{"2002:808:808::1", false},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false}, // Teredo, client 8.8.8.8
		{"::ffff:8.8.8.8", false},
		{"::8.8.8.8", true}, // IPv4-compatible is deprecated: refused whatever it carries
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::a9fe:a9fe", true},
		{"2002:a00:1::", true},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true},
		{"::ffff:0:a00:1", true},
		{"fe80::1%eth0", true},
		{"fd00::1%eth0", true},
		{"64:ff9b::7f00:1%eth0", true},
	}
	for _, tc := range cases {
		if got := blockedReason(netip.MustParseAddr(tc.addr)); (got != "") != tc.blocked {
			t.Errorf("blockedReason(%s) = %q, want blocked %v", tc.addr, got, tc.blocked)
		}
	}
}
