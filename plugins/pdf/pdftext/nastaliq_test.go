package pdftext

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// nastaliqFont is a simple font named name whose codes A..J are Urdu
// letters (ک ر ا چ ی و ب ل ت ے), L and M the digits ۱ ۲, and whose code
// 32 is a space; K is a glyph no mapping gives text to. A glyph of width 0 is drawn where its
// ink ends, as Nastaliq fonts do.
func nastaliqFont(name string) string {
	return "<< /Type /Font /Subtype /Type1 /BaseFont /" + name + " /FirstChar 32 /LastChar 77 /Widths [250" +
		strings.Repeat(" 0", 32) + " 0 500 300 500 500 500 0 400 500 700 400 500 500] /Encoding << /Differences [32 /space " +
		"65 /uni06A9 /uni0631 /uni0627 /uni0686 /uni06CC /uni0648 /uni0628 /uni0644 /uni062A /uni06D2 /g9999 /uni06F1 /uni06F2] >> >>"
}

// nastaliqLine draws glyphs one by one at the given x (12 pt text on one
// baseline, y 700 plus the glyph's rise), in the given fonts.
type placed struct {
	font, code string
	x, rise    float64
}

func nastaliqLine(glyphs []placed) string {
	var b strings.Builder
	b.WriteString("BT ")
	for _, g := range glyphs {
		fmt.Fprintf(&b, "/%s 12 Tf 1 0 0 1 %.1f %.1f Tm (%s) Tj ", g.font, g.x, 700+g.rise, g.code)
	}
	b.WriteString("ET")
	return b.String()
}

// urduLine is "بولتے اور کراچی" drawn as LibreOffice draws Awami
// Nastaliq: left to right as seen, so each word's letters from its last
// to its first; a letter of no advance (ک, ب) set two thirds of an em
// past the letter before it; letters climbing above the baseline; and
// when spaces is set, a space glyph between the words in the font sp.
func urduLine(letters, sp string, spaces bool) []placed {
	l := func(code string, x, rise float64) placed { return placed{letters, code, x, rise} }
	var gs []placed
	gs = append(gs, l("E", 100, 0), l("D", 105, 4), l("C", 110, 8), l("B", 114, 3), l("A", 127, 0)) // کراچی
	if spaces {
		gs = append(gs, placed{sp, " ", 128, 0})
	}
	gs = append(gs, l("B", 134, 0), l("F", 140, 0), l("C", 146, 0)) // اور
	if spaces {
		gs = append(gs, placed{sp, " ", 150, 0})
	}
	gs = append(gs, l("J", 156, 0), l("I", 163, 10), l("H", 167, 6), l("F", 171, 0), l("G", 184, 0)) // بولتے
	return gs
}

// fromRight is a line drawn as cairo draws it: the same glyphs in the
// order they are written, from the right.
func fromRight(gs []placed) []placed {
	gs = slices.Clone(gs)
	slices.Reverse(gs)
	return gs
}

// TestNastaliqDrawnSpaces: in a typeface that draws its word spaces, the
// letters of a word between two spaces stay one word however far apart
// and however high they are drawn, from the left or from the right (see
// frag.settle), also when the writer put the spaces in
// another subset of the typeface than the letters (LibreOffice 7.0); a
// typeface that draws no spaces is read by its gaps, and glyphs far apart
// stay apart even between drawn spaces.
func TestNastaliqDrawnSpaces(t *testing.T) {
	font := nastaliqFont("ABCDEF+Nastaliq")
	res := "<< /Font << /N 5 0 R /S 6 0 R >> >>"
	for _, c := range []struct {
		name, content string
		other         string // the font /S: another subset of the typeface, or another typeface
		want          string
	}{
		{"spaces drawn", nastaliqLine(urduLine("N", "N", true)), font, "بولتے اور کراچی"},
		{"spaces in another subset", nastaliqLine(urduLine("N", "S", true)), nastaliqFont("GHIJKL+Nastaliq"), "بولتے اور کراچی"},
		// Drawn from the right, each word in logical order.
		{"drawn from the right", nastaliqLine(fromRight(urduLine("N", "N", true))), font, "بولتے اور کراچی"},
		// Without drawn spaces the gaps decide: a letter two thirds of an
		// em away starts a word.
		{"no spaces drawn", nastaliqLine(urduLine("N", "N", false)), font, "ب ولتے اور ک راچی"},
		// Spaces of another typeface say nothing of this one's words.
		{"spaces of another typeface", nastaliqLine(urduLine("N", "S", true)), nastaliqFont("Other"), "ب ولتے اور ک راچی"},
		// A number in a word drawn from the right is drawn from the left.
		{"number drawn from the left", nastaliqLine([]placed{{"N", "F", 155, 0}, {"N", " ", 150, 0}, {"N", "C", 140, 0}, {"N", "G", 130, 0},
			{"N", "L", 114, 0}, {"N", "M", 120, 0}, {"N", " ", 105, 0}, {"N", "B", 95, 0}}), font, "و اب۱۲ ر"},
		// A letter of no advance at a line's end does not take the next
		// line's first letter below it into its word.
		{"next line", nastaliqLine([]placed{{"N", "E", 100, 0}, {"N", "A", 106, 0}, {"N", "B", 105, -40}}), font, "کی ر"},
		// Between drawn spaces, a letter three ems away is another word
		// (a table's next cell), not part of this one.
		{"far apart", nastaliqLine([]placed{{"N", "G", 100, 0}, {"N", "F", 106, 0}, {"N", " ", 112, 0}, {"N", "B", 116, 0},
			{"N", "F", 122, 0}, {"N", "C", 160, 0}, {"N", " ", 165, 0}, {"N", "C", 170, 0}}), font, "ا ا ور وب"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := words(pageText(t, onePage(c.content, res, font, c.other), 1))
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestActualTextUnmapped: an ActualText over a glyph that has no text of
// its own (a subset's ToUnicode leaves it out) gives the glyph its text,
// in its place in the word; a Span left open at the end of the content
// gives none, and its glyph adds no empty word.
func TestActualTextUnmapped(t *testing.T) {
	font := nastaliqFont("ABCDEF+Nastaliq")
	res := "<< /Font << /N 5 0 R >> >>"
	content := "BT /N 12 Tf 1 0 0 1 100 700 Tm (C) Tj /Span << /ActualText <FEFF062F> >> BDC (K) Tj EMC (B) Tj ET"
	if got := words(pageText(t, onePage(content, res, font), 1)); got != "ردا" {
		t.Errorf("got %q, want %q", got, "ردا")
	}
	open := "BT /N 12 Tf 1 0 0 1 100 700 Tm (C) Tj ( ) Tj /Span << /ActualText <FEFF062F> >> BDC (K) Tj ET"
	d, err := Open(bytes.NewReader(onePage(open, res, font)))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := d.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := words(pc.Text); got != "ا" {
		t.Errorf("open span: got %q, want %q", got, "ا")
	}
}
