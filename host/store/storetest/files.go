package storetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// failingReader yields n bytes, then fails: an upload cut off mid-stream.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("connection reset")
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

func count(t *testing.T, w *world, query string) int {
	t.Helper()
	var n int
	if err := w.env.DB.SQL().QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func testFiles(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)

	t.Run("content round trip and ranges", func(t *testing.T) {
		data := bytes.Repeat([]byte("0123456789"), 30000)
		f, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "digits.txt", Tags: []string{"a", "b", "a"},
			Description: "ten digits", Content: bytes.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
		if f.Size != int64(len(data)) || f.MIMEType != "text/plain; charset=utf-8" || len(f.Tags) != 2 || f.Status != filemeta.StatusActive {
			t.Fatalf("item: %+v", f)
		}
		got, r, err := w.svc.Open(ctx, w.bob, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if got.ID != f.ID || r.Size() != int64(len(data)) {
			t.Fatalf("open: %+v size %d", got, r.Size())
		}
		buf := make([]byte, 10)
		if _, err := r.ReadAt(buf, 123450); err != nil || string(buf) != "0123456789" {
			t.Fatalf("range read: %q %v", buf, err)
		}
		all, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(all, data) {
			t.Fatalf("full read: %d bytes, %v", len(all), err)
		}
	})

	t.Run("MIME type from name, then content", func(t *testing.T) {
		for _, c := range []struct{ name, content, want string }{
			{"a.pdf", "%PDF-1.7", "application/pdf"},
			{"noext", "%PDF-1.4\n", "application/pdf"},
			{"pic", "\x89PNG\r\n\x1a\n0000", "image/png"},
			{"data.csv", "a,b\n1,2\n", "text/csv; charset=utf-8"},
		} {
			f := upload(t, w, w.alice, w.wsA.ID, c.name, c.content)
			if f.MIMEType != c.want {
				t.Errorf("%s: %q, want %q", c.name, f.MIMEType, c.want)
			}
		}
	})

	t.Run("dedupe can be turned off", func(t *testing.T) {
		a := upload(t, w, w.alice, w.wsA.ID, "twice.txt", "same")
		b, existing, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "twice.txt", Content: strings.NewReader("same"), NoDedupe: true})
		if err != nil || existing || b.ID == a.ID || b.SHA256 != a.SHA256 {
			t.Fatalf("no-dedupe upload: %+v %v %v", b, existing, err)
		}
	})

	t.Run("interrupted upload leaves nothing visible", func(t *testing.T) {
		before := count(t, w, "SELECT COUNT(*) FROM files")
		_, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "cut.bin", Content: &failingReader{n: 300 << 10}})
		if err == nil || !strings.Contains(err.Error(), "connection reset") {
			t.Fatalf("interrupted upload: %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := w.svc.Upload(cctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "cancelled.bin", Content: strings.NewReader("abc")}); err == nil {
			t.Fatal("cancelled upload succeeded")
		}
		if n := count(t, w, "SELECT COUNT(*) FROM files"); n != before {
			t.Fatalf("files %d → %d after failed uploads", before, n)
		}
		if listed(t, w, w.alice, filemeta.Filter{Name: "cut.bin"}, "") || count(t, w, "SELECT COUNT(*) FROM files WHERE name = 'cut.bin'") != 0 {
			t.Fatal("half upload visible")
		}
	})

	t.Run("oversized upload refused", func(t *testing.T) {
		_, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "big.bin", Content: &failingReader{n: 2 << 20}})
		if !errors.Is(err, tenancy.ErrInvalid) || !errors.Is(err, files.ErrTooLarge) || !strings.Contains(err.Error(), "1048576") {
			t.Fatalf("oversized: %v", err)
		}
		if count(t, w, "SELECT COUNT(*) FROM files WHERE name = 'big.bin'") != 0 {
			t.Fatal("oversized file recorded")
		}
	})

	t.Run("update: rename, tags, status, auto-rule", func(t *testing.T) {
		fin, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: "Finance", AutoRule: "tag:financial"})
		if err != nil {
			t.Fatal(err)
		}
		imgs, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: "Images", AutoRule: "mime:image/*"})
		if err != nil {
			t.Fatal(err)
		}
		png := upload(t, w, w.alice, w.wsA.ID, "chart.png", "\x89PNG\r\n\x1a\n")
		if png.FolderID != imgs.ID {
			t.Errorf("image not filed by auto-rule: folder %q", png.FolderID)
		}
		f := upload(t, w, w.alice, w.wsA.ID, "budget.xlsx", "cells")
		if f.FolderID != "" {
			t.Fatalf("untagged file filed into %q", f.FolderID)
		}
		name, archived := "budget-2026.xlsx", filemeta.StatusArchived
		f, err = w.svc.Update(ctx, w.alice, f.ID, filemeta.Update{Name: &name, AddTags: []string{"financial", "2026"}})
		if err != nil {
			t.Fatal(err)
		}
		if f.Name != name || f.FolderID != fin.ID || strings.Join(f.Tags, ",") != "2026,financial" {
			t.Fatalf("after update: %+v", f)
		}
		f, err = w.svc.Update(ctx, w.alice, f.ID, filemeta.Update{RemoveTags: []string{"2026"}, Status: &archived})
		if err != nil || strings.Join(f.Tags, ",") != "financial" || f.Status != archived {
			t.Fatalf("untag/archive: %+v %v", f, err)
		}
		if listed(t, w, w.alice, filemeta.Filter{WorkspaceID: w.wsA.ID}, f.ID) {
			t.Error("archived file in the default listing")
		}
		if !listed(t, w, w.alice, filemeta.Filter{WorkspaceID: w.wsA.ID, Status: filemeta.StatusArchived}, f.ID) {
			t.Error("archived file missing from the archived listing")
		}
		if _, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: "Bad", AutoRule: "color:red"}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("bad auto-rule: %v", err)
		}
	})
}

// testConcurrentUploads: 100 concurrent uploads of the same bytes store one
// blob and, deduplicated, one file.
func testConcurrentUploads(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	data := bytes.Repeat([]byte("concurrent "), 20000)
	var wg sync.WaitGroup
	ids := make([]string, 100)
	errs := make([]error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, _, err := w.svc.Upload(ctx, w.alice, files.Upload{WorkspaceID: w.wsA.ID, Name: "same.txt", Content: bytes.NewReader(data)})
			ids[i], errs[i] = f.ID, err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
		if ids[i] != ids[0] {
			t.Fatalf("upload %d made file %s, upload 0 made %s", i, ids[i], ids[0])
		}
	}
	if n := count(t, w, "SELECT COUNT(*) FROM blobs"); n != 1 {
		t.Fatalf("%d blobs, want 1", n)
	}
	if n := count(t, w, "SELECT COUNT(*) FROM files"); n != 1 {
		t.Fatalf("%d files, want 1", n)
	}
	_, r, err := w.svc.Open(ctx, w.alice, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, _ := io.ReadAll(r); !bytes.Equal(got, data) {
		t.Fatal("content differs")
	}
}
