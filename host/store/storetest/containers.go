package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

func shaOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// testContainers: a container file's entries are recorded in order with
// their derived status (a refused entry's reason, a nested container, an
// inner file's content status); the text of an inner file is found through
// the archive by whoever can read the archive, with the entry's container
// path, and by nobody else; an on-demand extraction replaces or adds one
// entry; ten thousand entries are saved in one call.
func testContainers(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	archive := upload(t, w, w.alice, w.wsA.ID, "bundle.zip", "PK… the archive's bytes")
	inner := shaOf("inner report bytes")
	if _, err := db.ClaimContent(ctx, w.t1.ID, archive.SHA256, false); err != nil {
		t.Fatal(err)
	}
	entries := []kindex.ContainerEntry{
		{Path: "docs/report.txt", Size: 18, MIMEType: "text/plain", SHA256: inner},
		{Path: "docs/inner.tar", Container: true},
		{Path: "../../etc/passwd", Error: "the name climbs out of the archive", ErrorKind: "traversal"},
		{Path: "docs/inner.tar/deep.zip", Container: true, Error: "nested deeper than 5", ErrorKind: "depth"},
	}
	if err := db.SaveContainerEntries(ctx, w.t1.ID, archive.SHA256, entries); err != nil {
		t.Fatal(err)
	}
	got, err := db.ContainerEntries(ctx, w.alice, archive.ID)
	if err != nil || len(got) != 4 {
		t.Fatalf("entries: %+v %v", got, err)
	}
	want := []struct{ status, err string }{{"pending", ""}, {"indexed", ""}, {"failed", "the name climbs out of the archive"}, {"failed", "nested deeper than 5"}}
	for i, e := range got {
		if e.Path != "bundle.zip/"+entries[i].Path || e.Status != want[i].status || e.Error != want[i].err || e.Container != entries[i].Container {
			t.Errorf("entry %d: %+v, want %s %q", i, e, want[i].status, want[i].err)
		}
	}
	if got[2].ErrorKind != "traversal" || got[0].SHA256 != inner || got[0].Size != 18 || got[0].MIMEType != "text/plain" {
		t.Errorf("entry fields: %+v", got)
	}

	// The inner file's content is indexed: its entry says so, and its text
	// is found through the archive, by the archive's readers only.
	if _, err := db.ClaimContent(ctx, w.t1.ID, inner, false); err != nil {
		t.Fatal(err)
	}
	obj := []content.Object{{ID: "p1", ContentType: content.Text, Data: "Quarterly zeppelin maintenance costs rose sharply.", Ref: content.Ref{Paragraph: 1}}}
	if err := db.SaveContent(ctx, w.t1.ID, inner, content.Index{FileName: "report.txt"}, chunk.Split(obj, 0), kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ContainerEntries(ctx, w.alice, archive.ID); got[0].Status != "indexed" {
		t.Errorf("inner file's status: %+v", got[0])
	}
	hits, err := db.SearchLexical(ctx, w.alice, kindex.Query{Text: "zeppelin maintenance"})
	if err != nil || len(hits) != 1 || hits[0].FileID != archive.ID || hits[0].Ref.ContainerPath != "bundle.zip/docs/report.txt" || hits[0].Ref.Paragraph != 1 {
		t.Fatalf("search through the archive: %+v %v", hits, err)
	}
	if hits, err := db.SearchLexical(ctx, w.alice, kindex.Query{Text: "zeppelin", FileIDs: []string{archive.ID}, WorkspaceID: w.wsA.ID}); err != nil || len(hits) != 1 {
		t.Fatalf("search filtered to the archive: %+v %v", hits, err)
	}
	for _, c := range []struct {
		who string
		p   tenancy.Principal
	}{{"carol (another workspace)", w.carol}, {"dave (another tenant)", w.dave}} {
		if hits, err := db.SearchLexical(ctx, c.p, kindex.Query{Text: "zeppelin maintenance"}); err != nil || len(hits) != 0 {
			t.Errorf("%s finds the archive's text: %+v %v", c.who, hits, err)
		}
		if _, err := db.ContainerEntries(ctx, c.p, archive.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s lists the archive's entries: %v", c.who, err)
		}
	}
	// Vectors of the inner file are found the same way.
	innerChunks := chunk.Split(obj, 0)
	if err := db.SaveVectors(ctx, w.t1.ID, inner, "emb-3", innerChunks, [][]float32{{0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	near, err := db.SearchVectors(ctx, w.alice, kindex.Query{}, "emb-3", []float32{0, 0.1, 1})
	if err != nil || len(near) != 1 || near[0].FileID != archive.ID || near[0].Ref.ContainerPath != "bundle.zip/docs/report.txt" || near[0].Score < 0.9 {
		t.Fatalf("vector search through the archive: %+v %v", near, err)
	}
	for _, p := range []tenancy.Principal{w.carol, w.dave} {
		if near, err := db.SearchVectors(ctx, p, kindex.Query{}, "emb-3", []float32{0, 0, 1}); err != nil || len(near) != 0 {
			t.Errorf("vector search by an outsider: %+v %v", near, err)
		}
	}
	// A second upload of the same archive carries the same entries, named
	// from its own name.
	copyOf := upload(t, w, w.bob, w.wsA.ID, "bundle-copy.zip", "PK… the archive's bytes")
	if got, err := db.ContainerEntries(ctx, w.bob, copyOf.ID); err != nil || len(got) != 4 || got[0].Path != "bundle-copy.zip/docs/report.txt" {
		t.Fatalf("entries of the copy: %d %v", len(got), err)
	}

	// On demand: a failed entry gets its bytes; an unlisted one is added.
	fixed := kindex.ContainerEntry{Path: "docs/inner.tar/deep.zip", Container: true}
	added := kindex.ContainerEntry{Path: "late/notes.txt", Size: 5, SHA256: shaOf("notes"), MIMEType: "text/plain"}
	for _, e := range []kindex.ContainerEntry{fixed, added} {
		if err := db.PutContainerEntry(ctx, w.t1.ID, archive.SHA256, e); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = db.ContainerEntriesForIndexing(ctx, w.t1.ID, archive.SHA256)
	if len(got) != 5 || got[3].Status != "indexed" || got[3].Error != "" || got[4].Path != added.Path || got[4].Status != "pending" {
		t.Fatalf("after on-demand updates: %+v", got)
	}
	if err := db.PutContainerEntry(ctx, w.t1.ID, archive.SHA256, kindex.ContainerEntry{}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("an entry without a path: %v", err)
	}

	// Ten thousand entries in one save, replacing the earlier ones.
	many := make([]kindex.ContainerEntry, 10_000)
	for i := range many {
		many[i] = kindex.ContainerEntry{Path: fmt.Sprintf("d/f%05d.txt", i), Size: 3, SHA256: shaOf(fmt.Sprint(i))}
	}
	if err := db.SaveContainerEntries(ctx, w.t1.ID, archive.SHA256, many); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ContainerEntries(ctx, w.alice, archive.ID); err != nil || len(got) != 10_000 || got[9_999].Path != "bundle.zip/"+many[9_999].Path {
		t.Fatalf("10,000 entries: %d %v", len(got), err)
	}
	// A container nobody claimed has nowhere to keep entries.
	if err := db.SaveContainerEntries(ctx, w.t1.ID, shaOf("unclaimed"), entries[:1]); err == nil {
		t.Error("entries saved for a container content that does not exist")
	}
}
