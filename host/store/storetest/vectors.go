package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// RunVectors runs the vector scenarios alone: for a store that can search
// vectors but cannot carry the whole suite (PGlite, which has pgvector but
// no LISTEN/NOTIFY across connections).
func RunVectors(t *testing.T, open Opener) {
	t.Run("Knowledge", func(t *testing.T) { testKnowledge(t, open) })
	t.Run("Vectors", func(t *testing.T) { testVectors(t, open) })
	t.Run("AddVectors", func(t *testing.T) { testAddVectors(t, open) })
}

// vecDoc is one indexed content with its chunks' vectors.
type vecDoc struct {
	file filemeta.Item
	vecs [][]float32
}

// indexVectors indexes n chunks (ten per page) of a file's content with the
// given vectors under model.
func indexVectors(t *testing.T, w *world, f filemeta.Item, model string, vecs [][]float32) vecDoc {
	t.Helper()
	ctx := context.Background()
	chunks := make([]kindex.Chunk, len(vecs))
	for i := range chunks {
		chunks[i] = kindex.Chunk{ID: fmt.Sprint(i), Seq: i, ObjectID: fmt.Sprintf("%s-%d", f.Name, i), ContentType: content.Text,
			Text: fmt.Sprintf("chunk %d of %s", i, f.Name), Ref: content.Ref{PageIndex: i/10 + 1}, Tokens: 5}
	}
	if _, err := w.env.DB.ClaimContent(ctx, f.TenantID, f.SHA256, false); err != nil {
		t.Fatal(err)
	}
	if err := w.env.DB.SaveContent(ctx, f.TenantID, f.SHA256, content.Index{}, chunks, kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	if err := w.env.DB.SaveVectors(ctx, f.TenantID, f.SHA256, model, chunks, vecs); err != nil {
		t.Fatal(err)
	}
	return vecDoc{file: f, vecs: vecs}
}

func randomVectors(rng *rand.Rand, n, dim int) [][]float32 {
	vs := make([][]float32, n)
	for i := range vs {
		vs[i] = make([]float32, dim)
		for j := range vs[i] {
			vs[i][j] = float32(rng.NormFloat64())
		}
	}
	return vs
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// exactTop is the reference answer: the object ids of the k chunks of docs
// nearest to q.
func exactTop(docs []vecDoc, q []float32, k int) []string {
	type scored struct {
		id    string
		score float64
	}
	var all []scored
	for _, d := range docs {
		for i, v := range d.vecs {
			all = append(all, scored{fmt.Sprintf("%s-%d", d.file.Name, i), cosine(q, v)})
		}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	ids := make([]string, 0, k)
	for _, s := range all[:min(k, len(all))] {
		ids = append(ids, s.id)
	}
	return ids
}

// testVectors: vector search never leaves the caller's scope, however near
// a vector outside it lies; only vectors of the query's model and dimension
// are compared; filters hold; the answer agrees with an exhaustive
// comparison (the approximate index of PostgreSQL with pgvector included).
func testVectors(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	if mode, err := db.VectorSearch(ctx); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("vector search: %s", mode)
	}
	const dim = 16
	rng := rand.New(rand.NewPCG(7, 11))
	q := randomVectors(rng, 1, dim)[0]
	near := func(scale float32) []float32 { // q plus a little noise
		v := slices.Clone(q)
		for i := range v {
			v[i] += scale * float32(rng.NormFloat64())
		}
		return v
	}
	// Alice's and pat's files in workspace A (alice, a member, reads both;
	// pat, personal, only hers); carol's in B and dave's in the other tenant
	// hold the vectors nearest to q: exactly q.
	aliceVecs := randomVectors(rng, 60, dim)
	patVecs := randomVectors(rng, 20, dim)
	patVecs[7] = near(0.05)
	carolVecs := randomVectors(rng, 20, dim)
	carolVecs[3] = slices.Clone(q)
	daveVecs := randomVectors(rng, 20, dim)
	daveVecs[5] = slices.Clone(q)
	a := indexVectors(t, w, upload(t, w, w.alice, w.wsA.ID, "a.txt", "alice's vectors"), "m", aliceVecs)
	pat := indexVectors(t, w, upload(t, w, w.pat, w.wsA.ID, "pat.txt", "pat's vectors"), "m", patVecs)
	carol := indexVectors(t, w, upload(t, w, w.carol, w.wsB.ID, "carol.txt", "carol's vectors"), "m", carolVecs)
	dave := indexVectors(t, w, upload(t, w, w.dave, w.wsC.ID, "dave.txt", "dave's vectors"), "m", daveVecs)
	// A content embedded with a model of another dimension, in alice's
	// workspace: searches of dimension 16 never see it, and the reverse.
	wide := indexVectors(t, w, upload(t, w, w.alice, w.wsA.ID, "wide.txt", "wide vectors"), "m", randomVectors(rng, 30, 24))

	search := func(p tenancy.Principal, qy kindex.Query, model string, v []float32) []kindex.Hit {
		t.Helper()
		hits, err := db.SearchVectors(ctx, p, qy, model, v)
		if err != nil {
			t.Fatalf("vector search %+v: %v", qy, err)
		}
		return hits
	}
	ids := func(hits []kindex.Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, h.ObjectID)
		}
		return out
	}
	recall := func(got []kindex.Hit, want []string) float64 {
		n := 0
		for _, h := range got {
			if slices.Contains(want, h.ObjectID) {
				n++
			}
		}
		return float64(n) / float64(len(want))
	}
	for _, c := range []struct {
		who      string
		p        tenancy.Principal
		readable []vecDoc
		top      string
	}{
		{"alice", w.alice, []vecDoc{a, pat}, "pat.txt-7"},
		{"bob", w.bob, []vecDoc{a, pat}, "pat.txt-7"},
		{"pat (personal)", w.pat, []vecDoc{pat}, "pat.txt-7"},
		{"carol", w.carol, []vecDoc{carol}, "carol.txt-3"},
		{"dave (other tenant)", w.dave, []vecDoc{dave}, "dave.txt-5"},
		{"admin", w.admin, []vecDoc{a, pat, carol}, "carol.txt-3"},
	} {
		hits := search(c.p, kindex.Query{}, "m", q)
		if len(hits) != 10 || hits[0].ObjectID != c.top {
			t.Errorf("%s: hits %v, want %s first", c.who, ids(hits), c.top)
			continue
		}
		readable := map[string]bool{}
		for _, d := range c.readable {
			readable[d.file.ID] = true
		}
		for _, h := range hits {
			if !readable[h.FileID] {
				t.Errorf("%s gets %s of file %s, outside the scope", c.who, h.ObjectID, h.FileName)
			}
		}
		if r := recall(hits, exactTop(c.readable, q, 10)); r < 0.9 {
			t.Errorf("%s: recall@10 %.2f against the exhaustive answer", c.who, r)
		}
		if !slices.IsSortedFunc(hits, func(x, y kindex.Hit) int { return cmp.Compare(y.Score, x.Score) }) {
			t.Errorf("%s: hits not best first: %+v", c.who, hits)
		}
	}
	if hits := search(w.carol, kindex.Query{Limit: 1}, "m", q); len(hits) != 1 || math.Abs(hits[0].Score-1) > 1e-5 {
		t.Errorf("the identical vector scores %+v, want 1", hits)
	}
	// Filters: a file (readable or not), a page, another workspace's layer.
	if hits := search(w.alice, kindex.Query{FileIDs: []string{a.file.ID}, Limit: 100}, "m", q); len(hits) != 60 {
		t.Errorf("alice's file only: %d hits", len(hits))
	} else if r := recall(hits[:10], exactTop([]vecDoc{a}, q, 10)); r < 0.9 {
		t.Errorf("alice's file only: recall@10 %.2f", r)
	}
	if hits := search(w.alice, kindex.Query{FileIDs: []string{carol.file.ID}}, "m", q); len(hits) != 0 {
		t.Errorf("alice names carol's file and gets %v", ids(hits))
	}
	if hits := search(w.alice, kindex.Query{Page: 2, FileIDs: []string{a.file.ID, pat.file.ID}, Limit: 50}, "m", q); len(hits) != 20 {
		t.Errorf("page 2 of alice's and pat's files: %d hits, want 20", len(hits))
	} else {
		for _, h := range hits {
			if h.Ref.PageIndex != 2 {
				t.Errorf("page filter let through %s (page %d)", h.ObjectID, h.Ref.PageIndex)
			}
		}
	}
	if hits := search(w.alice, kindex.Query{Layer: kindex.LayerInstance, WorkspaceID: w.wsB.ID}, "m", q); len(hits) != 0 {
		t.Errorf("alice in workspace B's layer: %v", ids(hits))
	}
	// Dimensions and models are never mixed.
	qWide := randomVectors(rng, 1, 24)[0]
	if hits := search(w.alice, kindex.Query{Limit: 100}, "m", qWide); len(hits) != 30 || recall(hits[:10], exactTop([]vecDoc{wide}, qWide, 10)) < 0.9 {
		t.Errorf("dimension 24: %v", ids(hits))
	}
	if hits := search(w.alice, kindex.Query{Limit: 100}, "m", q); len(hits) != 80 {
		t.Errorf("dimension 16 sees %d vectors, want alice's 60 and pat's 20", len(hits))
	}
	for _, c := range []struct {
		model string
		dim   int
	}{{"other", dim}, {"other", 24}, {"m", 8}, {"m", 3000}} {
		v := make([]float32, c.dim)
		v[0] = 1
		if hits := search(w.admin, kindex.Query{}, c.model, v); len(hits) != 0 {
			t.Errorf("model %s, dimension %d: %v", c.model, c.dim, ids(hits))
		}
	}
	// Re-embedding a content with another model replaces its vectors.
	reembedded := randomVectors(rng, 20, dim)
	reembedded[2] = slices.Clone(q)
	indexVectors(t, w, pat.file, "m2", reembedded)
	if hits := search(w.pat, kindex.Query{}, "m", q); len(hits) != 0 {
		t.Errorf("pat's old model still answers: %v", ids(hits))
	}
	if hits := search(w.pat, kindex.Query{}, "m2", q); len(hits) != 10 || hits[0].ObjectID != "pat.txt-2" {
		t.Errorf("pat's new model: %v", ids(hits))
	}
	// Bad input.
	nan := slices.Clone(q)
	nan[1] = float32(math.NaN())
	for _, c := range []struct {
		name string
		qy   kindex.Query
		vec  []float32
	}{{"NaN", kindex.Query{}, nan}, {"empty vector", kindex.Query{}, nil}, {"limit", kindex.Query{Limit: 101}, q}, {"layer", kindex.Query{Layer: "everything"}, q}} {
		if _, err := db.SearchVectors(ctx, w.alice, c.qy, "m", c.vec); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("search with %s: %v", c.name, err)
		}
	}
	chunks := []kindex.Chunk{{ID: "0"}}
	for name, vecs := range map[string][][]float32{"NaN": {nan}, "infinity": {{float32(math.Inf(1))}}, "empty": {{}}} {
		if err := db.SaveVectors(ctx, w.t1.ID, a.file.SHA256, "m", chunks, vecs); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("saving a vector with %s: %v", name, err)
		}
	}
	if err := db.SaveVectors(ctx, w.t1.ID, a.file.SHA256, "", chunks, [][]float32{q}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("saving vectors without a model: %v", err)
	}
	// Refused saves changed nothing.
	if hits := search(w.alice, kindex.Query{FileIDs: []string{a.file.ID}, Limit: 100}, "m", q); len(hits) != 60 {
		t.Errorf("after refused saves alice's file has %d vectors", len(hits))
	}
}
