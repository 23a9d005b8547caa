package pdftext

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestCorpusPrescan(t *testing.T) {
	dir, names := corpusFiles(t)
	for _, name := range names {
		d, err := openCorpus(t, dir, name)
		if err != nil {
			continue
		}
		ps, err := d.Prescan()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(ps.Pages) != d.PageCount() {
			t.Errorf("%s: page map has %d pages of %d", name, len(ps.Pages), d.PageCount())
		}
		// The page map's text length follows the reference text: the
		// non-space characters of pdftotext's pages, within 10%.
		ref := referencePages(dir, name)
		var got, want int
		for i, p := range ps.Pages {
			if p.Page != i+1 || p.Width <= 0 || p.Height <= 0 || p.Err != "" {
				t.Errorf("%s: bad page entry %+v", name, p)
			}
			got += p.TextLen
			if i < len(ref) {
				want += strings.Count(strings.Map(func(r rune) rune {
					if unicode.IsSpace(r) {
						return -1
					}
					return 'x'
				}, ref[i]), "x")
			}
		}
		if ref != nil && (float64(got) < 0.9*float64(want) || float64(got) > 1.1*float64(want)) {
			t.Errorf("%s: text length %d, reference %d", name, got, want)
		}
		checkSections(t, name, ps)
		// The outline alone gives the pre-scan's sections where it cuts
		// along the outline, and declines where it cuts along headings.
		if secs, ok, err := d.OutlineSections(); err != nil || ok != (ps.SectionsFrom == "outline") || (ok && !slices.Equal(secs, ps.Sections)) {
			t.Errorf("%s: outline sections %v %v (%d), pre-scan's from %q (%d)", name, ok, err, len(secs), ps.SectionsFrom, len(ps.Sections))
		}
		// A sketched page map (a document with an outline) agrees with
		// the laid-out one: the same images, text lengths within 5%.
		full, err := d.prescan(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ps.Sketched != (len(ps.Outline) > 0) {
			t.Errorf("%s: sketched %v with %d outline items", name, ps.Sketched, len(ps.Outline))
		}
		sketchText, fullText := 0, 0
		for i, p := range ps.Pages {
			if p.Images != full.Pages[i].Images {
				t.Errorf("%s: page %d: sketch counts %d images, layout %d", name, i+1, p.Images, full.Pages[i].Images)
			}
			sketchText += p.TextLen
			fullText += full.Pages[i].TextLen
		}
		if math.Abs(float64(sketchText-fullText)) > 0.05*float64(fullText) {
			t.Errorf("%s: sketched text length %d, laid out %d", name, sketchText, fullText)
		}
		// Where there is an outline, the heading heuristic (of the full
		// pre-scan, which ExtractAll runs) should find most of its
		// top-level titles on their pages.
		found, top := 0, 0
		for _, it := range full.Outline {
			if it.Page == 0 {
				continue
			}
			top++
			for _, h := range full.Headings {
				if h.Page == it.Page && strings.Contains(norm(h.Title), norm(it.Title)) {
					found++
					break
				}
			}
		}
		if top > 0 && float64(found) < 0.8*float64(top) {
			t.Errorf("%s: headings found %d of %d top-level outline titles", name, found, top)
		}
		tables := 0
		for _, p := range full.Pages {
			if p.Table {
				tables++
			}
		}
		t.Logf("%s: body %.1f pt, %d headings, %d sections from %s, %d/%d outline titles as headings, %d table pages",
			name, full.BodySize, len(full.Headings), len(ps.Sections), ps.SectionsFrom, found, top, tables)
	}
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

func checkSections(t *testing.T, name string, ps Prescan) {
	t.Helper()
	last := 0
	for _, s := range ps.Sections {
		if s.StartPage < 1 || s.EndPage < s.StartPage || s.EndPage > len(ps.Pages) || s.Level < 1 {
			t.Errorf("%s: bad section %+v", name, s)
		}
		if s.StartPage < last {
			t.Errorf("%s: sections out of order at %+v", name, s)
		}
		last = s.StartPage
	}
	if len(ps.Outline) > 0 && ps.SectionsFrom != "outline" {
		t.Errorf("%s: has an outline but sections from %q", name, ps.SectionsFrom)
	}
}

func TestPrescanSynthetic(t *testing.T) {
	// Four pages: a title in 24 pt, body text, a heading at the top of
	// page 2, a table of aligned columns on page 3, two images on page 2,
	// an empty landscape page.
	body := func(y int, s string) string { return fmt.Sprintf("BT /F1 10 Tf 72 %d Td (%s) Tj ET ", y, s) }
	var p1, p2, p3 strings.Builder
	p1.WriteString("BT /F1 24 Tf 72 720 Td (A Big Title) Tj ET ")
	for y := 680; y > 100; y -= 12 {
		p1.WriteString(body(y, "plain body text that fills the page line after line"))
	}
	p2.WriteString("BT /F1 16 Tf 72 750 Td (Second Part) Tj ET /Im1 Do BI /W 1 /H 1 /BPC 8 /CS /G ID \x00 EI ")
	for y := 700; y > 100; y -= 12 {
		p2.WriteString(body(y, "more body text in the second part of the document"))
	}
	for y := 700; y > 600; y -= 12 {
		fmt.Fprintf(&p3, "BT /F1 10 Tf 72 %d Td (name) Tj 200 0 Td (12.5) Tj 100 0 Td (kg) Tj 100 0 Td (yes) Tj ET ", y)
	}
	res := "<< /Font << /F1 9 0 R >> /XObject << /Im1 10 0 R >> >>"
	pdf := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 11 0 R] /Count 4 /MediaBox [0 0 612 792] /Resources "+res+" >>",
		"<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Contents 7 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Contents 8 0 R >>",
		"<< >> STREAM("+p1.String()+")",
		"<< >> STREAM("+p2.String()+")",
		"<< >> STREAM("+p3.String()+")",
		helvetica,
		"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 /ColorSpace /DeviceGray >> STREAM(\x00)",
		"<< /Type /Page /Parent 2 0 R /Rotate 90 >>",
	)
	d, err := Open(strings.NewReader(string(pdf)))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.Prescan()
	if err != nil {
		t.Fatal(err)
	}
	if ps.BodySize != 10 {
		t.Errorf("body size %v", ps.BodySize)
	}
	if len(ps.Headings) != 2 || ps.Headings[0].Title != "A Big Title" || ps.Headings[0].Level != 1 ||
		ps.Headings[1].Title != "Second Part" || ps.Headings[1].Level != 2 || ps.Headings[1].Page != 2 {
		t.Errorf("headings %+v", ps.Headings)
	}
	want := []Section{{"A Big Title", 1, 1, 4}, {"Second Part", 2, 2, 4}}
	if ps.SectionsFrom != "headings" || fmt.Sprint(ps.Sections) != fmt.Sprint(want) {
		t.Errorf("sections %+v from %q", ps.Sections, ps.SectionsFrom)
	}
	if ps.Pages[1].Images != 2 || ps.Pages[0].Images != 0 {
		t.Errorf("images %d %d", ps.Pages[0].Images, ps.Pages[1].Images)
	}
	if ps.Pages[0].Table || ps.Pages[1].Table || !ps.Pages[2].Table {
		t.Errorf("tables %v %v %v", ps.Pages[0].Table, ps.Pages[1].Table, ps.Pages[2].Table)
	}
	if p := ps.Pages[3]; p.Width != 792 || p.Height != 612 {
		t.Errorf("rotated page size %vx%v", p.Width, p.Height)
	}
	if n := len("AOBigTitle"); ps.Pages[0].TextLen < n {
		t.Errorf("text length %d", ps.Pages[0].TextLen)
	}
}
