package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testReuploadTags: re-uploading the same bytes merges the new tags into
// the file when the uploader may change it, and leaves another owner's file
// as it was.
func testReuploadTags(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	up := func(p tenancy.Principal, tags ...string) (filemeta.Item, bool) {
		t.Helper()
		f, existing, err := w.svc.Upload(ctx, p, files.Upload{WorkspaceID: w.wsA.ID, Name: "a.txt", Content: strings.NewReader("same bytes"), Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return f, existing
	}
	first, _ := up(w.alice, "draft")
	again, existing := up(w.alice, "q4", "draft")
	if !existing || again.ID != first.ID || !slices.Equal(again.Tags, []string{"draft", "q4"}) {
		t.Fatalf("re-upload with a new tag: existing=%v tags=%v", existing, again.Tags)
	}
	if got, _ := w.svc.Get(ctx, w.alice, first.ID); !slices.Contains(got.Tags, "q4") {
		t.Fatalf("merged tag not kept: %v", got.Tags)
	}
	// bob (member) may not change alice's file: the upload still finds it,
	// and her tags stay as they were.
	bobs, existing := up(w.bob, "bob-tag")
	if !existing || bobs.ID != first.ID || slices.Contains(bobs.Tags, "bob-tag") {
		t.Fatalf("bob's re-upload of alice's file: existing=%v tags=%v", existing, bobs.Tags)
	}
}

// testAutoRuleOwner: a folder's auto-rule files only what its creator may
// file: a member's rule sorts the member's own uploads, not a colleague's;
// a manager's rule sorts everyone's.
func testAutoRuleOwner(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	// carol manages B; alice and bob are members of A. Give carol A too, as
	// a manager, to own a rule there.
	if err := w.env.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.carol.UserID, Role: tenancy.RoleManager}); err != nil {
		t.Fatal(err)
	}
	rule := func(p tenancy.Principal, name, r string) filemeta.Folder {
		t.Helper()
		f, err := w.svc.CreateFolder(ctx, p, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: name, AutoRule: r})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// Folders are tried by name: "a-alice" before "b-carol".
	alices := rule(w.alice, "a-alice", "name:*.md")
	carols := rule(w.carol, "b-carol", "name:*.md")
	up := func(p tenancy.Principal, name string) filemeta.Item {
		t.Helper()
		f, _, err := w.svc.Upload(ctx, p, files.Upload{WorkspaceID: w.wsA.ID, Name: name, Content: strings.NewReader(name)})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := up(w.alice, "mine.md"); f.FolderID != alices.ID {
		t.Errorf("alice's upload went to %q, want her folder", f.FolderID)
	}
	if f := up(w.bob, "bobs.md"); f.FolderID != carols.ID {
		t.Errorf("bob's upload went to %q, want the manager's folder (not alice's)", f.FolderID)
	}
	// A retag of bob's file in no folder is filed by the same rule.
	f := up(w.bob, "later.txt")
	rule(w.alice, "c-alice-tags", "tag:finance")
	tagged, err := w.svc.Update(ctx, w.bob, f.ID, filemeta.Update{AddTags: []string{"finance"}})
	if err != nil || tagged.FolderID != "" {
		t.Errorf("bob's retagged file filed into alice's folder: %q %v", tagged.FolderID, err)
	}
}
