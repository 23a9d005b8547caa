// Command pdf is the PDF extractor plugin: it reads the document through the
// input capability (by range, never whole into the host's messages) and
// yields one text object per page, referenced by page and section, plus the
// document's structure (outline, sections, page map). prescan gives the
// structure alone, fast, and readPages extracts chosen pages on demand, for
// documents too large to extract whole up front.
package main

import (
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

type extractArgs struct {
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	// Password opens an encrypted PDF for this call only; the host passes
	// the one its user gave and keeps it nowhere.
	Password string `json:"password,omitempty" description:"the password of an encrypted PDF (user or owner)"`
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

func open(password string) (*pdftext.Document, error) {
	r, err := input.Buffered(wholeInput)
	if err != nil {
		return nil, err
	}
	d, err := pdftext.OpenWithPassword(r, password)
	switch {
	case errors.Is(err, pdftext.ErrWrongPassword):
		// The host tells these two apart from a broken file: the
		// document waits for (the right) password.
		return nil, pdk.Errorf("wrong_password", "%v", err)
	case errors.Is(err, pdftext.ErrEncrypted):
		return nil, pdk.Errorf("encrypted", "%v", err)
	case err != nil:
		return nil, pdk.Errorf("invalid_document", "%v", err)
	}
	return d, nil
}

// structure is the index's structure map: what a reader needs to navigate.
func structure(d *pdftext.Document, ps pdftext.Prescan) map[string]any {
	pages := make([]map[string]any, len(ps.Pages))
	images, tables := 0, 0
	var unread []map[string]any
	for i, p := range ps.Pages {
		pages[i] = map[string]any{"page": p.Page, "textLength": p.TextLen, "images": p.Images, "table": p.Table}
		if p.TextStatus != pdftext.TextComplete {
			pages[i]["textStatus"] = string(p.TextStatus)
			pages[i]["warning"] = unreadWarning(p.TextStatus, p.Glyphs, p.Unmapped, p.Err)
			unread = append(unread, map[string]any{"page": p.Page, "textStatus": string(p.TextStatus),
				"warning": unreadWarning(p.TextStatus, p.Glyphs, p.Unmapped, p.Err)})
		}
		images += p.Images
		if p.Table {
			tables++
		}
	}
	st := map[string]any{
		"pages": d.PageCount(), "images": images, "tables": tables,
		"outline": ps.Outline, "sections": ps.Sections, "sectionsFrom": ps.SectionsFrom,
		"headings": ps.Headings, "pageMap": pages,
	}
	if unread != nil {
		// Kept apart from the page map, which the index view leaves out:
		// the pages whose text is not (wholly) in the index.
		st["unreadPages"] = unread
	}
	if atts := attachmentList(d); atts != nil {
		// The host hands the files to the attachments tool and indexes
		// each as a container entry.
		st["attachments"] = atts
	}
	return st
}

// unreadWarning says why a page's text is missing or incomplete: content
// that could not be read (lost), or glyphs without known text.
func unreadWarning(s pdftext.TextStatus, glyphs, unmapped int, lost string) string {
	switch s {
	case pdftext.TextImageOnly:
		return ImageOnlyWarning
	case pdftext.TextVectorOnly:
		return VectorOnlyWarning
	}
	what := "part of the page's text was not recovered"
	if s == pdftext.TextUnreadable {
		what = "the page's text was not recovered"
	}
	if lost != "" {
		return fmt.Sprintf("%s: %s", what, lost)
	}
	return fmt.Sprintf("%s: %d of %d glyphs are in fonts that do not say which characters they draw", what, unmapped, glyphs)
}

// ImageOnlyWarning is the page map's reason for an image-only page; the
// host's OCR replaces it by the text read, or says why it cannot.
const ImageOnlyWarning = "image only: the page holds images and no text layer (a scan or a photo of text); its words are found only once OCR has read it"

// VectorOnlyWarning is the page map's reason for a page drawn only as
// vector paths: nothing of it is searchable, and OCR, which reads a
// page's images, does not read it either.
const VectorOnlyWarning = "no text layer: the page is drawn only as vector paths (text converted to outlines, or a drawing) and holds no image; its words, if any, are not searchable and OCR does not read it"

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
		// A page that cannot be read is reported unreadable; the others
		// are still read.
		pc, err := d.Page(n)
		if errors.Is(err, pdftext.ErrPageRange) {
			return nil, pdk.Errorf("invalid_arguments", "page %d: %v", n, err)
		}
		o := pageObject(secs, n, pc.Text)
		markUnread(&o, pc.Status, pc.Glyphs, pc.Unmapped, pc.Lost)
		out = append(out, o)
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

// formObjects are the filled fields of the document's form on pages
// from..to, one text object a page ("label: value" a line), referenced to
// that page; fields no page holds (XFA data alone) go with the first page
// asked for when it is page 1.
func formObjects(d *pdftext.Document, from, to int) ([]content.Object, int, error) {
	fields, err := d.FormFields()
	if err != nil {
		return nil, 0, pdk.Errorf("invalid_document", "form: %v", err)
	}
	byPage := map[int][]pdftext.FormField{}
	n := 0
	for _, f := range fields {
		p := f.Page
		if p == 0 {
			p = 1
		}
		if p < from || p > to {
			continue
		}
		byPage[p] = append(byPage[p], f)
		n++
	}
	var out []content.Object
	for p := from; p <= to; p++ {
		fs := byPage[p]
		if len(fs) == 0 {
			continue
		}
		meta := make([]map[string]any, len(fs))
		for i, f := range fs {
			meta[i] = map[string]any{"name": f.Name, "label": f.Label, "value": f.Value, "kind": f.Kind}
		}
		out = append(out, content.Object{ID: fmt.Sprintf("form-%d", p), ContentType: content.Text, Data: pdftext.FormText(fs),
			Ref:      content.Ref{PageIndex: p, Label: "form fields", Location: fmt.Sprintf("page:%d/form", p)},
			Metadata: map[string]any{"formFields": meta}, Sequence: p})
	}
	return out, n, nil
}

// markUnread records on a page's object that its text is missing or
// incomplete, so that the store and a reader know the page is unread.
func markUnread(o *content.Object, s pdftext.TextStatus, glyphs, unmapped int, lost string) {
	if s == pdftext.TextComplete {
		return
	}
	o.Metadata = map[string]any{"textStatus": string(s), "warning": unreadWarning(s, glyphs, unmapped, lost)}
}

func init() {
	pdk.Tool("extract", "Extracts the text of every page with the document's structure.", func(a extractArgs) (result, error) {
		d, err := open(a.Password)
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
			o := pageObject(secs, i+1, text)
			if i < len(ps.Pages) {
				p := ps.Pages[i]
				markUnread(&o, p.TextStatus, p.Glyphs, p.Unmapped, p.Err)
			}
			objs = append(objs, o)
		}
		forms, nForms, err := formObjects(d, 1, d.PageCount())
		if err != nil {
			return result{}, err
		}
		objs = append(objs, forms...)
		st := structure(d, ps)
		if nForms > 0 {
			st["formFields"] = nForms
		}
		return result{Index: content.Index{FileName: a.Name, MIMEType: "application/pdf", Structure: st}, Objects: objs}, nil
	}, pdk.ReadOnly())
	pdk.Tool("prescan", "Reads a PDF's structure (outline, sections, headings, page map) without extracting its text.", func(a extractArgs) (result, error) {
		d, err := open(a.Password)
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
		d, err := open("")
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
		if err != nil {
			return result{}, err
		}
		forms, _, err := formObjects(d, a.From, min(a.To, d.PageCount()))
		if err != nil {
			return result{}, err
		}
		objs = append(objs, forms...)
		return result{Index: content.Index{MIMEType: "application/pdf", Structure: map[string]any{"pages": d.PageCount()}}, Objects: objs}, nil
	}, pdk.ReadOnly())
}

func main() {}

func init() { registerOCR() }
