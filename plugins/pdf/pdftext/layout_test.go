package pdftext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestColumnsReadInOrder(t *testing.T) {
	// A full-width title, then two columns of prose with shared baselines.
	var c strings.Builder
	c.WriteString("BT /F1 14 Tf 72 740 Td (A Title Across The Page) Tj ET ")
	for i := range 10 {
		y := 700 - 12*i
		fmt.Fprintf(&c, "BT /F1 10 Tf 72 %d Td (left column line %d has words) Tj ET ", y, i)
		fmt.Fprintf(&c, "BT /F1 10 Tf 320 %d Td (right column line %d has words) Tj ET ", y, i)
	}
	c.WriteString("BT /F1 10 Tf 72 560 Td (a footer line that spans both of the columns below them) Tj ET ")
	got := pageText(t, onePage(c.String(), "<< /Font << /F1 5 0 R >> >>", helvetica), 1)
	w := strings.Fields(got)
	idx := func(s string) int {
		for i := range w {
			if strings.Join(w[i:min(i+4, len(w))], " ") == s {
				return i
			}
		}
		return -1
	}
	title, l9, r0, footer := idx("A Title Across The"), idx("left column line 9"), idx("right column line 0"), idx("a footer line that")
	if !(title >= 0 && title < l9 && l9 < r0 && r0 < footer) {
		t.Errorf("columns not read in order:\n%s", got)
	}
}

func TestTableStaysRowWise(t *testing.T) {
	// Short cells in aligned columns: a table, read row by row.
	var c strings.Builder
	for i := range 12 {
		fmt.Fprintf(&c, "BT /F1 10 Tf 72 %d Td (item%d) Tj 150 0 Td (%d.5) Tj 150 0 Td (kg) Tj ET ", 700-12*i, i, i)
	}
	got := pageText(t, onePage(c.String(), "<< /Font << /F1 5 0 R >> >>", helvetica), 1)
	lines := strings.Split(got, "\n")
	if len(lines) != 12 || words(lines[3]) != "item3 3.5 kg" {
		t.Errorf("table not row by row:\n%s", got)
	}
}

// TestArabicScriptFastPath: the lead-byte test before the decoding changes
// no answer, for every rune and for bytes that are not UTF-8.
func TestArabicScriptFastPath(t *testing.T) {
	ref := func(s string) bool {
		r, _ := utf8.DecodeRuneInString(s)
		return r >= 0x0600 && r <= 0x06FF || r >= 0x0750 && r <= 0x077F || r >= 0xFB50 && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFF
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if s := string(r) + "x"; arabicScript(s) != ref(s) {
			t.Fatalf("arabicScript(%U) = %v", r, !ref(s))
		}
	}
	for b := 0; b < 256; b++ {
		if s := string([]byte{byte(b)}); arabicScript(s) != ref(s) {
			t.Fatalf("arabicScript(%#x) = %v", b, !ref(s))
		}
	}
	if arabicScript("") {
		t.Fatal(`arabicScript("") = true`)
	}
}
