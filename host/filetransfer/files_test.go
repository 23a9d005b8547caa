package filetransfer_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/filetransfer/sftptest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

const (
	account  = "alice"
	password = "s3cret-ftp-Passw0rd"
)

// tree makes the served directory: root/ with docs/camlidl.pdf (from the
// corpus), docs/notes.txt and deep/a/b/report-2024.txt; beside root, a
// secret.txt no path may reach.
func tree(t testing.TB) (root string, pdf []byte) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "root")
	pdf, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "pdf", "deb-camlidl-1.04.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"docs/camlidl.pdf":           pdf,
		"docs/notes.txt":             []byte("meeting notes"),
		"deep/a/b/report-2024.txt":   []byte("the report"),
		"../secret.txt":              []byte("top secret"),
		"deep/a/b/c/d/e/f/g/h/i/j/x": []byte("deeper than search goes"),
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, pdf
}

// server starts a server of proto serving root with the account and
// returns the connection URL's authority, a sign-in counter and the env
// allowing it.
type served struct {
	e      *env
	url    string
	pin    string
	logins func() int32
	tls    func() int32
}

func serve(t testing.TB, proto, root string) served {
	t.Helper()
	switch proto {
	case "sftp":
		s := sftptest.Start(t, account, password, nil)
		e := newEnv(t, s.Port)
		return served{e: e, url: "sftp://files.test:" + s.Port + filepath.ToSlash(root), pin: s.Fingerprint, logins: s.Logins.Load}
	case "ftps":
		cfg, pool := selfSigned(t, "files.test")
		d := &ftpDriver{root: root, user: account, pass: password, tls: cfg}
		port := startFTP(t, d)
		e := newEnv(t, port)
		e.ft.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		return served{e: e, url: "ftps://files.test:" + port, logins: d.logins.Load, tls: d.tlsLogins.Load}
	}
	d := &ftpDriver{root: root, user: account, pass: password}
	port := startFTP(t, d)
	return served{e: newEnv(t, port), url: "ftp://files.test:" + port, logins: d.logins.Load}
}

func paths(l wire.Listing) string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.Path)
	}
	return strings.Join(out, ",")
}

// TestFileServers runs the connector's operations against real servers on
// loopback, one per protocol: browse with paging, download byte for byte,
// a download over the caller's limit refused, an atomic upload that does
// not replace an existing file, a recursive name search, the capability's
// stat, mkdir and overwrite, traversal refused, and one sign-in for all of
// it (the session is kept).
func TestFileServers(t *testing.T) {
	for _, proto := range []string{"ftp", "ftps", "sftp"} {
		t.Run(proto, func(t *testing.T) {
			root, pdf := tree(t)
			s := serve(t, proto, root)
			e := s.e
			c := e.connect(t, e.alice, s.url, account, password, s.pin)

			top, err := e.browse(e.alice, c, "", 0, "")
			if err != nil || len(top.Entries) != 2 || top.Entries[0].Name != "deep" || top.Entries[1].Name != "docs" || !top.Entries[1].Folder {
				t.Fatalf("browse root: %+v %v", top, err)
			}
			first, err := e.browse(e.alice, c, "docs", 1, "")
			if err != nil || len(first.Entries) != 1 || first.Entries[0].Name != "camlidl.pdf" || first.Next == "" ||
				first.Entries[0].Size != int64(len(pdf)) || first.Entries[0].MIMEType != "application/pdf" {
				t.Fatalf("first page: %+v %v", first, err)
			}
			second, err := e.browse(e.alice, c, "docs", 1, first.Next)
			if err != nil || len(second.Entries) != 1 || second.Entries[0].Name != "notes.txt" || second.Next != "" {
				t.Fatalf("second page: %+v %v", second, err)
			}
			f, err := e.download(e.alice, c, first.Entries[0].Path, 0)
			if err != nil || f.Name != "camlidl.pdf" || f.MIMEType != "application/pdf" || !bytes.Equal(f.Data, pdf) {
				t.Fatalf("download: %q %q %d bytes, %v", f.Name, f.MIMEType, len(f.Data), err)
			}
			if _, err := e.download(e.alice, c, "docs/camlidl.pdf", 1000); err == nil || !strings.Contains(err.Error(), "too_large") {
				t.Fatalf("over the limit: %v", err)
			}

			up, err := e.upload(e.alice, c, "docs", "upload.txt", []byte("uploaded"))
			if err != nil || up.Path != "docs/upload.txt" {
				t.Fatalf("upload: %+v %v", up, err)
			}
			if b, err := os.ReadFile(filepath.Join(root, "docs", "upload.txt")); err != nil || string(b) != "uploaded" {
				t.Fatalf("on the server: %q %v", b, err)
			}
			if _, err := e.upload(e.alice, c, "docs", "notes.txt", []byte("clobbered")); err == nil || !strings.Contains(err.Error(), "exists") {
				t.Fatalf("upload over a file: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "docs", "notes.txt")); string(b) != "meeting notes" {
				t.Fatalf("notes.txt became %q", b)
			}
			left, _ := os.ReadDir(filepath.Join(root, "docs"))
			for _, de := range left {
				if strings.HasSuffix(de.Name(), ".part") {
					t.Fatalf("temporary upload left behind: %s", de.Name())
				}
			}

			hits, err := e.search(e.alice, c, "REPORT")
			if err != nil || len(hits.Entries) != 1 || hits.Entries[0].Path != "deep/a/b/report-2024.txt" {
				t.Fatalf("search: %+v %v", hits, err)
			}
			if hits, err := e.search(e.alice, c, "deep/a:report"); err != nil || len(hits.Entries) != 1 {
				t.Fatalf("search under a folder: %+v %v", hits, err)
			}
			if hits, err := e.search(e.alice, c, "x"); err != nil || strings.Contains(paths(hits), "/j/x") {
				t.Fatalf("search past its depth: %+v %v", hits, err)
			}

			// The capability's other operations, through the probe.
			if r := e.op(e.alice, map[string]any{"op": "mkdir", "connection": c.ID, "path": "made"}); !r.OK {
				t.Fatalf("mkdir: %+v", r.Error)
			}
			if fi, err := os.Stat(filepath.Join(root, "made")); err != nil || !fi.IsDir() {
				t.Fatalf("mkdir on the server: %v", err)
			}
			if r := e.op(e.alice, map[string]any{"op": "write", "connection": c.ID, "path": "docs/notes.txt", "data": "v2", "overwrite": true}); !r.OK {
				t.Fatalf("overwrite: %+v", r.Error)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "docs", "notes.txt")); string(b) != "v2" {
				t.Fatalf("overwritten notes.txt is %q", b)
			}
			if r := e.op(e.alice, map[string]any{"op": "stat", "connection": c.ID, "path": "docs/notes.txt"}); !r.OK || !strings.Contains(r.Text+string(r.Data), `"size":2`) {
				t.Fatalf("stat: %s %s %+v", r.Text, r.Data, r.Error)
			}

			// A read-only tool reads but cannot write.
			if r := e.probeCall(e.alice, "peek", map[string]any{"op": "read", "connection": c.ID, "path": "docs/notes.txt"}); !r.OK {
				t.Fatalf("read from a read-only tool: %+v", r.Error)
			}
			for _, op := range []string{"write", "mkdir"} {
				r := e.probeCall(e.alice, "peek", map[string]any{"op": op, "connection": c.ID, "path": "ro-" + op, "data": "x"})
				if _, err := os.Stat(filepath.Join(root, "ro-"+op)); r.OK || err == nil || !strings.Contains(r.Error.Error(), "capability_denied") {
					t.Fatalf("%s from a read-only tool: %+v", op, r)
				}
			}

			// Traversal: ".." is refused before anything is sent; a
			// leading "/" is the base directory.
			for _, p := range []string{"../", "docs/../../secret.txt", "..", "docs/..\\..\\secret.txt", "docs/\r\nDELE notes.txt"} {
				if _, err := e.download(e.alice, c, p, 0); err == nil || !strings.Contains(err.Error(), "invalid_path") {
					t.Errorf("download %q: %v", p, err)
				}
			}
			if _, err := e.browse(e.alice, c, "../..", 0, ""); err == nil || !strings.Contains(err.Error(), "invalid_path") {
				t.Errorf("browse ../..: %v", err)
			}
			if _, err := e.upload(e.alice, c, "../", "x.txt", []byte("x")); err == nil || !strings.Contains(err.Error(), "invalid_path") {
				t.Errorf("upload to ../: %v", err)
			}
			if _, err := e.download(e.alice, c, "/secret.txt", 0); err == nil || !strings.Contains(err.Error(), "not_found") {
				t.Errorf("download /secret.txt: %v", err)
			}
			if f, err := e.download(e.alice, c, "/docs/notes.txt", 0); err != nil || string(f.Data) != "v2" {
				t.Errorf("a leading / is the base: %q %v", f.Data, err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(root), "x.txt")); err == nil {
				t.Error("a file was written above the base")
			}
			if n := s.logins(); n != 1 {
				t.Errorf("%d sign-ins, want 1 (the session is kept)", n)
			}
			if s.tls != nil && s.tls() != 1 {
				t.Errorf("FTPS signed in without TLS")
			}
		})
	}
}

// TestConnectionRefusals: a wrong password is connection_rejected (the
// password in no error), another user's connection is not found, a
// revoked connection is refused and its kept session closed, a jira
// connection is not the file connector's, and a server the operator did
// not allow on a loopback address is not dialled.
func TestConnectionRefusals(t *testing.T) {
	for _, proto := range []string{"ftp", "sftp"} {
		t.Run(proto, func(t *testing.T) {
			root, _ := tree(t)
			s := serve(t, proto, root)
			e := s.e
			good := e.connect(t, e.alice, s.url, account, password, s.pin)
			bad := e.connect(t, e.alice, s.url, account, "not-the-"+password, s.pin)
			_, err := e.browse(e.alice, bad, "", 0, "")
			if err == nil || !strings.Contains(err.Error(), "connection_rejected") || strings.Contains(err.Error(), password) {
				t.Fatalf("wrong password: %v", err)
			}
			if _, err := e.browse(e.bob, good, "", 0, ""); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Fatalf("bob using alice's connection: %v", err)
			}
			if _, err := e.browse(e.alice, good, "", 0, ""); err != nil {
				t.Fatal(err)
			}
			if err := e.svc.Revoke(context.Background(), e.alice, good.ID); err != nil {
				t.Fatal(err)
			}
			if n := e.ft.Kept(); n != 0 {
				t.Fatalf("%d sessions kept after the revocation", n)
			}
			before := s.logins()
			if _, err := e.browse(e.alice, good, "", 0, ""); !errors.Is(err, connections.ErrRevoked) {
				t.Fatalf("revoked: %v", err)
			}
			// The capability checks too (a connector calling it directly).
			if r := e.op(e.alice, map[string]any{"op": "list", "connection": good.ID}); r.OK || !strings.Contains(r.Error.Error(), "connection_revoked") {
				t.Fatalf("revoked, through the capability: %+v", r.Error)
			}
			if s.logins() != before {
				t.Fatal("a revoked connection signed in")
			}
			jira, err := e.svc.AddToken(context.Background(), e.alice, connections.NewToken{Provider: "jira", Label: "j", Auth: "basic",
				BaseURL: "https://acme.atlassian.net", Account: "a@b", Token: "tok-12345"})
			if err != nil {
				t.Fatal(err)
			}
			if r := e.op(e.alice, map[string]any{"op": "list", "connection": jira.ID}); r.OK || !strings.Contains(r.Error.Error(), "wrong_provider") {
				t.Fatalf("a jira connection: %+v", r.Error)
			}
			// Not allowed by the operator: public.test resolves to loopback too.
			other := e.connect(t, e.alice, strings.Replace(s.url, "files.test", "public.test", 1), account, password, s.pin)
			before = s.logins()
			if _, err := e.browse(e.alice, other, "", 0, ""); err == nil || !strings.Contains(err.Error(), "host_refused") {
				t.Fatalf("loopback not allowed: %v", err)
			}
			if s.logins() != before {
				t.Fatal("a refused host was signed in to")
			}
		})
	}
}
