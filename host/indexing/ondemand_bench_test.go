package indexing_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// fiveHundredPages merges the corpus's largest PDFs (pdfcpu) until there
// are 500 pages and trims the rest, as plugins/pdf/pdftext's benchmark
// does: with the present corpus, the Gri manual, the Debian maintainers'
// guide and the Gutenprint manual.
func fiveHundredPages(b *testing.B) []byte {
	b.Helper()
	api.DisableConfigDir()
	paths := testcorpus.Glob(b, "pdf", "*.pdf")
	type doc struct {
		data  []byte
		pages int
	}
	var docs []doc
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		n, err := api.PageCount(bytes.NewReader(data), model.NewDefaultConfiguration())
		if err != nil {
			continue // encrypted or broken: not part of the merge
		}
		docs = append(docs, doc{data, n})
	}
	if len(docs) == 0 {
		b.Fatal("no corpus PDFs")
	}
	slices.SortFunc(docs, func(x, y doc) int { return y.pages - x.pages })
	var in []io.ReadSeeker
	for pages := 0; pages < 500; {
		for _, d := range docs {
			if pages >= 500 {
				break
			}
			in = append(in, bytes.NewReader(d.data))
			pages += d.pages
		}
	}
	var merged, trimmed bytes.Buffer
	if err := api.MergeRaw(in, &merged, false, model.NewDefaultConfiguration()); err != nil {
		b.Fatalf("merge: %v", err)
	}
	if err := api.Trim(bytes.NewReader(merged.Bytes()), &trimmed, []string{"1-500"}, model.NewDefaultConfiguration()); err != nil {
		b.Fatalf("trim: %v", err)
	}
	return trimmed.Bytes()
}

// BenchmarkSmartPDF500: a 500-page PDF pre-scanned at ingestion through the
// sandboxed PDF plugin and the embedded store; then a section in the
// middle of the document is read through the knowledge capability: the
// first read extracts its pages (pdf.readsection.500p.first), later reads
// come from the store (pdf.readsection.500p.cached.p50, median of five).
// The plugin is compiled and warm before the first read, as in a server.
func BenchmarkSmartPDF500(b *testing.B) {
	data := fiveHundredPages(b)
	for range b.N {
		w := newKnowledgeWorld(b, "pdf")
		f := w.upload(b, w.svc, "500p.pdf", data)
		start := time.Now()
		if _, err := knowledge.NewIngester(w.db, w.blobs, w.ex, nil).WithSmartPDF(knowledge.DefaultSmartPDF).Ingest(context.Background(), f.ID, false); err != nil {
			b.Fatal(err)
		}
		prescan := time.Since(start)
		var ix knowledge.IndexResponse
		if err := w.call(w.caller, "index", map[string]any{"file": f.ID}, &ix); err != nil {
			b.Fatal(err)
		}
		if !ix.OnDemand || ix.Pages != 500 || len(ix.Sections) == 0 {
			b.Fatalf("500-page index: on demand %v, %d pages, %d sections", ix.OnDemand, ix.Pages, len(ix.Sections))
		}
		// The first section of one to three pages starting past page 250.
		var sec knowledge.Section
		for _, s := range ix.Sections {
			if s.StartPage > 250 && s.EndPage-s.StartPage < 3 {
				sec = s
				break
			}
		}
		if sec.ID == "" {
			b.Fatal("no short section past page 250")
		}
		read := func() (knowledge.ReadObjectsResponse, time.Duration) {
			var r knowledge.ReadObjectsResponse
			start := time.Now()
			if err := w.call(w.caller, "read_section", map[string]any{"file": f.ID, "section": sec.ID}, &r); err != nil {
				b.Fatal(err)
			}
			return r, time.Since(start)
		}
		first, took := read()
		if len(first.ExtractedPages) != sec.EndPage-sec.StartPage+1 || len(first.Objects) == 0 {
			b.Fatalf("first read of %+v: extracted %v, %d objects", sec, first.ExtractedPages, len(first.Objects))
		}
		var cached []time.Duration
		for range 5 {
			again, t := read()
			if len(again.ExtractedPages) != 0 {
				b.Fatalf("a cached read extracted %v", again.ExtractedPages)
			}
			cached = append(cached, t)
		}
		slices.Sort(cached)
		figure.Report("pdf.readsection.500p.first", float64(took.Microseconds())/1000, "ms")
		figure.Report("pdf.readsection.500p.cached.p50", float64(cached[len(cached)/2].Microseconds())/1000, "ms")
		b.Logf("500 pages, %d bytes: pre-scan at ingestion %v; section %q (pages %d-%d) first read %v",
			len(data), prescan.Round(time.Millisecond), sec.Title, sec.StartPage, sec.EndPage, took.Round(time.Millisecond))
	}
}
