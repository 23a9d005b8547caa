package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/pdk/content"
)

// testContentExtractor: which extractor a content was given (or that none
// was, and why) is recorded per tenant and content, read back with the
// file's index state (by file and by content), kept when the index is
// saved, and replaced by the next record; a content with none recorded
// shows none.
func testContentExtractor(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	f := upload(t, w, w.alice, w.wsA.ID, "budget.pdf", "%PDF-1.7 a budget")
	other := upload(t, w, w.dave, w.wsC.ID, "budget.pdf", "%PDF-1.7 a budget") // the same bytes in tenant 2
	for _, c := range []struct {
		tenant, sha string
	}{{w.t1.ID, f.SHA256}, {w.t2.ID, other.SHA256}} {
		if _, err := db.ClaimContent(ctx, c.tenant, c.sha, false); err != nil {
			t.Fatal(err)
		}
	}
	read := func(tenantID, sha, fileID string) *kindex.ExtractorRecord {
		t.Helper()
		byContent, err := db.ContentStateOf(ctx, tenantID, sha)
		if err != nil {
			t.Fatal(err)
		}
		p := w.alice
		if tenantID == w.t2.ID {
			p = w.dave
		}
		byFile, err := db.ContentState(ctx, p, fileID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(byContent.Extractor, byFile.Extractor) {
			t.Fatalf("by content %+v, by file %+v", byContent.Extractor, byFile.Extractor)
		}
		return byFile.Extractor
	}
	if got := read(w.t1.ID, f.SHA256, f.ID); got != nil {
		t.Fatalf("nothing recorded yet, got %+v", got)
	}

	none := kindex.ExtractorRecord{ChosenBy: kindex.ChosenNone, Competitors: []string{"aaa-pdf", "aab-pdf"},
		Reason: "third-party plugins aaa-pdf, aab-pdf all claim application/pdf"}
	chosen := kindex.ExtractorRecord{Name: "pdf", Version: "1.0.0", SHA256: "f76132609ad3", Builtin: true,
		ChosenBy: kindex.ChosenBuiltin, Match: "application/pdf", Competitors: []string{"aaa-pdf"}}
	if err := db.SetContentExtractor(ctx, w.t2.ID, other.SHA256, none); err != nil {
		t.Fatal(err)
	}
	if err := db.SetContentExtractor(ctx, w.t1.ID, f.SHA256, chosen); err != nil {
		t.Fatal(err)
	}
	if got := read(w.t1.ID, f.SHA256, f.ID); got == nil || !reflect.DeepEqual(*got, chosen) {
		t.Fatalf("recorded %+v, read %+v", chosen, got)
	}
	if got := read(w.t2.ID, other.SHA256, other.ID); got == nil || !reflect.DeepEqual(*got, none) {
		t.Fatalf("the other tenant's record: %+v, want %+v", got, none)
	}
	// Saving the index keeps the record; a new record replaces it.
	if err := db.SaveContent(ctx, w.t1.ID, f.SHA256, content.Index{MIMEType: "application/pdf"}, nil, kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	if got := read(w.t1.ID, f.SHA256, f.ID); got == nil || got.Name != "pdf" {
		t.Fatalf("after saving the index: %+v", got)
	}
	op := kindex.ExtractorRecord{Name: "aaa-pdf", Version: "6.6.6", SHA256: "c6ff972a5b92", ChosenBy: kindex.ChosenOperator, Match: "application/pdf"}
	if err := db.SetContentExtractor(ctx, w.t1.ID, f.SHA256, op); err != nil {
		t.Fatal(err)
	}
	if got := read(w.t1.ID, f.SHA256, f.ID); got == nil || !reflect.DeepEqual(*got, op) {
		t.Fatalf("replaced by %+v, read %+v", op, got)
	}
	if got := read(w.t2.ID, other.SHA256, other.ID); got == nil || got.ChosenBy != kindex.ChosenNone {
		t.Fatalf("another tenant's record changed: %+v", got)
	}
}
