package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
)

// PagePDFTool is the PDF extractor's tool that copies one page as a PDF of
// its own, for the workspace's preview (docs/ui.md#the-cited-page): pdf.js
// finds a page of a long document with a flat page tree only after reading
// every page object before it, most of the document's structure; the copy
// holds the page's objects and nothing of the others.
const PagePDFTool = "pagePDF"

// maxPagePDF bounds a page's copy: a page that reaches more is shown from
// the whole file instead.
const maxPagePDF = 64 << 20

// ErrNoPagePDF: the document's extractor cannot copy the page (no such
// tool, an encrypted or unusual file); the viewer reads the whole file.
var ErrNoPagePDF = errors.New("the page cannot be shown on its own")

// PagePDF is a page of a PDF copied as a one-page PDF by its extractor,
// in its sandbox, and the document's page count.
type PagePDF struct {
	Data  []byte
	Pages int
}

// PagePDF copies page of the PDF in (name, mimeType pick its extractor).
func (e *Set) PagePDF(ctx context.Context, name, mimeType string, in wasm.Input, page int) (PagePDF, error) {
	p, _, err := e.pick(name, mimeType, PagePDFTool)
	if err != nil {
		return PagePDF{}, err
	}
	if !p.HasTool(PagePDFTool) {
		return PagePDF{}, fmt.Errorf("%w: %s has no %s tool", ErrNoPagePDF, p.Name(), PagePDFTool)
	}
	args, _ := json.Marshal(map[string]int{"page": page})
	sink := &onePDF{}
	r := e.call(ctx, p, PagePDFTool, args, &wasm.CallOptions{Input: in, Output: sink,
		OutputLimits: wasm.OutputLimits{MaxFiles: 1, MaxBytes: maxPagePDF}})
	if !r.OK {
		if r.Error != nil && (r.Error.Code == "unsupported" || r.Error.Code == "encrypted" || r.Error.Code == "wrong_password") {
			return PagePDF{}, fmt.Errorf("%w: %s", ErrNoPagePDF, r.Error.Message)
		}
		if r.Error != nil && r.Error.Code == "invalid_arguments" {
			return PagePDF{}, fmt.Errorf("%w: %s", tenancy.ErrInvalid, r.Error.Message)
		}
		return PagePDF{}, fmt.Errorf("extractor %s: %s: %w", p.Name(), PagePDFTool, r.Error)
	}
	var out struct {
		Page, Pages int
		Bytes       int64
	}
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return PagePDF{}, fmt.Errorf("extractor %s: %s result: %w", p.Name(), PagePDFTool, err)
	}
	// What the guest says is checked against what it handed over.
	if !sink.done || int64(sink.buf.Len()) != out.Bytes || out.Page != page || out.Pages < page ||
		!bytes.HasPrefix(sink.buf.Bytes(), []byte("%PDF-")) {
		return PagePDF{}, fmt.Errorf("extractor %s: %s: no page %d in its output", p.Name(), PagePDFTool, page)
	}
	return PagePDF{Data: sink.buf.Bytes(), Pages: out.Pages}, nil
}

// onePDF is the output sink of a page copy: one file, in memory (the
// output limits bound it).
type onePDF struct {
	buf   bytes.Buffer
	begun bool
	done  bool
}

func (s *onePDF) Begin(_ context.Context, f wasm.OutputFile) (wasm.OutputWriter, error) {
	if s.begun {
		return nil, errors.New("a page copy is one file")
	}
	s.begun = true
	return &onePDFWriter{s}, nil
}

func (s *onePDF) Fail(_ context.Context, path, kind, reason string) error {
	return fmt.Errorf("%s: %s: %s", path, kind, reason)
}

type onePDFWriter struct{ s *onePDF }

func (w *onePDFWriter) Write(p []byte) (int, error) { return w.s.buf.Write(p) }

func (w *onePDFWriter) Commit(context.Context) (string, error) {
	w.s.done = true
	return "page.pdf", nil
}

func (w *onePDFWriter) Abort(error) { w.s.buf.Reset() }
