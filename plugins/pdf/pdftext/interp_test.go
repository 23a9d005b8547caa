package pdftext

import (
	"strings"
	"testing"
)

func TestInterpreter(t *testing.T) {
	res := "<< /Font << /F1 5 0 R >> >>"
	for _, c := range []struct {
		name, content string
		want          string
	}{
		{"Tj", "BT /F1 12 Tf 72 700 Td (Hello world) Tj ET", "Hello world"},
		{"TJ kerning joins, a word-sized gap splits",
			"BT /F1 12 Tf 72 700 Td [(Wo) 80 (rd) -300 (two)] TJ ET", "Word two"},
		{"Td moves to a new line",
			"BT /F1 12 Tf 72 700 Td (first) Tj 0 -14 Td (second) Tj ET", "first\nsecond"},
		{"T* and TL", "BT /F1 12 Tf 14 TL 72 700 Td (a) Tj T* (b) Tj ET", "a\nb"},
		{"TD sets the leading", "BT /F1 12 Tf 72 700 Td (a) Tj 0 -14 TD (b) Tj T* (c) Tj ET", "a\nb\nc"},
		{"quote operators", "BT /F1 12 Tf 14 TL 72 700 Td (a) Tj (b) ' 0 0 (c) \" ET", "a\nb\nc"},
		{"Tm places absolutely", "BT /F1 12 Tf 1 0 0 1 72 600 Tm (lower) Tj 1 0 0 1 72 700 Tm (upper) Tj ET", "upper\nlower"},
		{"cm and q/Q", "q 1 0 0 1 0 -100 cm BT /F1 12 Tf 72 700 Td (moved) Tj ET Q BT /F1 12 Tf 72 700 Td (top) Tj ET", "top\nmoved"},
		{"Tc letter spacing stays one word", "BT /F1 12 Tf 1 Tc 72 700 Td (spaced) Tj ET", "spaced"},
		{"Tw widens spaces", "BT /F1 12 Tf 10 Tw 72 700 Td (a b) Tj ET", "a b"},
		{"Tz squeezes", "BT /F1 12 Tf 50 Tz 72 700 Td (narrow text) Tj ET", "narrow text"},
		{"Ts superscript stays in the line", "BT /F1 12 Tf 72 700 Td (x) Tj 4 Ts (2) Tj 0 Ts ( y) Tj ET", "x2 y"},
		{"columns of a table keep their order by x",
			"BT /F1 12 Tf 300 700 Td (right) Tj ET BT /F1 12 Tf 72 700 Td (left) Tj ET", "left right"},
		{"off-page text is dropped", "BT /F1 12 Tf -500 700 Td (gone) Tj ET BT /F1 12 Tf 72 700 Td (kept) Tj ET", "kept"},
		{"escapes and octal", `BT /F1 12 Tf 72 700 Td (a\(b\)c\\d\101) Tj ET`, `a(b)c\dA`},
		{"hex strings", "BT /F1 12 Tf 72 700 Td <48 69> Tj ET", "Hi"},
		{"inline images are skipped",
			"BI /W 2 /H 2 /BPC 8 /CS /G ID \x00\xffEI\x01 EI BT /F1 12 Tf 72 700 Td (after) Tj ET", "after"},
		{"fake bold is not doubled", "BT /F1 12 Tf 72 700 Td (B) Tj ET BT /F1 12 Tf 72.3 700 Td (B) Tj ET", "B"},
		{"unknown font name falls back", "BT /Nope 12 Tf 72 700 Td (still) Tj ET", "still"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := pageText(t, onePage(c.content, res, helvetica), 1)
			if strings.Join(strings.Fields(strings.ReplaceAll(got, "\n", " \n ")), " ") !=
				strings.Join(strings.Fields(strings.ReplaceAll(c.want, "\n", " \n ")), " ") {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestFormXObject(t *testing.T) {
	// The form has its own font resource under a name the page lacks, and
	// its matrix moves it down by 100.
	pdf := onePage("BT /F1 12 Tf 72 700 Td (page) Tj ET /X1 Do",
		"<< /Font << /F1 5 0 R >> /XObject << /X1 6 0 R >> >>",
		helvetica,
		"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Matrix [1 0 0 1 0 -100] /Resources << /Font << /G 5 0 R >> >> >> STREAM(BT /G 12 Tf 72 700 Td (form) Tj ET)")
	if got := words(pageText(t, pdf, 1)); got != "page form" {
		t.Errorf("got %q", got)
	}
	// A form that draws itself stops after one level.
	pdf = onePage("/X1 Do", "<< /XObject << /X1 5 0 R >> >>",
		"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /X1 5 0 R >> /Font << /F 6 0 R >> >> >> STREAM(BT /F 12 Tf 72 700 Td (loop) Tj ET /X1 Do)",
		helvetica)
	if got := words(pageText(t, pdf, 1)); !strings.HasPrefix(got, "loop") {
		t.Errorf("self-drawing form: got %q", got)
	}
}

func TestRotatedPage(t *testing.T) {
	pdf := buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 /Rotate 90 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		// Text drawn rotated by 90° counter-clockwise reads upright on a
		// page displayed rotated by 90° clockwise, where smaller x is higher.
		"<< >> STREAM(BT /F1 12 Tf 0 1 -1 0 100 72 Tm (line two) Tj 0 1 -1 0 86 72 Tm (line one) Tj ET)",
		helvetica)
	if got := pageText(t, pdf, 1); words(got) != "line one line two" || !strings.Contains(got, "\n") {
		t.Errorf("got %q", got)
	}
}

func TestSimpleFontEncodings(t *testing.T) {
	// Differences over WinAnsi: code 1 is "fi", 2 an unknown name, 150
	// WinAnsi's endash; /Widths give the advances.
	font := "<< /Type /Font /Subtype /Type1 /BaseFont /ABCDEF+Custom /FirstChar 0 /LastChar 255 " +
		"/Widths [" + strings.Repeat("500 ", 256) + "] " +
		"/Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [1 /fi /g7x 65 /uni0042 /B_C] >> >>"
	got := pageText(t, onePage("BT /F1 10 Tf 72 700 Td (\\001nd AB\\226z) Tj ET", "<< /Font << /F1 5 0 R >> >>", font), 1)
	if want := "find BBC–z"; words(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStandardFontWidths(t *testing.T) {
	// Courier is monospaced at 600/1000: "iii" and "WWW" are equally wide,
	// so the next word, placed right after "iii" plus a space, stays apart.
	pdf := onePage("BT /F1 10 Tf 72 700 Td (iii) Tj ET BT /F1 10 Tf 92 700 Td (x) Tj ET",
		"<< /Font << /F1 5 0 R >> >>", "<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>")
	if got := words(pageText(t, pdf, 1)); got != "iii x" {
		t.Errorf("Courier: got %q", got)
	}
	// In Helvetica "iii" is 3×222 = 0.67 em: x at 72+6.7 joins the word.
	pdf = onePage("BT /F1 10 Tf 72 700 Td (iii) Tj ET BT /F1 10 Tf 78.7 700 Td (x) Tj ET",
		"<< /Font << /F1 5 0 R >> >>", helvetica)
	if got := words(pageText(t, pdf, 1)); got != "iiix" {
		t.Errorf("Helvetica: got %q", got)
	}
}

func TestType0Font(t *testing.T) {
	toUnicode := "<< >> STREAM(/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n" +
		"1 begincodespacerange <0000> <FFFF> endcodespacerange\n" +
		"2 beginbfchar <0003> <0020> <0010> <00660069> endbfchar\n" +
		"2 beginbfrange <0020> <0022> <0041> <0030> <0031> [<0078> <D83DDE00>] endbfrange\n" +
		"endcmap CMapName currentdict /CMap defineresource pop end end)"
	font := "<< /Type /Font /Subtype /Type0 /BaseFont /XYZABC+Sans /Encoding /Identity-H " +
		"/DescendantFonts [7 0 R] /ToUnicode 6 0 R >>"
	cid := "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /XYZABC+Sans /DW 500 " +
		"/W [3 [250] 16 [600] 32 34 700] /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>"
	pdf := onePage("BT /F1 10 Tf 72 700 Td <0020002100220003001000300031> Tj ET",
		"<< /Font << /F1 5 0 R >> >>", font, toUnicode, cid)
	if got := words(pageText(t, pdf, 1)); got != "ABC fix😀" {
		t.Errorf("got %q", got)
	}
}

func TestPageRange(t *testing.T) {
	d, err := Open(strings.NewReader(string(onePage("", "<< >>"))))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 2, -1} {
		if _, err := d.PageText(n); err == nil {
			t.Errorf("page %d: no error", n)
		}
	}
	if s, err := d.PageText(1); err != nil || s != "" {
		t.Errorf("empty page: %q, %v", s, err)
	}
}

func TestActualText(t *testing.T) {
	// The glyphs inside the marked content are replaced by its ActualText;
	// an empty ActualText hides them (a soft hyphen, a decoration).
	pdf := onePage("BT /F1 12 Tf 72 700 Td /Span << /ActualText (\xfe\xff\x00f\x00i) >> BDC (X) Tj EMC (nd) Tj "+
		"/Span <</ActualText ()>> BDC (-) Tj EMC ( me) Tj /P <</MCID 3>> BDC ( now) Tj EMC ET",
		"<< /Font << /F1 5 0 R >> >>", helvetica)
	if got := words(pageText(t, pdf, 1)); got != "find me now" {
		t.Errorf("got %q", got)
	}
}
