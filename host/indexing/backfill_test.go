package indexing_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// paragraphExtractor makes one text object per blank-line separated
// paragraph: a document without a plugin, for tests about what comes after
// extraction.
type paragraphExtractor struct{}

func (paragraphExtractor) Extract(_ context.Context, _, _ string, in wasm.Input) (content.Index, []content.Object, error) {
	b, err := io.ReadAll(io.NewSectionReader(in, 0, in.Size()))
	if err != nil {
		return content.Index{}, nil, err
	}
	var objs []content.Object
	for i, p := range strings.Split(string(b), "\n\n") {
		if strings.TrimSpace(p) != "" {
			objs = append(objs, content.Object{ID: "p" + string(rune('a'+i)), ContentType: content.Text, Data: p,
				Ref: content.Ref{Paragraph: i + 1}, Sequence: i})
		}
	}
	return content.Index{TotalObjects: len(objs)}, objs, nil
}

// TestEmbeddingBackfill: files indexed while the embedding service fails
// are found by their words only (and search says so); once the service
// answers, re-uploading the same bytes brings a backfill job that gives
// them their vectors, clears the "vectors missing" reason, and search is
// hybrid again.
func TestEmbeddingBackfill(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	db, blobs, p := e.db, e.blobs, e.p
	if err := jobs.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.WithEmbeddingDimension(64))
	model, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 5 * time.Second}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpEmbedding: {{Provider: "test", Model: "embed-64"}}},
		Retry:     llm.RetryConfig{Attempts: 1},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDefault(llmtest.EndpointEmbeddings, llmtest.Fail(503, "embedding service down"))

	ingester := ingest.New(db, blobs, paragraphExtractor{}, nil).WithEmbedder(model)
	reg := jobs.NewRegistry()
	indexing.RegisterJobs(reg, ingester, db)
	q, err := jobs.New(db, jobs.Config{Registry: reg, Work: true, RetryBase: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	svc := files.NewService(db, blobs, 0).WithIndexer(indexing.NewJobIndexer(q), nil)
	vectors := func() int {
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM chunk_vectors").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("not within 2 minutes: %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	f := e.upload(t, svc, "policy.md", []byte(doc))
	var st kindex.ContentState
	waitFor("indexed", func() bool {
		st, err = db.ContentState(ctx, p, f.ID)
		return err == nil && st.Status == kindex.StatusIndexed
	})
	if !strings.HasPrefix(st.Error, "vectors missing") || vectors() != 0 {
		t.Fatalf("indexed while embeddings fail: error %q, %d vectors", st.Error, vectors())
	}
	searcher := search.New(db, model, nil)
	hits, err := searcher.Search(ctx, p, kindex.Query{Text: "hotel costs reimbursed per night", Limit: 3})
	if err != nil || len(hits) == 0 || hits[0].Match != search.MatchWords {
		t.Fatalf("search while the service is down: %+v %v, want words-only hits", hits, err)
	}
	// The backfill runs (after the upload) and fails quietly: still none.
	if n, err := ingester.Backfill(ctx, db); err == nil || n != 0 {
		t.Fatalf("backfill while the service is down: %d, %v; want an error", n, err)
	}

	// The service answers again; the same bytes are uploaded again.
	srv.SetDefault(llmtest.EndpointEmbeddings, llmtest.Step{})
	e.upload(t, svc, "policy-again.md", []byte(doc))
	waitFor("vectors backfilled", func() bool { return vectors() == 4 })
	waitFor("reason cleared", func() bool {
		st, err = db.ContentState(ctx, p, f.ID)
		return err == nil && st.Status == kindex.StatusIndexed && st.Error == ""
	})
	hits, err = searcher.Search(ctx, p, kindex.Query{Text: "hotel costs reimbursed per night", Limit: 3})
	if err != nil || len(hits) == 0 || hits[0].Match != search.MatchHybrid || hits[0].Ref.Paragraph != 4 {
		t.Fatalf("search after the backfill: %+v %v, want hybrid hits, paragraph 4 first", hits, err)
	}
	if n, err := ingester.Backfill(ctx, db); err != nil || n != 0 {
		t.Fatalf("backfill with nothing missing: %d, %v", n, err)
	}
}
