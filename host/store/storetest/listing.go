package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

func testListing(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	folder, err := w.svc.CreateFolder(ctx, w.alice, filemeta.Folder{WorkspaceID: w.wsA.ID, Name: "Reports"})
	if err != nil {
		t.Fatal(err)
	}
	// 60 files: every third a PDF in Reports tagged q4, every fifth tagged
	// financial, names file-000 … file-059 with mixed case.
	var all []string
	for i := range 60 {
		name := fmt.Sprintf("File-%03d.txt", i)
		u := files.Upload{WorkspaceID: w.wsA.ID, Name: name, Content: stringsReader(fmt.Sprint("content ", i))}
		if i%3 == 0 {
			u.Name, u.FolderID, u.Tags = fmt.Sprintf("file-%03d.pdf", i), folder.ID, []string{"q4"}
		}
		if i%5 == 0 {
			u.Tags = append(u.Tags, "financial")
		}
		f, _, err := w.svc.Upload(ctx, w.alice, u)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, f.ID)
	}
	ids := func(flt filemeta.Filter) []string {
		t.Helper()
		var out []string
		for {
			page, err := w.svc.List(ctx, w.alice, flt)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range page.Items {
				out = append(out, f.ID)
			}
			if page.Next == "" {
				return out
			}
			flt.Cursor = page.Next
		}
	}
	pick := func(keep func(i int) bool) []string {
		var out []string
		for i, id := range all {
			if keep(i) {
				out = append(out, id)
			}
		}
		return out
	}
	reversed := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }
	root := ""
	cases := []struct {
		name string
		flt  filemeta.Filter
		want []string
	}{
		{"all, newest first, pages of 7", filemeta.Filter{WorkspaceID: w.wsA.ID, Limit: 7}, reversed(all)},
		{"by name, pages of 11", filemeta.Filter{WorkspaceID: w.wsA.ID, Order: filemeta.OrderName, Limit: 11}, nil},
		{"tag q4", filemeta.Filter{Tags: []string{"q4"}}, reversed(pick(func(i int) bool { return i%3 == 0 }))},
		{"tags q4 and financial", filemeta.Filter{Tags: []string{"q4", "financial"}, Limit: 2}, reversed(pick(func(i int) bool { return i%15 == 0 }))},
		{"folder", filemeta.Filter{Folder: &folder.ID}, reversed(pick(func(i int) bool { return i%3 == 0 }))},
		{"no folder", filemeta.Filter{WorkspaceID: w.wsA.ID, Folder: &root}, reversed(pick(func(i int) bool { return i%3 != 0 }))},
		{"mime exact", filemeta.Filter{MIMEType: "application/pdf"}, reversed(pick(func(i int) bool { return i%3 == 0 }))},
		{"mime family", filemeta.Filter{MIMEType: "text/*", Limit: 5}, reversed(pick(func(i int) bool { return i%3 != 0 }))},
		{"name glob, any case", filemeta.Filter{Name: "FILE-01?.*"}, reversed(pick(func(i int) bool { return i >= 10 && i < 20 }))},
		{"name glob with LIKE metacharacters is literal", filemeta.Filter{Name: "file_%"}, nil},
	}
	// By name: "File-001.txt" < "file-000.pdf" in byte order, so uppercase first.
	byName := slices.Clone(all)
	names := map[string]string{}
	for i, id := range all {
		if i%3 == 0 {
			names[id] = fmt.Sprintf("file-%03d.pdf", i)
		} else {
			names[id] = fmt.Sprintf("File-%03d.txt", i)
		}
	}
	slices.SortFunc(byName, func(a, b string) int {
		if names[a] < names[b] {
			return -1
		}
		return 1
	})
	cases[1].want = byName
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ids(c.flt)
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %d files, want %d\n got %v\nwant %v", len(got), len(c.want), got, c.want)
			}
		})
	}
	t.Run("bad listing requests", func(t *testing.T) {
		for _, flt := range []filemeta.Filter{
			{Cursor: "garbage!"},
			{Cursor: encodeCursorOfOtherOrder(t, w)},
			{Status: "deleted"},
			{Order: "size"},
			{Limit: 5000},
		} {
			if _, err := w.svc.List(ctx, w.alice, flt); !errors.Is(err, tenancy.ErrInvalid) {
				t.Errorf("%+v: %v", flt, err)
			}
		}
	})
}

// encodeCursorOfOtherOrder returns a real cursor of a by-name listing, which
// a newest-first listing must refuse.
func encodeCursorOfOtherOrder(t *testing.T, w *world) string {
	page, err := w.svc.List(context.Background(), w.alice, filemeta.Filter{Order: filemeta.OrderName, Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("no cursor: %v", err)
	}
	return page.Next
}
