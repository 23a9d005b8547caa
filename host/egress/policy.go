// Package egress is the HTTP client plugins reach the network through. It
// resists server-side request forgery: every request and every redirect hop is
// checked against the plugin's host allow-list and method rule; the address a
// name resolves to is checked and pinned for the connection, so DNS cannot
// change between check and connect; loopback, private, link-local, cloud
// metadata and other special addresses are refused unless the operator allows
// a host by name; responses are capped. A request may decide its own hops
// further (Request.Redirect: a connection's, whose credentials follow only to
// its own hosts).
//
// Host entries. A plugin's allow-list entry is a name ("api.example.org"), a
// pattern ("*.example.org": any subdomain) or an IP address, optionally with
// ":port"; an entry with a port allows that host on that port only, an entry
// without one allows it on any port. The operator's private-host allowance
// (WithPrivateHostsAllowed) is stricter: an entry "intranet.corp:8443" lets
// the name resolve to a private or loopback address on port 8443 only, and a
// bare "intranet.corp" on the web's ports 80 and 443 only, so that allowing an
// on-premises web server does not open its database or admin ports. IPv6
// addresses are written in brackets when a port follows ("[fd00::1]:8080").
// Cloud metadata addresses are refused even for an allowed private host.
package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"
)

// Resolver resolves host names; *net.Resolver satisfies it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Policy is what one client may do. It is an immutable builder: every With
// method returns a copy.
type Policy struct {
	hosts        []string
	methods      map[string]bool // nil: any method
	maxBytes     int64
	timeout      time.Duration
	privateOK    map[string]map[string]bool // host → ports (nil: the default ports)
	resolver     Resolver
	maxRedirects int
}

// NewPolicy allows nothing: no host, any method, 10 MiB responses, 30 s, five
// redirects.
func NewPolicy() Policy {
	return Policy{maxBytes: 10 << 20, timeout: 30 * time.Second, maxRedirects: 5, resolver: net.DefaultResolver}
}

// WithAllowedHosts sets the hosts requests may go to: exact names, or patterns
// like "*.example.org" (any subdomain), optionally with ":port".
func (p Policy) WithAllowedHosts(hosts ...string) Policy {
	p.hosts = append([]string(nil), hosts...)
	return p
}

// WithMethods restricts the methods (e.g. GET and HEAD for read-only tools).
func (p Policy) WithMethods(methods ...string) Policy {
	p.methods = map[string]bool{}
	for _, m := range methods {
		p.methods[strings.ToUpper(m)] = true
	}
	return p
}

// WithMaxResponseBytes caps a response body.
func (p Policy) WithMaxResponseBytes(n int64) Policy { p.maxBytes = n; return p }

// WithTimeout bounds one request including redirects.
func (p Policy) WithTimeout(d time.Duration) Policy { p.timeout = d; return p }

// WithMaxRedirects bounds the redirects followed.
func (p Policy) WithMaxRedirects(n int) Policy { p.maxRedirects = n; return p }

// WithPrivateHostsAllowed names hosts that may resolve to loopback or private
// addresses (on-premises services): "host:port" for one port, a bare "host"
// for ports 80 and 443 only. The permission is for the name only: a redirect
// to a raw private address is still refused. Entries that ParseHostEntry
// refuses, and patterns, allow nothing.
func (p Policy) WithPrivateHostsAllowed(hosts ...string) Policy {
	m := make(map[string]map[string]bool, len(p.privateOK)+len(hosts))
	for k, ports := range p.privateOK {
		m[k] = ports
	}
	for _, entry := range hosts {
		e, err := ParseHostEntry(entry)
		if err != nil || strings.Contains(e.Host, "*") {
			continue
		}
		ports := map[string]bool{}
		for port := range m[e.Host] {
			ports[port] = true
		}
		if e.Port == "" {
			ports["80"], ports["443"] = true, true
		} else {
			ports[e.Port] = true
		}
		m[e.Host] = ports
	}
	p.privateOK = m
	return p
}

// privateAllowed reports whether the operator lets host resolve to a private
// address when connecting to port.
func (p Policy) privateAllowed(host, port string) bool {
	return p.privateOK[normalizeHost(host)][port]
}

// HostEntry is one parsed allow-list entry.
type HostEntry struct {
	// Host is lower-case, without brackets or a trailing dot; it may hold a
	// "*" pattern.
	Host string
	// Port is "" when the entry names none.
	Port string
}

// String gives the entry back in its canonical form.
func (e HostEntry) String() string {
	if e.Port == "" {
		if strings.Contains(e.Host, ":") {
			return "[" + e.Host + "]"
		}
		return e.Host
	}
	return net.JoinHostPort(e.Host, e.Port)
}

// ParseHostEntry checks an allow-list entry: "host", "host:port", "[v6]",
// "[v6]:port" or a bare IPv6 address, the host a name, a "*" pattern or an IP
// address, the port 1-65535. Operators' flags and manifests are checked with
// it so that a typo is an error instead of an entry that silently matches
// nothing.
func ParseHostEntry(s string) (HostEntry, error) {
	bad := func(why string) (HostEntry, error) {
		return HostEntry{}, fmt.Errorf("invalid host entry %q: %s", s, why)
	}
	if s == "" {
		return bad("empty")
	}
	host, port := s, ""
	if h, pt, err := net.SplitHostPort(s); err == nil {
		host, port = h, pt
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return bad("the port must be a number from 1 to 65535")
		}
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	} else if strings.Count(s, ":") == 1 {
		return bad("the port must be a number from 1 to 65535")
	}
	host = normalizeHost(host)
	if host == "" {
		return bad("no host")
	}
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return bad("not an IPv6 address")
		}
		return HostEntry{Host: a.String(), Port: port}, nil
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '*') {
			return bad(fmt.Sprintf("character %q is not allowed in a host name", r))
		}
	}
	return HostEntry{Host: host, Port: port}, nil
}

// normalizeHost lower-cases a name and drops its trailing dot; an IPv6
// address gets its canonical form, so "::127.0.0.1" and "::7f00:1" are one.
func normalizeHost(h string) string {
	if strings.Contains(h, ":") {
		if a, err := netip.ParseAddr(h); err == nil {
			return a.String()
		}
	}
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// WithResolver replaces DNS resolution (tests, custom DNS).
func (p Policy) WithResolver(r Resolver) Policy { p.resolver = r; return p }

func (p Policy) methodAllowed(m string) bool { return p.methods == nil || p.methods[m] }

// hostAllowed matches host (and port) against the allow-list. An entry with
// a port matches that port only; an entry ParseHostEntry refuses matches
// nothing.
func (p Policy) hostAllowed(host, port string) bool {
	host = normalizeHost(host)
	for _, pat := range p.hosts {
		e, err := ParseHostEntry(pat)
		if err != nil {
			continue
		}
		ph, pp := e.Host, e.Port
		if pp != "" && pp != port {
			continue
		}
		if ph == host {
			return true
		}
		if strings.HasPrefix(ph, "*.") && strings.HasSuffix(host, ph[1:]) {
			return true
		}
		if ok, _ := path.Match(ph, host); ok && strings.Contains(ph, "*") && !strings.HasPrefix(ph, "*.") {
			return true
		}
	}
	return false
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// HostMatches reports whether host (and port) matches one of the allow-list
// entries, by the rules the client applies.
func HostMatches(entries []string, host, port string) bool {
	return NewPolicy().WithAllowedHosts(entries...).hostAllowed(host, port)
}
