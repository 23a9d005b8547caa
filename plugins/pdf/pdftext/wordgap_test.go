package pdftext

import (
	"bytes"
	"strings"
	"testing"

	unorm "golang.org/x/text/unicode/norm"

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
			d, err := Open(bytes.NewReader(testcorpus.Read(t, "pdf", "classes", c.name+".pdf")))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			longest := 0
			for _, w := range rtlReference(t, c.name) {
				want[w] = true
				longest = max(longest, len([]rune(w)))
			}
			got := map[string]bool{}
			var all strings.Builder
			for n := 1; n <= d.PageCount(); n++ {
				s, err := d.PageText(n)
				if err != nil {
					t.Fatalf("page %d: %v", n, err)
				}
				all.WriteString(s + "\n")
				for _, w := range rtlWords(s) {
					got[w] = true
					if r := len([]rune(w)); r > longest {
						t.Errorf("page %d: a run of %d letters, longer than any word of the source (%d): %q", n, r, longest, w)
					}
				}
			}
			hits := 0
			for w := range want {
				if got[w] {
					hits++
				}
			}
			recall := float64(hits) / float64(max(len(want), 1))
			t.Logf("%s: %d of %d distinct words (%.3f)", c.name, hits, len(want), recall)
			if recall < c.recall {
				t.Errorf("%s: word recall %.3f < %.2f", c.name, recall, c.recall)
			}
			text := unorm.NFKC.String(strings.ReplaceAll(all.String(), "\u0640", ""))
			for _, l := range c.lines {
				if !strings.Contains(words(text), words(unorm.NFKC.String(l))) {
					t.Errorf("no %q in:\n%s", l, text)
				}
			}
		})
	}
}
