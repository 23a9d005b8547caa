package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testDeactivation: deactivating a user ends their sessions at once and
// makes their API tokens stop working (Authenticate, OpenSession), whichever
// way the sessions were opened; reactivating gives the tokens back but not
// the ended sessions; another tenant's user cannot be touched; sign-ins are
// recorded.
func testDeactivation(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	_, secret, err := db.CreateToken(ctx, w.alice.UserID, "cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, bobSecret, err := db.CreateToken(ctx, w.bob.UserID, "cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := db.User(ctx, w.alice); err != nil || u.LastSignInAt != nil || u.DeactivatedAt != nil {
		t.Fatalf("fresh user: %+v %v", u, err)
	}
	before := time.Now().Add(-time.Second)
	_, tokCookie, err := db.OpenSession(ctx, secret, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pk, pkCookie, err := db.OpenUserSession(ctx, w.alice.UserID, time.Hour, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey})
	if err != nil || pk.Principal != w.alice || pk.Method() != tenancy.MethodPasskey {
		t.Fatalf("user session: %+v %v", pk, err)
	}
	_, bobCookie, err := db.OpenSession(ctx, bobSecret, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.User(ctx, w.alice)
	if err != nil || u.LastSignInAt == nil || u.LastSignInAt.Before(before) {
		t.Fatalf("last sign-in not recorded: %+v %v", u, err)
	}

	// Tenant 2's admin cannot deactivate tenant 1's user, nor can an
	// unknown user be.
	for _, c := range []struct{ tenant, user string }{{w.t2.ID, w.alice.UserID}, {w.t1.ID, "no-such-user"}} {
		if err := db.DeactivateUser(ctx, c.tenant, c.user); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("deactivate %s in %s: %v", c.user, c.tenant, err)
		}
		if err := db.ReactivateUser(ctx, c.tenant, c.user); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("reactivate %s in %s: %v", c.user, c.tenant, err)
		}
	}
	if _, err := db.Authenticate(ctx, secret); err != nil {
		t.Fatalf("a refused cross-tenant deactivation changed something: %v", err)
	}

	if err := db.DeactivateUser(ctx, w.t1.ID, w.alice.UserID); err != nil {
		t.Fatal(err)
	}
	if err := db.DeactivateUser(ctx, w.t1.ID, w.alice.UserID); err != nil {
		t.Fatalf("deactivating twice: %v", err)
	}
	if _, err := db.Authenticate(ctx, secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("token of a deactivated user: %v", err)
	}
	if _, err := w.env.DB.Authenticate(ctx, secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("token of a deactivated user: %v", err)
	}
	if w.env.Peer != nil {
		// A second host sharing the database sees it at once too.
		if _, err := w.env.Peer.Authenticate(ctx, secret); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("token of a deactivated user on a peer: %v", err)
		}
	}
	for name, c := range map[string]string{"token session": tokCookie, "passkey session": pkCookie} {
		if _, err := db.SessionBySecret(ctx, c); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("%s of a deactivated user: %v", name, err)
		}
	}
	if _, _, err := db.OpenSession(ctx, secret, time.Hour); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("sign-in of a deactivated user with a token: %v", err)
	}
	if _, _, err := db.OpenUserSession(ctx, w.alice.UserID, time.Hour, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey}); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("sign-in of a deactivated user: %v", err)
	}
	if u, err := db.User(ctx, w.alice); err != nil || u.DeactivatedAt == nil {
		t.Errorf("deactivation not shown: %+v %v", u, err)
	}
	// Bob, of the same tenant, is untouched.
	if _, err := db.SessionBySecret(ctx, bobCookie); err != nil {
		t.Errorf("another user's session: %v", err)
	}
	if _, err := db.Authenticate(ctx, bobSecret); err != nil {
		t.Errorf("another user's token: %v", err)
	}

	if err := db.ReactivateUser(ctx, w.t1.ID, w.alice.UserID); err != nil {
		t.Fatal(err)
	}
	if err := db.ReactivateUser(ctx, w.t1.ID, w.alice.UserID); err != nil {
		t.Fatalf("reactivating twice: %v", err)
	}
	if p, err := db.Authenticate(ctx, secret); err != nil || p != w.alice {
		t.Errorf("token after reactivation: %+v %v", p, err)
	}
	for name, c := range map[string]string{"token session": tokCookie, "passkey session": pkCookie} {
		if _, err := db.SessionBySecret(ctx, c); !errors.Is(err, tenancy.ErrUnauthenticated) {
			t.Errorf("%s revived by reactivation: %v", name, err)
		}
	}
	if _, c, err := db.OpenSession(ctx, secret, time.Hour); err != nil {
		t.Errorf("sign-in after reactivation: %v", err)
	} else if _, err := db.SessionBySecret(ctx, c); err != nil {
		t.Errorf("new session after reactivation: %v", err)
	}
	if u, err := db.User(ctx, w.alice); err != nil || u.DeactivatedAt != nil {
		t.Errorf("still shown deactivated: %+v %v", u, err)
	}
}

// testPasskeys: passkeys are kept per user, a credential id once; removal
// is the owner's only; the signature counter only goes up; ceremonies are
// usable once, until they expire, for their kind only.
func testPasskeys(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	k1, err := db.AddPasskey(ctx, w.alice.UserID, " laptop ", []byte{1, 2, 3}, []byte(`{"id":"AQID"}`), 0)
	if err != nil || k1.Name != "laptop" {
		t.Fatalf("add: %+v %v", k1, err)
	}
	k2, err := db.AddPasskey(ctx, w.alice.UserID, "phone", []byte{4, 5}, []byte(`{}`), 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddPasskey(ctx, w.bob.UserID, "stolen", []byte{1, 2, 3}, []byte(`{}`), 0); !errors.Is(err, tenancy.ErrConflict) {
		t.Errorf("a credential id twice: %v", err)
	}
	for _, name := range []string{"", "  ", "a\nb", strings.Repeat("x", 101)} {
		if _, err := db.AddPasskey(ctx, w.alice.UserID, name, []byte{9}, []byte(`{}`), 0); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := db.AddPasskey(ctx, "no-such-user", "x", []byte{8}, []byte(`{}`), 0); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
	keys, err := db.UserPasskeys(ctx, w.alice.UserID)
	if err != nil || len(keys) != 2 || keys[0].ID != k1.ID || keys[1].ID != k2.ID || keys[1].SignCount != 7 {
		t.Fatalf("list: %+v %v", keys, err)
	}
	got, err := db.PasskeyByCredentialID(ctx, []byte{4, 5})
	if err != nil || got.ID != k2.ID || got.UserID != w.alice.UserID {
		t.Fatalf("by credential id: %+v %v", got, err)
	}
	if _, err := db.PasskeyByCredentialID(ctx, []byte{6}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("unknown credential id: %v", err)
	}
	// The counter must go up; 0 stays 0 for authenticators that do not count.
	if err := db.UsePasskey(ctx, k2.ID, 7, []byte(`{}`)); !errors.Is(err, store.ErrCloned) {
		t.Errorf("same counter: %v", err)
	}
	if err := db.UsePasskey(ctx, k2.ID, 3, []byte(`{}`)); !errors.Is(err, store.ErrCloned) {
		t.Errorf("lower counter: %v", err)
	}
	if err := db.UsePasskey(ctx, k2.ID, 8, []byte(`{"n":8}`)); err != nil {
		t.Errorf("higher counter: %v", err)
	}
	if err := db.UsePasskey(ctx, k1.ID, 0, []byte(`{}`)); err != nil {
		t.Errorf("non-counting authenticator: %v", err)
	}
	if got, _ := db.PasskeyByCredentialID(ctx, []byte{4, 5}); got.SignCount != 8 || got.LastUsedAt == nil || string(got.Credential) != `{"n":8}` {
		t.Errorf("after use: %+v", got)
	}
	if _, err := db.RemovePasskey(ctx, w.bob.UserID, k1.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("another user removes a passkey: %v", err)
	}
	if _, err := db.RemovePasskey(ctx, w.alice.UserID, k1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PasskeyByCredentialID(ctx, []byte{1, 2, 3}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("removed passkey still found: %v", err)
	}
	if _, err := db.RemovePasskey(ctx, w.alice.UserID, k1.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("removing twice: %v", err)
	}

	// Ceremonies.
	id, err := db.SaveCeremony(ctx, store.CeremonyRegister, w.alice.UserID, []byte(`{"challenge":"c"}`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.TakeCeremony(ctx, id, store.CeremonySignIn); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("other kind: %v", err)
	}
	id, _ = db.SaveCeremony(ctx, store.CeremonyRegister, w.alice.UserID, []byte(`{"challenge":"c"}`), time.Minute)
	user, data, err := db.TakeCeremony(ctx, id, store.CeremonyRegister)
	if err != nil || user != w.alice.UserID || string(data) != `{"challenge":"c"}` {
		t.Fatalf("take: %q %q %v", user, data, err)
	}
	if _, _, err := db.TakeCeremony(ctx, id, store.CeremonyRegister); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("taken twice: %v", err)
	}
	id, _ = db.SaveCeremony(ctx, store.CeremonySignIn, "", []byte(`{}`), -time.Second)
	if _, _, err := db.TakeCeremony(ctx, id, store.CeremonySignIn); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("expired: %v", err)
	}
	if _, err := db.SaveCeremony(ctx, store.CeremonySignIn, "no-such-user", []byte(`{}`), time.Minute); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
	if u, err := db.UsersByEmail(ctx, " ALICE@acme "); err != nil || len(u) != 1 || u[0].ID != w.alice.UserID {
		t.Errorf("by e-mail: %+v %v", u, err)
	}
	if u, err := db.UserByID(ctx, w.dave.UserID); err != nil || u.TenantID != w.t2.ID {
		t.Errorf("by id: %+v %v", u, err)
	}
}

// testPeople: a tenant's people with their workspaces, roles and passkey
// counts; admin flag and memberships changed only within the tenant;
// sessions listed and ended by their owner.
func testPeople(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	people, err := db.People(ctx, w.t1.ID)
	if err != nil || len(people) != 6 {
		t.Fatalf("people: %d %v", len(people), err)
	}
	for _, p := range people {
		if p.TenantID != w.t1.ID {
			t.Errorf("person of another tenant listed: %+v", p)
		}
		if p.ID == w.carol.UserID && (len(p.Workspaces) != 1 || p.Workspaces[0].WorkspaceID != w.wsB.ID || p.Workspaces[0].Role != tenancy.RoleManager || p.Workspaces[0].Name != "B") {
			t.Errorf("carol: %+v", p)
		}
	}
	if _, err := db.Person(ctx, w.t1.ID, w.dave.UserID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("another tenant's person: %v", err)
	}
	if err := db.SetAdmin(ctx, w.t2.ID, w.alice.UserID, true); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("admin flag across tenants: %v", err)
	}
	if n, err := db.ActiveAdmins(ctx, w.t1.ID); err != nil || n != 1 {
		t.Errorf("admins: %d %v", n, err)
	}
	if err := db.SetAdmin(ctx, w.t1.ID, w.alice.UserID, true); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.ActiveAdmins(ctx, w.t1.ID); n != 2 {
		t.Errorf("admins after promotion: %d", n)
	}
	_, secret, _ := db.CreateToken(ctx, w.alice.UserID, "cli", nil)
	if p, err := db.Authenticate(ctx, secret); err != nil || !p.Admin {
		t.Errorf("promotion not in effect: %+v %v", p, err)
	}
	for _, c := range []struct {
		tenant string
		m      tenancy.Membership
	}{
		{w.t2.ID, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.alice.UserID, Role: tenancy.RoleViewer}},
		{w.t1.ID, tenancy.Membership{WorkspaceID: w.wsC.ID, UserID: w.alice.UserID, Role: tenancy.RoleViewer}},
		{w.t2.ID, tenancy.Membership{WorkspaceID: w.wsC.ID, UserID: w.alice.UserID, Role: tenancy.RoleViewer}},
		{w.t1.ID, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.dave.UserID, Role: tenancy.RoleViewer}},
	} {
		if err := db.SetTenantMembership(ctx, c.tenant, c.m); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("membership %+v by tenant %s: %v", c.m, c.tenant, err)
		}
	}
	if err := db.SetTenantMembership(ctx, w.t1.ID, tenancy.Membership{WorkspaceID: w.wsB.ID, UserID: w.alice.UserID, Role: tenancy.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetTenantMembership(ctx, w.t1.ID, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.alice.UserID}); err != nil {
		t.Fatal(err)
	}
	p, err := db.Person(ctx, w.t1.ID, w.alice.UserID)
	if err != nil || len(p.Workspaces) != 1 || p.Workspaces[0].WorkspaceID != w.wsB.ID || p.Workspaces[0].Role != tenancy.RoleViewer {
		t.Errorf("alice's memberships: %+v %v", p, err)
	}

	// Sessions of their owner.
	s1, _, _ := db.OpenSession(ctx, secret, time.Hour)
	s2, _, _ := db.OpenUserSession(ctx, w.alice.UserID, time.Hour, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey})
	s3, _, _ := db.OpenUserSession(ctx, w.alice.UserID, time.Hour, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey})
	if _, _, err := db.OpenUserSession(ctx, w.bob.UserID, time.Hour, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey}); err != nil {
		t.Fatal(err)
	}
	list, err := db.UserSessions(ctx, w.alice.UserID)
	if err != nil || len(list) != 3 || list[0].ID != s3.ID || list[2].ID != s1.ID || list[2].Method() != tenancy.MethodToken {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	if err := db.EndUserSession(ctx, w.bob.UserID, s2.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("another user ends a session: %v", err)
	}
	if err := db.EndUserSession(ctx, w.alice.UserID, s2.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := db.EndOtherSessions(ctx, w.alice.UserID, s3.ID); err != nil || n != 1 {
		t.Errorf("end others: %d %v", n, err)
	}
	if list, _ := db.UserSessions(ctx, w.alice.UserID); len(list) != 1 || list[0].ID != s3.ID {
		t.Errorf("after ending: %+v", list)
	}
	if list, _ := db.UserSessions(ctx, w.bob.UserID); len(list) != 1 {
		t.Errorf("bob's sessions touched: %+v", list)
	}
}
