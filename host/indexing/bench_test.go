package indexing_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// BenchmarkIngest reports ingest.throughput MB/s: the corpus's PDFs and
// office documents through the sandboxed extractors, chunking and the
// lexical index of the embedded store (input bytes over wall time, uploads
// excluded, plugins warm), median of three rounds. Documents are ingested by
// as many workers as there are cores, as serve's job queue does;
// ingest.throughput.serial is one worker, side by side. The
// ingest.phase.* figures split the time (summed over workers) between the
// phases, in milliseconds per MB of input.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	host := wasmtest.Host(b, "pdf", "office")
	var docs []string
	for _, pattern := range []string{"pdf/*.pdf", "office/*/*.docx", "office/*/*.xlsx", "office/*/*.pptx"} {
		docs = append(docs, testcorpus.Glob(b, pattern)...)
	}
	contents := make([][]byte, len(docs))
	for i, path := range docs {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		contents[i] = data
	}
	type run struct {
		rate   float64
		phases map[string]time.Duration
		mb     float64
	}
	runIngest := func(workers int) run {
		e := newEnv(b)
		var mu sync.Mutex
		phases := map[string]time.Duration{}
		ingester := ingest.New(e.db, e.blobs, extract.New(host), nil).
			WithPhaseObserver(func(phase string, d time.Duration) {
				mu.Lock()
				phases[phase] += d
				mu.Unlock()
			})
		svc := files.NewService(e.db, e.blobs, 0)
		ids := make([]string, len(docs))
		var total int64
		for i, path := range docs {
			f := e.upload(b, svc, filepath.Base(path), contents[i])
			ids[i] = f.ID
			total += f.Size
		}
		next := make(chan int)
		var wg sync.WaitGroup
		start := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					// Malformed corpus files fail by design; they still cost their time.
					if _, err := ingester.Ingest(ctx, ids[i], false); err != nil && !strings.Contains(docs[i], "invalid") && !strings.Contains(docs[i], "broken") {
						b.Errorf("%s: %v", filepath.Base(docs[i]), err)
					}
				}
			}()
		}
		for i := range ids {
			next <- i
		}
		close(next)
		wg.Wait()
		mb := float64(total) / 1e6
		return run{rate: mb / time.Since(start).Seconds(), phases: phases, mb: mb}
	}
	runIngest(1) // warms the instances and the tokenizer
	workers := runtime.GOMAXPROCS(0)
	var rates, serial []float64
	var last run
	for range 3 {
		last = runIngest(workers)
		rates = append(rates, last.rate)
		serial = append(serial, runIngest(1).rate)
	}
	figure.Report("ingest.throughput", figure.Median(rates), "MB/s")
	figure.Report("ingest.throughput.serial", figure.Median(serial), "MB/s")
	for _, p := range []string{ingest.PhaseExtract, ingest.PhaseChunk, ingest.PhaseStore} {
		figure.Report("ingest.phase."+p, float64(last.phases[p].Milliseconds())/last.mb, "ms/MB")
	}
}
