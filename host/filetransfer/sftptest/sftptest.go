// Package sftptest runs a real SFTP server in a test's process: an SSH
// server (github.com/gliderlabs/ssh) with pkg/sftp's server as its sftp
// subsystem, on loopback, serving the real file system (the connection's
// base directory is what confines a client). The filetransfer tests and
// the end-to-end connector tests of cmd/agenthost share it.
package sftptest

import (
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"sync/atomic"
	"testing"

	gssh "github.com/gliderlabs/ssh"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Server is a running SFTP server and what it saw.
type Server struct {
	// Port is its loopback port; Fingerprint its host key's SHA256
	// fingerprint as ssh-keygen -l prints it (what a connection pins).
	Port, Fingerprint string
	// Conns counts the TCP connections accepted, Logins the sign-ins
	// accepted (password or key).
	Conns, Logins atomic.Int32
}

// Start serves SFTP to user, signing in with pass or, when authorized is
// set, with that public key; a fresh host key each time. It stops when
// the test ends.
func Start(tb testing.TB, user, pass string, authorized ssh.PublicKey) *Server {
	tb.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Fingerprint: ssh.FingerprintSHA256(signer.PublicKey())}
	srv := &gssh.Server{
		Handler: func(sess gssh.Session) { _ = sess.Exit(1) },
		PasswordHandler: func(ctx gssh.Context, p string) bool {
			ok := ctx.User() == user && p == pass
			if ok {
				s.Logins.Add(1)
			}
			return ok
		},
		SubsystemHandlers: map[string]gssh.SubsystemHandler{"sftp": func(sess gssh.Session) {
			fs, err := sftp.NewServer(sess)
			if err != nil {
				return
			}
			_ = fs.Serve()
			_ = fs.Close()
		}},
	}
	if authorized != nil {
		srv.PublicKeyHandler = func(ctx gssh.Context, key gssh.PublicKey) bool {
			ok := ctx.User() == user && gssh.KeysEqual(key, authorized)
			if ok {
				s.Logins.Add(1)
			}
			return ok
		}
	}
	srv.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = srv.Serve(counting{Listener: ln, n: &s.Conns}) }()
	tb.Cleanup(func() { _ = srv.Close() })
	_, s.Port, _ = net.SplitHostPort(ln.Addr().String())
	return s
}

// counting counts the connections it accepts.
type counting struct {
	net.Listener
	n *atomic.Int32
}

func (l counting) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}
