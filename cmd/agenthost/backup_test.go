package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// TestBackupUnderLoad backs up the embedded database and its blobs while
// serve takes uploads and runs conversations, restores the backup into a
// fresh data directory, starts serve on it and finds every file (its bytes),
// conversation and event that was complete when the backup began.
func TestBackupUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server twice with the built-in plugins")
	}
	model := llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	model.SetDefault(llmtest.EndpointChat, llmtest.Reply("Noted."))
	root := t.TempDir()
	data, backup, restored := filepath.Join(root, "data"), filepath.Join(root, "backup"), filepath.Join(root, "restored")
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	ws, token := m[1], m[2]
	logs := &syncBuffer{}
	h := host{base: serveInProcess(t, logs, "-data", data) + "/api/v1"}
	t.Cleanup(http.DefaultClient.CloseIdleConnections)

	type upload struct {
		id   string
		body []byte
		done time.Time
	}
	type conversation struct {
		id     string
		events []hostEvent
		done   time.Time
	}
	var mu sync.Mutex
	var uploads []upload
	var conversations []conversation
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for u := 0; u < 2; u++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := make([]byte, 10_000+i*997%200_000)
				rand.Read(body)
				id, err := uploadFile(h.base, token, ws, fmt.Sprintf("u%d-%d.bin", u, i), body)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				uploads = append(uploads, upload{id: id, body: body, done: time.Now()})
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id, err := startConversation(h.base, token, ws, fmt.Sprintf("note %d", i))
			if err != nil {
				errs <- err
				return
			}
			evs, err := h.follow(token, id, func(e hostEvent) bool { return e.typ == "complete" || e.typ == "error" || e.typ == "stopped" })
			if err != nil {
				errs <- err
				return
			}
			if last := evs[len(evs)-1]; last.typ != "complete" {
				errs <- fmt.Errorf("conversation %s ended with %s: %s", id, last.typ, last.data)
				return
			}
			mu.Lock()
			conversations = append(conversations, conversation{id: id, events: evs, done: time.Now()})
			mu.Unlock()
		}
	}()
	// The backup starts once some of each are complete, and runs while
	// more are made.
	for {
		mu.Lock()
		n, c := len(uploads), len(conversations)
		mu.Unlock()
		if n >= 20 && c >= 3 {
			break
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	began := time.Now()
	if out, stderr, err := run0(t, "backup", "-data", data, "-to", backup); err != nil {
		t.Fatalf("backup: %v\n%s", err, stderr)
	} else {
		t.Log(strings.TrimSpace(out))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mu.Lock()
	var wantFiles []upload
	for _, u := range uploads {
		if u.done.Before(began) {
			wantFiles = append(wantFiles, u)
		}
	}
	var wantConvs []conversation
	for _, c := range conversations {
		if c.done.Before(began) {
			wantConvs = append(wantConvs, c)
		}
	}
	t.Logf("%d uploads and %d conversations complete at the backup's start (%d and %d by its end)",
		len(wantFiles), len(wantConvs), len(uploads), len(conversations))
	mu.Unlock()

	// A data directory in use is not overwritten.
	if _, _, err := run0(t, "restore", "-from", backup, "-data", data); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore over a data directory in use: %v, want a refusal", err)
	}
	if out, stderr, err := run0(t, "restore", "-from", backup, "-data", restored); err != nil {
		t.Fatalf("restore: %v\n%s", err, stderr)
	} else {
		t.Log(strings.TrimSpace(out))
	}
	logs2 := &syncBuffer{}
	h2 := host{base: serveInProcess(t, logs2, "-data", restored) + "/api/v1"}
	for _, u := range wantFiles {
		st, got := getRaw(t, h2.base+"/files/"+u.id+"/content", token)
		if st != 200 || !bytes.Equal(got, u.body) {
			t.Fatalf("file %s after restore: %d, %d bytes; want its %d bytes", u.id, st, len(got), len(u.body))
		}
	}
	for _, c := range wantConvs {
		var w struct{ Status string }
		if st := h2.call(t, token, "GET", "/workflows/"+c.id, "", &w); st != 200 || w.Status != "completed" {
			t.Fatalf("conversation %s after restore: %d %q", c.id, st, w.Status)
		}
		got := h2.events(t, token, c.id, func(e hostEvent) bool { return e.typ == "complete" })
		if len(got) != len(c.events) {
			t.Fatalf("conversation %s after restore: %d events, want %d", c.id, len(got), len(c.events))
		}
		for i := range got {
			if got[i] != c.events[i] {
				t.Fatalf("conversation %s event %d after restore: %+v, want %+v", c.id, i, got[i], c.events[i])
			}
		}
	}
}

// uploadFile posts a file to a workspace and returns its id.
func uploadFile(base, token, ws, name string, content []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", name)
	part.Write(content)
	mw.Close()
	req, _ := http.NewRequest("POST", base+"/workspaces/"+ws+"/files", &body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var f struct{ ID string }
	if resp.StatusCode != 201 || json.Unmarshal(raw, &f) != nil || f.ID == "" {
		return "", fmt.Errorf("upload %s: %d %s", name, resp.StatusCode, raw)
	}
	return f.ID, nil
}

// startConversation starts a workflow in a workspace and returns its id.
func startConversation(base, token, ws, prompt string) (string, error) {
	raw, _ := json.Marshal(map[string]string{"prompt": prompt})
	req, _ := http.NewRequest("POST", base+"/workspaces/"+ws+"/workflows", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ = io.ReadAll(resp.Body)
	var w struct{ ID string }
	if resp.StatusCode != 202 || json.Unmarshal(raw, &w) != nil || w.ID == "" {
		return "", fmt.Errorf("start conversation: %d %s", resp.StatusCode, raw)
	}
	return w.ID, nil
}

func getRaw(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestRestoreRefusesIncompleteBackup: a folder without a finished backup
// is refused before anything is written.
func TestRestoreRefusesIncompleteBackup(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "data")
	if _, _, err := run0(t, "restore", "-from", dir, "-data", target); err == nil || !strings.Contains(err.Error(), "not a complete backup") {
		t.Fatalf("restore of an empty folder: %v", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("restore wrote %s: %v", target, err)
	}
	if _, _, err := run0(t, "backup", "-data", filepath.Join(dir, "none"), "-to", filepath.Join(dir, "b")); err == nil || !strings.Contains(err.Error(), "no embedded database") {
		t.Fatalf("backup of a missing data directory: %v", err)
	}
}

// TestAdminStorageSweep deletes a 6 MB file through the API of a running
// serve; `admin storage` shows it in the trash, and `admin storage -sweep`
// with no trash retention gives its bytes back on disk.
func TestAdminStorageSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	data := filepath.Join(t.TempDir(), "data")
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	ws, token := m[1], m[2]
	logs := &syncBuffer{}
	h := host{base: serveInProcess(t, logs, "-data", data) + "/api/v1"}
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	big := make([]byte, 6<<20)
	rand.Read(big)
	id, err := uploadFile(h.base, token, ws, "big.bin", big)
	if err != nil {
		t.Fatal(err)
	}
	keep, err := uploadFile(h.base, token, ws, "keep.txt", []byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ SHA256 string }
	if st := h.call(t, token, "GET", "/files/"+id, "", &f); st != 200 || len(f.SHA256) != 64 {
		t.Fatalf("file: %d %+v", st, f)
	}
	onDisk := filepath.Join(data, "blobs", f.SHA256[:2], f.SHA256[2:])
	if st := h.call(t, token, "DELETE", "/files/"+id, "", nil); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	report, stderr, err := run0(t, "admin", "storage", "-data", data)
	if err != nil {
		t.Fatalf("admin storage: %v\n%s", err, stderr)
	}
	if !strings.Contains(report, "stored: 2 blobs, 6.3 MB") || !strings.Contains(report, "Acme") {
		t.Fatalf("admin storage printed:\n%s", report)
	}
	if _, err := os.Stat(onDisk); err != nil {
		t.Fatalf("a file in the trash lost its bytes before the sweep: %v", err)
	}
	swept, stderr, err := run0(t, "admin", "storage", "-data", data, "-sweep", "-trash-retention", "0", "-sweep-grace", "0")
	if err != nil {
		t.Fatalf("admin storage -sweep: %v\n%s", err, stderr)
	}
	if !strings.Contains(swept, "reclaimed 1 blobs, 6.3 MB") || !strings.Contains(swept, "stored: 1 blobs, 4 B") {
		t.Fatalf("admin storage -sweep printed:\n%s", swept)
	}
	if _, err := os.Stat(onDisk); !os.IsNotExist(err) {
		t.Fatalf("the deleted file's bytes are still on disk: %v", err)
	}
	if st, got := getRaw(t, h.base+"/files/"+keep+"/content", token); st != 200 || string(got) != "kept" {
		t.Fatalf("the kept file after the sweep: %d %q", st, got)
	}

	// A deleted workspace's files go with it, and their bytes at the sweep.
	tenant := regexp.MustCompile(`(?m)^tenant (\S+)$`).FindStringSubmatch(out)[1]
	made, stderr, err := run0(t, "admin", "workspace", "-data", data, "-tenant", tenant, "-name", "scratch")
	if err != nil {
		t.Fatalf("admin workspace: %v\n%s", err, stderr)
	}
	scratch := strings.TrimPrefix(strings.TrimSpace(made), "workspace ")
	other := make([]byte, 100_000)
	rand.Read(other)
	oid, err := uploadFile(h.base, token, scratch, "scratch.bin", other)
	if err != nil {
		t.Fatal(err)
	}
	var of struct{ SHA256 string }
	h.call(t, token, "GET", "/files/"+oid, "", &of)
	if _, stderr, err := run0(t, "admin", "delete-workspace", "-data", data, "-workspace", scratch); err != nil {
		t.Fatalf("admin delete-workspace: %v\n%s", err, stderr)
	}
	if st, _ := getRaw(t, h.base+"/files/"+oid+"/content", token); st != 404 {
		t.Fatalf("a deleted workspace's file answers %d", st)
	}
	if _, stderr, err := run0(t, "admin", "storage", "-data", data, "-sweep", "-sweep-grace", "0"); err != nil {
		t.Fatalf("admin storage -sweep: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "blobs", of.SHA256[:2], of.SHA256[2:])); !os.IsNotExist(err) {
		t.Fatalf("the deleted workspace's bytes are still on disk: %v", err)
	}
}

// TestServeSweepsPeriodically: serve runs the sweep as a periodic job of
// its queue, so a deleted file's bytes leave the disk without an operator.
func TestServeSweepsPeriodically(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	data := filepath.Join(t.TempDir(), "data")
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	ws, token := m[1], m[2]
	logs := &syncBuffer{}
	// No grace: nothing else uploads here.
	h := host{base: serveInProcess(t, logs, "-data", data, "-sweep-every", "1s", "-trash-retention", "0", "-sweep-grace", "0") + "/api/v1"}
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	body := make([]byte, 300_000)
	rand.Read(body)
	id, err := uploadFile(h.base, token, ws, "gone.bin", body)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ SHA256 string }
	h.call(t, token, "GET", "/files/"+id, "", &f)
	if st := h.call(t, token, "DELETE", "/files/"+id, "", nil); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	// No deadline of its own (River elects its leader first, then enqueues
	// every second): the test binary's -timeout bounds it.
	onDisk := filepath.Join(data, "blobs", f.SHA256[:2], f.SHA256[2:])
	for {
		if _, err := os.Stat(onDisk); os.IsNotExist(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "storage sweep") {
		t.Fatalf("the bytes went without a sweep in the log:\n%s", logs.String())
	}
}
