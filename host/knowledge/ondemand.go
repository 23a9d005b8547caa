package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// Smart PDFs: a large PDF is not extracted whole at upload, since most
// questions need a few of its pages (docs/knowledge.md#large-pdfs).
// Ingestion runs the PDF plugin's pre-scan only (outline, headings, page map,
// sections: about a millisecond a page), stores that structure as the file's
// index with status "indexed" and the marker structure["onDemand"] = true,
// and pages are extracted when someone reads them: the pages' objects go
// into the knowledge store as chunks (so later searches find them) and the
// pages are listed in structure["extractedPages"], so a second read
// extracts nothing.

// PDF is the MIME type smart extraction applies to.
const PDF = "application/pdf"

// SmartPDF says which PDFs are pre-scanned only at ingestion.
type SmartPDF struct {
	// MaxPages: a PDF with more pages is pre-scanned only (0: no limit by pages).
	MaxPages int
	// MaxBytes: a PDF larger than this is pre-scanned only, without probing
	// its page count (0: no limit by size).
	MaxBytes int64
	// ProbeBytes: PDFs at least this large are pre-scanned first to count
	// their pages; smaller ones are extracted whole whatever their page
	// count, because extracting them costs little more than probing.
	ProbeBytes int64
}

// DefaultSmartPDF: more than 100 pages or 20 MB is read on demand; PDFs
// under 256 KiB are always extracted whole.
var DefaultSmartPDF = SmartPDF{MaxPages: 100, MaxBytes: 20 << 20, ProbeBytes: 256 << 10}

// Prescanner reads a document's structure without extracting its text.
type Prescanner interface {
	Prescan(ctx context.Context, name, mimeType string, in wasm.Input) (content.Index, error)
}

// PageReader extracts pages from..to (inclusive, from 1) of a document.
// sections is the document's section map from its pre-scan (the index
// keeps it), so the reader references pages by section without scanning
// the document again; nil lets the reader find the sections itself.
type PageReader interface {
	ReadPages(ctx context.Context, name, mimeType string, in wasm.Input, from, to int, sections []Section) ([]content.Object, error)
}

// The tools of the PDF extractor plugin that on-demand reading uses.
const (
	PrescanTool   = "prescan"
	ReadPagesTool = "readPages"
)

// ErrNoPrescan: the document's extractor has no pre-scan (an extractor
// the operator chose instead of the built-in one); ingestion extracts the
// document whole instead.
var ErrNoPrescan = fmt.Errorf("%w with a pre-scan", ErrNoExtractor)

// Prescan runs the document extractor's prescan tool.
func (e *Extractors) Prescan(ctx context.Context, name, mimeType string, in wasm.Input) (content.Index, error) {
	p, _, err := e.pick(name, mimeType, PrescanTool)
	if err != nil {
		return content.Index{}, err
	}
	if !p.HasTool(PrescanTool) {
		return content.Index{}, fmt.Errorf("%w: %s (%s): %s has no %s tool", ErrNoPrescan, mimeType, name, p.Name(), PrescanTool)
	}
	args, _ := json.Marshal(map[string]string{"name": name, "mimeType": mimeType})
	r := e.call(ctx, p, PrescanTool, args, &wasm.CallOptions{Input: in})
	if !r.OK {
		return content.Index{}, fmt.Errorf("extractor %s: %w", p.Name(), r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return content.Index{}, fmt.Errorf("extractor %s: pre-scan result is not an index: %w", p.Name(), err)
	}
	return out.Index, nil
}

// ReadPages runs the document extractor's readPages tool.
func (e *Extractors) ReadPages(ctx context.Context, name, mimeType string, in wasm.Input, from, to int, sections []Section) ([]content.Object, error) {
	p, _, err := e.pick(name, mimeType, ReadPagesTool)
	if err != nil {
		return nil, err
	}
	if !p.HasTool(ReadPagesTool) {
		return nil, fmt.Errorf("%w reading pages: %s (%s): %s has no %s tool", ErrNoExtractor, mimeType, name, p.Name(), ReadPagesTool)
	}
	args, _ := json.Marshal(struct {
		From     int       `json:"from"`
		To       int       `json:"to"`
		Sections []Section `json:"sections,omitempty"`
	}{from, to, sections})
	r := e.call(ctx, p, ReadPagesTool, args, &wasm.CallOptions{Input: in})
	if !r.OK {
		return nil, fmt.Errorf("extractor %s: pages %d-%d: %w", p.Name(), from, to, r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return nil, fmt.Errorf("extractor %s: pages result is not objects: %w", p.Name(), err)
	}
	return out.Objects, nil
}

// WithSmartPDF makes the ingester pre-scan large PDFs only (see SmartPDF);
// its extractor must then also be a Prescanner. The zero policy extracts
// every PDF whole.
func (in *Ingester) WithSmartPDF(s SmartPDF) *Ingester {
	in.smart = s
	return in
}

// extract is ingestion's extraction step: whole, or for a large PDF its
// pre-scan only, marked on demand.
func (in *Ingester) extract(ctx context.Context, f filemeta.Item, r wasm.Input) (content.Index, []content.Object, error) {
	// Extractor instances serve one tenant each (see wasm.CallOptions.Tenant).
	ctx = wasm.WithTenant(ctx, f.TenantID)
	if err := in.recordExtractor(ctx, f, in.extractor); err != nil {
		return content.Index{}, nil, err
	}
	ps, ok := in.extractor.(Prescanner)
	// A document opened by a password is extracted whole: pages read on
	// demand later would need the password, which is not kept.
	if !ok || !isPDF(f) || passwordOf(ctx) != "" || (in.smart.MaxPages <= 0 && in.smart.MaxBytes <= 0) {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	big := in.smart.MaxBytes > 0 && r.Size() > in.smart.MaxBytes
	if !big && (in.smart.MaxPages <= 0 || r.Size() < in.smart.ProbeBytes) {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	idx, err := ps.Prescan(ctx, f.Name, f.MIMEType, r)
	if errors.Is(err, ErrNoPrescan) {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	if err != nil {
		return content.Index{}, nil, err
	}
	if !big && pageCount(idx) <= in.smart.MaxPages {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	if idx.Structure == nil {
		idx.Structure = map[string]any{}
	}
	idx.Structure[kindex.StructOnDemand] = true
	idx.Structure[kindex.StructExtractedPages] = []int{}
	idx.Objects = []content.Summary{}
	in.logger.Info("large PDF: pre-scanned, pages on demand", "file", f.ID, "pages", pageCount(idx), "bytes", r.Size())
	return idx, nil, nil
}

func isPDF(f filemeta.Item) bool {
	m, _, _ := strings.Cut(f.MIMEType, ";")
	return strings.EqualFold(strings.TrimSpace(m), PDF) || strings.EqualFold(pathExt(f.Name), ".pdf")
}

func pathExt(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i:]
	}
	return ""
}

// pageCount is structure["pages"] of an index (a JSON number after a round
// trip through the store, an int before).
func pageCount(idx content.Index) int {
	switch v := idx.Structure["pages"].(type) {
	case int:
		return v
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

// OnDemand reports whether an index is a pre-scan whose pages are
// extracted when read.
func OnDemand(idx content.Index) bool {
	b, _ := idx.Structure[kindex.StructOnDemand].(bool)
	return b
}
