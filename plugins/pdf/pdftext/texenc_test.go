package pdftext

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestNumberedGlyph(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
		ok   bool
	}{
		{"a97", 97, true}, {"a0", 0, true}, {"a255", 255, true}, {"g65", 65, true}, {"C12", 12, true},
		{"x41", 0x41, true}, {"G3A", 0x3A, true}, {"65", 65, true},
		{"a256", 0, false}, {"a", 0, false}, {"alef", 0, false}, {"x4", 0, false}, {"a-1", 0, false}, {"one", 0, false},
	} {
		code, ok := numberedGlyph(c.name)
		if code != c.code || ok != c.ok {
			t.Errorf("numberedGlyph(%q) = %d, %v; want %d, %v", c.name, code, ok, c.code, c.ok)
		}
	}
}

// type3Font is a Type 3 font (object 5) naming codes first..last /aN, with
// one empty glyph procedure (object 6) for each and the given width (0:
// widths from 40 to 60, a proportional face).
func type3Font(first, last, width int) string {
	var diffs, procs, widths strings.Builder
	for c := first; c <= last; c++ {
		fmt.Fprintf(&diffs, " /a%d", c)
		fmt.Fprintf(&procs, " /a%d 6 0 R", c)
		w := width
		if w == 0 {
			w = 40 + c%21
		}
		fmt.Fprintf(&widths, " %d", w)
	}
	return fmt.Sprintf("<< /Type /Font /Subtype /Type3 /FontBBox [0 -20 70 70] /FontMatrix [0.01 0 0 0.01 0 0]"+
		" /CharProcs <<%s >> /Encoding << /Type /Encoding /Differences [%d%s] >> /FirstChar %d /LastChar %d /Widths [%s] >>",
		procs.String(), first, diffs.String(), first, last, widths.String())
}

func TestType3NumberedNames(t *testing.T) {
	res := "<< /Font << /T3 5 0 R >> >>"
	proc := "<< >> STREAM(50 0 d0)"
	for _, c := range []struct {
		name, font, show, want string
	}{
		// OT1: ligatures at 11..15, quotes at 92 and 34, en dash at 123.
		{"OT1 letters and ligatures", type3Font(0, 127, 0), `<5c0c6e64 22 20 7b 20 0b6f7274 22>`, "“find” – ffort”"},
		// T1: a glyph above 127 (é at 0xE9), ligatures at 27..31.
		{"T1", type3Font(0, 255, 0), `<e9 1c 6e 20 10 61 11>`, "éfin “a”"},
		// Every glyph one width: the typewriter layout, ASCII braces.
		{"typewriter", type3Font(32, 127, 52), `<7b 61 7d 5c 22>`, `{a}\"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			content := "BT /T3 10 Tf 72 700 Td " + c.show + " Tj ET"
			got := words(pageText(t, onePage(content, res, c.font, proc), 1))
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestType3Size: a bitmap font set at a size that is not the text's
// (glyph space in pixels, Tf 30 for text about 25 pt) keeps doubled
// letters and breaks words at a space of a third of the em.
func TestType3Size(t *testing.T) {
	// Widths of 40 to 60 pixels at 1/120 and Tf 30: 10 to 15 pt advances,
	// letters of 20 to 30 pt text.
	font := strings.Replace(type3Font(0, 127, 0), "[0.01 0 0 0.01 0 0]", "[0.008333 0 0 0.008333 0 0]", 1)
	content := "BT /T3 30 Tf 72 700 Td [<616c6c> -400 <776f7264>] TJ ET"
	got := words(pageText(t, onePage(content, "<< /Font << /T3 5 0 R >> >>", font, "<< >> STREAM(20 0 d0)"), 1))
	if got != "all word" {
		t.Errorf("got %q", got)
	}
}

// TestUnreadablePage: glyphs whose names mean nothing and no ToUnicode
// make the page unreadable, reported as such by Page and the pre-scan.
func TestUnreadablePage(t *testing.T) {
	font := "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] /FontMatrix [0.001 0 0 0.001 0 0]" +
		" /CharProcs << /glyphA 6 0 R /glyphB 6 0 R >> /Encoding << /Differences [65 /glyphA /glyphB] >>" +
		" /FirstChar 65 /LastChar 66 /Widths [500 500] >>"
	res := "<< /Font << /T3 5 0 R /F1 7 0 R >> >>"
	proc := "<< >> STREAM(500 0 d0)"
	for _, c := range []struct {
		name, content string
		status        TextStatus
	}{
		{"all unmapped", "BT /T3 12 Tf 72 700 Td (ABABABAB) Tj ET", TextUnreadable},
		{"partly unmapped", "BT /T3 12 Tf 72 700 Td (ABABAB) Tj /F1 12 Tf 72 680 Td (readable text on this page) Tj ET", TextPartial},
		{"readable", "BT /F1 12 Tf 72 680 Td (readable text) Tj ET", TextComplete},
	} {
		t.Run(c.name, func(t *testing.T) {
			pdf := onePage(c.content, res, font, proc, helvetica)
			d, err := Open(bytes.NewReader(pdf))
			if err != nil {
				t.Fatal(err)
			}
			pc, err := d.Page(1)
			if err != nil {
				t.Fatal(err)
			}
			if pc.Status != c.status {
				t.Errorf("Page: status %q (%d of %d unmapped), want %q", pc.Status, pc.Unmapped, pc.Glyphs, c.status)
			}
			ps, err := d.Prescan()
			if err != nil {
				t.Fatal(err)
			}
			if ps.Pages[0].TextStatus != c.status {
				t.Errorf("Prescan: status %q, want %q", ps.Pages[0].TextStatus, c.status)
			}
			// The sketch (the pre-scan of a document with an outline)
			// tells it too.
			var info PageInfo
			d.sketchPage(1, &info)
			if info.TextStatus != c.status {
				t.Errorf("sketch: status %q (%d of %d unmapped), want %q", info.TextStatus, info.Unmapped, info.Glyphs, c.status)
			}
		})
	}
}
