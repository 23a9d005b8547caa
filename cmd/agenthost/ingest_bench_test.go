package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// ingestIdleWait is how long the server is left alone after ingesting
// before its idle memory is read: the figure's definition (issue #26
// item 7, "idle for a minute").
const ingestIdleWait = time.Minute

// BenchmarkIngestMemory measures what ingesting holds, with the real
// binary as a separate process: a fresh server is sent every document of
// the test corpus (PDFs in many scripts, scans, mails, Office files,
// archives) through the HTTP API, the bench waits for each to be indexed
// (background page extraction included), then leaves the server idle for
// ingestIdleWait.
//
//	ingest.peak_rss.mb  the server's peak resident memory (VmHWM) over the run
//	ingest.idle_rss.mb  its resident memory (VmRSS) after ingestIdleWait idle
func BenchmarkIngestMemory(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "agenthost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	cache := b.TempDir()
	if out, err := exec.Command(bin, "plugin", "warm", "-cache-dir", cache).CombinedOutput(); err != nil {
		b.Fatalf("plugin warm: %v\n%s", err, out)
	}
	docs := ingestCorpus(b)
	srv := startIngestServer(b, bin, cache)

	t0 := time.Now()
	ids := make(map[string]string, len(docs))
	for _, d := range docs {
		ids[upload(b, srv.base, srv.token, srv.ws, d)] = d
	}
	for id, d := range ids {
		srv.waitIndexed(b, id, d, 20*time.Minute)
	}
	b.Logf("%d documents ingested in %v; %s", len(docs), time.Since(t0).Round(time.Second), srv.memory(b))
	peak := procStatusKiB(b, srv.cmd.Process.Pid, "VmHWM")
	time.Sleep(ingestIdleWait)
	idle := procStatusKiB(b, srv.cmd.Process.Pid, "VmRSS")
	b.Logf("after %v idle: %s", ingestIdleWait, srv.memory(b))
	// What the idle timeout closed (instances, then code), for the log.
	for _, l := range strings.Split(srv.logs.String(), "\n") {
		if strings.Contains(l, "closed idle plugin") || strings.Contains(l, "memory limit") {
			b.Log(l)
		}
	}
	figure.Report("ingest.peak_rss.mb", float64(peak)/1024, "MB")
	figure.Report("ingest.idle_rss.mb", float64(idle)/1024, "MB")
	figure.Report("ingest.documents", float64(len(docs)), "files")
}

// ingestCorpus lists the corpus's documents: every file but the sidecars
// that describe another (expected text, listings, pdfinfo, sources, the
// scripts that made some) and the hostile archives (their own tests
// bound them; here they would only measure the limits that refuse them).
func ingestCorpus(tb testing.TB) []string {
	tb.Helper()
	root := testcorpus.Dir(tb)
	var docs []string
	sidecar := regexp.MustCompile(`\.(pages|outline|summary|listing|pdfinfo|source)\b|\.(py|tsv|md)$`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.IsDir() && rel == filepath.Join("archives", "hostile"):
			return filepath.SkipDir
		case d.IsDir() || sidecar.MatchString(rel):
			return nil
		}
		docs = append(docs, p)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return docs
}

// served is a server process started by startIngestServer on a fresh data
// directory, with the bootstrap's workspace and token.
type served struct {
	cmd             *exec.Cmd
	base, token, ws string
	logs            *bytes.Buffer
}

// startIngestServer bootstraps a fresh data directory, starts `serve` on it and
// waits for the API to answer; the process is killed when the bench ends.
func startIngestServer(b *testing.B, bin, cache string) *served {
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
	s := &served{base: "http://" + addr, token: string(tok[1]), ws: string(ws[1]), logs: &bytes.Buffer{}}
	s.cmd = exec.Command(bin, "serve", "-data", data, "-addr", addr, "-cache-dir", cache)
	s.cmd.Env = append(os.Environ(), "AGENTHOST_OPENAI_API_KEY=", "AGENTHOST_OPENAI_BASE_URL=")
	s.cmd.Stderr = s.logs
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.cmd.Wait()
	})
	t0 := time.Now()
	for {
		if resp, err := http.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Since(t0) > 5*time.Minute {
			b.Fatalf("the server did not answer:\n%s", s.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitIndexed waits until the file's indexing ended (indexed, failed or
// waiting for a password) with nothing left pending in the background.
func (s *served) waitIndexed(b *testing.B, id, name string, limit time.Duration) {
	t0 := time.Now()
	for {
		req, _ := http.NewRequest(http.MethodGet, s.base+"/api/v1/files/"+id+"/index", nil)
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var st struct {
			Status   string `json:"status"`
			Progress *struct {
				Pending bool `json:"pending"`
			} `json:"progress"`
		}
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		switch {
		case (st.Status == "indexed" || st.Status == "embedding") && (st.Progress == nil || !st.Progress.Pending),
			st.Status == "failed", st.Status == "encrypted":
			return
		}
		if time.Since(t0) > limit {
			b.Fatalf("%s: indexing still %q after %v:\n%s", name, st.Status, limit, s.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// memory describes where the server's memory is, for the bench's log:
// resident anonymous and file-backed memory, and the Go heap from /metrics.
func (s *served) memory(b *testing.B) string {
	pid := s.cmd.Process.Pid
	out := fmt.Sprintf("resident %d MiB (anonymous %d MiB, files %d MiB)", procStatusKiB(b, pid, "VmRSS")/1024,
		procStatusKiB(b, pid, "RssAnon")/1024, procStatusKiB(b, pid, "RssFile")/1024)
	req, _ := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		switch name {
		case "go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes", "go_memstats_sys_bytes":
			if f, err := strconv.ParseFloat(v, 64); ok && err == nil {
				out += fmt.Sprintf(", %s %.0f MiB", strings.TrimSuffix(strings.TrimPrefix(name, "go_memstats_"), "_bytes"), f/(1<<20))
			}
		}
	}
	return out
}

// procStatusKiB reads one "Vm…: N kB" line of /proc/PID/status.
func procStatusKiB(tb testing.TB, pid int, field string) int64 {
	tb.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == field {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("/proc/%d/status %s: %v", pid, field, err)
			}
			return n
		}
	}
	tb.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}
