package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// testOCRPages: pages read by OCR are added like on-demand pages (chunks
// into the lexical index, summaries into the index), listed in ocrPages
// without losing any to concurrent additions, their page map entries say
// "ocr" where they said "imageOnly" (others untouched), unreadPages drops
// them, and the OCR state is kept beside the rest of the structure.
func testOCRPages(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	f := upload(t, w, w.alice, w.wsA.ID, "scan.pdf", "a scanned letter")
	if _, err := db.ClaimContent(ctx, w.t1.ID, f.SHA256, false); err != nil {
		t.Fatal(err)
	}
	pageMap := []map[string]any{{"page": 1, "textStatus": kindex.TextImageOnly, "warning": "image only"}, {"page": 2, "textLength": 40},
		{"page": 3, "textStatus": kindex.TextImageOnly}, {"page": 4, "textStatus": "partial"}}
	idx := content.Index{FileName: f.Name, MIMEType: "application/pdf", Structure: map[string]any{"pages": 4, "pageMap": pageMap,
		"unreadPages": []map[string]any{{"page": 1, "textStatus": kindex.TextImageOnly}, {"page": 3, "textStatus": kindex.TextImageOnly}, {"page": 4, "textStatus": "partial"}}},
		Objects: []content.Summary{}}
	if err := db.SaveContent(ctx, w.t1.ID, f.SHA256, idx, nil, kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, n := range []int{1, 3, 3} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := content.Object{ID: "ocr-" + string(rune('0'+n)), ContentType: content.Text, Data: "Dear customer, your invoice", Ref: content.Ref{PageIndex: n, Location: "ocr"}}
			if err := db.AddOCRPages(ctx, w.t1.ID, f.SHA256, []int{n}, []content.Summary{content.Summarize(o)}, chunk.Split([]content.Object{o}, 0)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := db.SetContentOCR(ctx, w.t1.ID, f.SHA256, kindex.OCRState{Status: kindex.OCRDone, Pages: 2, Done: 2, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	st, err := db.ContentStateOf(ctx, w.t1.ID, f.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got := kindex.OCRPages(st.Index); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("ocrPages %v", got)
	}
	if got := kindex.ImageOnlyPages(st.Index); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("pages needing OCR %v", got)
	}
	var statuses []any
	for _, e := range st.Index.Structure["pageMap"].([]any) {
		m := e.(map[string]any)
		statuses = append(statuses, m["textStatus"])
		if m["textStatus"] == kindex.TextOCR && m["warning"] != nil {
			t.Errorf("page %v keeps its warning", m["page"])
		}
	}
	if !slices.Equal(statuses, []any{kindex.TextOCR, nil, kindex.TextOCR, "partial"}) {
		t.Fatalf("page map statuses %v", statuses)
	}
	if un := st.Index.Structure["unreadPages"].([]any); len(un) != 1 || un[0].(map[string]any)["textStatus"] != "partial" {
		t.Fatalf("unread pages %v", un)
	}
	if s := kindex.OCRStateOf(st.Index); s == nil || *s != (kindex.OCRState{Status: kindex.OCRDone, Pages: 2, Done: 2, Model: "m"}) {
		t.Fatalf("OCR state %+v", s)
	}
	if st.Index.TotalObjects != 2 || st.Index.Structure["pages"] != float64(4) {
		t.Fatalf("index %d objects, structure %v", st.Index.TotalObjects, st.Index.Structure)
	}
	hits, err := db.SearchLexical(ctx, w.alice, kindex.Query{Text: "invoice", FileIDs: []string{f.ID}})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search of OCR pages: %d hits %v", len(hits), err)
	}
	if err := db.AddOCRPages(ctx, w.t1.ID, "no-such-content", []int{1}, nil, nil); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("OCR pages of an unknown content: %v", err)
	}
}
