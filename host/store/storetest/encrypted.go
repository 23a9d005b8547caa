package storetest

import (
	"context"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
)

// testEncryptedClaim (issue 26 item 5): a content is claimed for a
// password only while it waits for one (failed as encrypted, or after a
// wrong password): not while it is being indexed, not once indexed, not
// when it failed for another reason; and one claim wins.
func testEncryptedClaim(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	f := upload(t, w, w.alice, w.wsA.ID, "locked.pdf", "encrypted bytes")
	if _, err := db.ClaimContent(ctx, w.t1.ID, f.SHA256, false); err != nil {
		t.Fatal(err)
	}
	claim := func() bool {
		t.Helper()
		ok, err := db.ClaimEncryptedContent(ctx, w.t1.ID, f.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	set := func(s kindex.Status, reason string) {
		t.Helper()
		if err := db.SetContentStatus(ctx, w.t1.ID, f.SHA256, s, reason); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		status kindex.Status
		reason string
		want   bool
	}{
		{"being indexed", kindex.StatusPending, "", false},
		{"failed for another reason", kindex.StatusFailed, "extractor pdf: invalid_document: broken", false},
		{"a reason that only mentions encryption", kindex.StatusFailed, "permanent: encrypted: x", false},
		{"indexed", kindex.StatusIndexed, "", false},
		{"waits for its password", kindex.StatusFailed, kindex.ReasonEncrypted + "locked.pdf needs its password", true},
		{"after a wrong password", kindex.StatusFailed, kindex.ReasonWrongPassword + "the password given does not open locked.pdf", true},
	} {
		set(c.status, c.reason)
		if got := claim(); got != c.want {
			t.Errorf("%s: claimed %v, want %v", c.name, got, c.want)
		}
		if c.want {
			if claim() {
				t.Errorf("%s: claimed twice", c.name)
			}
			st, err := db.ContentStateOf(ctx, w.t1.ID, f.SHA256)
			if err != nil || st.Status != kindex.StatusPending || st.Error != "" {
				t.Errorf("%s: after the claim %+v %v, want pending without the reason", c.name, st, err)
			}
		}
	}
	if ok, err := db.ClaimEncryptedContent(ctx, w.t2.ID, f.SHA256); err != nil || ok {
		t.Errorf("another tenant's claim: %v %v", ok, err)
	}
}
