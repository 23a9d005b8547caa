package indexing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// mergedLong merges the corpus's largest PDFs (pdfcpu) until there are at
// least 500 pages, their outlines kept under one bookmark each: with the
// present corpus, the Gri manual, the Debian maintainers' guide and the
// Gutenprint manual, 501 pages.
func mergedLong(b testing.TB) []byte {
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
	var merged bytes.Buffer
	if err := api.MergeRaw(in, &merged, false, model.NewDefaultConfiguration()); err != nil {
		b.Fatalf("merge: %v", err)
	}
	return merged.Bytes()
}

// fiveHundredPages is mergedLong trimmed to 500 pages (trimming drops the
// outline).
func fiveHundredPages(b *testing.B) []byte {
	var trimmed bytes.Buffer
	if err := api.Trim(bytes.NewReader(mergedLong(b)), &trimmed, []string{"1-500"}, model.NewDefaultConfiguration()); err != nil {
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
		if _, err := ingest.New(w.db, w.blobs, w.ex, nil).WithSmartPDF(ingest.DefaultSmartPDF).Ingest(context.Background(), f.ID, false); err != nil {
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
		var sec ondemand.Section
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

// BenchmarkPrescanVsExtract reports pdf.prescan.vs_extract: the pre-scan
// of a long document (mergedLong: 501 pages with an outline, so its pages
// are only sketched; written by pdfcpu, without object streams) over the
// full extraction of the same document, both through the sandboxed PDF
// plugin as ingestion calls them, warm, median of five each (a load
// spike on the shared machine moves one round, not the figure), side by
// side; and pdf.prescan.vs_extract.gri, the same for the corpus's longest
// real manual (285 pages, pdfTeX, object streams). The plugin reads
// both with its lazy reader (plugins/pdf/pdftext/lazy.go). pdf.prescan.instance_mib is the guest memory of a fresh
// instance after the pre-scan of the long document: what the pool keeps
// between calls (see TestPrescanInstanceMemory).
func BenchmarkPrescanVsExtract(b *testing.B) {
	ctx := context.Background()
	x := extract.New(wasmtest.Host(b, "pdf"))
	for range b.N {
		for _, doc := range []struct {
			figure string
			data   []byte
		}{
			{"pdf.prescan.vs_extract", mergedLong(b)},
			{"pdf.prescan.vs_extract.gri", testcorpus.Read(b, "pdf", "deb-gri-manual.pdf")},
		} {
			in := func() bytesInput { return bytesInput{bytes.NewReader(doc.data)} }
			var pre, whole []time.Duration
			for i := range 6 {
				start := time.Now()
				idx, err := x.Prescan(ctx, "long.pdf", "application/pdf", in())
				if err != nil {
					b.Fatal(err)
				}
				p := time.Since(start)
				start = time.Now()
				if _, objs, err := x.Extract(ctx, "long.pdf", "application/pdf", in()); err != nil || len(objs) < 200 {
					b.Fatalf("extract: %d objects, %v", len(objs), err)
				}
				if i == 0 {
					if idx.Structure["sectionsFrom"] != "outline" {
						b.Fatalf("%s: sections come from %v, not the outline", doc.figure, idx.Structure["sectionsFrom"])
					}
					continue // warming the instances
				}
				pre, whole = append(pre, p), append(whole, time.Since(start))
			}
			slices.Sort(pre)
			slices.Sort(whole)
			m := len(pre) / 2
			figure.Report(doc.figure, pre[m].Seconds()/whole[m].Seconds(), "ratio")
			b.Logf("%s: %d bytes through the plugin: pre-scan %v, extract %v", doc.figure, len(doc.data), pre[m].Round(time.Millisecond), whole[m].Round(time.Millisecond))
		}
		p := wasmtest.Plugin(b, wasmtest.Host(b, "pdf"), "pdf")
		args, _ := json.Marshal(map[string]any{"name": "long.pdf", "mimeType": "application/pdf"})
		r := p.Call(ctx, "prescan", args, &wasm.CallOptions{Input: bytesInput{bytes.NewReader(mergedLong(b))}})
		if !r.OK {
			b.Fatalf("prescan: %v", r.Error)
		}
		figure.Report("pdf.prescan.instance_mib", float64(r.Stats.MemoryBytes)/(1<<20), "MiB")
	}
}
