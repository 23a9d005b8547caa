package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testVersions: every content a file has had is a version, kept and
// restorable; a change made on an old version is a conflict; nothing is half
// stored when a change is refused.
func testVersions(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	versions := func(t *testing.T, id string) []filemeta.Version {
		t.Helper()
		vs, err := w.svc.Versions(ctx, w.alice, id)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}

	t.Run("an upload is version 1, each write the next, restore adds one", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "notes.txt", "one\n")
		if f.Version != 1 {
			t.Fatalf("upload version %d", f.Version)
		}
		f2, v2, err := w.svc.SetContent(ctx, w.alice, f.ID, strings.NewReader("two\n"), 1, "writeFile")
		if err != nil || f2.Version != 2 || v2.Version != 2 || v2.Note != "writeFile" || f2.SHA256 == f.SHA256 {
			t.Fatalf("write: %+v %+v %v", f2, v2, err)
		}
		f3, _, err := w.svc.Append(ctx, w.alice, f.ID, []byte("three\n"), 2, "append")
		if err != nil || f3.Version != 3 || f3.Size != int64(len("two\nthree\n")) {
			t.Fatalf("append: %+v %v", f3, err)
		}
		if vs := versions(t, f.ID); len(vs) != 3 || vs[0].Version != 3 || vs[2].SHA256 != f.SHA256 || vs[2].Note != "upload" {
			t.Fatalf("versions: %+v", vs)
		}
		f4, v4, err := w.svc.Restore(ctx, w.alice, f.ID, 1)
		if err != nil || f4.Version != 4 || f4.SHA256 != f.SHA256 || v4.Note != "restore of version 1" {
			t.Fatalf("restore: %+v %+v %v", f4, v4, err)
		}
		_, text, err := w.svc.Text(ctx, w.bob, f.ID, 3)
		if err != nil || text != "two\nthree\n" {
			t.Fatalf("version 3 kept: %q %v", text, err)
		}
		if _, err := w.svc.Version(ctx, w.alice, f.ID, 9); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("unknown version: %v", err)
		}
	})

	t.Run("a change made on an old version is a conflict and stores nothing", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "race.txt", "a\n")
		if _, _, err := w.svc.SetContent(ctx, w.alice, f.ID, strings.NewReader("b\n"), 1, ""); err != nil {
			t.Fatal(err)
		}
		_, _, err := w.svc.SetContent(ctx, w.alice, f.ID, strings.NewReader("c\n"), 1, "")
		if !errors.Is(err, tenancy.ErrConflict) || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("stale write: %v", err)
		}
		if vs := versions(t, f.ID); len(vs) != 2 {
			t.Fatalf("versions after a refused write: %d", len(vs))
		}
	})

	t.Run("concurrent changes on one version: exactly one wins", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "concurrent.txt", "0\n")
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = w.svc.SetContent(ctx, w.alice, f.ID, strings.NewReader(strings.Repeat("x", i+1)), 1, "")
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, tenancy.ErrConflict) && !isBusy(err):
				t.Errorf("loser: %v", err)
			}
		}
		if won != 1 || len(versions(t, f.ID)) != 2 {
			t.Fatalf("%d writers won, versions %d", won, len(versions(t, f.ID)))
		}
	})

	t.Run("content over the size limit is refused and nothing changes", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "big.txt", "small\n")
		_, _, err := w.svc.SetContent(ctx, w.alice, f.ID, bytes.NewReader(make([]byte, 2<<20)), 1, "")
		if !errors.Is(err, tenancy.ErrInvalid) || !strings.Contains(err.Error(), "limit") {
			t.Fatalf("oversize: %v", err)
		}
		_, _, err = w.svc.Append(ctx, w.alice, f.ID, bytes.Repeat([]byte("y"), 1<<20), 1, "")
		if !errors.Is(err, tenancy.ErrInvalid) {
			t.Fatalf("append over the limit: %v", err)
		}
		if got, _ := w.svc.Get(ctx, w.alice, f.ID); got.Version != 1 || len(versions(t, f.ID)) != 1 {
			t.Fatalf("after refused writes: %+v", got)
		}
	})

	t.Run("another user's or tenant's file cannot be changed", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "alice.txt", "mine\n")
		for _, c := range []struct {
			who  tenancy.Principal
			want error
		}{{w.bob, tenancy.ErrForbidden}, {w.victor, tenancy.ErrForbidden}, {w.carol, tenancy.ErrNotFound}, {w.dave, tenancy.ErrNotFound}} {
			if _, _, err := w.svc.SetContent(ctx, c.who, f.ID, strings.NewReader("theirs\n"), 0, ""); !errors.Is(err, c.want) {
				t.Errorf("write: %v, want %v", err, c.want)
			}
			if _, _, err := w.svc.Restore(ctx, c.who, f.ID, 1); !errors.Is(err, c.want) && !errors.Is(err, tenancy.ErrInvalid) {
				t.Errorf("restore: %v", err)
			}
			if _, err := w.svc.Propose(ctx, c.who, files.ProposeRequest{FileID: f.ID, Content: "theirs\n"}); !errors.Is(err, c.want) {
				t.Errorf("propose: %v, want %v", err, c.want)
			}
		}
		if _, err := w.svc.Versions(ctx, w.dave, f.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("another tenant lists versions: %v", err)
		}
		if got, _ := w.svc.Get(ctx, w.alice, f.ID); got.Version != 1 {
			t.Fatalf("changed by someone else: %+v", got)
		}
	})

	t.Run("binary files are not edited as text", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "blob.bin", "\x00\x01\x02")
		if _, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, Content: "text"}); !errors.Is(err, tenancy.ErrInvalid) ||
			!strings.Contains(err.Error(), "not text") {
			t.Fatalf("propose on binary: %v", err)
		}
		if _, _, err := w.svc.Append(ctx, w.alice, f.ID, []byte("x"), 0, ""); !errors.Is(err, tenancy.ErrInvalid) {
			t.Fatalf("append to binary: %v", err)
		}
	})
}

// isBusy: SQLite may refuse a concurrent writer outright (the database is
// locked); that writer lost too.
func isBusy(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "database is locked") || strings.Contains(err.Error(), "SQLITE_BUSY"))
}

// testProposals: an agent's proposed edit carries its diff, is accepted
// (a new version) or rejected once, is rebased onto a newer version when the
// changes do not overlap and refused when they do.
func testProposals(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	base := "alpha\nbeta\ngamma\ndelta\nepsilon\n"

	t.Run("propose, then accept: the diff, the new version, the old one kept", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "greek.txt", base)
		x, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, WorkflowID: "wf-1", Content: strings.Replace(base, "beta", "BETA", 1),
			Description: "capitalise beta"})
		if err != nil {
			t.Fatal(err)
		}
		if x.Status != filemeta.ProposalPending || x.BaseVersion != 1 || x.WorkflowID != "wf-1" || x.WorkspaceID != w.wsA.ID ||
			!strings.Contains(x.Diff, "-beta\n+BETA\n") || !strings.Contains(x.Diff, "--- a/greek.txt") {
			t.Fatalf("proposal: %+v", x)
		}
		if got, _ := w.svc.Get(ctx, w.alice, f.ID); got.Version != 1 {
			t.Fatalf("a proposal changed the file: %+v", got)
		}
		if _, err := w.svc.Accept(ctx, w.victor, x.ID); !errors.Is(err, tenancy.ErrForbidden) {
			t.Errorf("a viewer accepts: %v", err)
		}
		if _, err := w.svc.Accept(ctx, w.dave, x.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("another tenant accepts: %v", err)
		}
		d, err := w.svc.Accept(ctx, w.alice, x.ID)
		if err != nil || d.Proposal.Status != filemeta.ProposalAccepted || d.Proposal.Version != 2 || d.File.Version != 2 || d.Rebased ||
			d.Proposal.DecidedBy != w.alice.UserID || d.Proposal.DecidedAt == nil {
			t.Fatalf("accept: %+v %v", d, err)
		}
		_, text, _ := w.svc.Text(ctx, w.alice, f.ID, 0)
		if text != strings.Replace(base, "beta", "BETA", 1) {
			t.Fatalf("content after accept: %q", text)
		}
		if _, err := w.svc.Accept(ctx, w.alice, x.ID); !errors.Is(err, tenancy.ErrConflict) {
			t.Errorf("accepted twice: %v", err)
		}
		if _, err := w.svc.Reject(ctx, w.alice, x.ID); !errors.Is(err, tenancy.ErrConflict) {
			t.Errorf("rejected after accepting: %v", err)
		}
		if _, _, err := w.svc.Restore(ctx, w.alice, f.ID, 1); err != nil {
			t.Fatal(err)
		}
		if _, text, _ := w.svc.Text(ctx, w.alice, f.ID, 0); text != base {
			t.Fatalf("restored: %q", text)
		}
		list, err := w.svc.Proposals(ctx, w.bob, f.ID)
		if err != nil || len(list) != 1 || list[0].ID != x.ID {
			t.Fatalf("proposals: %+v %v", list, err)
		}
	})

	t.Run("reject leaves the file alone", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "keep.txt", base)
		x, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, Content: "gone\n"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := w.svc.Reject(ctx, w.alice, x.ID)
		if err != nil || d.Proposal.Status != filemeta.ProposalRejected || d.File.Version != 1 {
			t.Fatalf("reject: %+v %v", d, err)
		}
		if vs, _ := w.svc.Versions(ctx, w.alice, f.ID); len(vs) != 1 {
			t.Fatalf("versions after reject: %d", len(vs))
		}
	})

	t.Run("a proposal on version N when the file is N+1: rebased when apart, refused when overlapping", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "rebase.txt", base)
		apart, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, Content: strings.Replace(base, "alpha", "ALPHA", 1)})
		if err != nil {
			t.Fatal(err)
		}
		overlap, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, Content: strings.Replace(base, "epsilon", "EPS", 1)})
		if err != nil {
			t.Fatal(err)
		}
		// Meanwhile the user changes the last line.
		if _, _, err := w.svc.SetContent(ctx, w.alice, f.ID, strings.NewReader(strings.Replace(base, "epsilon", "omega", 1)), 1, "by hand"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, BaseVersion: 1, Content: "late\n"}); !errors.Is(err, tenancy.ErrConflict) {
			t.Errorf("a proposal on a left version: %v", err)
		}
		_, err = w.svc.Accept(ctx, w.alice, overlap.ID)
		if !errors.Is(err, tenancy.ErrConflict) || !strings.Contains(err.Error(), "version 1") || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("overlapping accept: %v", err)
		}
		if got, _ := w.svc.Proposal(ctx, w.alice, overlap.ID); got.Status != filemeta.ProposalPending {
			t.Fatalf("a refused accept changed the proposal: %+v", got)
		}
		if got, _ := w.svc.Get(ctx, w.alice, f.ID); got.Version != 2 {
			t.Fatalf("a refused accept changed the file: %+v", got)
		}
		d, err := w.svc.Accept(ctx, w.alice, apart.ID)
		if err != nil || !d.Rebased || d.File.Version != 3 {
			t.Fatalf("rebased accept: %+v %v", d, err)
		}
		_, text, _ := w.svc.Text(ctx, w.alice, f.ID, 0)
		if want := strings.Replace(strings.Replace(base, "epsilon", "omega", 1), "alpha", "ALPHA", 1); text != want {
			t.Fatalf("rebased content %q, want %q", text, want)
		}
	})

	t.Run("bad proposals are refused", func(t *testing.T) {
		f := upload(t, w, w.alice, w.wsA.ID, "same.txt", base)
		if _, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, Content: base}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("no change: %v", err)
		}
		if _, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, Content: "a\x00b"}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("binary content: %v", err)
		}
		if _, err := w.svc.Propose(ctx, w.alice, files.ProposeRequest{FileID: f.ID, Content: strings.Repeat("z", 2<<20)}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("over the limit: %v", err)
		}
		if _, err := w.svc.Proposal(ctx, w.dave, "nope"); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("unknown proposal: %v", err)
		}
		if list, _ := w.svc.Proposals(ctx, w.alice, f.ID); len(list) != 0 {
			t.Fatalf("refused proposals were stored: %+v", list)
		}
	})
}
