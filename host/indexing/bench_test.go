package indexing_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// BenchmarkIngest reports ingest.throughput MB/s: the corpus's PDFs and
// office documents through the sandboxed extractors, chunking and the
// lexical index of the embedded store (input bytes over wall time, uploads
// excluded, plugins warm), median of three rounds.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	host := wasmtest.Host(b, "pdf", "office")
	var docs []string
	for _, pattern := range []string{"pdf/*.pdf", "office/*/*.docx", "office/*/*.xlsx", "office/*/*.pptx"} {
		m := testcorpus.Glob(b, pattern)
		docs = append(docs, m...)
	}
	var rates []float64
	for round := range 3 {
		e := newEnv(b)
		ingester := knowledge.NewIngester(e.db, e.blobs, knowledge.NewExtractors(host), nil)
		svc := files.NewService(e.db, e.blobs, 0)
		var ids []string
		var total int64
		for _, path := range docs {
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			f := e.upload(b, svc, filepath.Base(path), data)
			ids = append(ids, f.ID)
			total += f.Size
		}
		start := time.Now()
		for i, id := range ids {
			// Malformed corpus files fail by design; they still cost their time.
			if _, err := ingester.Ingest(ctx, id, false); err != nil && !strings.Contains(docs[i], "invalid") && !strings.Contains(docs[i], "broken") {
				b.Logf("%s: %v", filepath.Base(docs[i]), err)
			}
		}
		if round > 0 || len(docs) == 1 {
			rates = append(rates, float64(total)/1e6/time.Since(start).Seconds())
		}
	}
	figure.Report("ingest.throughput", figure.Median(rates), "MB/s")
}
