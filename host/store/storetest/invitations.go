package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testInvitations: only a tenant admin invites, lists and revokes, within
// the tenant; a link is usable once, until it expires, unless revoked; the
// accepted user gets the invitation's admin flag and roles; two racing
// acceptances make one user; a failed acceptance leaves nothing behind.
func testInvitations(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	day := 24 * time.Hour

	// Who may invite, and what.
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		n    store.NewInvitation
		want error
	}{
		{"not an admin", w.carol, store.NewInvitation{Email: "x@acme", TTL: day}, tenancy.ErrForbidden},
		{"no address", w.admin, store.NewInvitation{Email: "acme", TTL: day}, tenancy.ErrInvalid},
		{"empty address", w.admin, store.NewInvitation{Email: " ", TTL: day}, tenancy.ErrInvalid},
		{"header injection", w.admin, store.NewInvitation{Email: "x@acme\r\nBcc: y@z", TTL: day}, tenancy.ErrInvalid},
		{"no time", w.admin, store.NewInvitation{Email: "x@acme"}, tenancy.ErrInvalid},
		{"too long", w.admin, store.NewInvitation{Email: "x@acme", TTL: store.MaxInvitationTTL + time.Second}, tenancy.ErrInvalid},
		{"bad role", w.admin, store.NewInvitation{Email: "x@acme", TTL: day, Workspaces: []store.Grant{{WorkspaceID: w.wsA.ID, Role: "owner"}}}, tenancy.ErrInvalid},
		{"other tenant's workspace", w.admin, store.NewInvitation{Email: "x@acme", TTL: day, Workspaces: []store.Grant{{WorkspaceID: w.wsC.ID, Role: tenancy.RoleMember}}}, tenancy.ErrNotFound},
		{"twice the same workspace", w.admin, store.NewInvitation{Email: "x@acme", TTL: day, Workspaces: []store.Grant{{WorkspaceID: w.wsA.ID, Role: tenancy.RoleMember}, {WorkspaceID: w.wsA.ID, Role: tenancy.RoleViewer}}}, tenancy.ErrInvalid},
	} {
		if _, _, err := db.CreateInvitation(ctx, c.p, c.n); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A refused invitation left nothing (the workspace check comes after the insert).
	if list, err := db.ListInvitations(ctx, w.admin); err != nil || len(list) != 0 {
		t.Fatalf("refused invitations were kept: %+v %v", list, err)
	}

	inv, secret, err := db.CreateInvitation(ctx, w.admin, store.NewInvitation{Email: " Erin@Acme ", TTL: day,
		Workspaces: []store.Grant{{WorkspaceID: w.wsA.ID, Role: tenancy.RoleMember}, {WorkspaceID: w.wsB.ID, Role: tenancy.RoleViewer}}})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Email != "erin@acme" || inv.TenantID != w.t1.ID || inv.CreatedBy != w.admin.UserID || !strings.HasPrefix(secret, "ahi_") || !inv.Pending(time.Now()) {
		t.Fatalf("invitation %+v secret %q", inv, secret)
	}
	var n int
	if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM invitations WHERE hash = '"+secret+"'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("secret stored in clear: %d %v", n, err)
	}
	got, err := db.InvitationBySecret(ctx, secret)
	if err != nil || got.ID != inv.ID || len(got.Workspaces) != 2 {
		t.Fatalf("by secret: %+v %v", got, err)
	}
	for _, c := range []struct{ name, secret string }{
		{"empty", ""}, {"api token", tenancy.NewTokenSecret()}, {"tampered", tampered(secret)}, {"unknown", "ahi_" + strings.Repeat("A", 43)},
	} {
		if _, err := db.InvitationBySecret(ctx, c.secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("%s secret: %v", c.name, err)
		}
	}
	// Another tenant's admin neither sees nor revokes it.
	if list, err := db.ListInvitations(ctx, w.daveAdmin); err != nil || len(list) != 0 {
		t.Fatalf("other tenant sees: %+v %v", list, err)
	}
	if _, err := db.RevokeInvitation(ctx, w.daveAdmin, inv.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("other tenant revokes: %v", err)
	}
	if _, err := db.ListInvitations(ctx, w.alice); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("non-admin lists: %v", err)
	}

	// The wrong person cannot use it, and trying leaves it usable.
	if _, err := db.AcceptInvitation(ctx, secret, tenancy.User{Email: "mallory@acme"}); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("wrong address accepts: %v", err)
	}
	if _, err := db.AcceptInvitation(ctx, secret, tenancy.User{ID: w.dave.UserID, Email: "erin@acme"}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("a user of another tenant accepts: %v", err)
	}

	// Two acceptances race: one user, one acceptance.
	var wg sync.WaitGroup
	users := make([]tenancy.User, 4)
	errs := make([]error, 4)
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			users[i], errs[i] = db.AcceptInvitation(ctx, secret, tenancy.User{Email: "erin@ACME", Name: "Erin"})
		}()
	}
	wg.Wait()
	var erin tenancy.User
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
			erin = users[i]
		case errors.Is(err, tenancy.ErrUnauthenticated), errors.Is(err, tenancy.ErrConflict), isBusy(err):
		default:
			t.Errorf("racing acceptance: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d acceptances won: %v", wins, errs)
	}
	if erin.TenantID != w.t1.ID || erin.Admin || erin.Name != "Erin" {
		t.Fatalf("accepted user %+v", erin)
	}
	ep := tenancy.Principal{TenantID: erin.TenantID, UserID: erin.ID}
	mr, mw := tenancy.RoleMember.Levels()
	vr, _ := tenancy.RoleViewer.Levels()
	if r, wr, err := db.Levels(ctx, ep, w.wsA.ID); err != nil || r != mr || wr != mw {
		t.Fatalf("levels in A: %v %v %v", r, wr, err)
	}
	if r, _, err := db.Levels(ctx, ep, w.wsB.ID); err != nil || r != vr {
		t.Fatalf("levels in B: %v %v", r, err)
	}
	if _, err := db.AcceptInvitation(ctx, secret, tenancy.User{Email: "erin@acme"}); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("second use: %v", err)
	}
	if _, err := db.RevokeInvitation(ctx, w.admin, inv.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("revoking an accepted invitation: %v", err)
	}

	// An admin invitation accepted by an existing user makes them admin.
	_, adm, err := db.CreateInvitation(ctx, w.admin, store.NewInvitation{Email: "bob@acme", Admin: true, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := db.AcceptInvitation(ctx, adm, tenancy.User{ID: w.bob.UserID, Email: "bob@acme"}); err != nil || !u.Admin || u.ID != w.bob.UserID {
		t.Fatalf("existing user accepts: %+v %v", u, err)
	}

	// Revoked and expired links are refused.
	rev, revSecret, err := db.CreateInvitation(ctx, w.admin, store.NewInvitation{Email: "rev@acme", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := db.RevokeInvitation(ctx, w.admin, rev.ID); err != nil || r.RevokedAt == nil {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	if _, err := db.AcceptInvitation(ctx, revSecret, tenancy.User{Email: "rev@acme"}); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("revoked accepted: %v", err)
	}
	exp, expSecret, err := db.CreateInvitation(ctx, w.admin, store.NewInvitation{Email: "late@acme", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, "UPDATE invitations SET expires_at = created_at WHERE id = '"+exp.ID+"'"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AcceptInvitation(ctx, expSecret, tenancy.User{Email: "late@acme"}); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("expired accepted: %v", err)
	}

	// An acceptance that fails half-way (the address is taken) makes nothing
	// and leaves the invitation usable.
	_, dup, err := db.CreateInvitation(ctx, w.admin, store.NewInvitation{Email: "alice@acme", TTL: time.Hour,
		Workspaces: []store.Grant{{WorkspaceID: w.wsB.ID, Role: tenancy.RoleManager}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AcceptInvitation(ctx, dup, tenancy.User{Email: "alice@acme"}); !errors.Is(err, tenancy.ErrConflict) {
		t.Fatalf("taken address: %v", err)
	}
	if _, err := db.InvitationBySecret(ctx, dup); err != nil {
		t.Fatalf("failed acceptance used the invitation: %v", err)
	}

	list, err := db.ListInvitations(ctx, w.admin)
	if err != nil || len(list) != 5 {
		t.Fatalf("list: %d %v", len(list), err)
	}
	if list[len(list)-1].ID != inv.ID || list[len(list)-1].AcceptedBy != erin.ID || list[len(list)-1].AcceptedAt == nil || len(list[len(list)-1].Workspaces) != 2 {
		t.Fatalf("oldest listed %+v", list[len(list)-1])
	}
}
