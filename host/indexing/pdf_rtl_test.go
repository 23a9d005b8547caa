package indexing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestUrduPDFSearch: Urdu text of real PDFs (XeTeX with Amiri; LibreOffice
// and cairo with a Nastaliq font) goes through the sandboxed PDF plugin into the index
// in logical order: an Urdu word finds its page, and the hit holds the
// phrase as written.
func TestUrduPDFSearch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	ing := ingest.New(e.db, e.blobs, extract.New(wasmtest.Host(t, "pdf")), nil)
	svc := files.NewService(e.db, e.blobs, 0)
	for _, c := range []struct {
		file, query, phrase string
		page                int
	}{
		{"rtl-quran-ur-test.pdf", "مہربان", "شروع الله کا نام لے کر جو بڑا مہربان نہایت رحم والا ہے", 1},
		{"rtl-quran-ur-test.pdf", "پرہیز", "شک نہیں پرہیز گارو ں کے لیے ہدایت ہے", 2},
		{"rtl-urdu-nastaliq-lo.pdf", "گلیشیئر", "پہاڑوں کے گلیشیئر پگھل رہے", 1},
		// Nastaliq words whose letters are drawn apart are found whole:
		// LibreOffice's, SIL's and cairo's.
		{"rtl-urdu-nastaliq-lo.pdf", "کروڑوں", "برصغیر میں کروڑوں لوگ بولتے اور سمجھتے ہیں۔", 1},
		{"rtl-urdu-nastaliq-sil-typesample-p5-6.pdf", "اسمبلی", "اقوامِ متحدہ کی جنرل اسمبلی نے", 1},
		{"rtl-urdu-nastaliq-cairo.pdf", "کراچی", "لاہور اور کراچی پاکستان کے بڑے شہر ہیں۔", 1},
	} {
		t.Run(c.query, func(t *testing.T) {
			f := e.upload(t, svc, c.file, testcorpus.Read(t, "pdf", "classes", c.file))
			if _, err := ing.Ingest(ctx, f.ID, false); err != nil {
				t.Fatalf("ingest: %v", err)
			}
			hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: c.query, FileIDs: []string{f.ID}, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Ref.PageIndex == c.page && strings.Contains(strings.Join(strings.Fields(h.Text), " "), c.phrase) {
					return
				}
			}
			t.Fatalf("no hit on page %d holding %q: %+v", c.page, c.phrase, hits)
		})
	}
}
