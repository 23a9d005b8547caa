package egress

import (
	"encoding/binary"
	"net/netip"
	"strings"
)

// blockedNames are metadata endpoints refused whatever they resolve to.
var blockedNames = map[string]bool{
	"metadata.google.internal": true,
	"metadata":                 true,
	"instance-data":            true,
}

// metadataAddrs are cloud instance-metadata endpoints. They are refused even
// for a host the operator allows to resolve privately: no plugin has a reason
// to read instance credentials, and a private name's DNS may be rebound there.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task credentials
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
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
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated, RFC 4291): never legitimate
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use IPv4/IPv6 translation (RFC 8215)
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fec0::/10"), // deprecated site-local
}

// Prefixes of IPv6 forms that carry an IPv4 address. Traffic to them ends at
// (or is relayed to) that IPv4 address, so they are judged by it.
var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052: last 32 bits
	translatedPrefix = netip.MustParsePrefix("::ffff:0:0:0/96") // SIIT (RFC 2765): last 32 bits
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")       // RFC 3056: bits 16-47
	teredoPrefix     = netip.MustParsePrefix("2001::/32")       // RFC 4380: server bits 32-63, client ^0xffffffff in 96-127
	compatPrefix     = netip.MustParsePrefix("::/96")           // RFC 4291 IPv4-compatible: last 32 bits
)

// blockedReason says why an address is refused, or "" when it is public. An
// IPv6 address that embeds an IPv4 address (mapped, compatible, NAT64, SIIT,
// 6to4, Teredo) is refused when the IPv4 address would be, naming both.
func blockedReason(a netip.Addr) string {
	// A zone would make every netip.Prefix.Contains below answer false.
	a = a.WithZone("").Unmap()
	if metadataAddrs[a] {
		return "cloud metadata address"
	}
	switch {
	case a.IsLoopback():
		return "loopback address"
	case a.IsPrivate():
		return "private address"
	case a.IsLinkLocalUnicast():
		return "link-local address"
	case a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast(), a.IsMulticast():
		return "multicast address"
	case a.IsUnspecified():
		return "unspecified address"
	}
	for _, e := range embeddedIPv4(a) {
		if r := blockedReason(e.addr); r != "" {
			return r + " " + e.addr.String() + " embedded in a " + e.form + " address"
		}
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return "special-purpose address " + p.String()
		}
	}
	return ""
}

// embedded is an IPv4 address carried inside an IPv6 one.
type embedded struct {
	addr netip.Addr
	form string
}

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries, if any.
func embeddedIPv4(a netip.Addr) []embedded {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	v4 := func(off int) netip.Addr { return netip.AddrFrom4([4]byte(b[off : off+4])) }
	switch {
	case compatPrefix.Contains(a):
		return []embedded{{v4(12), "IPv4-compatible"}}
	case translatedPrefix.Contains(a):
		return []embedded{{v4(12), "IPv4-translated"}}
	case nat64Prefix.Contains(a):
		return []embedded{{v4(12), "NAT64"}}
	case sixToFourPrefix.Contains(a):
		return []embedded{{v4(2), "6to4"}}
	case teredoPrefix.Contains(a):
		var client [4]byte
		binary.BigEndian.PutUint32(client[:], ^binary.BigEndian.Uint32(b[12:16]))
		return []embedded{{netip.AddrFrom4(client), "Teredo (client)"}, {v4(4), "Teredo (server)"}}
	}
	return nil
}

func isBlockedName(host string) bool {
	return blockedNames[strings.ToLower(strings.TrimSuffix(host, "."))]
}
