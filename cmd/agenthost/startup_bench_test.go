package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// BenchmarkStartup measures what a new user meets, with the real binary as
// a separate process: the machine's compile cache filled once (as `make
// build` does), then a fresh data directory each run.
//
//	startup.fresh.ready.ms              process start to the API answering
//	startup.fresh.first_pdf_indexed.ms  process start, upload of a corpus PDF as soon as
//	                                    the API answers, to the file indexed
//	startup.fresh.peak_rss.mb           the server's peak resident memory in that run
//	plugin.call.cli.cached.ms           `plugin call` of the built-in pdf extractor on a
//	                                    one-page corpus PDF, cache warm
func BenchmarkStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "agenthost")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	cache := b.TempDir()
	if out, err := exec.Command(bin, "plugin", "warm", "-cache-dir", cache).CombinedOutput(); err != nil {
		b.Fatalf("plugin warm: %v\n%s", err, out)
	}
	pdf := testcorpus.Path(b, "pdf", "deb-camlidl-1.04.pdf")

	var ready, indexed, rss []float64
	for i := 0; i < 3; i++ {
		r, x, m := startOnce(b, bin, cache, pdf)
		ready, indexed, rss = append(ready, r), append(indexed, x), append(rss, m)
	}
	figure.Report("startup.fresh.ready.ms", figure.Median(ready), "ms")
	figure.Report("startup.fresh.first_pdf_indexed.ms", figure.Median(indexed), "ms")
	figure.Report("startup.fresh.peak_rss.mb", figure.Median(rss), "MB")

	pdfWasm := filepath.Join("..", "..", "host", "builtin", "wasm", "pdf.wasm")
	args := `{"name":"doc.pdf","mimeType":"application/pdf"}`
	onePage := testcorpus.Path(b, "pdf", "ocrmypdf-c02-22-scanned.pdf")
	var calls []float64
	for i := 0; i < 6; i++ {
		t0 := time.Now()
		cmd := exec.Command(bin, "plugin", "call", "-cache-dir", cache, "-input", onePage, pdfWasm, "extract", args)
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatalf("plugin call: %v", err)
		}
		if i > 0 { // the first fills the instrumented module's cache entry
			calls = append(calls, figure.Millis(time.Since(t0)))
		}
	}
	figure.Report("plugin.call.cli.cached.ms", figure.Median(calls), "ms")
}

// startOnce bootstraps a fresh data directory, starts the server, uploads
// pdf as soon as the API answers and waits for it to be indexed.
func startOnce(b *testing.B, bin, cache, pdf string) (readyMs, indexedMs, rssMB float64) {
	data := filepath.Join(b.TempDir(), "data")
	out, err := exec.Command(bin, "admin", "bootstrap", "-data", data, "-tenant", "Bench", "-email", "bench@example.org").CombinedOutput()
	if err != nil {
		b.Fatalf("bootstrap: %v\n%s", err, out)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindSubmatch(out)
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindSubmatch(out)
	if ws == nil || tok == nil {
		b.Fatalf("bootstrap printed %s", out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(bin, "serve", "-data", data, "-addr", addr, "-cache-dir", cache)
	srv.Env = append(os.Environ(), "AGENTHOST_OPENAI_API_KEY=", "AGENTHOST_OPENAI_BASE_URL=")
	var logs bytes.Buffer
	srv.Stderr = &logs
	t0 := time.Now()
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if srv.ProcessState == nil {
			srv.Process.Kill()
			srv.Wait()
		}
	}()
	base := "http://" + addr
	for {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(t0) > 5*time.Minute {
			b.Fatalf("the server did not answer:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	readyMs = figure.Millis(time.Since(t0))

	id := upload(b, base, string(tok[1]), string(ws[1]), pdf)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/files/"+id+"/index", nil)
		req.Header.Set("Authorization", "Bearer "+string(tok[1]))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var st struct {
			Status string `json:"status"`
		}
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if st.Status == "indexed" {
			break
		}
		if st.Status == "failed" || time.Since(t0) > 10*time.Minute {
			b.Fatalf("indexing ended %q:\n%s", st.Status, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	indexedMs = figure.Millis(time.Since(t0))
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	if ru, ok := srv.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rssMB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	}
	return readyMs, indexedMs, rssMB
}

func upload(b *testing.B, base, token, ws, path string) string {
	content, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", filepath.Base(path))
	fw.Write(content)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/workspaces/%s/files", base, ws), &body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var f struct {
		ID string `json:"id"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &f); err != nil || f.ID == "" {
		b.Fatalf("upload: HTTP %d %s", resp.StatusCode, raw)
	}
	return f.ID
}
