package pdftext

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestAnnotationsReal: the comments and stamps drawn over a page (their
// appearance streams, or a FreeText comment's /Contents when it has none)
// are part of its text, as pdftotext prints them; the pre-scan counts them.
func TestAnnotationsReal(t *testing.T) {
	for _, c := range []struct {
		file  string
		words []string // in pdftotext's order
	}{
		{"annots-pdfcpu-annottest.pdf", strings.Fields("gopher ghgjgj sdf sdfsdf sdf sdf Text Text Text Text Text hkjhk jh")},
		{"annots-pdfcpu-freetext-no-appearance.pdf", strings.Fields(`Mac Preview shows "Contents" line 2 line 3`)},
	} {
		t.Run(c.file, func(t *testing.T) {
			d, err := Open(bytes.NewReader(testcorpus.Read(t, "pdf", "classes", c.file)))
			if err != nil {
				t.Fatal(err)
			}
			pc, err := d.Page(1)
			if err != nil || pc.Status != TextComplete {
				t.Fatalf("page 1: %v, status %q", err, pc.Status)
			}
			if got := strings.Fields(pc.Text); strings.Join(got, " ") != strings.Join(c.words, " ") {
				t.Errorf("words %q, want %q", got, c.words)
			}
			if ps, err := d.Prescan(); err != nil || ps.Pages[0].TextLen == 0 {
				t.Errorf("the pre-scan counts no text on the page (%v)", err)
			}
		})
	}
}

// TestAnnotationsShown: which annotations a page's text includes, and
// where: an appearance is mapped from its /BBox (through its /Matrix) onto
// the annotation's /Rect, so its text takes its place among the page's
// lines; hidden ones, links, pop-ups and form widgets (whose values
// FormFields gives) are left out, a signature's appearance is drawn.
func TestAnnotationsShown(t *testing.T) {
	ap := func(text string) string {
		return "<< /Type /XObject /Subtype /Form /BBox [0 0 200 20] /Resources << /Font << /F1 5 0 R >> >> >> STREAM(BT /F1 10 Tf 2 5 Td (" + text + ") Tj ET)"
	}
	// A form whose /Matrix turns it a quarter: the box it maps onto /Rect
	// is the turned one.
	turned := "<< /Type /XObject /Subtype /Form /BBox [0 0 200 20] /Matrix [0 1 -1 0 0 0] /Resources << /Font << /F1 5 0 R >> >> >> STREAM(BT /F1 10 Tf 2 5 Td (turned note) Tj ET)"
	cases := []struct {
		name   string
		annot  string // object 7
		extra  string // object 8
		want   string
		absent string
	}{
		{"a comment between two lines of the page", "<< /Type /Annot /Subtype /FreeText /Rect [72 500 272 520] /AP << /N 8 0 R >> >>", ap("middle comment"),
			"top line middle comment bottom line", ""},
		{"a comment above the page's text", "<< /Type /Annot /Subtype /FreeText /Rect [72 740 272 760] /AP << /N 8 0 R >> >>", ap("first comment"),
			"first comment top line bottom line", ""},
		{"appearance states: the one /AS names", "<< /Type /Annot /Subtype /Stamp /Rect [72 500 272 520] /AS /On /AP << /N << /On 8 0 R /Off 6 0 R >> >> >>", ap("stamped"),
			"top line stamped bottom line", "unused"},
		{"hidden", "<< /Type /Annot /Subtype /FreeText /F 2 /Rect [72 500 272 520] /AP << /N 8 0 R >> >>", ap("hidden note"),
			"top line bottom line", "hidden"},
		{"no view", "<< /Type /Annot /Subtype /Stamp /F 32 /Rect [72 500 272 520] /AP << /N 8 0 R >> >>", ap("noview note"),
			"top line bottom line", "noview"},
		{"a link", "<< /Type /Annot /Subtype /Link /Rect [72 500 272 520] /AP << /N 8 0 R >> >>", ap("link text"),
			"top line bottom line", "link"},
		{"a text field's widget: FormFields reports its value", "<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Jane) /Rect [72 500 272 520] /AP << /N 8 0 R >> >>", ap("Jane"),
			"top line bottom line", "Jane"},
		{"a signature's widget", "<< /Type /Annot /Subtype /Widget /Parent << /FT /Sig /T (sig) >> /Rect [72 500 272 520] /AP << /N 8 0 R >> >>", ap("Signed by Jane"),
			"top line Signed by Jane bottom line", ""},
		{"a turned appearance", "<< /Type /Annot /Subtype /FreeText /Rect [300 400 320 600] /AP << /N 8 0 R >> >>", turned,
			"top line turned note bottom line", ""},
		{"a comment without appearance", "<< /Type /Annot /Subtype /FreeText /Rect [72 500 272 540] /Contents (said here\\ragain) >>", "<< >>",
			"top line said here again bottom line", ""},
	}
	for _, c := range cases {
		for _, outline := range []bool{false, true} {
			name := c.name
			catalog := "<< /Type /Catalog /Pages 2 0 R >>"
			if outline {
				// With an outline the pre-scan only sketches the page.
				name += ", sketched"
				catalog = "<< /Type /Catalog /Pages 2 0 R /Outlines 9 0 R >>"
			}
			t.Run(name, func(t *testing.T) {
				annotationsShown(t, catalog, ap("unused"), c.annot, c.extra, c.want, c.absent)
			})
		}
	}
}

func annotationsShown(t *testing.T, catalog, unused, annot, extra, want, absent string) {
	pdf := buildPDF(
		catalog,
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R /Annots [7 0 R] >>",
		"<< >> STREAM(BT /F1 12 Tf 72 700 Td (top line) Tj 0 -400 Td (bottom line) Tj ET)",
		helvetica,
		unused,
		annot,
		extra,
		"<< /Type /Outlines /First 10 0 R /Last 10 0 R /Count 1 >>",
		"<< /Title (Only) /Parent 9 0 R /Dest [3 0 R /Fit] >>",
	)
	d, err := Open(bytes.NewReader(pdf))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := d.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := words(pc.Text); got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if absent != "" && strings.Contains(pc.Text, absent) {
		t.Errorf("text %q holds %q", pc.Text, absent)
	}
	ps, err := d.Prescan()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Join(strings.Fields(want), "")); ps.Pages[0].TextLen != n {
		t.Errorf("the pre-scan (sketched %v) counts %d characters, want %d", ps.Sketched, ps.Pages[0].TextLen, n)
	}
}
