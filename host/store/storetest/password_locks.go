package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// testPasswordLocks (issue 26 item 5): a content read with the password
// given for one file is shared by every file with its bytes, but only the
// file the password was given for reads it; another (same workspace or
// another) shows it waiting for its password, finds none of its text and
// reads none of it, until a password is given for it too. A new version of
// a file forgets the password given for the old bytes.
func testPasswordLocks(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	const bytes = "%PDF encrypted bytes"
	first := upload(t, w, w.alice, w.wsA.ID, "locked.pdf", bytes)
	same := upload(t, w, w.bob, w.wsA.ID, "again.pdf", bytes)
	other := upload(t, w, w.carol, w.wsB.ID, "copy.pdf", bytes)
	sha := first.SHA256
	if _, err := db.ClaimContent(ctx, w.t1.ID, sha, false); err != nil {
		t.Fatal(err)
	}
	if err := db.SetContentStatus(ctx, w.t1.ID, sha, kindex.StatusFailed, kindex.ReasonEncrypted+"locked.pdf needs its password"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first.ID, same.ID, other.ID} {
		if locked, err := db.PasswordLocked(ctx, id); err != nil || locked {
			t.Errorf("%s locked before any password: %v %v", id, locked, err)
		}
		if given, err := db.GivePassword(ctx, id); err != nil || given {
			t.Errorf("%s unlocked while its content waits for a password: %v %v", id, given, err)
		}
	}
	// Alice gives the password: the content is read with it.
	if ok, err := db.ClaimEncryptedContent(ctx, w.t1.ID, sha); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	chunks := chunk.Split([]content.Object{{ID: "p1", ContentType: content.Text, Data: "The quokka merger closes in March.", Ref: content.Ref{PageIndex: 1}}}, 0)
	if err := db.SaveContent(ctx, w.t1.ID, sha, content.Index{FileName: "locked.pdf", TotalObjects: 1}, chunks, kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveVectors(ctx, w.t1.ID, sha, "emb-3", chunks, [][]float32{{1, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	if given, err := db.GivePassword(ctx, first.ID); err != nil || !given {
		t.Fatalf("give alice's password: %v %v", given, err)
	}

	type reader struct {
		who string
		p   tenancy.Principal
		id  string
	}
	check := func(r reader, readable bool) {
		t.Helper()
		st, err := db.ContentState(ctx, r.p, r.id)
		if err != nil {
			t.Fatalf("%s: state: %v", r.who, err)
		}
		locked, err := db.PasswordLocked(ctx, r.id)
		if err != nil {
			t.Fatal(err)
		}
		chs, err := db.ContentChunks(ctx, r.p, r.id, kindex.ChunkFilter{})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := db.SearchLexical(ctx, r.p, kindex.Query{Text: "quokka merger", FileIDs: []string{r.id}})
		if err != nil {
			t.Fatal(err)
		}
		near, err := db.SearchVectors(ctx, r.p, kindex.Query{FileIDs: []string{r.id}}, "emb-3", []float32{1, 0, 0})
		if err != nil {
			t.Fatal(err)
		}
		if readable {
			if st.Status != kindex.StatusIndexed || st.Index.TotalObjects != 1 || locked || len(chs) != 1 || len(hits) != 1 || hits[0].FileID != r.id || len(near) != 1 {
				t.Errorf("%s cannot read its unlocked file: %+v locked %v, %d chunks, %d hits, %d near", r.who, st, locked, len(chs), len(hits), len(near))
			}
			return
		}
		if st.Status != kindex.StatusFailed || !strings.HasPrefix(st.Error, kindex.ReasonEncrypted) || st.Index.TotalObjects != 0 || len(st.Index.Objects) != 0 {
			t.Errorf("%s: locked file's state %+v, want failed as encrypted with nothing of the index", r.who, st)
		}
		if !locked || len(chs) != 0 || len(hits) != 0 || len(near) != 0 {
			t.Errorf("%s reads a locked file: locked %v, %d chunks, %d hits, %d near", r.who, locked, len(chs), len(hits), len(near))
		}
	}
	check(reader{"alice", w.alice, first.ID}, true)
	check(reader{"bob (same bytes, same workspace)", w.bob, same.ID}, false)
	check(reader{"carol (same bytes, another workspace)", w.carol, other.ID}, false)
	check(reader{"the tenant's admin", w.admin, other.ID}, false)
	// Bob reads alice's file (his workspace's), not his own.
	check(reader{"bob on alice's file", w.bob, first.ID}, true)
	// Search over everything finds the text through the unlocked file only.
	hits, err := db.SearchLexical(ctx, w.admin, kindex.Query{Text: "quokka"})
	if err != nil || len(hits) != 1 || hits[0].FileID != first.ID {
		t.Errorf("admin's search: %+v %v, want alice's file only", hits, err)
	}
	if hits, err := db.SearchLexical(ctx, w.carol, kindex.Query{Text: "quokka"}); err != nil || len(hits) != 0 {
		t.Errorf("carol's search: %+v %v", hits, err)
	}

	// A locked file names itself, never the file the content's reason
	// names; a failure for another reason is shown as it is.
	for _, c := range []struct{ reason, want string }{
		{kindex.ReasonWrongPassword + "the password given does not open locked.pdf", kindex.ReasonWrongPassword + "the password given does not open copy.pdf"},
		{kindex.ReasonEncrypted + "locked.pdf needs its password", kindex.ReasonEncrypted + "copy.pdf needs its password"},
		{"extractor pdf: invalid_document: broken", "extractor pdf: invalid_document: broken"},
	} {
		if err := db.SetContentStatus(ctx, w.t1.ID, sha, kindex.StatusFailed, c.reason); err != nil {
			t.Fatal(err)
		}
		if st, _ := db.ContentState(ctx, w.carol, other.ID); st.Status != kindex.StatusFailed || !strings.HasPrefix(st.Error, c.want) || strings.Contains(st.Error, "locked.pdf") {
			t.Errorf("content failed with %q: carol's copy shows %+v, want %q", c.reason, st, c.want)
		}
	}
	if err := db.SetContentStatus(ctx, w.t1.ID, sha, kindex.StatusIndexed, ""); err != nil {
		t.Fatal(err)
	}

	// Carol gives it: her file reads the content; bob's stays locked.
	if given, err := db.GivePassword(ctx, other.ID); err != nil || !given {
		t.Fatalf("give carol's password: %v %v", given, err)
	}
	check(reader{"carol after her password", w.carol, other.ID}, true)
	check(reader{"bob", w.bob, same.ID}, false)

	// New bytes for carol's file, then the old again: the password given
	// was for the old bytes, and a new version forgets it.
	for _, b := range []string{"%PDF other bytes", bytes} {
		if _, _, err := w.svc.SetContent(ctx, w.carol, other.ID, strings.NewReader(b), 0, "edit"); err != nil {
			t.Fatal(err)
		}
	}
	check(reader{"carol after new versions", w.carol, other.ID}, false)
}
