package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

func testFolders(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	mk := func(name, parent string) filemeta.Folder {
		t.Helper()
		f, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: name, ParentID: parent})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a := mk("a", "")
	b := mk("b", a.ID)
	c := mk("c", b.ID)
	other := mk("other", "")

	t.Run("sibling names are unique", func(t *testing.T) {
		if _, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: "a"}); !errors.Is(err, tenancy.ErrConflict) {
			t.Fatalf("second root 'a': %v", err)
		}
		if _, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: "b", ParentID: a.ID}); !errors.Is(err, tenancy.ErrConflict) {
			t.Fatalf("second a/b: %v", err)
		}
		mk("b", other.ID) // same name under another parent is fine
		name := "other"
		if _, err := w.svc.UpdateFolder(ctx, w.alice, a.ID, filemeta.FolderUpdate{Name: &name}); !errors.Is(err, tenancy.ErrConflict) {
			t.Fatalf("rename onto a sibling's name: %v", err)
		}
	})
	t.Run("moves that would make a cycle are refused", func(t *testing.T) {
		for _, to := range []string{a.ID, b.ID, c.ID} {
			if _, err := w.svc.UpdateFolder(ctx, w.alice, a.ID, filemeta.FolderUpdate{Parent: &to}); !errors.Is(err, tenancy.ErrInvalid) {
				t.Errorf("move a under %s: %v", to, err)
			}
		}
		f, err := w.env.DB.Folder(ctx, w.alice, a.ID)
		if err != nil || f.ParentID != "" {
			t.Fatalf("refused move changed the folder: %+v %v", f, err)
		}
		// A legal move: c to the root, then a under c.
		root := ""
		if _, err := w.svc.UpdateFolder(ctx, w.alice, c.ID, filemeta.FolderUpdate{Parent: &root}); err != nil {
			t.Fatal(err)
		}
		if f, err := w.svc.UpdateFolder(ctx, w.alice, a.ID, filemeta.FolderUpdate{Parent: &c.ID}); err != nil || f.ParentID != c.ID {
			t.Fatalf("legal move: %+v %v", f, err)
		}
	})
	t.Run("unknown folders", func(t *testing.T) {
		nope := "00000000-0000-0000-0000-000000000000"
		if _, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: "x", ParentID: nope}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("unknown parent: %v", err)
		}
		if _, err := w.svc.UpdateFolder(ctx, w.alice, a.ID, filemeta.FolderUpdate{Parent: &nope}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("move under unknown: %v", err)
		}
		if _, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "x.txt", FolderID: nope, Content: stringsReader("x")}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("upload into unknown folder: %v", err)
		}
		// A folder of another workspace is unknown here too.
		fb, err := w.svc.CreateFolder(ctx, w.carol, filemeta.Folder{WorkspaceID: w.wsB.ID, Name: "B's"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.svc.Upload(ctx, w.admin, files.Upload{WorkspaceID: w.wsA.ID, Name: "x.txt", FolderID: fb.ID, Content: stringsReader("x")}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("upload into another workspace's folder: %v", err)
		}
		f := upload(t, w, w.alice, w.wsA.ID, "y.txt", "y")
		if _, err := w.svc.Update(ctx, w.admin, f.ID, filemeta.Update{Folder: &fb.ID}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("move a file into another workspace's folder: %v", err)
		}
	})
	t.Run("deleting a folder keeps its files", func(t *testing.T) {
		f, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "kept.txt", FolderID: b.ID, Content: stringsReader("k")})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.svc.DeleteFolder(ctx, w.alice, c.ID); err != nil { // c holds a, which holds b
			t.Fatal(err)
		}
		for _, id := range []string{a.ID, b.ID, c.ID} {
			if _, err := w.env.DB.Folder(ctx, w.alice, id); !errors.Is(err, tenancy.ErrNotFound) {
				t.Errorf("folder %s survived its ancestor's deletion: %v", id, err)
			}
		}
		got, err := w.svc.Get(ctx, w.alice, f.ID)
		if err != nil || got.FolderID != "" {
			t.Fatalf("file after folder deletion: %+v %v", got, err)
		}
	})
}

func testBadInput(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	for _, name := range []string{
		"", ".", "..", "../etc/passwd", "a/b", `a\b`, "/abs", "nul\x00byte", "tab\tname", " lead", "trail ",
		"bad\xffutf8", strings.Repeat("x", 256),
	} {
		if _, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: name, Content: stringsReader("x")}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("file name %q: %v", name, err)
		}
		if _, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: name}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("folder name %q: %v", name, err)
		}
	}
	for _, name := range []string{"ok.txt", "Ünïcödé – report (v2).pdf", "a..b", "...", strings.Repeat("x", 255)} {
		if _, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: name, Content: stringsReader("x")}); err != nil {
			t.Errorf("good name %q refused: %v", name, err)
		}
	}
	for _, tags := range [][]string{{""}, {"a,b"}, {"new\nline"}, {strings.Repeat("t", 65)}} {
		if _, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "t.txt", Tags: tags, Content: stringsReader("x")}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("tags %q: %v", tags, err)
		}
	}
	if _, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: "nope", Name: "x.txt", Content: stringsReader("x")}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("unknown workspace: %v", err)
	}
	if _, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "x.txt"}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("no content: %v", err)
	}
	if n := count(t, w, "SELECT COUNT(*) FROM files WHERE name NOT IN ('ok.txt', 'a..b', '...') AND name NOT LIKE 'xxxx%' AND name NOT LIKE '%report%'"); n != 0 {
		t.Errorf("%d files half-written by refused uploads", n)
	}
}
