package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Overrides is a Resolver answering fixed addresses for some host names
// and asking Next for every other one: the operator's -resolve NAME=ADDR,
// like curl's --resolve (a provider's name pointed at a test server or an
// internal mirror). It changes name resolution only: the allow-lists are
// matched against the name as before, and an override to a loopback or
// private address is still refused unless that host is allowed by name
// (-allow-host).
type Overrides struct {
	names map[string][]net.IPAddr
	next  Resolver
}

// ParseOverride reads one NAME=ADDR entry: NAME a host name (no port, no
// wildcard, not an address), ADDR an IPv4 or IPv6 address.
func ParseOverride(s string) (string, netip.Addr, error) {
	name, addr, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok {
		return "", netip.Addr{}, fmt.Errorf("resolve %q: want NAME=ADDR", s)
	}
	name = normalizeHost(name)
	if _, err := netip.ParseAddr(name); err == nil {
		return "", netip.Addr{}, fmt.Errorf("resolve %q: NAME is an address, which is never resolved", s)
	}
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" {
		return "", netip.Addr{}, fmt.Errorf("resolve %q: NAME must be a host name (letters, digits, '-' and '.'; no port, no wildcard)", s)
	}
	a, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(addr), "[]"))
	if err != nil {
		return "", netip.Addr{}, fmt.Errorf("resolve %q: ADDR must be an IP address: %w", s, err)
	}
	if a.Zone() != "" {
		return "", netip.Addr{}, fmt.Errorf("resolve %q: ADDR must not carry a zone", s)
	}
	return name, a.Unmap(), nil
}

// NewOverrides reads NAME=ADDR entries (a name may be given several
// addresses, tried in order); next resolves the other names
// (net.DefaultResolver when nil). No entries gives nil: nothing to
// override, the caller keeps its default resolver.
func NewOverrides(next Resolver, entries ...string) (*Overrides, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if next == nil {
		next = net.DefaultResolver
	}
	o := &Overrides{names: map[string][]net.IPAddr{}, next: next}
	for _, e := range entries {
		name, a, err := ParseOverride(e)
		if err != nil {
			return nil, err
		}
		o.names[name] = append(o.names[name], net.IPAddr{IP: net.IP(a.AsSlice())})
	}
	return o, nil
}

// LookupIPAddr answers an overridden name from the table, any other from
// the next resolver.
func (o *Overrides) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	if addrs, ok := o.names[normalizeHost(host)]; ok {
		return append([]net.IPAddr(nil), addrs...), nil
	}
	return o.next.LookupIPAddr(ctx, host)
}
