package main

import (
	"bytes"
	"errors"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/pdk/output"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

type pagePDFArgs struct {
	Page int `json:"page" description:"the page to copy, from 1" minimum:"1"`
}

// pagePDFResult describes the copy handed to the host through the output
// capability (file "page.pdf").
type pagePDFResult struct {
	Page  int   `json:"page"`
	Pages int   `json:"pages"`
	Bytes int64 `json:"bytes"`
}

func init() {
	pdk.Tool("pagePDF", "Copies one page as a PDF of its own (its objects, nothing of the other pages) for the preview, handed back as file page.pdf.",
		func(a pagePDFArgs) (pagePDFResult, error) {
			// The copy reads by range what leads to the page (pdftext.CopyPage),
			// so the input is not copied into the plugin whole.
			size, err := input.Size()
			if err != nil {
				return pagePDFResult{}, err
			}
			var buf bytes.Buffer
			pages, err := pdftext.CopyPage(input.Reader{}, size, a.Page, &buf)
			switch {
			case errors.Is(err, pdftext.ErrPagePDF):
				return pagePDFResult{}, pdk.Errorf("unsupported", "%v", err)
			case errors.Is(err, pdftext.ErrNoPage):
				return pagePDFResult{}, pdk.Errorf("invalid_arguments", "page %d: the document has %d pages", a.Page, pages)
			case err != nil:
				return pagePDFResult{}, pdk.Errorf("invalid_document", "%v", err)
			}
			w, err := output.Begin(output.File{Path: "page.pdf", Size: int64(buf.Len()), MIMEType: "application/pdf"})
			if err != nil {
				return pagePDFResult{}, err
			}
			if _, err := w.Write(buf.Bytes()); err != nil {
				return pagePDFResult{}, err
			}
			if _, err := w.Close(); err != nil {
				return pagePDFResult{}, err
			}
			return pagePDFResult{Page: a.Page, Pages: pages, Bytes: int64(buf.Len())}, nil
		}, pdk.ReadOnly())
}
