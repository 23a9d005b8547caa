package pdftext

import (
	"bytes"
	"strings"
	"testing"
)

// TestLostContent: content the reader cannot decode (a content stream
// whose Flate data is garbage, one of several content streams, a form
// XObject) makes the page partial or unreadable, with the reason, in every
// path that reads pages (Page, ExtractAll, and the outline pre-scan's
// sketch); it is never a page that looks read and has no text. A
// reference to a missing object is null, as PDF says: an empty page.
func TestLostContent(t *testing.T) {
	const (
		text    = "BT /F1 12 Tf 72 700 Td (kept words) Tj ET"
		drawing = "0 0 m 100 100 l S"
		garbage = "<< /Filter /FlateDecode >> STREAM(this is not deflate data at all)"
		res     = "<< /Font << /F1 5 0 R >> /XObject << /X 7 0 R >> >>"
	)
	page := func(contents string) string {
		return "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources " + res + " /Contents " + contents + " >>"
	}
	form := func(body string) string {
		return "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> >> STREAM(" + body + ")"
	}
	cases := []struct {
		name             string
		page, c4, c6, c7 string // the page object, objects 4, 6 (content) and 7 (a form)
		want             TextStatus
		text             string // words the page keeps
		lost             string // in the reason, "" for none
	}{
		{"the only content stream does not decode",
			page("4 0 R"), garbage, "<< >> STREAM(" + drawing + ")", form(""), TextUnreadable, "", "content"},
		{"one of two content streams does not decode",
			page("[4 0 R 6 0 R]"), "<< >> STREAM(" + text + ")", garbage, form(""), TextPartial, "kept words", "content stream"},
		{"the text stream does not decode, the drawing does",
			page("[6 0 R 4 0 R]"), "<< >> STREAM(" + drawing + ")", garbage, form(""), TextUnreadable, "", "content stream"},
		{"a form does not decode",
			page("4 0 R"), "<< >> STREAM(" + text + " /X Do)", "<< >> STREAM()", "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Filter /FlateDecode >> STREAM(garbage, not deflate)",
			TextPartial, "kept words", "form X"},
		{"a form that decodes",
			page("4 0 R"), "<< >> STREAM(" + text + " /X Do)", "<< >> STREAM()", form("BT /F1 12 Tf 72 600 Td (form words) Tj ET"),
			TextComplete, "kept words form words", ""},
		{"contents refer to a missing object: an empty page",
			page("99 0 R"), "<< >> STREAM(" + text + ")", "<< >> STREAM()", form(""), TextComplete, "", ""},
	}
	for _, c := range cases {
		for _, outline := range []bool{false, true} {
			name := c.name
			if outline {
				name += ", sketched (with an outline)"
			}
			t.Run(name, func(t *testing.T) {
				catalog := "<< /Type /Catalog /Pages 2 0 R >>"
				if outline {
					catalog = "<< /Type /Catalog /Pages 2 0 R /Outlines 8 0 R >>"
				}
				pdf := buildPDF(catalog, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", c.page, c.c4, helvetica, c.c6, c.c7,
					"<< /Type /Outlines /First 9 0 R /Last 9 0 R /Count 1 >>",
					"<< /Title (Only) /Parent 8 0 R /Dest [3 0 R /Fit] >>")
				d, err := Open(bytes.NewReader(pdf))
				if err != nil {
					t.Fatal(err)
				}
				pc, err := d.Page(1)
				if (err != nil) != (c.want == TextUnreadable && c.lost == "content") {
					t.Errorf("Page: error %v", err)
				}
				if pc.Status != c.want || words(pc.Text) != c.text || !strings.Contains(pc.Lost, c.lost) || (c.lost == "") != (pc.Lost == "") {
					t.Errorf("Page: status %q text %q lost %q; want %q %q, lost naming %q", pc.Status, words(pc.Text), pc.Lost, c.want, c.text, c.lost)
				}
				ps, texts, err := d.ExtractAll()
				if err != nil {
					t.Fatal(err)
				}
				p := ps.Pages[0]
				if p.TextStatus != c.want || words(texts[0]) != c.text || !strings.Contains(p.Err, c.lost) || (c.lost == "") != (p.Err == "") {
					t.Errorf("ExtractAll: status %q text %q err %q; want %q %q, naming %q", p.TextStatus, words(texts[0]), p.Err, c.want, c.text, c.lost)
				}
				ps, err = d.Prescan()
				if err != nil {
					t.Fatal(err)
				}
				p = ps.Pages[0]
				if ps.Sketched != outline {
					t.Fatalf("sketched %v with outline %v", ps.Sketched, outline)
				}
				if p.TextStatus != c.want || !strings.Contains(p.Err, c.lost) || (c.lost == "") != (p.Err == "") {
					t.Errorf("Prescan: status %q err %q; want %q, naming %q", p.TextStatus, p.Err, c.want, c.lost)
				}
			})
		}
	}
}
