// Command pdf is the PDF extractor plugin: it reads the document through the
// input capability (by range, never whole into the host's messages) and
// yields one text object per page, referenced by page and section, plus the
// document's structure (outline, sections, page map). prescan gives the
// structure alone, fast, and readPages extracts chosen pages on demand, for
// documents too large to extract whole up front.
package main

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

type extractArgs struct {
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
}

type pagesArgs struct {
	From int `json:"from" description:"first page, from 1" minimum:"1"`
	To   int `json:"to" description:"last page (inclusive)" minimum:"1"`
}

type result struct {
	Index   content.Index    `json:"index"`
	Objects []content.Object `json:"objects"`
}

func open() (*pdftext.Document, error) {
	r, err := input.Open()
	if err != nil {
		return nil, err
	}
	d, err := pdftext.Open(r)
	if err != nil {
		return nil, pdk.Errorf("invalid_document", "%v", err)
	}
	return d, nil
}

// structure is the index's structure map: what a reader needs to navigate.
func structure(d *pdftext.Document, ps pdftext.Prescan) map[string]any {
	pages := make([]map[string]any, len(ps.Pages))
	images, tables := 0, 0
	for i, p := range ps.Pages {
		pages[i] = map[string]any{"page": p.Page, "textLength": p.TextLen, "images": p.Images, "table": p.Table}
		images += p.Images
		if p.Table {
			tables++
		}
	}
	return map[string]any{
		"pages": d.PageCount(), "images": images, "tables": tables,
		"outline": ps.Outline, "sections": ps.Sections, "sectionsFrom": ps.SectionsFrom,
		"headings": ps.Headings, "pageMap": pages,
	}
}

// sectionOf names the innermost section that holds a page.
func sectionOf(ps pdftext.Prescan, page int) (id, title string) {
	best := -1
	for i, s := range ps.Sections {
		if s.StartPage <= page && page <= s.EndPage && (best < 0 || s.Level >= ps.Sections[best].Level) {
			best = i
		}
	}
	if best < 0 {
		return "", ""
	}
	return fmt.Sprintf("s%d", best+1), ps.Sections[best].Title
}

// pages extracts pages from..to as text objects.
func pages(d *pdftext.Document, ps pdftext.Prescan, from, to int) ([]content.Object, error) {
	var out []content.Object
	for n := from; n <= to && n <= d.PageCount(); n++ {
		text, err := d.PageText(n)
		if err != nil {
			return nil, pdk.Errorf("invalid_document", "page %d: %v", n, err)
		}
		out = append(out, pageObject(ps, n, text))
	}
	return out, nil
}

// pageObject is page n's text as a content object, referenced by page and
// section.
func pageObject(ps pdftext.Prescan, n int, text string) content.Object {
	id, title := sectionOf(ps, n)
	return content.Object{ID: fmt.Sprintf("page-%d", n), ContentType: content.Text, Data: text,
		Ref: content.Ref{PageIndex: n, SectionID: id, Label: title, Location: fmt.Sprintf("page:%d", n)}, Sequence: n}
}

func init() {
	pdk.Tool("extract", "Extracts the text of every page with the document's structure.", func(a extractArgs) (result, error) {
		d, err := open()
		if err != nil {
			return result{}, err
		}
		// One pass: each page is interpreted once for its structure and text.
		ps, texts, err := d.ExtractAll()
		if err != nil {
			return result{}, pdk.Errorf("invalid_document", "%v", err)
		}
		objs := make([]content.Object, 0, len(texts))
		for i, text := range texts {
			objs = append(objs, pageObject(ps, i+1, text))
		}
		return result{Index: content.Index{FileName: a.Name, MIMEType: "application/pdf", Structure: structure(d, ps)}, Objects: objs}, nil
	}, pdk.ReadOnly())
	pdk.Tool("prescan", "Reads a PDF's structure (outline, sections, headings, page map) without extracting its text.", func(a extractArgs) (result, error) {
		d, err := open()
		if err != nil {
			return result{}, err
		}
		ps, err := d.Prescan()
		if err != nil {
			return result{}, pdk.Errorf("invalid_document", "%v", err)
		}
		return result{Index: content.Index{FileName: a.Name, MIMEType: "application/pdf", Structure: structure(d, ps)}, Objects: []content.Object{}}, nil
	}, pdk.ReadOnly())
	pdk.Tool("readPages", "Extracts the text of pages from..to.", func(a pagesArgs) (result, error) {
		if a.To < a.From {
			return result{}, pdk.Errorf("invalid_arguments", "to (%d) is before from (%d)", a.To, a.From)
		}
		d, err := open()
		if err != nil {
			return result{}, err
		}
		ps, err := d.Prescan()
		if err != nil {
			return result{}, pdk.Errorf("invalid_document", "%v", err)
		}
		if a.From > d.PageCount() {
			return result{}, pdk.Errorf("invalid_arguments", "the document has %d pages", d.PageCount())
		}
		objs, err := pages(d, ps, a.From, a.To)
		return result{Index: content.Index{MIMEType: "application/pdf", Structure: map[string]any{"pages": d.PageCount()}}, Objects: objs}, err
	}, pdk.ReadOnly())
}

func main() {}
