package pdftext

import (
	"fmt"
	"strings"
	"testing"
)

// The layout classes of issue 16: real documents of each class sit in
// testdata/corpus/pdf/classes (layout-*), with pdftotext -layout's pages
// beside them where poppler reads them right.

// linesInOrder checks that each of want is one whole line of got (white
// space normalised), in the order given.
func linesInOrder(got string, want []string) error {
	lines := strings.Split(got, "\n")
	at := 0
	for _, w := range want {
		for at < len(lines) && words(lines[at]) != w {
			at++
		}
		if at == len(lines) {
			return fmt.Errorf("no line %q (in this order)", w)
		}
		at++
	}
	return nil
}

// rotatedPDF is a one-page document whose page is turned by /Rotate rot
// and whose content draws five lines turned by the matrix cm.
func rotatedPDF(rot int, cm string, lines []string) []byte {
	var c strings.Builder
	fmt.Fprintf(&c, "q %s cm BT /F1 10 Tf 12 TL 72 700 Td ", cm)
	for _, l := range lines {
		fmt.Fprintf(&c, "(%s) ' ", l)
	}
	c.WriteString("ET Q")
	return buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Rotate %d "+
			"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>", rot),
		"<< >> STREAM("+c.String()+")",
		helvetica,
	)
}

// TestRotatedPages: text that runs sideways on the displayed page (a page
// turned by /Rotate 90 or 270 whose text is drawn upright in user space,
// or text drawn turned on an upright page) is read in its own frame, line
// after line, as pdftotext reads it.
func TestRotatedPages(t *testing.T) {
	lines := []string{
		"The first line of the turned page",
		"comes before the second line, which",
		"is longer than the third line,",
		"and the fourth line is followed",
		"by the last one.",
	}
	for _, c := range []struct {
		name string
		rot  int
		cm   string
	}{
		{"rotate 90", 90, "1 0 0 1 0 0"},
		{"rotate 270", 270, "1 0 0 1 0 0"},
		{"rotate 180", 180, "1 0 0 1 0 0"},
		{"drawn turned left", 0, "0 1 -1 0 750 100"},
		{"drawn turned right", 0, "0 -1 1 0 -300 700"},
		{"rotate 90, drawn upright", 90, "0 1 -1 0 750 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := pageText(t, rotatedPDF(c.rot, c.cm, lines), 1)
			if err := linesInOrder(got, lines); err != nil {
				t.Errorf("%v:\n%s", err, got)
			}
		})
	}
	// Seminar's sample slides: the portrait slides are pages turned by
	// /Rotate 90 with the text drawn sideways (the landscape ones, turned
	// by 270, are drawn upright).
	got := classText(t, "layout-rotate-semsamp2", 5)
	want := []string{
		"• There is information overload in a",
		"network if there is some mechanism",
		"that, compared to the status quo, makes",
		"the senders and/or receivers better off",
		"by restricting the flow of information.’",
		"• There is information overload in a",
		"network if there is some mechanism",
		"that, compared to the status quo, makes",
		"the senders and/or receivers better off",
		"by restricting the flow of information.",
	}
	if err := linesInOrder(got, want); err != nil {
		t.Errorf("semsamp2 page 5: %v:\n%s", err, got)
	}
}

// TestWideTableRows: a wide table grid has a clear strip between two of
// its columns with several words on each side, like a page in two
// columns; its rows are still read whole.
func TestWideTableRows(t *testing.T) {
	// Twelve rows of a key and seven values, in eight aligned columns.
	var c strings.Builder
	for i := range 12 {
		fmt.Fprintf(&c, "BT /F1 10 Tf 72 %d Td (key%d) Tj", 700-12*i, i)
		for k := range 7 {
			fmt.Fprintf(&c, " 60 0 Td (%d.%d) Tj", i, k)
		}
		c.WriteString(" ET ")
	}
	grid := pageText(t, onePage(c.String(), "<< /Font << /F1 5 0 R >> >>", helvetica), 1)
	for _, c := range []struct {
		name string
		text string
		want []string
	}{
		{"grid", grid, []string{"key0 0.0 0.1 0.2 0.3 0.4 0.5 0.6", "key11 11.0 11.1 11.2 11.3 11.4 11.5 11.6"}},
		// ascii(7) set by groff: the character table is two tables side
		// by side, each row of the left one beside a row of the right.
		{"ascii(7)", classText(t, "layout-table-ascii7", 1), []string{
			"Oct Dec Hex Char Oct Dec Hex Char",
			`000 0 00 NUL '\0' (null character) 100 64 40 @`,
			"001 1 01 SOH (start of heading) 101 65 41 A",
			"052 42 2A * 152 106 6A j",
		}},
		{"ascii(7) page 2", classText(t, "layout-table-ascii7", 2), []string{
			"053 43 2B + 153 107 6B k",
			"077 63 3F ? 177 127 7F DEL",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := linesInOrder(c.text, c.want); err != nil {
				t.Errorf("%v:\n%s", err, c.text)
			}
		})
	}
}

// TestLetterSpacedWords: letters set apart by character spacing (Tc), by
// kerns between them (soul, microtype, a logo placed letter by letter)
// join into their words; single letters that are words, table cells or
// monospaced text stay apart.
func TestLetterSpacedWords(t *testing.T) {
	const body = "BT /F1 10 Tf 72 600 Td (An ordinary line of body text sets the word spacing of the page.) Tj ET " +
		"BT /F1 10 Tf 72 588 Td (Another ordinary line of body text follows it, with its own words.) Tj ET "
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"Tc with spaces", "BT /F1 16 Tf 4 Tc 72 700 Td (SPACED HEADING) Tj ET " + body, []string{"SPACED HEADING"}},
		{"Tc lower case", "BT /F1 16 Tf 3 Tc 72 700 Td (letter spacing) Tj ET " + body, []string{"letter spacing"}},
		{"kerned letter by letter", "BT /F1 14 Tf 72 700 Td [(C) -300 (H) -300 (A) -300 (P) -300 (T) -300 (E) -300 (R) -900 (O) -300 (N) -300 (E)] TJ ET " + body,
			[]string{"CHAPTER ONE"}},
		{"placed letter by letter", "BT /F1 14 Tf 72 700 Td (T) Tj 10.6 0 Td (I) Tj 5.9 0 Td (T) Tj 10.6 0 Td (L) Tj 9.8 0 Td (E) Tj ET " + body,
			[]string{"TITLE"}},
		{"single-letter words", "BT /F1 10 Tf 72 700 Td (A B C d e) Tj ET " + body, []string{"A B C d e"}},
		{"one-letter cells", "BT /F1 10 Tf 72 700 Td (S) Tj 30 0 Td (M) Tj 30 0 Td (T) Tj 30 0 Td (W) Tj 30 0 Td (T) Tj 30 0 Td (F) Tj 30 0 Td (S) Tj ET " + body,
			[]string{"S M T W T F S"}},
		{"monospaced", "BT /F2 10 Tf 72 700 Td (x y z w v) Tj ET " + body, []string{"x y z w v"}},
		// A justifier that makes word gaps with Tc on the chunk before a
		// gap and cancels spaces' width with a negative Tw (ps2pdf output
		// of a typeset book): gaps make words, not the space glyphs.
		{"word gaps made by Tc, spaces taken back by Tw", "BT /F1 10 Tf " +
			"1 0 0 1 72 700 Tm 0 Tc 0 Tw (a) Tj 1 0 0 1 77.56 700 Tm 3 Tc (no) Tj 1 0 0 1 91.68 700 Tm 0 Tc (pe) Tj " +
			"1 0 0 1 102.8 700 Tm 3 Tc (ns) Tj 1 0 0 1 116.36 700 Tm 0 Tc (our) Tj 1 0 0 1 130.81 700 Tm -2.5 Tw (c e) Tj ET " + body,
			[]string{"an open source"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pdf := onePage(c.content, "<< /Font << /F1 5 0 R /F2 6 0 R >> >>", helvetica,
				"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>")
			got := pageText(t, pdf, 1)
			if err := linesInOrder(got, c.want); err != nil {
				t.Errorf("%v:\n%s", err, got)
			}
		})
	}
	// Real documents: the HITEC logo (small capitals on alternating
	// baselines, set letter by letter), and datetime2-serbian's title and
	// small capitals set with fontspec's LetterSpace; poppler splits both
	// into single letters.
	for _, c := range []struct {
		name string
		page int
		want []string
	}{
		{"layout-spaced-hitec", 1, []string{
			"The HITEC class",
			"right away after changing to HITEC . The only exception is that HITEC doesn’t work",
			"Aside from that, the HITEC class behaves a bit differently regarding document in-",
		}},
		{"layout-spaced-hitec", 2, []string{"to HITEC ."}},
		{"layout-spaced-datetime2-serbian-p1-3", 1, []string{
			"SERBIAN MODULE FOR DATETIME2 PACKAGE",
			"andrej radović nicola l. c. talbot",
			"abstract",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := classText(t, c.name, c.page)
			if err := linesInOrder(got, c.want); err != nil {
				t.Errorf("page %d: %v:\n%s", c.page, err, got)
			}
		})
	}
}

// TestRepeatedText: text drawn again over itself (a stamp applied five
// times, a glow drawn as seventeen copies around a heading) is read once;
// the same words elsewhere on the page, and marks repeated one letter
// apart, are kept.
func TestRepeatedText(t *testing.T) {
	const body = "BT /F1 10 Tf 72 600 Td (Each row says yes) Tj ET BT /F1 10 Tf 72 588 Td (Each row says yes) Tj ET " +
		"BT /F1 10 Tf 72 576 Td (yes yes yes) Tj ET BT /F1 10 Tf 72 564 Td (i i i l l) Tj ET "
	var stamp strings.Builder
	for i := range 5 {
		// Each pass of a stamping tool draws the stamp again, a hair
		// off the last one.
		fmt.Fprintf(&stamp, "q BT /F1 40 Tf %.1f %.1f Td (CONFIDENTIAL) Tj ET Q ", 150+0.4*float64(i), 400-0.3*float64(i))
	}
	got := pageText(t, onePage(stamp.String()+body, "<< /Font << /F1 5 0 R >> >>", helvetica), 1)
	if n := strings.Count(got, "CONFIDENTIAL"); n != 1 {
		t.Errorf("the stamp %d times:\n%s", n, got)
	}
	if err := linesInOrder(got, []string{"Each row says yes", "Each row says yes", "yes yes yes", "i i i l l"}); err != nil {
		t.Errorf("%v:\n%s", err, got)
	}
	for _, c := range []struct {
		name  string
		count map[string]int
		lines []string
	}{
		// boot(7) typeset by groff, stamped five times with qpdf
		// --overlay (the stamp: DRAFT COPY / not for distribution).
		{"layout-repeat-stamped5-boot7", map[string]int{"DRAFT": 1, "COPY": 1, "not for distribution": 1}, []string{
			"boot(7) Miscellaneous Information Manual boot(7)",
			"for historical reasons involving the personal computer, this program is often called \"the BIOS\".",
		}},
		// na-box's manual: the subtitle is drawn seventeen times on a
		// small circle (a glow); poppler prints it once.
		{"layout-repeat-nabox-p1", map[string]int{"لرسم إطارات ملونة لكتابة دروس في الرياضيات": 1}, []string{
			"الحزمة na-box",
			"تم إنشاء هذه الحزمة إعتمادا على تعديل في الحزمة pas-cours",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := classText(t, c.name, 1)
			for s, n := range c.count {
				if k := strings.Count(got, s); k != n {
					t.Errorf("%q %d times, want %d:\n%s", s, k, n, got)
				}
			}
			if err := linesInOrder(got, c.lines); err != nil {
				t.Errorf("%v:\n%s", err, got)
			}
		})
	}
}
