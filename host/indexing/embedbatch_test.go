package indexing_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// TestArchiveEmbeddingBatches: an archive of 1,000 small text files goes
// through the container plugin; its entries' chunks are embedded together,
// in a handful of requests within the provider's batch size, not one per
// entry. The provider's first answer is a 429 with Retry-After, which is
// waited out and retried; every entry ends indexed with its vector.
func TestArchiveEmbeddingBatches(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	const entries, batchSize = 1000, 256
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range entries {
		w, err := zw.Create(fmt.Sprintf("notes/note-%04d.txt", i))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "Note %d: the meeting about project %d moved to room %d.", i, i, i%17)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.New(t, llmtest.WithEmbeddingDimension(16))
	srv.ScriptEndpoint(llmtest.EndpointEmbeddings, llmtest.RateLimited(time.Second))
	model, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 30 * time.Second}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpEmbedding: {{Provider: "test", Model: "embed-16"}}},
		Retry:     llm.RetryConfig{Attempts: 3, BaseDelay: time.Millisecond},
		Embedding: llm.EmbeddingConfig{BatchSize: batchSize},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := wasmtest.Host(t, "containers", "textextract")
	ing := ingest.New(e.db, e.blobs, extract.New(h), nil).
		WithContainers(extract.NewContainers(h), e.db, e.blobs).WithEmbedder(model)
	f := e.upload(t, files.NewService(e.db, e.blobs, 0), "notes.zip", buf.Bytes())
	began := time.Now()
	if _, err := ing.Ingest(ctx, f.ID, false); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)

	var statuses []int
	for _, r := range srv.Requests() {
		if r.Endpoint == llmtest.EndpointEmbeddings {
			statuses = append(statuses, r.Status)
		}
	}
	t.Logf("%d embedding requests for %d entries (statuses %v), ingest %s", len(statuses), entries, statuses, took.Round(time.Millisecond))
	// ceil(1000/256) = 4 batches, plus the one refused with 429.
	if want := (entries+batchSize-1)/batchSize + 1; len(statuses) != want || statuses[0] != http.StatusTooManyRequests {
		t.Fatalf("%d embedding requests (statuses %v), want %d: the 429, then one per batch of %d", len(statuses), statuses, want, batchSize)
	}
	if took < time.Second {
		t.Fatalf("ingest took %s: the 429's Retry-After (1 s) was not waited out", took)
	}
	var vectors int
	if err := e.db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM chunk_vectors").Scan(&vectors); err != nil || vectors != entries {
		t.Fatalf("%d vectors, want %d (one per entry): %v", vectors, entries, err)
	}
	list, err := indexing.NewContainers(e.db, ing).Entries(ctx, e.p, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	indexed := 0
	for _, en := range list {
		if en.Status == string(kindex.StatusIndexed) && en.Error == "" {
			indexed++
		}
	}
	if indexed != entries {
		t.Fatalf("%d of %d entries indexed without error", indexed, entries)
	}
}
