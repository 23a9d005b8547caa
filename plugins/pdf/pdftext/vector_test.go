package pdftext

import (
	"bytes"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestVectorOnlyPages: a page whose text was converted to outlines
// (testdata/corpus/pdf/classes/outlines-camlidl-p1.pdf: 400 glyphs drawn
// as filled paths, no font, no image) is vector only in the pre-scan, its
// sketch and its extraction, not a complete page with an empty text;
// and no page of the corpus whose reference text (pdftotext) has words,
// nor a scan, is. Before, such a page was an empty success.
func TestVectorOnlyPages(t *testing.T) {
	d, err := Open(bytes.NewReader(testcorpus.Read(t, "pdf", "classes", "outlines-camlidl-p1.pdf")))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.Prescan()
	if err != nil || len(ps.Pages) != 1 || ps.Pages[0].TextStatus != TextVectorOnly {
		t.Fatalf("prescan %+v, %v; want one vectorOnly page", ps.Pages, err)
	}
	if pc, err := d.Page(1); err != nil || pc.Status != TextVectorOnly || pc.Text != "" {
		t.Errorf("Page: %q, %q, %v", pc.Status, pc.Text, err)
	}
	var info PageInfo
	d.sketchPage(1, &info)
	if info.TextStatus != TextVectorOnly {
		t.Errorf("sketch: %q", info.TextStatus)
	}

	dir, names := corpusFiles(t)
	for _, name := range names {
		d, err := openCorpus(t, dir, name)
		if err != nil {
			continue
		}
		ps, err := d.Prescan()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ref := referencePages(dir, name)
		for i, p := range ps.Pages {
			if p.TextStatus == TextVectorOnly && (i < len(ref) && nonSpace(ref[i]) >= 4*negligibleGlyphs || p.Images > 0) {
				t.Errorf("%s page %d: vector only, but pdftotext reads %d characters on it (%d images)", name, p.Page, nonSpace(ref[i]), p.Images)
			}
		}
	}
}
