//go:build !wasip1

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// BenchmarkSummarizeOverhead: what the chunking itself costs — reading a
// ~10,000-token indexed document through the knowledge capability, counting
// its tokens and splitting it for a 1,024-token model — measured around
// model calls that the scripted provider answers at once
// (analysis.summarize.overhead.ms: median of one tool call;
// analysis.summarize.parts: the parts it made).
func BenchmarkSummarizeOverhead(b *testing.B) {
	e := newEnv(b)
	var doc strings.Builder
	for range 4 {
		text, _ := report()
		doc.WriteString(text)
	}
	f := e.upload(b, "big.md", doc.String(), true)
	e.srv.SetDefault(llmtest.EndpointChat, scripted(false))
	var ds []time.Duration
	parts := 0
	for range 3 {
		start := time.Now()
		res, r := e.call(b, "summarizeContent", SummarizeArgs{Documents: []string{f.ID}})
		if !r.OK {
			b.Fatalf("%+v", r.Error)
		}
		ds = append(ds, time.Since(start))
		parts = res.Parts
	}
	if parts < 10 {
		b.Fatalf("only %d parts", parts)
	}
	figure.Report("analysis.summarize.overhead.ms", figure.Millis(figure.Percentile(ds, 50)), "ms")
	figure.Report("analysis.summarize.parts", float64(parts), "parts")
}
