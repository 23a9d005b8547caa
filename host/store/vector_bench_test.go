package store_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/store/storetest"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/pdk/content"
)

// clusteredVectors makes n unit vectors of dim the way a corpus's
// embeddings gather: around topics (random directions), subtopics of each
// (a topic plus noise) and points around those; queries come from the same
// distribution (a subtopic plus noise) but are not in the set. Neighbours
// within a subtopic have a cosine of about 0.6 (as a MiniLM query has with
// its nearest passages), within a topic about 0.3.
func clusteredVectors(rng *rand.Rand, n, dim, topics, subtopics int) (vecs, subs [][]float32) {
	for range topics {
		t := gaussian(rng, dim, 1)
		for range subtopics {
			subs = append(subs, around(rng, t, 0.8))
		}
	}
	vecs = make([][]float32, n)
	for i := range vecs {
		vecs[i] = around(rng, subs[rng.IntN(len(subs))], pointSpread)
	}
	return vecs, subs
}

// pointSpread is the noise of a point around its subtopic.
const pointSpread = 0.8

func gaussian(rng *rand.Rand, dim int, sigma float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * sigma)
	}
	return unit(v)
}

func around(rng *rand.Rand, c []float32, spread float64) []float32 {
	noise := gaussian(rng, len(c), 1)
	v := make([]float32, len(c))
	for i := range v {
		v[i] = c[i] + float32(spread)*noise[i]
	}
	return unit(v)
}

func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// vectorCorpus stores vecs as chunks of files of perFile chunks each,
// uploaded by p into workspace ws, embedded by model; it returns the object
// id of each vector's chunk.
func vectorCorpus(tb testing.TB, db *store.DB, svc *files.Service, p tenancy.Principal, ws, model string, vecs [][]float32, perFile int) []string {
	tb.Helper()
	ctx := context.Background()
	ids := make([]string, len(vecs))
	for start := 0; start < len(vecs); start += perFile {
		end := min(start+perFile, len(vecs))
		name := fmt.Sprintf("%s-doc-%d.txt", ws, start/perFile)
		f, _, err := svc.Upload(ctx, p, files.Upload{WorkspaceID: ws, Name: name, Content: strings.NewReader(name)})
		if err != nil {
			tb.Fatal(err)
		}
		chunks := make([]kindex.Chunk, end-start)
		for i := range chunks {
			ids[start+i] = fmt.Sprintf("%s-%d", name, i)
			chunks[i] = kindex.Chunk{ID: fmt.Sprint(i), Seq: i, ObjectID: ids[start+i], ContentType: content.Text,
				Text: "chunk " + ids[start+i], Ref: content.Ref{PageIndex: i/10 + 1}, Tokens: 2}
		}
		if _, err := db.ClaimContent(ctx, p.TenantID, f.SHA256, false); err != nil {
			tb.Fatal(err)
		}
		if err := db.SaveContent(ctx, p.TenantID, f.SHA256, content.Index{}, chunks, kindex.StatusIndexed); err != nil {
			tb.Fatal(err)
		}
		if err := db.SaveVectors(ctx, p.TenantID, f.SHA256, model, chunks, vecs[start:end]); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}

// exactNearest returns the indexes of the k vectors nearest to q (cosine of
// unit vectors: the dot product), by comparing every one.
func exactNearest(vecs [][]float32, q []float32, k int) []int {
	type scored struct {
		i int
		s float64
	}
	all := make([]scored, len(vecs))
	for i, v := range vecs {
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(q[j])
		}
		all[i] = scored{i, dot}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
	out := make([]int, k)
	for i := range out {
		out[i] = all[i].i
	}
	return out
}

// BenchmarkHNSW reports search.hnsw.recall10 (ratio) and
// search.hnsw.20k.p50 (ms) on PGlite with pgvector: 20,000 clustered
// vectors of 384 dimensions (a MiniLM-sized embedding) in one workspace,
// 100 queries of ten hits through the caller's scope, each answer compared
// with the exhaustive one over the same vectors. Loading the vectors (the
// index is built as they arrive) takes most of its time.
func BenchmarkHNSW(b *testing.B) {
	const n, dim, queries = 20_000, 384, 100
	ctx := context.Background()
	url := testenv.PGVector(b)
	e := newBenchEnv(b, func(tb testing.TB) storetest.Env { return openPGVectorURL(tb, url, 0) })
	rng := rand.New(rand.NewPCG(3, 84))
	vecs, centres := clusteredVectors(rng, n, dim, 50, 20)
	start := time.Now()
	ids := vectorCorpus(b, e.db, e.svc, e.p, e.ws, "minilm", vecs, 1000)
	if _, err := e.db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	b.Logf("stored and indexed %d vectors of %d dimensions in %v", n, dim, time.Since(start).Round(time.Second))
	q0 := around(rng, centres[0], pointSpread)
	plan, err := store.ExplainVectorSearch(ctx, e.db, e.p, kindex.Query{WorkspaceID: e.ws}, "minilm", q0)
	if err != nil || !strings.Contains(plan, "_hnsw") {
		b.Fatalf("the search does not use the HNSW index: %v\n%s", err, plan)
	}
	b.Logf("plan:\n%s", regexp.MustCompile(`'\[[^']*\]'`).ReplaceAllString(plan, "'[…]'"))
	before := store.IndexedSearches(e.db)
	var ds []time.Duration
	var found, wanted int
	for range queries {
		q := around(rng, centres[rng.IntN(len(centres))], pointSpread)
		t := time.Now()
		hits, err := e.db.SearchVectors(ctx, e.p, kindex.Query{WorkspaceID: e.ws, Limit: 10}, "minilm", q)
		ds = append(ds, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		got := map[string]bool{}
		for _, h := range hits {
			got[h.ObjectID] = true
		}
		for _, i := range exactNearest(vecs, q, 10) {
			wanted++
			if got[ids[i]] {
				found++
			}
		}
	}
	if n := store.IndexedSearches(e.db) - before; n != queries {
		b.Fatalf("%d of %d searches went through the index", n, queries)
	}
	figure.Report("search.hnsw.recall10", float64(found)/float64(wanted), "ratio")
	figure.Report(fmt.Sprintf("search.hnsw.%dk.p50", n/1000), figure.Millis(figure.Percentile(ds, 50)), "ms")
	// The exact search over the same vectors, for comparison: what a
	// PostgreSQL without pgvector does (every vector read and compared).
	exact := openPGVectorURL(b, url, math.MaxInt32).DB
	ds = ds[:0]
	for range 10 {
		q := around(rng, centres[rng.IntN(len(centres))], pointSpread)
		t := time.Now()
		if _, err := exact.SearchVectors(ctx, e.p, kindex.Query{WorkspaceID: e.ws, Limit: 10}, "minilm", q); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t))
	}
	figure.Report(fmt.Sprintf("search.exact.pglite.%dk.p50", n/1000), figure.Millis(figure.Percentile(ds, 50)), "ms")
}
