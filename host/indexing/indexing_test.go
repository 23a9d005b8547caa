package indexing_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/pdk/content"
)

// countingExtractor counts extractions, to show the same bytes are
// extracted once.
type countingExtractor struct {
	inner *extract.Set
	n     atomic.Int32
}

func (c *countingExtractor) Extract(ctx context.Context, name, mimeType string, in wasm.Input) (content.Index, []content.Object, error) {
	c.n.Add(1)
	return c.inner.Extract(ctx, name, mimeType, in)
}

const doc = `# Travel policy

Employees book trains in second class for trips under four hours.

Flights need the approval of a department head and are booked in economy.

Hotel costs are reimbursed up to 180 CHF per night in Zürich and Geneva.`

func TestIngestion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	db, blobs, p := e.db, e.blobs, e.p
	if err := jobs.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	ex := &countingExtractor{inner: extract.New(wasmtest.Host(t, "textextract"))}
	ingester := ingest.New(db, blobs, ex, nil)
	reg := jobs.NewRegistry()
	indexing.RegisterJobs(reg, ingester, db)
	q, err := jobs.New(db, jobs.Config{Registry: reg, Work: true, RetryBase: 50 * time.Millisecond, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	svc := files.NewService(db, blobs, 0).WithIndexer(indexing.NewJobIndexer(q), nil)
	upload := func(name, body string) filemeta.Item { return e.upload(t, svc, name, []byte(body)) }
	waitStatus := func(f filemeta.Item, want kindex.Status) kindex.ContentState {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := db.ContentState(ctx, p, f.ID)
			if err == nil && st.Status == want {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: status %q (%v), want %q", f.Name, st.Status, err, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Upload → job → extractor plugin → chunks → lexical index.
	policy := upload("policy.md", doc)
	st := waitStatus(policy, kindex.StatusIndexed)
	if st.Index.TotalObjects != 4 || st.Index.FileName != "policy.md" {
		t.Fatalf("index: %+v", st.Index)
	}
	hits, err := db.SearchLexical(ctx, p, kindex.Query{Text: "How much is a hotel night reimbursed?"})
	if err != nil || len(hits) == 0 || hits[0].FileID != policy.ID || hits[0].Ref.Paragraph != 4 || !strings.Contains(hits[0].Text, "180 CHF") {
		t.Fatalf("search: %+v %v", hits, err)
	}

	// The same bytes again, under another name: no extraction.
	copyOf := upload("policy-copy.md", doc)
	waitStatus(copyOf, kindex.StatusIndexed)
	if extracted, err := ingester.Ingest(ctx, copyOf.ID, false); err != nil || extracted {
		t.Fatalf("second ingest of the same bytes: extracted=%v %v", extracted, err)
	}
	if n := ex.n.Load(); n != 1 {
		t.Fatalf("%d extractions for one content", n)
	}

	// A new version of a file is indexed anew: search finds its new text.
	if _, _, err := svc.SetContent(ctx, p, policy.ID, strings.NewReader(doc+"\n\nBicycles park for free on Fridays."), 1, "test"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		hits, err := db.SearchLexical(ctx, p, kindex.Query{Text: "bicycles park fridays"})
		if err == nil && len(hits) > 0 && hits[0].FileID == policy.ID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new version was not indexed: %+v %v", hits, err)
		}
	}

	// A type no plugin extracts fails, with the reason, and is not retried.
	img := upload("photo.png", "\x89PNG\r\n\x1a\nxxxx")
	st = waitStatus(img, kindex.StatusFailed)
	if !strings.Contains(st.Error, "no extractor") {
		t.Fatalf("failure reason: %q", st.Error)
	}
	if _, err := ingester.Ingest(ctx, img.ID, false); err != nil {
		t.Fatalf("a failed content is not claimed again without a retry: %v", err)
	}
	if _, err := ingester.Ingest(ctx, "nope", false); !errors.Is(err, ingest.ErrPermanent) {
		t.Fatalf("unknown file: %v", err)
	}
}

// TestCorpusIngestion: real documents of the corpus go through the built-in
// extractor plugins (sandboxed, reading by range) into referenced chunks
// that a question finds: a PDF by page, a DOCX by paragraph.
func TestCorpusIngestion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	db, blobs, p := e.db, e.blobs, e.p
	ingester := ingest.New(db, blobs, extract.New(wasmtest.Host(t, "pdf", "office")), nil)
	svc := files.NewService(db, blobs, 0)
	pageRef, err := os.ReadFile(testcorpus.Path(t, "pdf", "deb-camlidl-1.04.pages", "0003.txt"))
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(string(pageRef))
	for _, c := range []struct {
		file  []string
		query string
		match func(kindex.Hit) bool
	}{
		{[]string{"pdf", "deb-camlidl-1.04.pdf"}, strings.Join(words[min(20, len(words)-8):min(28, len(words))], " "),
			func(h kindex.Hit) bool { return h.Ref.PageIndex == 3 }},
		{[]string{"office", "docx", "textract-paragraphs_and_tables.docx"}, "paragraph before the table",
			func(h kindex.Hit) bool { return h.Ref.Paragraph > 0 && strings.Contains(h.Text, "before the table") }},
	} {
		name := c.file[len(c.file)-1]
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(testcorpus.Path(t, c.file...))
			if err != nil {
				t.Fatal(err)
			}
			f := e.upload(t, svc, name, data)
			if extracted, err := ingester.Ingest(ctx, f.ID, false); err != nil || !extracted {
				t.Fatalf("ingest: %v %v", extracted, err)
			}
			if st, err := db.ContentState(ctx, p, f.ID); err != nil || st.Status != kindex.StatusIndexed || st.Index.TotalObjects == 0 {
				t.Fatalf("state: %+v %v", st, err)
			}
			hits, err := db.SearchLexical(ctx, p, kindex.Query{Text: c.query, FileIDs: []string{f.ID}, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, h := range hits {
				found = found || c.match(h)
			}
			if !found {
				t.Fatalf("no hit with the right reference for %q: %+v", c.query, hits)
			}
		})
	}
}

// TestHybridSearch: with an embedding model configured, ingestion embeds
// every chunk (through the OpenAI wire format) and search fuses the lexical
// and the vector ranking; when the embedding service fails, search goes on
// by words.
func TestHybridSearch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	db, blobs, p := e.db, e.blobs, e.p
	srv := llmtest.New(t, llmtest.WithEmbeddingDimension(64))
	model, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 5 * time.Second}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpEmbedding: {{Provider: "test", Model: "embed-64"}}},
		Retry:     llm.RetryConfig{Attempts: 1},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ingester := ingest.New(db, blobs, extract.New(wasmtest.Host(t, "textextract")), nil).WithEmbedder(model)
	svc := files.NewService(db, blobs, 0)
	f := e.upload(t, svc, "policy.md", []byte(doc))
	if _, err := ingester.Ingest(ctx, f.ID, false); err != nil {
		t.Fatal(err)
	}
	st, err := db.ContentState(ctx, p, f.ID)
	if err != nil || st.Status != kindex.StatusIndexed || st.Error != "" {
		t.Fatalf("state: %+v %v", st, err)
	}
	var vectors int
	if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM chunk_vectors").Scan(&vectors); err != nil || vectors != 4 {
		t.Fatalf("%d vectors, want one per chunk (4): %v", vectors, err)
	}
	searcher := search.New(db, model, nil)
	hits, err := searcher.Search(ctx, p, kindex.Query{Text: "hotel costs reimbursed per night", Limit: 3})
	if err != nil || len(hits) == 0 || hits[0].Ref.Paragraph != 4 {
		t.Fatalf("hybrid search: %+v %v", hits, err)
	}
	// The query's vector alone finds the same paragraph (the scripted
	// server's vectors are word hashes, so shared words mean nearness).
	qv, _, err := model.Embed(llm.WithAttribution(ctx, llm.Attribution{TenantID: p.TenantID}), []string{"hotel costs reimbursed per night"})
	if err != nil {
		t.Fatal(err)
	}
	near, err := db.SearchVectors(ctx, p, kindex.Query{Limit: 1}, "embed-64", qv[0])
	if err != nil || len(near) != 1 || near[0].Ref.Paragraph != 4 {
		t.Fatalf("vector search: %+v %v", near, err)
	}
	// Embedding service down: search degrades to words.
	srv.SetDefault(llmtest.EndpointEmbeddings, llmtest.Fail(500, "down"))
	hits, err = searcher.Search(ctx, p, kindex.Query{Text: "flights economy approval", Limit: 3})
	if err != nil || len(hits) == 0 || hits[0].Ref.Paragraph != 3 {
		t.Fatalf("degraded search: %+v %v", hits, err)
	}
}

// TestIngestPhasesObserved: indexing a document reports each of its phases
// once to the phase observer (what the ingest metrics and figures read),
// and a document whose extraction fails reports the extraction alone.
func TestIngestPhasesObserved(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	var got []string
	ingester := ingest.New(e.db, e.blobs, extract.New(wasmtest.Host(t, "textextract")), nil).
		WithPhaseObserver(func(phase string, d time.Duration) {
			if d <= 0 {
				t.Errorf("phase %s took %v", phase, d)
			}
			got = append(got, phase)
		})
	svc := files.NewService(e.db, e.blobs, 0)
	f := e.upload(t, svc, "policy.md", []byte(doc))
	if _, err := ingester.Ingest(ctx, f.ID, false); err != nil {
		t.Fatal(err)
	}
	if want := []string{ingest.PhaseExtract, ingest.PhaseChunk, ingest.PhaseStore}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("phases %v, want %v", got, want)
	}
	got = nil
	bad := e.upload(t, svc, "nothing.bin", []byte{0, 1, 2, 3})
	if _, err := ingester.Ingest(ctx, bad.ID, false); err == nil {
		t.Fatal("a file no extractor reads was indexed")
	}
	if len(got) > 1 || (len(got) == 1 && got[0] != ingest.PhaseExtract) {
		t.Errorf("a failed extraction reported phases %v", got)
	}
}
