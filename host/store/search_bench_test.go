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
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/store/storetest"
	"github.com/agenthost/agenthost/pdk/content"
)

// benchWord is word k of a synthetic vocabulary; documents draw words by
// Zipf's law, as natural text does, so a query's terms match the share of
// chunks real terms match rather than nearly all of them.
func benchWord(k uint64) string { return fmt.Sprintf("w%d", k) }

// BenchmarkSearch reports search.<store>.10k.p50 and .100k.p50 ms: one
// lexical search (two terms, ten hits) among 10,000 and 100,000 chunks of one
// workspace, through the caller's scope, analysed in every language. On
// SQLite, search.sqlite.<n>.bare_fts5.p50 is the bare FTS5 query of the same
// two words on the same file (no scope, no analysis, rowids only) and
// .vs_bare the ratio of the two.
func BenchmarkSearch(b *testing.B) {
	for _, d := range dialects {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%dk", d.name, n/1000), func(b *testing.B) { benchSearch(b, d.name, d.open, n) })
		}
	}
}

func benchSearch(b *testing.B, dialect string, open storetest.Opener, n int) {
	ctx := context.Background()
	e := newBenchEnv(b, open)
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	zipf := rand.NewZipf(rng, 1.1, 2, 50_000)
	const perDoc = 1000
	for doc := 0; doc < n/perDoc; doc++ {
		f, _, err := e.svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws, Name: fmt.Sprintf("doc-%d.txt", doc), Content: strings.NewReader(fmt.Sprint("document ", doc))})
		if err != nil {
			b.Fatal(err)
		}
		chunks := make([]kindex.Chunk, perDoc)
		for i := range chunks {
			words := make([]string, 60)
			for w := range words {
				words[w] = benchWord(zipf.Uint64())
			}
			chunks[i] = kindex.Chunk{ID: fmt.Sprint(i), Seq: i, ObjectID: fmt.Sprint(i), ContentType: content.Text,
				Text: strings.Join(words, " "), Ref: content.Ref{PageIndex: i/10 + 1}, Tokens: 60}
		}
		if _, err := e.db.ClaimContent(ctx, e.p.TenantID, f.SHA256, false); err != nil {
			b.Fatal(err)
		}
		if err := e.db.SaveContent(ctx, e.p.TenantID, f.SHA256, content.Index{}, chunks, kindex.StatusIndexed); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	var ds, bare []time.Duration
	for i := range 100 {
		// Terms of middling frequency (ranks 20-219), like a question's
		// content words.
		w1, w2 := benchWord(uint64(20+i)), benchWord(uint64(120+i))
		start := time.Now()
		hits, err := e.db.SearchLexical(ctx, e.p, kindex.Query{Text: w1 + " " + w2, WorkspaceID: e.ws, Limit: 10})
		ds = append(ds, time.Since(start))
		if err != nil || len(hits) == 0 {
			b.Fatalf("search %q: %d hits, %v", w1+" "+w2, len(hits), err)
		}
		if dialect == "sqlite" {
			start := time.Now()
			rows, err := e.db.SQL().QueryContext(ctx, `SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT 10`, `"`+w1+`" OR "`+w2+`"`)
			if err != nil {
				b.Fatal(err)
			}
			found := 0
			for rows.Next() {
				found++
			}
			rows.Close()
			bare = append(bare, time.Since(start))
			if found == 0 {
				b.Fatalf("bare FTS5 query %q %q: no rows", w1, w2)
			}
		}
	}
	p50 := figure.Percentile(ds, 50)
	figure.Report(fmt.Sprintf("search.%s.%dk.p50", dialect, n/1000), figure.Millis(p50), "ms")
	if len(bare) > 0 {
		bp50 := figure.Percentile(bare, 50)
		figure.Report(fmt.Sprintf("search.%s.%dk.bare_fts5.p50", dialect, n/1000), figure.Millis(bp50), "ms")
		figure.Report(fmt.Sprintf("search.%s.%dk.vs_bare", dialect, n/1000), float64(p50)/float64(bp50), "ratio")
	}
}

// BenchmarkRetrievalLexical reports retrieval.lexical.hit5.<lang>: the share
// of the evaluation's questions (testdata/search, 20 a language) whose
// answering page is among the five best lexical hits on the embedded store,
// the workspace searching in every analysed language.
func BenchmarkRetrievalLexical(b *testing.B) {
	ev := newEvalEnv(b, openSQLite)
	hit, total := map[string]int{}, map[string]int{}
	for _, q := range storetest.EvalQuestions(b) {
		total[q.Lang]++
		if storetest.EvalRank(b, ev.e.db, ev.e.p, ev.e.ws, ev.ids, q, nil) > 0 {
			hit[q.Lang]++
		}
	}
	for _, lang := range storetest.EvalLanguages {
		figure.Report("retrieval.lexical.hit5."+lang, float64(hit[lang])/float64(max(1, total[lang])), "ratio")
	}
}
