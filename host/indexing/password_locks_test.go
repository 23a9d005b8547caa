package indexing_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// TestLockedContainerExtractsNothing (issue 26 item 5): a container whose
// content was read with a password given for another file with its bytes
// lists no entries and extracts none on demand (the document tools' path)
// until a password is given for it; then both work.
func TestLockedContainerExtractsNothing(t *testing.T) {
	ctx := context.Background()
	c := newContainerEnv(t)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("notes/plan.txt")
	w.Write([]byte("The okapi survey starts in May."))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f, st, entries := c.ingest(t, "bundle.zip", buf.Bytes(), time.Minute, 1<<30)
	if st.Status != kindex.StatusIndexed || len(entries) != 1 {
		t.Fatalf("archive: %+v, %d entries", st, len(entries))
	}
	// As after a password given for another file with these bytes: the
	// content is marked read with a password (the claim marks it).
	if err := c.db.SetContentStatus(ctx, f.TenantID, f.SHA256, kindex.StatusFailed, kindex.ReasonEncrypted+"bundle.zip needs its password"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.db.ClaimEncryptedContent(ctx, f.TenantID, f.SHA256); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if err := c.db.SetContentStatus(ctx, f.TenantID, f.SHA256, kindex.StatusIndexed, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := c.entries.Entries(ctx, c.p, f.ID); err != nil || len(got) != 0 {
		t.Errorf("a locked container's entries: %+v %v", got, err)
	}
	if e, err := c.entries.ExtractEntry(ctx, c.p, f.ID, "bundle.zip/notes/plan.txt"); !errors.Is(err, tenancy.ErrConflict) {
		t.Errorf("a locked container's entry extracted: %+v %v", e, err)
	}
	if hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: "okapi survey"}); err != nil || len(hits) != 0 {
		t.Errorf("a locked container's text found: %+v %v", hits, err)
	}
	if given, err := c.db.GivePassword(ctx, f.ID); err != nil || !given {
		t.Fatalf("give: %v %v", given, err)
	}
	if got, err := c.entries.Entries(ctx, c.p, f.ID); err != nil || len(got) != 1 {
		t.Errorf("the unlocked container's entries: %+v %v", got, err)
	}
	if e, err := c.entries.ExtractEntry(ctx, c.p, f.ID, "bundle.zip/notes/plan.txt"); err != nil || e.Status != string(kindex.StatusIndexed) {
		t.Errorf("the unlocked container's entry: %+v %v", e, err)
	}
	if hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: "okapi survey"}); err != nil || len(hits) != 1 {
		t.Errorf("the unlocked container's text: %+v %v", hits, err)
	}
}
