package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// testContentPages: an on-demand content's pages are added as they are
// read (chunks into the lexical index, summaries and the extracted pages
// into its index), concurrent additions lose nothing and store a page
// once, and a content's chunks are read back in order, filtered, in the
// reader's scope only.
func testContentPages(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	f := upload(t, w, w.alice, w.wsA.ID, "manual.pdf", "a large manual")
	if _, err := db.ClaimContent(ctx, w.t1.ID, f.SHA256, false); err != nil {
		t.Fatal(err)
	}
	idx := content.Index{FileName: f.Name, MIMEType: "application/pdf", Structure: map[string]any{"pages": 10, kindex.StructOnDemand: true, kindex.StructExtractedPages: []int{}}, Objects: []content.Summary{}}
	if err := db.SaveContent(ctx, w.t1.ID, f.SHA256, idx, nil, kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	page := func(n int, text, section string) ([]content.Summary, []kindex.Chunk) {
		o := content.Object{ID: "page-" + string(rune('0'+n)), ContentType: content.Text, Data: text, Ref: content.Ref{PageIndex: n, SectionID: section}}
		return []content.Summary{content.Summarize(o)}, chunk.Split([]content.Object{o}, 0)
	}
	// Concurrent additions of different pages and of the same page.
	var wg sync.WaitGroup
	for _, n := range []int{3, 5, 5, 7} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, c := page(n, "Text of page "+string(rune('0'+n))+" about printers.", map[int]string{3: "2", 5: "2.1", 7: "3"}[n])
			if err := db.AddContentPages(ctx, w.t1.ID, f.SHA256, []int{n}, s, c); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	st, err := db.ContentState(ctx, w.alice, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := kindex.ExtractedPages(st.Index); !slices.Equal(got, []int{3, 5, 7}) || st.Index.TotalObjects != 3 || len(st.Index.Objects) != 3 || !ondemand.Is(st.Index) {
		t.Fatalf("after adding pages: extracted %v, %d objects %+v", got, st.Index.TotalObjects, st.Index.Objects)
	}
	all, err := db.ContentChunks(ctx, w.alice, f.ID, kindex.ChunkFilter{})
	if err != nil || len(all) != 3 || all[0].Ref.PageIndex != 3 || all[2].Ref.PageIndex != 7 {
		t.Fatalf("chunks: %+v %v", all, err)
	}
	for _, c := range []struct {
		name string
		flt  kindex.ChunkFilter
		want []int // pages
	}{
		{"pages", kindex.ChunkFilter{Pages: []int{5, 7, 9}}, []int{5, 7}},
		{"section and below", kindex.ChunkFilter{Section: "2"}, []int{3, 5}},
		{"subsection", kindex.ChunkFilter{Section: "2.1"}, []int{5}},
		{"LIKE wildcards are literal", kindex.ChunkFilter{Section: "_"}, nil},
		{"types", kindex.ChunkFilter{Types: []content.Type{content.Image}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := db.ContentChunks(ctx, w.alice, f.ID, c.flt)
			if err != nil {
				t.Fatal(err)
			}
			var pages []int
			for _, ch := range got {
				pages = append(pages, ch.Ref.PageIndex)
			}
			if !slices.Equal(pages, c.want) {
				t.Fatalf("pages %v, want %v", pages, c.want)
			}
		})
	}
	// By the content's sha256 (access checked elsewhere, e.g. on the
	// container an inner file is in): the same state and chunks, in its
	// tenant only.
	if st2, err := db.ContentStateOf(ctx, w.t1.ID, f.SHA256); err != nil || !slices.Equal(kindex.ExtractedPages(st2.Index), []int{3, 5, 7}) || st2.Status != kindex.StatusIndexed || st2.Index.TotalObjects != 3 {
		t.Fatalf("content state by sha256: %+v %v", st2, err)
	}
	if got, err := db.ContentChunksOf(ctx, w.t1.ID, f.SHA256, kindex.ChunkFilter{Section: "2"}); err != nil || len(got) != 2 || got[0].Ref.PageIndex != 3 || got[1].Ref.PageIndex != 5 || got[0].ID != all[0].ID {
		t.Fatalf("chunks by sha256, section 2: %+v %v", got, err)
	}
	if _, err := db.ContentStateOf(ctx, w.t2.ID, f.SHA256); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("content state in another tenant: %v", err)
	}
	if got, err := db.ContentChunksOf(ctx, w.t2.ID, f.SHA256, kindex.ChunkFilter{}); err != nil || len(got) != 0 {
		t.Fatalf("chunks in another tenant: %d %v", len(got), err)
	}
	// The added pages are found by their words.
	hits, err := db.SearchLexical(ctx, w.alice, kindex.Query{Text: "printers", FileIDs: []string{f.ID}})
	if err != nil || len(hits) != 3 {
		t.Fatalf("search of added pages: %d hits %v", len(hits), err)
	}
	// Outside the file's readers nothing is read.
	for _, p := range []tenancy.Principal{w.carol, w.dave} {
		if got, err := db.ContentChunks(ctx, p, f.ID, kindex.ChunkFilter{}); err != nil || len(got) != 0 {
			t.Fatalf("%s reads %d chunks (%v)", p.UserID, len(got), err)
		}
	}
	if err := db.AddContentPages(ctx, w.t1.ID, "no-such-content", []int{1}, nil, nil); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("pages of an unknown content: %v", err)
	}
}
