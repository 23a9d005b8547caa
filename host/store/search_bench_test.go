package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/pdk/content"
)

// benchWord is word k of a synthetic vocabulary; documents draw words by
// Zipf's law, as natural text does, so a query's terms match the share of
// chunks real terms match rather than nearly all of them.
func benchWord(k uint64) string { return fmt.Sprintf("w%d", k) }

// BenchmarkSearch reports search.<store>.10k.p50 and .100k.p50 ms: one
// lexical search (two terms, ten hits) among 10,000 and 100,000 chunks of one
// workspace, through the caller's scope.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	for _, d := range dialects {
		for _, n := range []int{10_000, 100_000} {
			e := newBenchEnv(b, d.open)
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			zipf := rand.NewZipf(rng, 1.1, 2, 50_000)
			const perDoc = 1000
			for doc := 0; doc < n/perDoc; doc++ {
				f, _, err := e.svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws, Name: fmt.Sprintf("doc-%d.txt", doc), Content: strings.NewReader(fmt.Sprint("document ", doc))})
				if err != nil {
					b.Fatal(err)
				}
				chunks := make([]knowledge.Chunk, perDoc)
				for i := range chunks {
					words := make([]string, 60)
					for w := range words {
						words[w] = benchWord(zipf.Uint64())
					}
					chunks[i] = knowledge.Chunk{ID: fmt.Sprint(i), Seq: i, ObjectID: fmt.Sprint(i), ContentType: content.Text,
						Text: strings.Join(words, " "), Ref: content.Ref{PageIndex: i/10 + 1}, Tokens: 60}
				}
				if _, err := e.db.ClaimContent(ctx, e.p.TenantID, f.SHA256, false); err != nil {
					b.Fatal(err)
				}
				if err := e.db.SaveContent(ctx, e.p.TenantID, f.SHA256, content.Index{}, chunks, knowledge.StatusIndexed); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := e.db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
				b.Fatal(err)
			}
			var ds []time.Duration
			for i := range 100 {
				// Terms of middling frequency (ranks 20-219), like a question's
				// content words.
				q := benchWord(uint64(20+i)) + " " + benchWord(uint64(120+i))
				start := time.Now()
				hits, err := e.db.SearchLexical(ctx, e.p, knowledge.Query{Text: q, WorkspaceID: e.ws, Limit: 10})
				ds = append(ds, time.Since(start))
				if err != nil || len(hits) == 0 {
					b.Fatalf("search %q: %d hits, %v", q, len(hits), err)
				}
			}
			figure.Report(fmt.Sprintf("search.%s.%dk.p50", d.name, n/1000), figure.Millis(figure.Percentile(ds, 50)), "ms")
		}
	}
}
