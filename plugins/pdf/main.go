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
	// Sections is the pre-scan's section map, which the caller keeps: with
	// it the pages' section references cost nothing; without it they come
	// from the outline, or, for a document without one, from a pre-scan of
	// every page.
	Sections []pageSection `json:"sections,omitempty" description:"the document's sections from its pre-scan, to reference pages by section without scanning the document again"`
}

// pageSection is a section as the host's index lists it.
type pageSection struct {
	ID        string `json:"id,omitempty"`
	Title     string `json:"title,omitempty"`
	Level     int    `json:"level,omitempty"`
	StartPage int    `json:"startPage"`
	EndPage   int    `json:"endPage"`
}

type result struct {
	Index   content.Index    `json:"index"`
	Objects []content.Object `json:"objects"`
}

// wholeInput: documents up to this size are read into the plugin at once
// (pdfcpu reads a file in many small pieces, each a call to the host
// otherwise); larger ones through the input's block cache.
const wholeInput = 64 << 20

func open() (*pdftext.Document, error) {
	r, err := input.Buffered(wholeInput)
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

// sectionOf names the innermost section that holds a page; a section
// without an id is "s<n>", n its place in the list from 1 (as the host
// numbers the pre-scan's sections).
func sectionOf(secs []pageSection, page int) (id, title string) {
	best := -1
	for i, s := range secs {
		if s.StartPage <= page && page <= s.EndPage && (best < 0 || s.Level >= secs[best].Level) {
			best = i
		}
	}
	if best < 0 {
		return "", ""
	}
	if id = secs[best].ID; id == "" {
		id = fmt.Sprintf("s%d", best+1)
	}
	return id, secs[best].Title
}

// fromPrescan is the pre-scan's sections as sectionOf takes them.
func fromPrescan(secs []pdftext.Section) []pageSection {
	out := make([]pageSection, len(secs))
	for i, s := range secs {
		out[i] = pageSection{Title: s.Title, Level: s.Level, StartPage: s.StartPage, EndPage: s.EndPage}
	}
	return out
}

// pages extracts pages from..to as text objects.
func pages(d *pdftext.Document, secs []pageSection, from, to int) ([]content.Object, error) {
	var out []content.Object
	for n := from; n <= to && n <= d.PageCount(); n++ {
		text, err := d.PageText(n)
		if err != nil {
			return nil, pdk.Errorf("invalid_document", "page %d: %v", n, err)
		}
		out = append(out, pageObject(secs, n, text))
	}
	return out, nil
}

// pageObject is page n's text as a content object, referenced by page and
// section.
func pageObject(secs []pageSection, n int, text string) content.Object {
	id, title := sectionOf(secs, n)
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
		secs := fromPrescan(ps.Sections)
		for i, text := range texts {
			objs = append(objs, pageObject(secs, i+1, text))
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
		if a.From > d.PageCount() {
			return result{}, pdk.Errorf("invalid_arguments", "the document has %d pages", d.PageCount())
		}
		// Only the pages asked for are interpreted: Open resolved the page
		// tree and each page's resources; the sections come from the
		// caller, else from the outline, and only a document without an
		// outline whose caller knows no sections is pre-scanned whole.
		secs := a.Sections
		if secs == nil {
			outline, ok, err := d.OutlineSections()
			if err != nil {
				return result{}, pdk.Errorf("invalid_document", "%v", err)
			}
			if !ok {
				ps, err := d.Prescan()
				if err != nil {
					return result{}, pdk.Errorf("invalid_document", "%v", err)
				}
				outline = ps.Sections
			}
			secs = fromPrescan(outline)
		}
		objs, err := pages(d, secs, a.From, a.To)
		return result{Index: content.Index{MIMEType: "application/pdf", Structure: map[string]any{"pages": d.PageCount()}}, Objects: objs}, err
	}, pdk.ReadOnly())
}

func main() {}
