package progress

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/pdk/content"
)

func TestProgressOf(t *testing.T) {
	pages := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = float64(i + 1)
		}
		return out
	}
	tests := []struct {
		name       string
		status     kindex.Status
		structure  map[string]any
		searchable int
		total      int
		pending    bool
		message    string
	}{
		{"a long PDF still extracted", kindex.StatusIndexed, map[string]any{"pages": float64(1158), kindex.StructOnDemand: true, kindex.StructExtractedPages: pages(120)},
			120, 1158, true, "120 of 1,158 pages searchable; 1,038 pages are still being extracted in the background"},
		{"a long PDF complete", kindex.StatusIndexed, map[string]any{"pages": float64(1158), kindex.StructOnDemand: true, kindex.StructExtractedPages: pages(1158)},
			1158, 1158, false, "1,158 of 1,158 pages searchable"},
		{"a scan waiting for OCR", kindex.StatusIndexed, map[string]any{"pages": float64(3), "pageMap": []any{
			map[string]any{"page": float64(1), "textStatus": kindex.TextImageOnly}, map[string]any{"page": float64(2)}, map[string]any{"page": float64(3), "textStatus": kindex.TextOCR}},
			kindex.StructOCRPages: []any{float64(3)}, kindex.StructOCR: map[string]any{"status": kindex.OCRRunning}},
			2, 3, true, "2 of 3 pages searchable; 1 image-only page is being read by OCR in the background (1 of 2 done)"},
		{"a scan without an OCR model", kindex.StatusIndexed, map[string]any{"pages": float64(1), "pageMap": []any{map[string]any{"page": float64(1), "textStatus": kindex.TextImageOnly}},
			kindex.StructOCR: map[string]any{"status": kindex.OCRNotConfigured}},
			0, 1, false, "AGENTHOST_MODEL_OCR"},
		{"a picture read", kindex.StatusIndexed, map[string]any{kindex.StructTextStatus: kindex.TextOCR, kindex.StructOCRPages: []any{float64(1)}}, 1, 1, false, "the image's text is searchable"},
		{"not indexed yet", kindex.StatusPending, map[string]any{"pages": float64(4)}, -1, 0, false, ""},
		{"no pages", kindex.StatusIndexed, map[string]any{"sheets": float64(2)}, -1, 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Of(kindex.ContentState{Status: tc.status, Index: content.Index{Structure: tc.structure}})
			if tc.searchable < 0 {
				if p != nil {
					t.Fatalf("progress %+v, want none", p)
				}
				return
			}
			if p == nil || p.Searchable != tc.searchable || p.Pages != tc.total || p.Pending != tc.pending || !strings.Contains(p.Message, tc.message) {
				t.Fatalf("progress %+v, want %d of %d, pending %v, %q", p, tc.searchable, tc.total, tc.pending, tc.message)
			}
		})
	}
}
