package filetransfer_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/filetransfer/sftptest"
	"github.com/agenthost/agenthost/host/tenancy"
)

// TestSFTPHostKeyPinned: a server presenting another host key than the
// connection pins is refused before the password is sent; a connection
// without a well-formed pin is not stored; FTP connections carry none.
func TestSFTPHostKeyPinned(t *testing.T) {
	root, _ := tree(t)
	s := sftptest.Start(t, account, password, nil)
	e := newEnv(t, s.Port)
	url := "sftp://files.test:" + s.Port + filepath.ToSlash(root)
	other := sftptest.Start(t, account, password, nil) // another key
	wrong := e.connect(t, e.alice, url, account, password, other.Fingerprint)
	_, err := e.browse(e.alice, wrong, "", 0, "")
	if err == nil || !strings.Contains(err.Error(), "host_key_mismatch") || !strings.Contains(err.Error(), s.Fingerprint) {
		t.Fatalf("wrong host key: %v", err)
	}
	if s.Logins.Load() != 0 {
		t.Fatal("signed in to a server whose host key is not the pinned one")
	}
	for name, n := range map[string]connections.NewToken{
		"no pin":         {HostKey: ""},
		"not SHA256":     {HostKey: "MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48"},
		"short":          {HostKey: "SHA256:abc"},
		"ftp with a pin": {HostKey: s.Fingerprint, BaseURL: "ftp://files.test:21/"},
		"bad key":        {HostKey: s.Fingerprint, PrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nnope\n-----END OPENSSH PRIVATE KEY-----\n"},
		"http URL":       {HostKey: s.Fingerprint, BaseURL: "https://files.test/"},
		"no URL":         {HostKey: s.Fingerprint, BaseURL: "-"},
		"token auth":     {HostKey: s.Fingerprint, Auth: "token"},
	} {
		n.Provider, n.Label, n.Account, n.Token = "ftp", name, account, password
		if n.BaseURL == "" {
			n.BaseURL = url
		} else if n.BaseURL == "-" {
			n.BaseURL = ""
		}
		if n.Auth == "" {
			n.Auth = "basic"
		}
		if _, err := e.svc.AddToken(context.Background(), e.alice, n); err == nil || !strings.Contains(err.Error(), "invalid") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSFTPPrivateKey: a key alone signs in.
func TestSFTPPrivateKey(t *testing.T) {
	root, _ := tree(t)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, _ := ssh.NewPublicKey(pub)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	s := sftptest.Start(t, account, "", sshPub)
	e := newEnv(t, s.Port)
	c, err := e.svc.AddToken(context.Background(), e.alice, connections.NewToken{Provider: "ftp", Label: "key", Auth: "basic",
		BaseURL: "sftp://files.test:" + s.Port + filepath.ToSlash(root), Account: account, PrivateKey: string(pem.EncodeToMemory(block)), HostKey: s.Fingerprint})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := e.browse(e.alice, c, "docs", 0, ""); err != nil || len(l.Entries) != 2 {
		t.Fatalf("browse with a key: %+v %v", l, err)
	}
}

// TestSFTPSymlinks: a link inside the base directory is followed; links
// leading outside it (relative or absolute, to a file or a directory) are
// refused and listed without a target; a link loop ends; a search through
// a directory loop lists each directory once and finds each file once.
func TestSFTPSymlinks(t *testing.T) {
	root, _ := tree(t)
	outside := filepath.Dir(root)
	for link, target := range map[string]string{
		"docs/alias.txt": "notes.txt",
		"escape.txt":     "../secret.txt",
		"escape-dir":     outside,
		"deep/a/loop":    "..",
		"self":           "self",
		"docs/up":        "../docs",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	s := sftptest.Start(t, account, password, nil)
	e := newEnv(t, s.Port)
	c := e.connect(t, e.alice, "sftp://files.test:"+s.Port+filepath.ToSlash(root), account, password, s.Fingerprint)

	if f, err := e.download(e.alice, c, "docs/alias.txt", 0); err != nil || string(f.Data) != "meeting notes" {
		t.Fatalf("a link inside: %q %v", f.Data, err)
	}
	for _, p := range []string{"escape.txt", "escape-dir/secret.txt", "self"} {
		if f, err := e.download(e.alice, c, p, 0); err == nil || !strings.Contains(err.Error(), "path_refused") {
			t.Errorf("download %s: %q %v", p, f.Data, err)
		}
	}
	if _, err := e.browse(e.alice, c, "escape-dir", 0, ""); err == nil || !strings.Contains(err.Error(), "path_refused") {
		t.Errorf("browse escape-dir: %v", err)
	}
	if _, err := e.upload(e.alice, c, "escape-dir", "planted.txt", []byte("x")); err == nil || !strings.Contains(err.Error(), "path_refused") {
		t.Errorf("upload through escape-dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Fatal("a file was planted outside the base")
	}
	top, err := e.browse(e.alice, c, "", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range top.Entries {
		if (en.Name == "escape.txt" || en.Name == "escape-dir" || en.Name == "self") && (en.Folder || en.Size != 0 || !strings.Contains(en.Summary, "not followed")) {
			t.Errorf("an escaping link listed as %+v", en)
		}
	}
	hits, err := e.search(e.alice, c, "report")
	if err != nil || len(hits.Entries) != 1 {
		t.Fatalf("search through a loop: %+v %v", hits, err)
	}
	if hits, err := e.search(e.alice, c, "notes"); err != nil || len(hits.Entries) != 1 {
		t.Fatalf("search through docs/up: %+v %v", hits, err)
	}
}

// TestFTPPassiveAddressIgnored: a server whose PASV reply names another
// address (FTP bounce) gets its data connection on its own address: the
// trap listening at the named address sees nothing.
func TestFTPPassiveAddressIgnored(t *testing.T) {
	h := startHostileFTP(t, "bounce")
	e := newEnv(t, h.port)
	c := e.connect(t, e.alice, "ftp://files.test:"+h.port+"/", account, password, "")
	l, err := e.browse(e.alice, c, "", 0, "")
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Name != "big.bin" {
		t.Fatalf("browse: %+v %v", l, err)
	}
	if n := h.trapHits.Load(); n != 0 {
		t.Fatalf("%d connections to the address PASV named", n)
	}
}

// TestFTPHostileServers: garbage instead of FTP, a server that vanishes
// in the middle of a transfer, and one that never answers: clear errors,
// no bytes handed over, no session kept.
func TestFTPHostileServers(t *testing.T) {
	for _, tc := range []struct{ mode, code string }{
		{"garbage", "bad_response"},
		{"vanish", "server_error"},
		{"stall", "timeout"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h := startHostileFTP(t, tc.mode)
			e := newEnv(t, h.port)
			e.ft.Timeout = 500 * time.Millisecond
			c := e.connect(t, e.alice, "ftp://files.test:"+h.port+"/", account, password, "")
			f, err := e.download(e.alice, c, "big.bin", 0)
			if err == nil || !strings.Contains(err.Error(), tc.code) || len(f.Data) != 0 {
				t.Fatalf("download: %d bytes, %v", len(f.Data), err)
			}
			if n := e.ft.Kept(); n != 0 {
				t.Fatalf("%d broken sessions kept", n)
			}
			if tc.mode != "vanish" {
				return
			}
			// An upload it breaks off is never renamed to its real name.
			_, err = e.upload(e.alice, c, "", "new.bin", make([]byte, 64<<10))
			if err == nil || !strings.Contains(err.Error(), "server_error") || h.renames.Load() != 0 {
				t.Fatalf("upload: %v, %d renames", err, h.renames.Load())
			}
		})
	}
}

// TestPasswordNeverEntersTheSandbox: the hostile probe connector reads a
// file and lists a directory of a server that echoes the password in an
// error; its results, variables, logs and whole memory are then searched
// for the password in every form: none is there. The memory scan is shown
// to work by finding the file's content, which the plugin did receive.
func TestPasswordNeverEntersTheSandbox(t *testing.T) {
	root, _ := tree(t)
	d := &ftpDriver{root: root, user: account, pass: password}
	port := startFTP(t, d)
	echo := startHostileFTP(t, "echo")
	e := newEnv(t, port, echo.port)
	good := e.connect(t, e.alice, "ftp://files.test:"+port, account, password, "")
	loud := e.connect(t, e.alice, "ftp://files.test:"+echo.port, account, password, "")
	var results string
	for _, args := range []map[string]any{
		{"op": "read", "connection": good.ID, "path": "docs/notes.txt"},
		{"op": "list", "connection": good.ID, "path": "docs"},
		{"op": "list", "connection": loud.ID, "path": ""},
	} {
		r := e.op(e.alice, args)
		results += r.Text + string(r.Data)
		if r.Error != nil {
			results += r.Error.Error()
		}
	}
	echo.mu.Lock()
	sent := echo.password
	echo.mu.Unlock()
	if sent != password || !strings.Contains(results, "[redacted]") {
		t.Fatalf("the echoing server got %q; the plugin saw %s", sent, results)
	}
	// The scan runs in the instance that made the calls (scan is not
	// read-only, so it shares op's instances) before getVar reads the
	// variable back.
	if m := e.probeCall(e.alice, "scan", map[string]any{"masked": mask("meeting notes")}); !m.OK || strings.TrimSpace(string(m.Data)) == "0" || !m.Stats.Reused {
		t.Fatalf("the memory scan does not find what the plugin did receive: %+v", m)
	}
	vars := e.probeCall(e.alice, "getVar", map[string]any{})
	if !vars.OK || !strings.Contains(vars.Text+string(vars.Data), "meeting notes") {
		t.Fatalf("getVar: %+v", vars)
	}
	for _, secret := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)), account + ":" + password} {
		for where, text := range map[string]string{"results": results, "variables": vars.Text + string(vars.Data), "logs": e.logs.String()} {
			if strings.Contains(text, secret) {
				t.Errorf("the password is in the plugin's %s", where)
			}
		}
		if scan := e.probeCall(e.alice, "scan", map[string]any{"masked": mask(secret)}); !scan.OK || strings.TrimSpace(string(scan.Data)) != "0" {
			t.Errorf("the password is in the plugin's memory: %+v", scan)
		}
	}
	// Outside a user's tool call there is no connection to use.
	r := e.probe.Call(context.Background(), "op", []byte(`{"op":"list","connection":"`+good.ID+`"}`), nil)
	if r.OK || !strings.Contains(r.Error.Error(), "forbidden") {
		t.Fatalf("no caller: %+v", r.Error)
	}
	_ = tenancy.Principal{}
}

// TestOverSizeRefusedBeforeTransfer: a file over the caller's limit is
// refused on its listed size, before the server is asked for a byte.
func TestOverSizeRefusedBeforeTransfer(t *testing.T) {
	h := startHostileFTP(t, "plain")
	e := newEnv(t, h.port)
	c := e.connect(t, e.alice, "ftp://files.test:"+h.port+"/", account, password, "")
	if _, err := e.download(e.alice, c, "big.bin", 50_000); err == nil || !strings.Contains(err.Error(), "too_large") || !strings.Contains(err.Error(), "100000 bytes") {
		t.Fatalf("over the limit: %v", err)
	}
	if n := h.retrs.Load(); n != 0 {
		t.Fatalf("%d RETR sent for a file over the limit", n)
	}
	if f, err := e.download(e.alice, c, "big.bin", 0); err != nil || len(f.Data) != 100_000 || h.retrs.Load() != 1 {
		t.Fatalf("within the limit: %d bytes, %v", len(f.Data), err)
	}
	// A complete upload is renamed to its name (the rename the vanishing
	// server never sees).
	if _, err := e.upload(e.alice, c, "", "new.bin", []byte("data")); err != nil || h.renames.Load() != 1 {
		t.Fatalf("upload: %v, %d renames", err, h.renames.Load())
	}
}

// TestSessionsClosedAtShutdown: a kept session is closed by Close, and
// after it nothing is kept (an operation still works, on a session of its
// own).
func TestSessionsClosedAtShutdown(t *testing.T) {
	root, _ := tree(t)
	s := serve(t, "sftp", root)
	e := s.e
	c := e.connect(t, e.alice, s.url, account, password, s.pin)
	if _, err := e.browse(e.alice, c, "", 0, ""); err != nil || e.ft.Kept() != 1 {
		t.Fatalf("browse: %v, %d kept", err, e.ft.Kept())
	}
	e.ft.Close()
	if n := e.ft.Kept(); n != 0 {
		t.Fatalf("%d sessions kept after Close", n)
	}
	if _, err := e.browse(e.alice, c, "", 0, ""); err != nil || e.ft.Kept() != 0 {
		t.Fatalf("browse after Close: %v, %d kept", err, e.ft.Kept())
	}
}

// TestDroppedSessionRetried: a kept session the server dropped (its idle
// timeout) fails its next operation, which is retried once on a new
// sign-in instead of failing.
func TestDroppedSessionRetried(t *testing.T) {
	h := startHostileFTP(t, "oneshot")
	e := newEnv(t, h.port)
	c := e.connect(t, e.alice, "ftp://files.test:"+h.port+"/", account, password, "")
	for i := range 3 {
		if l, err := e.browse(e.alice, c, "", 0, ""); err != nil || len(l.Entries) != 1 {
			t.Fatalf("browse %d: %+v %v", i, l, err)
		}
	}
	if n := h.conns.Load(); n != 3 {
		t.Fatalf("%d connections, want one per browse", n)
	}
}
