package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// testKnowledge: a content is claimed once per tenant, its chunks are found
// by their words, and a search returns only chunks of files the caller can
// read, in the asked layer and filters.
func testKnowledge(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	report := upload(t, w, w.alice, w.wsA.ID, "q4-report.txt", "the Q4 report")
	objects := []content.Object{
		{ID: "p1", ContentType: content.Text, Data: "Revenue in the fourth quarter reached 12.5 million CHF.", Ref: content.Ref{PageIndex: 1, SectionID: "results"}},
		{ID: "p2", ContentType: content.Text, Data: "Headcount grew to 140 employees in Zürich and Lausanne.", Ref: content.Ref{PageIndex: 2, SectionID: "people"}},
		{ID: "img", ContentType: content.Image, Data: "", Ref: content.Ref{PageIndex: 2}},
		// Page 3 is one the document hides (as a hidden slide would be).
		{ID: "p3", ContentType: content.Text, Data: "Outlook: revenue growth of 8 percent expected; revenue risks are currency and energy.", Ref: content.Ref{PageIndex: 3, SectionID: "outlook"},
			Metadata: map[string]any{"hidden": true}},
	}
	chunks := chunk.Split(objects, 0)
	if len(chunks) != 3 {
		t.Fatalf("%d chunks", len(chunks))
	}
	idx := content.Index{FileName: "q4-report.txt", MIMEType: "text/plain", TotalObjects: len(objects), Structure: map[string]any{"pages": 3}}
	for _, o := range objects {
		idx.Objects = append(idx.Objects, content.Summarize(o))
	}

	first, err := db.ClaimContent(ctx, w.t1.ID, report.SHA256, false)
	if err != nil || !first {
		t.Fatalf("first claim: %v %v", first, err)
	}
	if again, err := db.ClaimContent(ctx, w.t1.ID, report.SHA256, false); err != nil || again {
		t.Fatalf("second claim of the same bytes: %v %v", again, err)
	}
	if other, err := db.ClaimContent(ctx, w.t2.ID, report.SHA256, false); err != nil || !other {
		t.Fatalf("another tenant claims its own copy: %v %v", other, err)
	}
	// A pending content is taken again only by a retry.
	if again, err := db.ClaimContent(ctx, w.t1.ID, report.SHA256, true); err != nil || !again {
		t.Fatalf("retry reclaims a pending content: %v %v", again, err)
	}
	if err := db.SaveContent(ctx, w.t1.ID, report.SHA256, idx, chunks, kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	if again, err := db.ClaimContent(ctx, w.t1.ID, report.SHA256, true); err != nil || again {
		t.Fatalf("an indexed content is never reclaimed: %v %v", again, err)
	}
	// Vectors: exact cosine search in the same scope as the words.
	vecs := [][]float32{{1, 0, 0}, {0, 1, 0}, {0.9, 0.1, 0}}
	if err := db.SaveVectors(ctx, w.t1.ID, report.SHA256, "emb-3", chunks, vecs); err != nil {
		t.Fatal(err)
	}
	near, err := db.SearchVectors(ctx, w.alice, kindex.Query{}, "emb-3", []float32{1, 0.05, 0})
	if err != nil || len(near) != 3 || near[0].ObjectID != "p1" || near[1].ObjectID != "p3" || near[0].Score < near[1].Score {
		t.Fatalf("vector search: %+v %v", near, err)
	}
	if near, err := db.SearchVectors(ctx, w.alice, kindex.Query{Page: 2}, "emb-3", []float32{1, 0, 0}); err != nil || len(near) != 1 || near[0].ObjectID != "p2" {
		t.Fatalf("vector search with a page filter: %+v %v", near, err)
	}
	for _, c := range []struct {
		who   string
		p     tenancy.Principal
		model string
		dim   int
	}{{"carol", w.carol, "emb-3", 3}, {"dave", w.dave, "emb-3", 3}, {"alice, other model", w.alice, "other", 3}, {"alice, other dimension", w.alice, "emb-3", 4}} {
		if near, err := db.SearchVectors(ctx, c.p, kindex.Query{}, c.model, make([]float32, c.dim)); err != nil || len(near) != 0 {
			t.Errorf("%s: %d vector hits, %v", c.who, len(near), err)
		}
	}
	if err := db.SaveVectors(ctx, w.t1.ID, report.SHA256, "emb-3", chunks, vecs[:1]); err == nil {
		t.Error("misaligned vectors accepted")
	}
	st, err := db.ContentState(ctx, w.bob, report.ID)
	if err != nil || st.Status != kindex.StatusIndexed || st.Index.TotalObjects != 4 || len(st.Index.Objects) != 4 {
		t.Fatalf("content state: %+v %v", st, err)
	}
	if _, err := db.ContentState(ctx, w.carol, report.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("carol sees the state: %v", err)
	}

	search := func(p tenancy.Principal, q kindex.Query) []kindex.Hit {
		t.Helper()
		hits, err := db.SearchLexical(ctx, p, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		return hits
	}
	hits := search(w.alice, kindex.Query{Text: "What was the revenue?"})
	if len(hits) != 2 || hits[0].ObjectID != "p3" || hits[0].FileID != report.ID || hits[0].Ref.PageIndex != 3 || hits[1].ObjectID != "p1" {
		t.Fatalf("revenue hits: %+v", hits)
	}
	if hits := search(w.alice, kindex.Query{Text: "zürich employees", Page: 2}); len(hits) != 1 || hits[0].ObjectID != "p2" {
		t.Fatalf("page filter: %+v", hits)
	}
	if hits := search(w.alice, kindex.Query{Text: "revenue", Section: "results"}); len(hits) != 1 || hits[0].ObjectID != "p1" {
		t.Fatalf("section filter: %+v", hits)
	}
	// What the document hides is marked, and search leaves it out or finds
	// only it when asked; vectors filter alike.
	if !hits[0].Hidden || hits[1].Hidden {
		t.Fatalf("hidden marks: %v %v", hits[0].Hidden, hits[1].Hidden)
	}
	if hits := search(w.alice, kindex.Query{Text: "revenue", Hidden: kindex.HiddenExclude}); len(hits) != 1 || hits[0].ObjectID != "p1" {
		t.Fatalf("hidden excluded: %+v", hits)
	}
	if hits := search(w.alice, kindex.Query{Text: "revenue", Hidden: kindex.HiddenOnly}); len(hits) != 1 || hits[0].ObjectID != "p3" || !hits[0].Hidden {
		t.Fatalf("hidden only: %+v", hits)
	}
	if near, err := db.SearchVectors(ctx, w.alice, kindex.Query{Hidden: kindex.HiddenExclude}, "emb-3", []float32{1, 0.05, 0}); err != nil || len(near) != 2 || near[0].ObjectID != "p1" || near[1].ObjectID != "p2" {
		t.Fatalf("vector search without hidden chunks: %+v %v", near, err)
	}
	if hits := search(w.alice, kindex.Query{Text: "revenue", Layer: kindex.LayerInstance, WorkspaceID: w.wsB.ID}); len(hits) != 0 {
		t.Fatalf("another workspace's layer: %+v", hits)
	}
	for _, c := range []struct {
		who  string
		p    tenancy.Principal
		want int
	}{{"bob (same workspace)", w.bob, 2}, {"pat (personal)", w.pat, 0}, {"carol (other workspace)", w.carol, 0}, {"dave (other tenant)", w.dave, 0}, {"other admin", w.daveAdmin, 0}, {"admin", w.admin, 2}} {
		if got := len(search(c.p, kindex.Query{Text: "revenue"})); got != c.want {
			t.Errorf("%s finds %d chunks, want %d", c.who, got, c.want)
		}
	}
	// Carol uploads the same bytes: her search finds the chunks through her
	// own file, never alice's.
	mine := upload(t, w, w.carol, w.wsB.ID, "copy.txt", "the Q4 report")
	if hits := search(w.carol, kindex.Query{Text: "revenue"}); len(hits) != 2 || hits[0].FileID != mine.ID {
		t.Fatalf("carol's copy: %+v", hits)
	}
	// Promoted to the shared layer, alice's file is found tenant-wide there.
	shared := true
	if _, err := w.svc.Update(ctx, w.admin, report.ID, filemeta.Update{Shared: &shared}); err != nil {
		t.Fatal(err)
	}
	if hits := search(w.pat, kindex.Query{Text: "revenue", Layer: kindex.LayerShared}); len(hits) != 2 || hits[0].FileID != report.ID {
		t.Fatalf("shared layer: %+v", hits)
	}
	for _, q := range []kindex.Query{{Text: "  ?!  "}, {Text: "revenue", Limit: 500}, {Text: "x revenue", Layer: "global"}, {Text: "revenue", Layer: kindex.LayerInstance}} {
		if _, err := db.SearchLexical(ctx, w.alice, q); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("query %+v: %v", q, err)
		}
	}
	// Query syntax of either database is not interpreted.
	if _, err := db.SearchLexical(ctx, w.alice, kindex.Query{Text: `revenue" OR NEAR(x) * ) | !& :`}); err != nil {
		t.Fatalf("hostile query text: %v", err)
	}
	// Re-indexing replaces the chunks.
	if err := db.SaveContent(ctx, w.t1.ID, report.SHA256, idx, chunks[:1], kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	if hits := search(w.alice, kindex.Query{Text: "revenue"}); len(hits) != 1 {
		t.Fatalf("after re-indexing: %+v", hits)
	}
	if near, err := db.SearchVectors(ctx, w.alice, kindex.Query{}, "emb-3", []float32{1, 0, 0}); err != nil || len(near) != 0 {
		t.Fatalf("vectors of replaced chunks survive: %+v %v", near, err)
	}
}
