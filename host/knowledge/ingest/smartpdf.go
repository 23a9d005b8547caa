package ingest

import (
	"context"
	"errors"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

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

// WithSmartPDF makes the ingester pre-scan large PDFs only (see SmartPDF);
// its extractor must then also be a Prescanner. The zero policy extracts
// every PDF whole.
func (in *Pipeline) WithSmartPDF(s SmartPDF) *Pipeline {
	in.smart = s
	return in
}

// extract is ingestion's extraction step: whole, or for a large PDF its
// pre-scan only, marked on demand.
func (in *Pipeline) extract(ctx context.Context, f filemeta.Item, r wasm.Input) (content.Index, []content.Object, error) {
	// Extractor instances serve one tenant each (see wasm.CallOptions.Tenant).
	ctx = wasm.WithTenant(ctx, f.TenantID)
	if err := in.recordExtractor(ctx, f, in.extractor); err != nil {
		return content.Index{}, nil, err
	}
	ps, ok := in.extractor.(Prescanner)
	// A document opened by a password is extracted whole: pages read on
	// demand later would need the password, which is not kept.
	if !ok || !extract.IsPDF(f) || unlock.PasswordOf(ctx) != "" || (in.smart.MaxPages <= 0 && in.smart.MaxBytes <= 0) {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	big := in.smart.MaxBytes > 0 && r.Size() > in.smart.MaxBytes
	if !big && (in.smart.MaxPages <= 0 || r.Size() < in.smart.ProbeBytes) {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	idx, err := ps.Prescan(ctx, f.Name, f.MIMEType, r)
	if errors.Is(err, extract.ErrNoPrescan) {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	if err != nil {
		return content.Index{}, nil, err
	}
	if !big && ondemand.PageCount(idx) <= in.smart.MaxPages {
		return in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	}
	if idx.Structure == nil {
		idx.Structure = map[string]any{}
	}
	idx.Structure[kindex.StructOnDemand] = true
	idx.Structure[kindex.StructExtractedPages] = []int{}
	idx.Objects = []content.Summary{}
	in.logger.Info("large PDF: pre-scanned, pages on demand", "file", f.ID, "pages", ondemand.PageCount(idx), "bytes", r.Size())
	return idx, nil, nil
}
