package indexing_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestCompleteLongPDF: a PDF over the page limit is indexed by its
// pre-scan, one page is read on demand, and the background completion
// extracts every other page once (not the one already read), in batches,
// reporting its progress on the content's note, until the whole document
// is searchable: a phrase of its last page is found, and the note is gone.
// A second run (a restart) finds nothing left to do.
func TestCompleteLongPDF(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf", "documents")
	const doc = "deb-gutenprint-users-manual"
	f := w.ingest(t, ingest.SmartPDF{MaxPages: 40}, "pdf", doc+".pdf")
	ctx := context.Background()
	reader := ondemand.NewReader(w.db, w.blobs, w.pages)

	// A reader asks for page 9 first.
	var first knowledge.ReadObjectsResponse
	if err := w.call(w.caller, "read_objects", map[string]any{"file": f.ID, "pages": []int{9}}, &first); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first.ExtractedPages, []int{9}) {
		t.Fatalf("on-demand read extracted %v", first.ExtractedPages)
	}
	lastPage := reference(t, doc, 73)
	words := strings.Fields(lastPage)
	if len(words) < 6 {
		t.Fatalf("page 73 of the reference has too few words: %q", lastPage)
	}
	query := strings.Join(words[len(words)/2:len(words)/2+3], " ")
	pageHits := func() int {
		hits, err := search.New(w.db, nil, nil).Search(ctx, w.p, kindex.Query{Text: query, WorkspaceID: w.ws, FileIDs: []string{f.ID}, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range hits {
			if h.Ref.PageIndex == 73 {
				n++
			}
		}
		return n
	}
	if pageHits() != 0 {
		t.Fatalf("page 73 found before it was extracted")
	}

	var seen [][2]int
	before := w.pages.pages.Load()
	n, err := reader.ExtractRest(ctx, f, func(done, total int) { seen = append(seen, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	if n != 72 || w.pages.pages.Load()-before != 72 {
		t.Fatalf("completion extracted %d pages (%d read), want the 72 not read yet", n, w.pages.pages.Load()-before)
	}
	if len(seen) < 72/ondemand.RestBatch || seen[0] != [2]int{1, 73} || seen[len(seen)-1] != [2]int{73, 73} {
		t.Fatalf("progress %v", seen)
	}
	st, err := w.db.ContentStateOf(ctx, f.TenantID, f.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got := kindex.ExtractedPages(st.Index); len(got) != 73 {
		t.Fatalf("%d pages extracted, want 73", len(got))
	}
	if pageHits() == 0 {
		t.Fatalf("%q (page 73) is not found after the completion", query)
	}
	// A restart runs it again: nothing is left.
	if n, err := reader.ExtractRest(ctx, f, nil); err != nil || n != 0 {
		t.Fatalf("a second completion extracted %d (%v)", n, err)
	}
}

// BenchmarkLongPDFFullySearchable: a 511-page PDF (the 73-page corpus
// manual seven times over, merged with pdfcpu) is pre-scanned at upload and
// completed in the background; the figure is upload to every page indexed.
func BenchmarkLongPDFFullySearchable(b *testing.B) {
	src := testcorpus.Path(b, "pdf", "deb-gutenprint-users-manual.pdf")
	dir := b.TempDir()
	in := make([]string, 7)
	for i := range in {
		in[i] = src
	}
	merged := filepath.Join(dir, "long.pdf")
	if err := api.MergeCreateFile(in, merged, false, nil); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(merged)
	if err != nil {
		b.Fatal(err)
	}
	var took []float64
	for range b.N {
		w := newKnowledgeWorld(b, "pdf")
		ctx := context.Background()
		start := time.Now()
		f := w.upload(b, w.svc, "long.pdf", data)
		ingester := ingest.New(w.db, w.blobs, w.ex, nil).WithSmartPDF(ingest.DefaultSmartPDF)
		if _, err := ingester.Ingest(ctx, f.ID, false); err != nil {
			b.Fatal(err)
		}
		n, err := ondemand.NewReader(w.db, w.blobs, w.ex).ExtractRest(ctx, f, nil)
		if err != nil || n != 511 {
			b.Fatalf("completed %d pages (%v), want 511", n, err)
		}
		took = append(took, figure.Millis(time.Since(start)))
	}
	figure.Report("pdf.500p.fully_searchable.ms", figure.Median(took), "ms")
}

// TestExtractionIsBilled: an extractor's run at ingestion is a transaction
// (operation plugin, purpose extraction) of the file's tenant, workspace
// and uploader, priced by its wall time.
func TestExtractionIsBilled(t *testing.T) {
	w := newKnowledgeWorld(t, "pdf")
	perHour := 36 * money.CHF
	meter := billing.NewMeter(w.db, billing.Prices{PluginPerHour: perHour}, nil)
	w.ex.WithMeter(meter)
	f := w.ingest(t, ingest.SmartPDF{}, "pdf", "deb-camlidl-1.04.pdf")
	var plugin, purpose, user, ws string
	var cost, us int64
	err := w.db.SQL().QueryRowContext(context.Background(), `SELECT model, purpose, user_id, workspace_id, cost_nchf, duration_us
		FROM usage_records WHERE tenant_id = ? AND operation = 'plugin'`, f.TenantID).Scan(&plugin, &purpose, &user, &ws, &cost, &us)
	if err != nil {
		t.Fatal(err)
	}
	if plugin != "pdf" || purpose != "tool:extract" || user != f.CreatedBy || ws != f.WorkspaceID || us <= 0 || cost != us*10 {
		t.Fatalf("record: plugin %s purpose %s user %s ws %s cost %d for %d µs", plugin, purpose, user, ws, cost, us)
	}
}
