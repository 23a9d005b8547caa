package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testIdentitySignIn: a provider's person is resolved to the linked user,
// the invited one, the user with the verified address or a new one (only
// with just-in-time provisioning); never across tenants; mapped roles only
// add; a session opened for a user directly acts as that user and ends by
// the provider's back-channel logout (by sid or subject), nothing else.
func testIdentitySignIn(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	base := store.IdentitySignIn{TenantID: w.t1.ID, Provider: "oidc:idp", EmailVerified: true}
	with := func(f func(*store.IdentitySignIn)) store.IdentitySignIn { in := base; f(&in); return in }
	users := func() int {
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM users").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := users()

	// Neither known nor invited, without JIT: refused, nothing made.
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.Subject, in.Email = "s-new", "new@acme" })); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("uninvited: %v", err)
	}
	// JIT with a mapping to an unknown workspace fails whole.
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) {
		in.Subject, in.Email, in.JustInTime = "s-new", "new@acme", true
		in.Grants = []store.Grant{{WorkspaceID: w.wsC.ID, Role: tenancy.RoleMember}}
	})); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("grant in another tenant's workspace: %v", err)
	}
	if users() != before {
		t.Fatal("a refused sign-in made a user")
	}
	// JIT: a new user with the mapped roles.
	o, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) {
		in.Subject, in.Email, in.Name, in.JustInTime = "s-new", "New@Acme", "New Person", true
		in.Grants = []store.Grant{{WorkspaceID: w.wsA.ID, Role: tenancy.RoleViewer}}
	}))
	if err != nil || !o.Created || o.User.Email != "new@acme" || o.User.Name != "New Person" || o.User.TenantID != w.t1.ID || o.User.Admin {
		t.Fatalf("jit: %+v %v", o, err)
	}
	// The second sign-in finds the linked user; a higher mapped role raises
	// it, a lower one never lowers it.
	again, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) {
		in.Subject, in.Email, in.Admin = "s-new", "new@acme", true
		in.Grants = []store.Grant{{WorkspaceID: w.wsA.ID, Role: tenancy.RoleManager}}
	}))
	if err != nil || again.Created || again.User.ID != o.User.ID || !again.User.Admin {
		t.Fatalf("second sign-in: %+v %v", again, err)
	}
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) {
		in.Subject = "s-new"
		in.Grants = []store.Grant{{WorkspaceID: w.wsA.ID, Role: tenancy.RoleViewer}}
	})); err != nil {
		t.Fatal(err)
	}
	mr, mw := tenancy.RoleManager.Levels()
	if r, wr, err := db.Levels(ctx, tenancy.Principal{TenantID: w.t1.ID, UserID: o.User.ID}, w.wsA.ID); err != nil || r != mr || wr != mw {
		t.Fatalf("mapped roles lowered: %v %v %v", r, wr, err)
	}

	// An existing user is linked by a verified address only.
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) {
		in.Subject, in.Email, in.EmailVerified = "s-alice", "alice@acme", false
	})); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("unverified address linked: %v", err)
	}
	al, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.Subject, in.Email = "s-alice", "ALICE@acme" }))
	if err != nil || al.Created || al.User.ID != w.alice.UserID {
		t.Fatalf("link by address: %+v %v", al, err)
	}
	// Never across tenants: the same identity at tenant 2 is refused, and
	// tenant 2's user with the same address is not found from tenant 1.
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.TenantID, in.Subject, in.Email = w.t2.ID, "s-alice", "alice@acme" })); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("identity used across tenants: %v", err)
	}
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.Subject, in.Email = "s-dave", "dave@other" })); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("another tenant's address: %v", err)
	}

	// An invitation: the invited user is made with its roles, once.
	_, secret, err := db.CreateInvitation(ctx, w.admin, store.NewInvitation{Email: "ivy@acme", TTL: time.Hour,
		Workspaces: []store.Grant{{WorkspaceID: w.wsB.ID, Role: tenancy.RoleMember}}})
	if err != nil {
		t.Fatal(err)
	}
	_, otherSecret, err := db.CreateInvitation(ctx, w.daveAdmin, store.NewInvitation{Email: "ivy@acme", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.Subject, in.Email, in.Invitation = "s-ivy", "ivy@acme", otherSecret })); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("another tenant's invitation: %v", err)
	}
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.Subject, in.Email, in.Invitation = "s-ivy", "mallory@acme", secret })); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("invitation for another address: %v", err)
	}
	iv, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.Subject, in.Email, in.Invitation = "s-ivy", "ivy@acme", secret }))
	if err != nil || !iv.Created || iv.Invitation == nil || iv.User.Email != "ivy@acme" {
		t.Fatalf("invited: %+v %v", iv, err)
	}
	if _, err := db.SignInIdentity(ctx, with(func(in *store.IdentitySignIn) { in.Subject, in.Email, in.Invitation = "s-ivy2", "ivy@acme", secret })); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("invitation used twice: %v", err)
	}

	// Sessions for a user directly, ended by the provider's logout.
	s1, c1, err := db.OpenUserSession(ctx, iv.User.ID, time.Hour, tenancy.SessionOrigin{Provider: "oidc:idp", Subject: "s-ivy", SID: "sid-1", IDToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	_, c2, err := db.OpenUserSession(ctx, iv.User.ID, time.Hour, tenancy.SessionOrigin{Provider: "oidc:idp", Subject: "s-ivy", SID: "sid-2"})
	if err != nil {
		t.Fatal(err)
	}
	_, c3, err := db.OpenUserSession(ctx, w.alice.UserID, time.Hour, tenancy.SessionOrigin{Provider: "oidc:other", Subject: "s-ivy", SID: "sid-1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.SessionBySecret(ctx, c1)
	if err != nil || got.ID != s1.ID || got.Principal.UserID != iv.User.ID || got.Origin.SID != "sid-1" || got.Origin.IDToken != "tok" {
		t.Fatalf("user session: %+v %v", got, err)
	}
	if _, _, err := db.OpenUserSession(ctx, "nobody", time.Hour, tenancy.SessionOrigin{}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("session for an unknown user: %v", err)
	}
	if _, err := db.EndProviderSessions(ctx, "oidc:idp", "", ""); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("logout naming no one: %v", err)
	}
	if n, err := db.EndProviderSessions(ctx, "oidc:idp", "s-ivy", "sid-1"); err != nil || n != 1 {
		t.Fatalf("logout by sid: %d %v", n, err)
	}
	if _, err := db.SessionBySecret(ctx, c1); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("session after logout: %v", err)
	}
	for _, c := range []string{c2, c3} {
		if _, err := db.SessionBySecret(ctx, c); err != nil {
			t.Fatalf("another session ended: %v", err)
		}
	}
	if n, err := db.EndProviderSessions(ctx, "oidc:idp", "s-ivy", ""); err != nil || n != 1 {
		t.Fatalf("logout by subject: %d %v", n, err)
	}
	if _, err := db.SessionBySecret(ctx, c2); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("session after logout by subject: %v", err)
	}
	if _, err := db.SessionBySecret(ctx, c3); err != nil {
		t.Fatalf("another provider's session ended: %v", err)
	}
	// A token session still works through the rebuilt table.
	_, tok, err := db.CreateToken(ctx, w.alice.UserID, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, c, err := db.OpenSession(ctx, tok, time.Hour); err != nil {
		t.Fatal(err)
	} else if s, err := db.SessionBySecret(ctx, c); err != nil || s.Principal != w.alice || s.Origin != (tenancy.SessionOrigin{}) {
		t.Fatalf("token session: %+v %v", s, err)
	}
}

// testSignInFlows: a flow is taken once, not after it expired, and a
// tenant is found by id or its unique name.
func testSignInFlows(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	f := store.SignInFlow{State: "st-1", Provider: "oidc:idp", Nonce: "n", Verifier: "v", Invitation: "ahi_x", ExpiresAt: time.Now().Add(time.Minute)}
	if err := db.StartSignInFlow(ctx, store.SignInFlow{State: "x"}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("incomplete flow: %v", err)
	}
	if err := db.StartSignInFlow(ctx, f); err != nil {
		t.Fatal(err)
	}
	got, err := db.TakeSignInFlow(ctx, "st-1")
	if err != nil || got.Nonce != "n" || got.Verifier != "v" || got.Invitation != "ahi_x" || got.Provider != "oidc:idp" {
		t.Fatalf("take: %+v %v", got, err)
	}
	if _, err := db.TakeSignInFlow(ctx, "st-1"); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("taken twice: %v", err)
	}
	f.State, f.ExpiresAt = "st-2", time.Now().Add(-time.Second)
	if err := db.StartSignInFlow(ctx, f); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TakeSignInFlow(ctx, "st-2"); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("expired flow taken: %v", err)
	}
	if tn, err := db.TenantByRef(ctx, "Acme"); err != nil || tn.ID != w.t1.ID {
		t.Fatalf("by name: %+v %v", tn, err)
	}
	if tn, err := db.TenantByRef(ctx, w.t2.ID); err != nil || tn.ID != w.t2.ID {
		t.Fatalf("by id: %+v %v", tn, err)
	}
	if _, err := db.TenantByRef(ctx, "nope"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := db.CreateTenant(ctx, "Acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TenantByRef(ctx, "Acme"); !errors.Is(err, tenancy.ErrConflict) {
		t.Fatalf("ambiguous name: %v", err)
	}
}
