package analysis

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
)

// BenchmarkDocument reports analysis.document.<lang>.us: analysing one
// chunk of about 512 tokens of real text (testdata/search), detection,
// stems and German compounds included, median of the document's chunks.
func BenchmarkDocument(b *testing.B) {
	a := New()
	for _, lang := range []string{"de", "en", "ja"} {
		raw, err := os.ReadFile("../../../testdata/search/debian-reference-ch01." + lang + ".txt")
		if err != nil {
			b.Fatal(err)
		}
		text := string(raw)
		a.Document("warm up the German nouns: Rechnungsprüfung", "de")
		var ds []time.Duration
		for len(text) > 0 {
			n := min(len(text), 2000) // about 512 tokens of Latin text
			for n < len(text) && text[n]&0xC0 == 0x80 {
				n++
			}
			chunk := text[:n]
			text = text[n:]
			start := time.Now()
			f := a.Document(chunk, "")
			ds = append(ds, time.Since(start))
			if strings.TrimSpace(f.Exact) == "" {
				b.Fatalf("%s: no terms", lang)
			}
		}
		figure.Report("analysis.document."+lang+".us", float64(figure.Percentile(ds, 50))/float64(time.Microsecond), "us")
	}
}
