package storetest

import (
	"context"
	"errors"
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
	pk, pkCookie, err := db.OpenUserSession(ctx, w.alice.UserID, store.MethodPasskey, time.Hour)
	if err != nil || pk.Principal != w.alice || pk.Method != store.MethodPasskey {
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
	for _, m := range []string{"", store.MethodToken} {
		if _, _, err := db.OpenUserSession(ctx, w.alice.UserID, m, time.Hour); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("user session with method %q: %v", m, err)
		}
	}
	if _, _, err := db.OpenUserSession(ctx, "no-such-user", store.MethodPasskey, time.Hour); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Errorf("user session of an unknown user: %v", err)
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
	if _, _, err := db.OpenUserSession(ctx, w.alice.UserID, store.MethodPasskey, time.Hour); !errors.Is(err, tenancy.ErrUnauthenticated) {
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
