package main

import (
	"bytes"
	"errors"

	"github.com/agenthost/agenthost/pdk"
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
			d, err := open("")
			if err != nil {
				return pagePDFResult{}, err
			}
			if a.Page < 1 || a.Page > d.PageCount() {
				return pagePDFResult{}, pdk.Errorf("invalid_arguments", "page %d: the document has %d pages", a.Page, d.PageCount())
			}
			var buf bytes.Buffer
			switch err := d.PagePDF(a.Page, &buf); {
			case errors.Is(err, pdftext.ErrPagePDF):
				return pagePDFResult{}, pdk.Errorf("unsupported", "%v", err)
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
			return pagePDFResult{Page: a.Page, Pages: d.PageCount(), Bytes: int64(buf.Len())}, nil
		}, pdk.ReadOnly())
}
