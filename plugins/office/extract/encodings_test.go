package extract

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestLegacyEncodedText: text and HTML files in legacy encodings (real
// ones from golang.org/x/text's test data, and text of the corpus encoded
// with x/text; testdata/corpus/MANIFEST.tsv) are decoded by detection, and
// an HTML meta charset the bytes contradict is not trusted. Before,
// anything not UTF-8 was read as Windows-1252 and the meta tag was
// believed (the Arabic page became all U+FFFD).
func TestLegacyEncodedText(t *testing.T) {
	cases := []struct {
		file, mime, want, enc string
	}{
		{"rashomon-shift-jis.txt", "", "羅生門", "shift_jis"},
		{"sunzi-bingfa-traditional-big5.txt", "", "孫子曰：兵者，國之大事", "big5"},
		{"unsu-joh-eun-nal-euc-kr.txt", "", "운수 좋은 날", "euc-kr"},
		{"candide-utf-16le.txt", "", "Candide", "utf-16le"},
		{"moscow-koi8-r.txt", "", "Москва, столица России", "koi8-r"},
		{"moscow-cp866.txt", "", "Москва, столица России", "ibm866"},
		{"moscow-koi8-r.txt", "text/plain; charset=koi8-r", "Москва, столица России", "koi8-r"},
		{"cairo-windows-1256-labelled-utf-8.html", "", "القاهرة، عاصمة مصر", "windows-1256"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b := testcorpus.Read(t, "text", c.file)
			idx, objs := mustRun(t, b, c.file, c.mime, Limits{})
			all := strings.Join(texts(objs), "\n")
			if !strings.Contains(all, c.want) {
				t.Errorf("%q not in the text: %.200q", c.want, all)
			}
			if strings.ContainsRune(all, '\uFFFD') {
				t.Errorf("replacement characters in the text: %.200q", all)
			}
			if got := idx.Structure["encoding"]; got != c.enc {
				t.Errorf("encoding %v, want %s", got, c.enc)
			}
		})
	}
}
