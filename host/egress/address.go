package egress

import (
	"net/netip"
	"strings"
)

// blockedNames are metadata endpoints refused whatever they resolve to.
var blockedNames = map[string]bool{
	"metadata.google.internal": true,
	"metadata":                 true,
	"instance-data":            true,
}

// specialPrefixes are ranges no plugin reaches unless allowed by name, beyond
// what netip's predicates cover.
var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64: may embed a private IPv4
	netip.MustParsePrefix("2002::/16"),    // 6to4: may embed a private IPv4
	netip.MustParsePrefix("fc00::/7"),
}

// blockedReason says why an address is refused, or "" when it is public.
func blockedReason(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case a.IsLoopback():
		return "loopback address"
	case a.IsPrivate():
		return "private address"
	case a.IsLinkLocalUnicast():
		if a == netip.AddrFrom4([4]byte{169, 254, 169, 254}) {
			return "cloud metadata address"
		}
		return "link-local address"
	case a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast(), a.IsMulticast():
		return "multicast address"
	case a.IsUnspecified():
		return "unspecified address"
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return "special-purpose address " + p.String()
		}
	}
	return ""
}

func isBlockedName(host string) bool {
	return blockedNames[strings.ToLower(strings.TrimSuffix(host, "."))]
}
