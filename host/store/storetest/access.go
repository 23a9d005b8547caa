package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

func upload(t *testing.T, w *world, p tenancy.Principal, ws, name, content string) filemeta.Item {
	t.Helper()
	f, _, err := w.svc.Upload(context.Background(), p, files.Upload{WorkspaceID: ws, Name: name, Content: strings.NewReader(content)})
	if err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
	return f
}

func listed(t *testing.T, w *world, p tenancy.Principal, flt filemeta.Filter, id string) bool {
	t.Helper()
	flt.Limit = 1000
	page, err := w.svc.List(context.Background(), p, flt)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range page.Items {
		if f.ID == id {
			return true
		}
	}
	return false
}

// errIs compares an error with the expected sentinel (nil means success).
func errIs(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

// testAccessMatrix: every user of the cast against a file and a folder
// alice made in workspace A. Nothing is read, listed, found by the duplicate
// check or changed across a boundary it should not cross.
func testAccessMatrix(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	var (
		ok        error
		notFound  = tenancy.ErrNotFound
		forbidden = tenancy.ErrForbidden
	)
	// dup: "same" finds alice's file, "new" stores a separate one.
	rows := []struct {
		who                     string
		p                       tenancy.Principal
		get                     error
		list                    bool
		dup                     string // "same", "new", or the error's text
		dupErr                  error
		update, delete, share   error
		folderGet, folderRename error
	}{
		{"alice (owner, member)", w.alice, ok, true, "same", nil, ok, ok, forbidden, ok, ok},
		{"bob (member)", w.bob, ok, true, "same", nil, forbidden, forbidden, forbidden, ok, forbidden},
		{"victor (viewer)", w.victor, ok, true, "", forbidden, forbidden, forbidden, forbidden, ok, forbidden},
		{"pat (personal)", w.pat, notFound, false, "new", nil, notFound, notFound, notFound, notFound, notFound},
		{"carol (other workspace)", w.carol, notFound, false, "", notFound, notFound, notFound, notFound, notFound, notFound},
		{"tenant admin", w.admin, ok, true, "same", nil, ok, ok, ok, ok, ok},
		{"dave (other tenant)", w.dave, notFound, false, "", notFound, notFound, notFound, notFound, notFound, notFound},
		{"other tenant's admin", w.daveAdmin, notFound, false, "", notFound, notFound, notFound, notFound, notFound, notFound},
	}
	for i, r := range rows {
		t.Run(r.who, func(t *testing.T) {
			name, content := fmt.Sprintf("report-%d.pdf", i), fmt.Sprintf("bytes %d", i)
			f := upload(t, w, w.alice, w.wsA.ID, name, content)
			folder, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: fmt.Sprintf("folder-%d", i)})
			if err != nil {
				t.Fatal(err)
			}

			if _, err := w.svc.Get(ctx, r.p, f.ID); !errIs(err, r.get) {
				t.Errorf("get: %v, want %v", err, r.get)
			}
			if _, rd, err := w.svc.Open(ctx, r.p, f.ID); !errIs(err, r.get) {
				t.Errorf("open: %v, want %v", err, r.get)
			} else if err == nil {
				rd.Close()
			}
			if got := listed(t, w, r.p, filemeta.Filter{}, f.ID); got != r.list {
				t.Errorf("listed across workspaces: %v, want %v", got, r.list)
			}
			if got := listed(t, w, r.p, filemeta.Filter{WorkspaceID: w.wsA.ID}, f.ID); got != r.list {
				t.Errorf("listed in workspace A: %v, want %v", got, r.list)
			}
			d, existing, err := w.svc.Upload(ctx, r.p, files.Upload{WorkspaceID: w.wsA.ID, Name: name, Content: strings.NewReader(content)})
			switch {
			case r.dupErr != nil:
				if !errors.Is(err, r.dupErr) {
					t.Errorf("duplicate upload: %v, want %v", err, r.dupErr)
				}
			case err != nil:
				t.Errorf("duplicate upload: %v", err)
			case r.dup == "same" && (!existing || d.ID != f.ID):
				t.Errorf("duplicate upload stored a new file, want alice's")
			case r.dup == "new" && (existing || d.ID == f.ID):
				t.Errorf("duplicate check found a file the user cannot read (ghost duplicate)")
			case r.dup == "new":
				if _, err := w.svc.Get(ctx, r.p, d.ID); err != nil {
					t.Errorf("own copy not readable: %v", err)
				}
			}

			// Listing folders needs membership, like uploading: a workspace
			// that is not the principal's is not found (not empty).
			var foldersErr error
			if errors.Is(r.dupErr, notFound) {
				foldersErr = notFound
			}
			if _, err := w.svc.Folders(ctx, r.p, w.wsA.ID); !errIs(err, foldersErr) {
				t.Errorf("folders: %v, want %v", err, foldersErr)
			}
			if _, err := w.env.DB.Folder(ctx, r.p, folder.ID); !errIs(err, r.folderGet) {
				t.Errorf("folder get: %v, want %v", err, r.folderGet)
			}
			newName := folder.Name + "-renamed"
			if _, err := w.svc.UpdateFolder(ctx, r.p, folder.ID, filemeta.FolderUpdate{Name: &newName}); !errIs(err, r.folderRename) {
				t.Errorf("folder rename: %v, want %v", err, r.folderRename)
			}

			shared := true
			if _, err := w.svc.Update(ctx, r.p, f.ID, filemeta.Update{Shared: &shared}); !errIs(err, r.share) {
				t.Errorf("share: %v, want %v", err, r.share)
			}
			unshared := false
			if _, err := w.svc.Update(ctx, w.admin, f.ID, filemeta.Update{Shared: &unshared}); err != nil {
				t.Fatal(err)
			}
			desc := "changed"
			if _, err := w.svc.Update(ctx, r.p, f.ID, filemeta.Update{Description: &desc}); !errIs(err, r.update) {
				t.Errorf("update: %v, want %v", err, r.update)
			}
			if err := w.svc.Delete(ctx, r.p, f.ID); !errIs(err, r.delete) {
				t.Errorf("delete: %v, want %v", err, r.delete)
			}
			after, err := w.svc.Get(ctx, w.alice, f.ID)
			switch {
			case r.delete == nil && !errors.Is(err, notFound):
				t.Errorf("file still there after delete: %v", err)
			case r.delete != nil && err != nil:
				t.Errorf("refused delete removed the file: %v", err)
			case r.delete != nil && r.update != nil && after.Description != "":
				t.Errorf("refused update changed the file")
			}
		})
	}

	t.Run("shared layer", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "handbook.pdf", "policy")
		shared := true
		if _, err := w.svc.Update(ctx, w.admin, f.ID, filemeta.Update{Shared: &shared}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			who  string
			p    tenancy.Principal
			want error
		}{
			{"carol", w.carol, ok}, {"pat", w.pat, ok}, {"dave", w.dave, notFound}, {"other admin", w.daveAdmin, notFound},
		} {
			if _, err := w.svc.Get(ctx, c.p, f.ID); !errIs(err, c.want) {
				t.Errorf("%s reading a shared file: %v, want %v", c.who, err, c.want)
			}
			if got := listed(t, w, c.p, filemeta.Filter{}, f.ID); got != (c.want == nil) {
				t.Errorf("%s listing a shared file: %v", c.who, got)
			}
		}
		// Reading shared is not writing it.
		desc := "x"
		if _, err := w.svc.Update(ctx, w.carol, f.ID, filemeta.Update{Description: &desc}); !errors.Is(err, tenancy.ErrForbidden) {
			t.Errorf("carol changing a shared file: %v", err)
		}
	})

	t.Run("same bytes in another workspace are another file over one blob", func(t *testing.T) {
		a := upload(t, w, w.alice, w.wsA.ID, "q4.pdf", "quarterly")
		b, existing, err := w.svc.Upload(ctx, w.carol, files.Upload{WorkspaceID: w.wsB.ID, Name: "q4.pdf", Content: strings.NewReader("quarterly")})
		if err != nil || existing || b.ID == a.ID {
			t.Fatalf("carol's upload: %+v existing=%v %v", b, existing, err)
		}
		if b.SHA256 != a.SHA256 {
			t.Fatal("same bytes, different sha")
		}
		if _, err := w.svc.Get(ctx, w.carol, b.ID); err != nil {
			t.Fatalf("carol cannot read her own copy: %v", err)
		}
		if _, err := w.svc.Get(ctx, w.carol, a.ID); !errors.Is(err, notFound) {
			t.Fatalf("carol reads alice's file: %v", err)
		}
	})
}
