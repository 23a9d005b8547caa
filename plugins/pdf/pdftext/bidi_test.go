package pdftext

import "testing"

// TestLogicalLine: lines in visual order (as a page places them, read left
// to right) come back in logical order.
func TestLogicalLine(t *testing.T) {
	for _, c := range []struct {
		name, visual, want string
	}{
		{"latin only", "plain text (1)", "plain text (1)"},
		{"arabic words", "ملاع ابحرم", "مرحبا عالم"},
		{"hebrew words", "םלוע םולש", "שלום עולם"},
		{"european number in arabic", "2018-2017 :ةيساردلا ةنسلا", "السنة الدراسية: 2018-2017"},
		{"arabic-indic numbers apart", "(١٩٢٨ - ١٩٢٤) سيراب يف", "في باريس (١٩٢٤ - ١٩٢٨)"},
		{"brackets mirror", "(طاقن 6) :لوألا نيرمتلا", "التمرين الأول: (6 نقاط)"},
		{"latin inside arabic", "Un+1 = Un + 3 : نإف n يعيبط", "طبيعي n فإن : Un+1 = Un + 3"},
		{"hebrew word in a latin line", "the word םולש means peace", "the word שלום means peace"},
		{"hebrew words in a latin line", "say םלוע םולש twice", "say שלום עולם twice"},
		{"indent kept", "    ملاع", "    عالم"},
		{"cells read from the right", "ن2       . U3 و U2 بسحأ (1", "1) أحسب U2 و U3 .       2ن"},
		{"presentation forms normalised", "ﻢﻴﻜﺤﻟا", "الحكيم"},
		{"lam-alef ligature", "ﻻ", "لا"},
		{"marks stay on their letter", "نّيب", "بيّن"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.visual
			if out, ok := logicalLine([]byte(c.visual)); ok {
				got = string(out)
			}
			if got != c.want {
				t.Errorf("logicalLine(%q) = %q, want %q", c.visual, got, c.want)
			}
		})
	}
}

// TestRTLPage: Arabic drawn glyph by glyph from right to left, one glyph
// standing for two letters (lam-alef), and a Hebrew font without
// ToUnicode whose glyphs are named alef, bet… come out in logical order.
func TestRTLPage(t *testing.T) {
	// A Type 1 font with Hebrew glyph names (codes 65.. /alef /bet /gimel
	// /kaffinal /qamats1).
	hebrew := "<< /Type /Font /Subtype /Type1 /BaseFont /HebrewTest /FirstChar 65 /LastChar 69 /Widths [500 500 500 500 0]" +
		" /Encoding << /Differences [65 /alef /bet /gimel /kaffinal /qamats1] >> >>"
	// Each line is drawn left to right as the page shows it: "AB" is
	// א then ב, the word בא read from the right; "DEAC" is ך, a qamats
	// over the א that follows it, א, ג: the word גאָך.
	content := "BT /H 12 Tf 72 700 Td (AB) Tj ET BT /H 12 Tf 72 680 Td (DEAC) Tj ET"
	got := pageText(t, onePage(content, "<< /Font << /H 5 0 R >> >>", hebrew), 1)
	if want := "בא\nגאָך"; words(got) != words(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
