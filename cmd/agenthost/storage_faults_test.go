package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/testenv"
)

// smallFS mounts a tmpfs of size bytes (the real kernel's "no space left on
// device", not a fake) and unmounts it when the test ends. It needs root,
// which CI has; elsewhere the test is skipped.
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test mounts a file system and needs root, which CI has")
		}
		t.Skip("mounting a small file system needs root")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v: %s", err, out)
		}
	})
	return dir
}

// TestServeStorageFull (issue 32 item 7): on a full data directory an upload
// answers 507 saying the server's storage is full, not an unexplained 500;
// nothing already stored is lost, and the next upload that fits succeeds.
func TestServeStorageFull(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server")
	}
	data := filepath.Join(smallFS(t, "12m"), "data")
	tc := bootstrapTenant(t, data, t.TempDir(), "acme", nil)
	logs := &syncBuffer{}
	base := serveInProcess(t, logs, "-data", data, "-plugins", t.TempDir())
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	upload := func(name string, content []byte) (int, []byte) {
		t.Helper()
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		part, _ := mw.CreateFormFile("file", name)
		part.Write(content)
		mw.Close()
		req, _ := http.NewRequest("POST", base+"/api/v1/workspaces/"+tc.workspace+"/files", &body)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	first := []byte("notes kept before the disk filled up")
	st, raw := upload("notes.txt", first)
	var f struct{ ID string }
	if st != 201 || json.Unmarshal(raw, &f) != nil {
		t.Fatalf("first upload: %d %s", st, raw)
	}
	big := make([]byte, 24<<20)
	rand.Read(big)
	st, raw = upload("big.bin", big)
	if st != http.StatusInsufficientStorage || !strings.Contains(string(raw), "the server's storage is full") {
		t.Fatalf("an upload larger than the free space: %d %s", st, raw)
	}
	if st, raw := upload("small.txt", []byte("fits")); st != 201 {
		t.Fatalf("an upload that fits after the refusal: %d %s", st, raw)
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/files/"+f.ID+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+tc.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, first) {
		t.Fatalf("the file stored before: %q", got)
	}
	if !strings.Contains(logs.String(), "storage full") {
		t.Errorf("serve's log does not say the storage is full:\n%s", logs.String())
	}
}

// TestReadOnlyDataDirectory (issue 32 item 7): a data directory on a
// read-only file system stops start-up with its path and "read-only", not
// SQLite's "unable to open database file (14)".
func TestReadOnlyDataDirectory(t *testing.T) {
	mnt := smallFS(t, "4m")
	data := filepath.Join(mnt, "data")
	if _, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example"); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	for _, args := range [][]string{
		{"serve", "-data", data, "-addr", "127.0.0.1:0", "-mcp-addr", "off"},
		{"migrate", "-data", data},
		{"admin", "bootstrap", "-data", data, "-tenant", "Other", "-email", "bo@other.example"},
	} {
		_, _, err := run0(t, args...)
		if err == nil || !strings.Contains(err.Error(), data) || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s on a read-only data directory: %v", args[0], err)
		}
	}
}

// TestDatabaseWaitAtStartup (issue 32 item 7): a PostgreSQL server that does
// not answer yet is retried with backoff for -database-wait; once it
// answers, start-up goes on; one that never answers ends start-up with the
// attempts counted.
func TestDatabaseWaitAtStartup(t *testing.T) {
	real, err := url.Parse(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	late := *real
	late.Host = addr
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"migrate", "-database", late.String(), "-database-wait", "10m"}, io.Discard, &stderr)
	}()
	// The database comes up once start-up has been refused at least once.
	for !strings.Contains(stderr.String(), "database not reachable, retrying") {
		select {
		case err := <-done:
			t.Fatalf("migrate ended before the database came up: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go forward(ln, real.Host)
	if err := <-done; err != nil {
		t.Fatalf("migrate after the database came up: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "database reachable") {
		t.Errorf("no line says the database answered:\n%s", stderr.String())
	}

	// Nothing ever answers: the attempts end with the wait.
	gone, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	late.Host = gone
	_, _, err = run0(t, "migrate", "-database", late.String(), "-database-wait", "1s")
	if err == nil || !strings.Contains(err.Error(), "not reachable after") {
		t.Fatalf("migrate with no database: %v", err)
	}
	_, _, err = run0(t, "migrate", "-database", late.String(), "-database-wait", "0")
	if err == nil || strings.Contains(err.Error(), "attempts") {
		t.Fatalf("migrate with no database and no wait: %v", err)
	}
}

// forward copies connections accepted on ln to target until ln closes.
func forward(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", target)
			if err != nil {
				return
			}
			defer up.Close()
			go io.Copy(up, c)
			io.Copy(c, up)
		}()
	}
}
