package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/filetransfer/sftptest"
)

// The SFTP row of TestConnectorsEndToEnd: a real SSH server in the test
// process (host/filetransfer/sftptest: gliderlabs/ssh with pkg/sftp's
// server as its sftp subsystem) reached as files.example on its
// port. The host speaks SFTP for the ftp connector (capability
// filetransfer); the connection pins the server's host key.

// startSFTP: the user's SFTP server, whose base directory holds docs/ with
// the PDF and notes; beside the base, a file the connection must not
// reach. The connection is made over POST /connections with the account,
// the password and the server's host key; the provider has no mail.
func startSFTP(t *testing.T, _ string) *e2eFakes {
	const account, password = "alice", "sftp-password-e2e-3"
	srv := sftptest.Start(t, account, password, nil)
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
	host := "files.example:" + srv.Port
	var api *e2eServer
	var conn string
	return &e2eFakes{
		args: []string{"-resolve", "files.example=127.0.0.1", "-allow-host", host},
		connect: func(t *testing.T, s *e2eServer) string {
			var c struct{ ID, Provider, Auth, BaseURL string }
			st, body := s.do(t, "POST", "/connections", map[string]string{"provider": "ftp", "label": "nas", "auth": "basic",
				"baseUrl": "sftp://" + host + filepath.ToSlash(root), "account": account, "token": password, "hostKey": srv.Fingerprint})
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
		requests:    func() int { return int(srv.Conns.Load()) },
		check: func(t *testing.T) {
			// The host signed in with the connection's password (a
			// session kept for the browse and the download).
			if n := srv.Logins.Load(); n < 1 {
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
