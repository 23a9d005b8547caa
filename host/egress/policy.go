// Package egress is the HTTP client plugins reach the network through. It
// resists server-side request forgery: every request and every redirect hop is
// checked against the plugin's host allow-list and method rule; the address a
// name resolves to is checked and pinned for the connection, so DNS cannot
// change between check and connect; loopback, private, link-local, cloud
// metadata and other special addresses are refused unless the operator allows
// a host by name; responses are capped.
package egress

import (
	"context"
	"net"
	"path"
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
	privateOK    map[string]bool
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
// addresses (on-premises services). The permission is for the name only: a
// redirect to a raw private address is still refused.
func (p Policy) WithPrivateHostsAllowed(hosts ...string) Policy {
	m := make(map[string]bool, len(p.privateOK)+len(hosts))
	for k := range p.privateOK {
		m[k] = true
	}
	for _, h := range hosts {
		m[strings.ToLower(h)] = true
	}
	p.privateOK = m
	return p
}

// WithResolver replaces DNS resolution (tests, custom DNS).
func (p Policy) WithResolver(r Resolver) Policy { p.resolver = r; return p }

func (p Policy) methodAllowed(m string) bool { return p.methods == nil || p.methods[m] }

// hostAllowed matches host (and port) against the allow-list.
func (p Policy) hostAllowed(host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, pat := range p.hosts {
		pat = strings.ToLower(pat)
		ph, pp := pat, ""
		if h, port, err := net.SplitHostPort(pat); err == nil {
			ph, pp = h, port
		}
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
