package pdftext

import (
	"bytes"
	"strings"
	"testing"

	unorm "golang.org/x/text/unicode/norm"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestXeTeXArabicWordGaps: XeTeX sets the words of Arabic script apart by
// gaps, as it does Latin ones (xdvipdfmx draws no space glyphs), and the
// gaps are words apart however narrow the font's space: Alkalami's is
// under a twentieth of an em, where a Latin font's is a quarter. A few
// space glyphs that XeTeX draws for zero width non-joiners (Persian-bib's
// XB Zar, whose non-joiners are followed by a glyph the ToUnicode leaves
// out) do not make the font one that draws its word spaces. The
// reference is the documents' sources: of their distinct words of
// Arabic script, most come out whole (a word that the ToUnicode cuts
// short, or that the source spells differently than it prints, is
// missed), and no run of letters is longer than the longest word.
func TestXeTeXArabicWordGaps(t *testing.T) {
	for _, c := range []struct {
		name   string
		recall float64
		lines  []string // whole lines of a page (words, normalised)
	}{
		{"rtl-xetex-alkalami-sample", 0.9, []string{
			"ما هي الشفرة الموحدة يونِكود؟",
			"تتعامل الحواسيب بالأسام مع الأرقام فقط، و تخزن الحروف و المحارف الأخرى بتخصيص رقم لكل واحد منها.",
		}},
		{"rtl-xetex-persian-bib-userguide", 0.8, []string{
			"بسم الله الرحمن الرحيم",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			recall, longest, all := xetexArabicRecall(t, c.name)
			t.Logf("%s: word recall %.3f", c.name, recall)
			if recall < c.recall {
				t.Errorf("%s: word recall %.3f < %.2f", c.name, recall, c.recall)
			}
			for _, w := range rtlWords(all) {
				if r := len([]rune(w)); r > longest {
					t.Errorf("a run of %d letters, longer than any word of the source (%d): %q", r, longest, w)
				}
			}
			text := unorm.NFKC.String(strings.ReplaceAll(all, "\u0640", ""))
			for _, l := range c.lines {
				if !strings.Contains(words(text), words(unorm.NFKC.String(l))) {
					t.Errorf("no %q in:\n%s", l, text)
				}
			}
		})
	}
}

// xeTeXArabic are the documents of TestXeTeXArabicWordGaps.
var xeTeXArabic = [...]string{"rtl-xetex-alkalami-sample", "rtl-xetex-persian-bib-userguide"}

// xetexArabicRecall is the share of a document's source's distinct words
// of Arabic script found whole in its text, the length (in runes) of the
// source's longest such word, and the text.
func xetexArabicRecall(tb testing.TB, name string) (recall float64, longest int, text string) {
	tb.Helper()
	d, err := Open(bytes.NewReader(testcorpus.Read(tb, "pdf", "classes", name+".pdf")))
	if err != nil {
		tb.Fatal(err)
	}
	want := map[string]bool{}
	for _, w := range rtlReference(tb, name) {
		want[w] = true
		longest = max(longest, len([]rune(w)))
	}
	got := map[string]bool{}
	var all strings.Builder
	for n := 1; n <= d.PageCount(); n++ {
		s, err := d.PageText(n)
		if err != nil {
			tb.Fatalf("%s page %d: %v", name, n, err)
		}
		all.WriteString(s + "\n")
		for _, w := range rtlWords(s) {
			got[w] = true
		}
	}
	hits := 0
	for w := range want {
		if got[w] {
			hits++
		}
	}
	return float64(hits) / float64(max(len(want), 1)), longest, all.String()
}

// BenchmarkXeTeXArabicRecall: the share of the distinct Arabic and
// Persian words of two XeTeX documents' sources found whole (their mean).
func BenchmarkXeTeXArabicRecall(b *testing.B) {
	for range b.N {
		sum := 0.0
		for _, name := range xeTeXArabic {
			r, _, _ := xetexArabicRecall(b, name)
			b.Logf("%s: %.3f", name, r)
			sum += r
		}
		figure.Report("pdf.text.xetex_arabic.recall", sum/float64(len(xeTeXArabic)), "ratio")
	}
}
