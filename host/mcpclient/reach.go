package mcpclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"syscall"
)

// unreachable says, in a person's words, why a server could not be reached
// at all, when err is of that kind: the network's answer under the SDK's
// layers ("calling initialize: rejected by transport: sending …: Post …:
// dial tcp …: connect: connection refused"). A server that answered,
// however badly, is not unreachable.
func unreachable(err error) (string, bool) {
	var dns *net.DNSError
	var op *net.OpError
	var cert *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "its host name " + dns.Name + " does not resolve", true
		}
		return "its host name " + dns.Name + " could not be resolved", true
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", true
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to its host", true
	case errors.Is(err, syscall.ECONNRESET):
		return "the connection was reset", true
	case errors.As(err, &cert), errors.As(err, &unknownCA), errors.As(err, &hostname):
		return "its TLS certificate is not trusted", true
	case errors.As(err, &op) && op.Op == "dial":
		if op.Timeout() {
			return "connecting timed out", true
		}
		return "it cannot be connected to", true
	}
	return "", false
}

func isUnreachable(err error) bool { _, ok := unreachable(err); return ok }

// rejectedCode is the SDK's code for a message its transport could not send
// (jsonrpc2.ErrRejected, internal to the SDK): the server never got it.
const rejectedCode = -32005

func isRejected(err error) bool {
	var e *mcpError
	return errors.As(err, &e) && e.Code == rejectedCode
}

// said is an error put in words of its own; the error underneath stays in
// the chain (errors.Is and As find it) without its layers in the text.
type said struct {
	msg string
	err error
}

func (e said) Error() string { return e.msg }
func (e said) Unwrap() error { return e.err }
