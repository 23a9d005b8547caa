package kindex

import (
	"encoding/json"
	"slices"

	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/pdk/content"
)

// Structure keys and text statuses of OCR.
const (
	// StructOCRPages lists the pages read by OCR (1 for an image file).
	StructOCRPages = "ocrPages"
	// StructOCR holds the OCRState.
	StructOCR = "ocr"
	// StructTextStatus is an image file's text status (a PDF's are in its
	// page map, per page).
	StructTextStatus = "textStatus"
	// TextImageOnly marks a page (or image file) whose words only OCR can
	// read; TextOCR one whose text OCR has read.
	TextImageOnly = "imageOnly"
	TextOCR       = "ocr"
)

// OCR states (OCRState.Status).
const (
	OCRPending       = "pending"
	OCRRunning       = "running"
	OCRDone          = "done"
	OCRNotConfigured = "notConfigured"
	// OCRStopped: a limit (budget, spending limit) ended the run; the
	// pages read so far stay.
	OCRStopped = "stopped"
)

// OCRState is how far OCR of a content is.
type OCRState struct {
	Status string `json:"status"`
	// Pages is how many pages need OCR; Done how many are read.
	Pages int `json:"pages"`
	Done  int `json:"done"`
	// Skipped counts pages whose images could not be decoded (JPX, JBIG2).
	Skipped int          `json:"skipped,omitempty"`
	Message string       `json:"message,omitempty"`
	Model   string       `json:"model,omitempty"`
	CostCHF money.Amount `json:"costCHF,omitempty"`
}

// MarkOCRPages records pages as read by OCR in a structure map: merged
// into StructOCRPages, "ocr" for their page map entries and for an image
// file's text status, dropped from unreadPages.
func MarkOCRPages(st map[string]any, pages []int) {
	done := intList(st[StructOCRPages])
	done = append(done, pages...)
	slices.Sort(done)
	st[StructOCRPages] = slices.Compact(done)
	defer func() {
		// An image file is read once every page of it is (a multi-page
		// TIFF has a page map).
		if s, _ := st[StructTextStatus].(string); s == TextImageOnly && len(pageMapImageOnly(st)) == 0 {
			st[StructTextStatus] = TextOCR
			delete(st, "warning")
		}
	}()
	read := func(m map[string]any) bool {
		pg, ok := number(m["page"])
		return ok && slices.Contains(pages, pg) && m["textStatus"] == TextImageOnly
	}
	switch pm := st["pageMap"].(type) {
	case []any:
		for _, e := range pm {
			if m, ok := e.(map[string]any); ok && read(m) {
				m["textStatus"] = TextOCR
				delete(m, "warning")
			}
		}
	case []map[string]any:
		for _, m := range pm {
			if read(m) {
				m["textStatus"] = TextOCR
				delete(m, "warning")
			}
		}
	}
	if un, ok := st["unreadPages"].([]any); ok {
		keep := un[:0]
		for _, e := range un {
			if m, ok := e.(map[string]any); ok && read(m) {
				continue
			}
			keep = append(keep, e)
		}
		if len(keep) == 0 {
			delete(st, "unreadPages")
		} else {
			st["unreadPages"] = keep
		}
	}
}

// ImageOnlyPages lists the pages of an index that need OCR, read or not:
// the page map's image-only pages (and those OCR has read), or [1] for an
// image file.
func ImageOnlyPages(idx content.Index) []int {
	if out := pageMapPages(idx.Structure, TextImageOnly, TextOCR); len(out) > 0 {
		return out
	}
	if s, _ := idx.Structure[StructTextStatus].(string); s == TextImageOnly || s == TextOCR {
		return []int{1} // an image file of one page
	}
	return nil
}

// pageMapImageOnly lists the page map's pages still image only.
func pageMapImageOnly(st map[string]any) []int { return pageMapPages(st, TextImageOnly, TextImageOnly) }

// pageMapPages lists the page map's pages of either text status, sorted.
func pageMapPages(st map[string]any, s1, s2 string) []int {
	var out []int
	add := func(m map[string]any) {
		if s, _ := m["textStatus"].(string); s == s1 || s == s2 {
			if pg, ok := number(m["page"]); ok {
				out = append(out, pg)
			}
		}
	}
	switch pm := st["pageMap"].(type) {
	case []any:
		for _, e := range pm {
			if m, ok := e.(map[string]any); ok {
				add(m)
			}
		}
	case []map[string]any:
		for _, m := range pm {
			add(m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// OCRPages lists the pages OCR has read.
func OCRPages(idx content.Index) []int { return intList(idx.Structure[StructOCRPages]) }

// OCRStateOf is an index's OCR state; nil when OCR has nothing to do
// with it.
func OCRStateOf(idx content.Index) *OCRState {
	raw, ok := idx.Structure[StructOCR]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var s OCRState
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

func intList(v any) []int {
	var out []int
	switch l := v.(type) {
	case []int:
		out = slices.Clone(l)
	case []any:
		for _, x := range l {
			if n, ok := number(x); ok {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func number(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}
