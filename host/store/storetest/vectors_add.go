package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// testAddVectors: AddVectors adds the vectors of some chunks of a content
// beside those it has (the pages of an on-demand PDF, embedded as they are
// read), replaces the vectors of the chunks it names again, and leaves
// SaveVectors the one that replaces a content's vectors; searches find
// the added vectors (through pgvector's typed tables where they exist).
func testAddVectors(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	const dim = 16
	rng := rand.New(rand.NewPCG(3, 5))
	f := upload(t, w, w.alice, w.wsA.ID, "manual.pdf", "an on-demand manual")
	if _, err := db.ClaimContent(ctx, f.TenantID, f.SHA256, false); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveContent(ctx, f.TenantID, f.SHA256, content.Index{Structure: map[string]any{kindex.StructOnDemand: true}}, nil, kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	// Three pages of ten chunks, added (chunks, then vectors) page by page.
	page := func(n int) []kindex.Chunk {
		out := make([]kindex.Chunk, 10)
		for i := range out {
			id := fmt.Sprintf("page-%d#%d", n, i)
			out[i] = kindex.Chunk{ID: id, Seq: i, ObjectID: fmt.Sprintf("page-%d", n), ContentType: content.Text,
				Text: "text " + id, Ref: content.Ref{PageIndex: n}, Tokens: 3}
		}
		if err := db.AddContentPages(ctx, f.TenantID, f.SHA256, []int{n}, nil, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	q := randomVectors(rng, 1, dim)[0]
	vecs := map[int][][]float32{}
	for n := 1; n <= 3; n++ {
		vecs[n] = randomVectors(rng, 10, dim)
	}
	vecs[2][4] = slices.Clone(q) // page 2's chunk 4 is the query itself
	chunks := map[int][]kindex.Chunk{}
	for n := 1; n <= 3; n++ {
		chunks[n] = page(n)
		if err := db.AddVectors(ctx, f.TenantID, f.SHA256, "m", chunks[n], vecs[n]); err != nil {
			t.Fatalf("page %d: %v", n, err)
		}
	}
	search := func(limit int) []kindex.Hit {
		t.Helper()
		hits, err := db.SearchVectors(ctx, w.alice, kindex.Query{FileIDs: []string{f.ID}, Limit: limit}, "m", q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	if hits := search(100); len(hits) != 30 || hits[0].ID != "page-2#4" || hits[0].Ref.PageIndex != 2 {
		t.Fatalf("after adding three pages: %d hits, first %+v; want 30, page-2#4", len(hits), hits)
	}
	// Adding page 1's chunk 0 again with the query's vector replaces its
	// vector (one row per chunk), and keeps every other.
	if err := db.AddVectors(ctx, f.TenantID, f.SHA256, "m", chunks[1][:1], [][]float32{slices.Clone(q)}); err != nil {
		t.Fatal(err)
	}
	hits := search(100)
	if len(hits) != 30 {
		t.Fatalf("after re-adding a chunk: %d hits, want 30", len(hits))
	}
	top := []string{hits[0].ID, hits[1].ID}
	slices.Sort(top)
	if !slices.Equal(top, []string{"page-1#0", "page-2#4"}) || hits[1].Score < 0.999 {
		t.Fatalf("after re-adding page-1#0 as the query: top %v (%.3f)", top, hits[1].Score)
	}
	// Another user's scope sees none of them.
	if hits, err := db.SearchVectors(ctx, w.carol, kindex.Query{}, "m", q); err != nil || len(hits) != 0 {
		t.Fatalf("carol finds %d of alice's vectors (%v)", len(hits), err)
	}
	// SaveVectors still replaces the content's vectors: page 3's alone.
	if err := db.SaveVectors(ctx, f.TenantID, f.SHA256, "m", chunks[3], vecs[3]); err != nil {
		t.Fatal(err)
	}
	if hits := search(100); len(hits) != 10 || hits[0].Ref.PageIndex != 3 {
		t.Fatalf("after SaveVectors of page 3: %d hits", len(hits))
	}
	// Bad input changes nothing.
	for _, c := range []struct {
		name   string
		model  string
		chunks []kindex.Chunk
		vecs   [][]float32
	}{
		{"fewer vectors than chunks", "m", chunks[1], vecs[1][:3]},
		{"no model", "", chunks[1], vecs[1]},
		{"empty vector", "m", chunks[1][:1], [][]float32{{}}},
	} {
		if err := db.AddVectors(ctx, f.TenantID, f.SHA256, c.model, c.chunks, c.vecs); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if hits := search(100); len(hits) != 10 {
		t.Fatalf("after refused additions: %d hits, want 10", len(hits))
	}
}
