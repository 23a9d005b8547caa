package filetransfer_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ftpserver "github.com/fclairamb/ftpserverlib"
	"github.com/spf13/afero"
)

// ftpDriver serves a directory over FTP (ftpserverlib, afero's base-path
// file system) to one account, counting sign-ins.
type ftpDriver struct {
	root, user, pass string
	tls              *tls.Config
	logins           atomic.Int32
	tlsLogins        atomic.Int32 // sign-ins over a TLS control connection
}

func (d *ftpDriver) GetSettings() (*ftpserver.Settings, error) {
	return &ftpserver.Settings{ListenAddr: "127.0.0.1:0", IdleTimeout: 60}, nil
}

func (d *ftpDriver) ClientConnected(ftpserver.ClientContext) (string, error) {
	return "agenthost test FTP server", nil
}

func (d *ftpDriver) ClientDisconnected(ftpserver.ClientContext) {}

func (d *ftpDriver) AuthUser(cc ftpserver.ClientContext, user, pass string) (ftpserver.ClientDriver, error) {
	if user != d.user || pass != d.pass {
		return nil, errors.New("login incorrect")
	}
	d.logins.Add(1)
	if cc.HasTLSForControl() {
		d.tlsLogins.Add(1)
	}
	return afero.NewBasePathFs(afero.NewOsFs(), d.root), nil
}

func (d *ftpDriver) GetTLSConfig() (*tls.Config, error) {
	if d.tls == nil {
		return nil, errors.New("no TLS on this server")
	}
	return d.tls, nil
}

// startFTP serves root over FTP (and FTPS when tlsConf is set) on loopback
// and returns its port.
func startFTP(t testing.TB, d *ftpDriver) string {
	t.Helper()
	srv := ftpserver.NewFtpServer(d)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	t.Cleanup(func() { _ = srv.Stop() })
	_, port, _ := net.SplitHostPort(srv.Addr())
	return port
}

// selfSigned is a certificate for host and a pool trusting it.
func selfSigned(t testing.TB, host string) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, pool
}

// hostileFTP is a scripted FTP server that speaks the protocol's wire
// format (RFC 959 replies, PASV, LIST in ls -l form) and misbehaves as
// told:
//   - "bounce": PASV names 127.0.0.2, where a trap listens on the data port;
//   - "garbage": answers the connection with an HTTP error page;
//   - "vanish": RETR sends part of the file, STOR reads part of it, then
//     either drops both connections;
//   - "stall": accepts and never greets;
//   - "echo": answers LIST with an error quoting the password it was sent;
//   - "oneshot": drops the control connection after its first LIST;
//   - "plain": behaves.
type hostileFTP struct {
	mode     string
	ln       net.Listener
	port     string
	trapHits atomic.Int32
	retrs    atomic.Int32 // RETR commands received
	conns    atomic.Int32 // control connections accepted
	renames  atomic.Int32 // RNFR commands received
	file     []byte       // the one file, /big.bin
	mu       sync.Mutex
	password string
}

func startHostileFTP(t *testing.T, mode string) *hostileFTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostileFTP{mode: mode, ln: ln, file: make([]byte, 100_000)}
	_, h.port, _ = net.SplitHostPort(ln.Addr().String())
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns.Add(1)
			go h.serve(t, c)
		}
	}()
	return h
}

func (h *hostileFTP) serve(t *testing.T, c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(s string) { _, _ = io.WriteString(c, s+"\r\n") }
	switch h.mode {
	case "garbage":
		say("HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>nope</html>")
		return
	case "stall":
		_, _ = io.Copy(io.Discard, r)
		return
	}
	say("220 hostile FTP ready")
	var data net.Listener
	defer func() {
		if data != nil {
			data.Close()
		}
	}()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		cmd, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(cmd) {
		case "USER":
			say("331 password please")
		case "PASS":
			h.mu.Lock()
			h.password = arg
			h.mu.Unlock()
			say("230 logged in")
		case "FEAT":
			say("211-Features:")
			say("211 End")
		case "TYPE":
			say("200 type set")
		case "EPSV":
			say("502 EPSV not implemented")
		case "PASV":
			ln, trap := h.dataListeners(t)
			data = ln
			if trap != nil {
				defer trap.Close()
			}
			_, p, _ := net.SplitHostPort(ln.Addr().String())
			n, _ := strconv.Atoi(p)
			host := "127,0,0,1"
			if h.mode == "bounce" {
				host = "127,0,0,2"
			}
			say(fmt.Sprintf("227 Entering Passive Mode (%s,%d,%d)", host, n/256, n%256))
		case "LIST":
			if h.mode == "echo" {
				say("550 no such directory (you signed in with password " + h.password + ")")
				continue
			}
			dc, err := accept(data)
			if err != nil {
				say("425 no data connection")
				continue
			}
			say("150 here it comes")
			_, _ = fmt.Fprintf(dc, "-rw-r--r--   1 owner    group   %d Jan 01  2024 big.bin\r\n", len(h.file))
			dc.Close()
			say("226 done")
			if h.mode == "oneshot" {
				return // as a server's idle timeout would
			}
		case "RETR":
			h.retrs.Add(1)
			dc, err := accept(data)
			if err != nil {
				say("425 no data connection")
				continue
			}
			say("150 sending")
			if h.mode == "vanish" {
				_, _ = dc.Write(h.file[:len(h.file)/3])
				dc.Close()
				return // the control connection goes too
			}
			_, _ = dc.Write(h.file)
			dc.Close()
			say("226 done")
		case "STOR":
			dc, err := accept(data)
			if err != nil {
				say("425 no data connection")
				continue
			}
			say("150 send it")
			if h.mode == "vanish" {
				_, _ = dc.Read(make([]byte, 512))
				dc.Close()
				return // gone in the middle of the upload
			}
			_, _ = io.Copy(io.Discard, dc)
			dc.Close()
			say("226 stored")
		case "RNFR":
			h.renames.Add(1)
			say("350 ready for RNTO")
		case "RNTO":
			say("250 renamed")
		case "DELE":
			say("250 deleted")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 not implemented")
		}
	}
}

// dataListeners opens the passive data listener on 127.0.0.1 and, for
// "bounce", a trap on 127.0.0.2 at the same port that counts connections.
func (h *hostileFTP) dataListeners(t *testing.T) (net.Listener, net.Listener) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		if h.mode != "bounce" {
			return ln, nil
		}
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		trap, err := net.Listen("tcp", "127.0.0.2:"+p)
		if err != nil {
			ln.Close()
			continue
		}
		go func() {
			for {
				c, err := trap.Accept()
				if err != nil {
					return
				}
				h.trapHits.Add(1)
				c.Close()
			}
		}()
		return ln, trap
	}
	t.Error("no port free on both 127.0.0.1 and 127.0.0.2")
	return nil, nil
}

func accept(ln net.Listener) (net.Conn, error) {
	if ln == nil {
		return nil, errors.New("no PASV")
	}
	if tl, ok := ln.(*net.TCPListener); ok {
		_ = tl.SetDeadline(time.Now().Add(10 * time.Second))
	}
	return ln.Accept()
}
