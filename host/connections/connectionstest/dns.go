package connectionstest

import (
	"context"
	"net"
)

// DNS resolves the test host names it maps to their addresses (loopback,
// where a test server listens) and answers any other name as not found,
// so a test never leaves the machine. It is an egress resolver
// (wasm.EgressOptions.Resolver).
type DNS map[string]string

// LookupIPAddr answers host's mapped address or a not-found error.
func (d DNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if a, ok := d[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(a)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
