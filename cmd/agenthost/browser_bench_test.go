package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/workflows"
)

// BenchmarkUI measures the workspace UI in headless Chromium against a real
// serve with a scripted model (host/webui/e2e/bench.mjs says how):
//
//	ui.initial_load.kb       bytes transferred for a workspace's first view, compressed
//	ui.first_token.ms        send to the first streamed token painted (median of 7)
//	ui.event_render.p99.ms   1,000 chunk events appended in a burst by another process
//	                         (as a second host would), arrival to paint, p99 (and p50)
func BenchmarkUI(b *testing.B) {
	e2e := browserPrereqs(b)
	w := startUIWorld(b)
	cmd := exec.Command("node", filepath.Join(e2e, "bench.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+w.base, "UI_TOKEN="+w.token, "UI_WS="+w.ws, "UI_CHROMIUM="+chromium)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	var result struct {
		InitialLoadKB, FirstTokenMs, EventRenderP50, EventRenderP99 float64
		Events, BurstTextLength                                     int
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "READY "):
			burst(b, w, strings.TrimPrefix(line, "READY "))
			fmt.Fprintln(stdin, "go")
		case strings.HasPrefix(line, "RESULT "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "RESULT ")), &result); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("bench.mjs: %v\n%s", err, stderr.String())
	}
	if result.Events < 1000 || result.BurstTextLength < 1000*len("tok ") {
		b.Fatalf("the burst did not arrive whole: %+v", result)
	}
	figure.Report("ui.initial_load.kb", result.InitialLoadKB, "KB")
	figure.Report("ui.first_token.ms", result.FirstTokenMs, "ms")
	figure.Report("ui.event_render.p99.ms", result.EventRenderP99, "ms")
	figure.Report("ui.event_render.p50.ms", result.EventRenderP50, "ms")
}

// burst appends 1,000 chunk events of one new message to the workflow, as
// fast as the store takes them, through a second connection to the server's
// database (the server's broker finds them as it finds another host's).
func burst(b *testing.B, w *uiWorld, wf string) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: w.data})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	p, err := db.Authenticate(ctx, w.token)
	if err != nil {
		b.Fatal(err)
	}
	svc := workflows.NewService(db, nil, nil)
	for i := 0; i < 1000; i++ {
		if _, err := svc.Append(ctx, p, wf, workflows.EventChunk, workflows.ChunkData{MessageID: "burst", Text: "tok "}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUIPreview measures the preview in headless Chromium against a
// real serve (host/webui/e2e/preview.bench.mjs says how), on a 500-page
// PDF made of the corpus's real manuals:
//
//	ui.preview.first_page.ms   a citation clicked to its page drawn, cold (median of 5)
//	ui.preview.first_page.kb   the PDF's bytes fetched for that page (median)
func BenchmarkUIPreview(b *testing.B) {
	e2e := browserPrereqs(b)
	w := startUIWorld(b)
	id := uploadTyped(b, w, "manuals-500.pdf", "application/pdf", fiveHundredPagePDF(b))
	// The upload's indexing (its pre-scan) would share the two cores
	// with the browser: it ends first.
	waitStatus(b, w, id)
	cmd := exec.Command("node", filepath.Join(e2e, "preview.bench.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+w.base, "UI_TOKEN="+w.token, "UI_WS="+w.ws, "UI_CHROMIUM="+chromium, "UI_PDF500="+id)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("preview.bench.mjs: %v\n%s", err, stderr.String())
	}
	var result struct {
		FirstPageMs, FirstPageKB float64
		RunsMs, RunsKB           []float64
	}
	line, ok := strings.CutPrefix(strings.TrimSpace(stdout.String()), "RESULT ")
	if !ok || json.Unmarshal([]byte(line), &result) != nil {
		b.Fatalf("preview.bench.mjs printed %q", stdout.String())
	}
	b.Logf("runs: %v ms, %v KB\n%s", result.RunsMs, result.RunsKB, stderr.String())
	figure.Report("ui.preview.first_page.ms", result.FirstPageMs, "ms")
	figure.Report("ui.preview.first_page.kb", result.FirstPageKB, "KB")
}
