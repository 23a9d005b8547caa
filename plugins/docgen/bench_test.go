//go:build !wasip1

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
)

// BenchmarkGenerateDocument: a report of 300 paragraphs, 20 headings and a
// 200-row table written as PDF and DOCX by the sandboxed plugin, through the
// files capability into the store (docgen.pdf.ms, docgen.docx.ms: median
// milliseconds of one tool call).
func BenchmarkGenerateDocument(b *testing.B) {
	e := newEnv(b, "docgen")
	a := GenerateArgs{Title: "Benchmark report"}
	for i := range 300 {
		if i%15 == 0 {
			a.Blocks = append(a.Blocks, Block{Type: "heading", Text: fmt.Sprintf("Section %d", i/15+1)})
		}
		a.Blocks = append(a.Blocks, Block{Type: "paragraph", Text: strings.Repeat(fmt.Sprintf("Sentence %d of the benchmark report with some ordinary words. ", i), 4)})
	}
	rows := [][]string{{"Item", "Quantity", "Price", "Note"}}
	for i := range 200 {
		rows = append(rows, []string{fmt.Sprintf("item %d", i), fmt.Sprint(i * 3), fmt.Sprintf("%d.50", i), "a note that wraps within its cell"})
	}
	a.Blocks = append(a.Blocks, Block{Type: "table", Rows: rows})
	for _, format := range []string{"pdf", "docx"} {
		a.Format = format
		var ds []time.Duration
		for i := range 5 {
			a.FileName = fmt.Sprintf("bench-%d", i) // distinct files: no dedupe shortcut
			start := time.Now()
			if r := e.call(b, "generateDocument", a, nil); !r.OK {
				b.Fatalf("%s: %+v", format, r.Error)
			}
			ds = append(ds, time.Since(start))
		}
		figure.Report("docgen."+format+".ms", figure.Millis(figure.Percentile(ds, 50)), "ms")
	}
}
