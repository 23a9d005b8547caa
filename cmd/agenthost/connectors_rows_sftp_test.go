package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	gssh "github.com/gliderlabs/ssh"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// The SFTP row of TestConnectorsEndToEnd: a real SSH server in the test
// process (gliderlabs/ssh with pkg/sftp's server as its sftp subsystem,
// as host/filetransfer's tests run it) reached as files.example on its
// port. The host speaks SFTP for the ftp connector (capability
// filetransfer); the connection pins the server's host key.

// e2eSFTP is the server: what it serves and what it saw.
type e2eSFTP struct {
	port, fingerprint string
	// conns counts TCP connections accepted, logins password sign-ins
	// accepted.
	conns, logins atomic.Int32
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int32
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// serveSFTP serves the real file system over SFTP to user with password
// pass, on loopback.
func serveSFTP(t *testing.T, user, pass string) *e2eSFTP {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	s := &e2eSFTP{fingerprint: ssh.FingerprintSHA256(signer.PublicKey())}
	srv := &gssh.Server{
		Handler: func(sess gssh.Session) { _ = sess.Exit(1) },
		PasswordHandler: func(ctx gssh.Context, p string) bool {
			ok := ctx.User() == user && p == pass
			if ok {
				s.logins.Add(1)
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
	srv.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(countingListener{Listener: ln, n: &s.conns}) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	return s
}

// startSFTP: the user's SFTP server, whose base directory holds docs/ with
// the PDF and notes; beside the base, a file the connection must not
// reach. The connection is made over POST /connections with the account,
// the password and the server's host key; the provider has no mail.
func startSFTP(t *testing.T, _ string) *e2eFakes {
	const account, password = "alice", "sftp-password-e2e-3"
	srv := serveSFTP(t, account, password)
	dir := t.TempDir()
	root := filepath.Join(dir, "shared")
	pdf := corpusPDF(t)
	for name, data := range map[string][]byte{"shared/docs/camlidl.pdf": pdf, "shared/docs/notes.txt": []byte("meeting notes"),
		"secret.txt": []byte("outside the base")} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host := "files.example:" + srv.port
	var api *e2eServer
	var conn string
	return &e2eFakes{
		args: []string{"-resolve", "files.example=127.0.0.1", "-allow-host", host},
		connect: func(t *testing.T, s *e2eServer) string {
			var c struct{ ID, Provider, Auth, BaseURL string }
			st, body := s.do(t, "POST", "/connections", map[string]string{"provider": "ftp", "label": "nas", "auth": "basic",
				"baseUrl": "sftp://" + host + filepath.ToSlash(root), "account": account, "token": password, "hostKey": srv.fingerprint})
			if st != 201 || json.Unmarshal(body, &c) != nil || c.ID == "" || c.Provider != "ftp" || c.Auth != "basic" {
				t.Fatalf("POST /connections: %d %s", st, body)
			}
			api, conn = s, c.ID
			return c.ID
		},
		service: "files", browse: "docs", download: "docs/camlidl.pdf",
		fileName: "camlidl.pdf", mimeType: "application/pdf", text: "camlidl", data: pdf,
		mailService: "",
		secrets:     func() []string { return []string{password} },
		requests:    func() int { return int(srv.conns.Load()) },
		check: func(t *testing.T) {
			// The host signed in with the connection's password (a
			// session kept for the browse and the download).
			if n := srv.logins.Load(); n < 1 {
				t.Fatalf("%d sign-ins at the SFTP server", n)
			}
			// The base directory confines the connection: the file beside
			// it is refused, not resolved, and nothing of it is stored.
			st, body := api.do(t, "POST", "/workspaces/"+api.workspace+"/tools/externalDownload",
				map[string]string{"connection": conn, "service": "files", "path": "../secret.txt"})
			var res struct {
				OK    bool `json:"ok"`
				Error *struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			if st != 200 || json.Unmarshal(body, &res) != nil || res.OK || res.Error == nil || res.Error.Code != "invalid_path" || strings.Contains(string(body), "outside the base") {
				t.Fatalf("download beside the base: %d %s", st, body)
			}
			var page struct {
				Items []struct{ Name string } `json:"items"`
			}
			if st := api.call(t, api.token, "GET", "/files?workspace="+api.workspace, "", &page); st != 200 || len(page.Items) != 1 || page.Items[0].Name != "camlidl.pdf" {
				t.Fatalf("workspace files: %d %+v", st, page)
			}
		},
	}
}
