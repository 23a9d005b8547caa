package pdftext

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// fieldsOf is the page's words without the punctuation around them.
func fieldsOf(s string) map[string]int {
	m := map[string]int{}
	for _, w := range strings.Fields(s) {
		m[strings.TrimFunc(w, func(r rune) bool { return unicode.IsPunct(r) && r != '’' })]++
	}
	return m
}

// TestTeXLogosAndAccents: TeX's logos (a raised, smaller A and a lowered E
// kerned into their neighbours; XeTeX's mirrored E) and its accents (a
// glyph of their own over the letter) read as the words they make, on
// their line, as pdftotext reads them; the spacing accents do not show.
func TestTeXLogosAndAccents(t *testing.T) {
	for _, c := range []struct {
		name  string
		page  int
		words map[string]int // whole words, at least this many times
		lines []string       // whole lines, in this order
	}{
		{"tex-accents-pdflatex-ot1", 1, map[string]int{
			"Façade": 1, "façade": 1, "naı̈ve": 1, "rôle": 1, "señor’s": 1, "piñata": 1, "Élève": 1, "Être": 1,
			"Zürich": 1, "KÖLN": 1, "Český": 1, "Gdańsk": 1, "Ångström": 1, "déjà": 1, "crème": 1, "brûlée": 1,
			"LATEX": 2, "TEX": 1, "Café": 1,
		}, []string{"The Façade of the LATEX Café"}},
		{"tex-logo-hyph-utf8-p1-2", 1, map[string]int{"LATEX": 3}, nil},
		{"tex-logo-hyph-utf8-p1-2", 2, map[string]int{"LATEX": 5, "LuaLATEX": 1}, []string{
			"1.2 LATEX",
			"1.2.1 LATEX with Babel",
			"You can switch the language in LATEX with:",
			"1.2.2 LATEX with Polyglossia",
		}},
		{"tex-logo-xetex-notes-p1", 1, map[string]int{"XETEX": 1}, []string{
			"About XETEX", "Jonathan Kew",
			// A footnote mark begins the line: its E's, set lower, are still on it.
			"XETEX1 is an adaptation for Mac OS X of the TEX typesetting system developed",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := classText(t, c.name, c.page)
			have := fieldsOf(got)
			for w, n := range c.words {
				if have[w] < n {
					t.Errorf("%q %d times, want %d or more:\n%s", w, have[w], n, got)
				}
			}
			if err := linesInOrder(got, c.lines); err != nil {
				t.Errorf("%v:\n%s", err, got)
			}
			if i := strings.IndexAny(got, "¸ˆ˜¨´ˇ˘¯˙˝˛˚`"); i >= 0 {
				t.Errorf("a spacing accent left at %d: %q:\n%s", i, got[max(0, i-20):min(len(got), i+20)], got)
			}
			for _, l := range strings.Split(got, "\n") {
				if w := words(l); w == "A" || w == "E" {
					t.Errorf("a logo's letter on a line of its own:\n%s", got)
				}
			}
		})
	}
}

// TestXeTeXZeroWidthNonJoiner: XeTeX draws a Persian zero width non-joiner
// as a space glyph and a kern taking its width back, and sets its word
// spaces as gaps: the non-joiner does not make the font one that draws
// its spaces, and the words keep their spaces.
func TestXeTeXZeroWidthNonJoiner(t *testing.T) {
	got := classText(t, "rtl-xetex-zwnj-bidi-atbegshi", 1)
	text := words(got)
	for _, want := range []string{
		"راست بالا",
		"چپ بالا",
		"کنون ای خردمند وصف خرد بدین جایگه گفتن اندرخورد",
		"خرد رهنمای و خرد دلگشای خرد دست گیرد به هر دو سرای",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

// TestMirroredGlyph: a glyph drawn mirrored (a negative determinant, as
// XeTeX draws its logo's E) reads on its line at its ink, while one
// turned round (180°) is upside-down text, read in its own frame.
func TestMirroredGlyph(t *testing.T) {
	const res = "<< /Font << /F1 5 0 R >> >>"
	// "Xe" then a mirrored "E" whose origin is at its right edge, then "TeX".
	mirrored := "BT /F1 20 Tf 100 700 Td (Xe) Tj ET q -1 0 0 1 137.8 700 cm BT /F1 20 Tf 0 0 Td (E) Tj ET Q " +
		"BT /F1 20 Tf 138 700 Td (TeX) Tj ET BT /F1 10 Tf 100 650 Td (The next line) Tj ET"
	if got := words(pageText(t, onePage(mirrored, res, helvetica), 1)); got != "XeETeX The next line" {
		t.Errorf("mirrored: %q", got)
	}
	// The same E turned round is drawn from right to left, upside down,
	// and read apart from the upright line.
	turned := "BT /F1 20 Tf 100 700 Td (Xe) Tj ET q -1 0 0 -1 300 500 cm BT /F1 20 Tf 0 0 Td (Upside) Tj ET Q " +
		"BT /F1 20 Tf 138 700 Td (TeX) Tj ET"
	got := pageText(t, onePage(turned, res, helvetica), 1)
	if !strings.Contains(got, "Upside") || strings.Contains(words(got), "Xe Upside") || !strings.Contains(words(got), "Xe TeX") {
		t.Errorf("turned: %q", got)
	}
}

// TestKernedPieces: the geometry of TeX's logos and accents, drawn
// glyph by glyph, reads as words; text that only looks alike (a line of
// small text raised further over a word, a subscript under the line
// above, an accent beside its letter) keeps its own place.
func TestKernedPieces(t *testing.T) {
	const winAnsi = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
	const res = "<< /Font << /F1 5 0 R >> >>"
	bt := func(size, x, y float64, s string) string {
		return fmt.Sprintf("BT /F1 %g Tf %g %g Td (%s) Tj ET ", size, x, y, s)
	}
	for _, c := range []struct {
		name    string
		content string
		want    string // the page's text, white space normalised
	}{
		// L (6.67 wide), an A at 8.4 pt (5.6 wide) raised 2.2 pt and
		// kerned 4.2 pt back into it, TeX kerned back into the A.
		{"latex logo", bt(12, 100, 700, "L") + bt(8.4, 102.5, 702.2, "A") + bt(12, 107.6, 700, "TeX") + bt(12, 100, 680, "next line"),
			"LATeX next line"},
		// The same letters, the small ones raised 0.6 em: another line.
		{"raised further", bt(12, 100, 700, "L") + bt(8.4, 102.5, 707.2, "A") + bt(12, 107.6, 700, "TeX"),
			"A LTeX"},
		// A cedilla drawn after its c and kerned back over it.
		{"accent after its letter", bt(10, 100, 700, "Fac") + bt(10, 112.5, 700, "\\270") + bt(10, 116.67, 700, "ade"),
			"Façade"},
		// An acute drawn before its e, raised over a capital É.
		{"accent over a capital", bt(10, 101.67, 702.5, "\\264") + bt(10, 100, 700, "Etre"),
			"Étre"},
		// An acute beside a letter, not over it, is left as it is.
		{"accent beside", bt(10, 100, 700, "don") + bt(10, 117, 700, "\\264") + bt(10, 120.5, 700, "t"),
			"don´t"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := words(pageText(t, onePage(c.content, res, winAnsi), 1)); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
