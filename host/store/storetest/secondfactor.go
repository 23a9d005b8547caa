package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// testSecondFactor: a tenant's passkey second-factor setting (admins only,
// off by default) makes its new token and identity-provider sessions
// pending, never a passkey session's nor another tenant's; a pending
// session is completed once.
func testSecondFactor(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	admin := w.alice
	admin.Admin = true
	if on, err := db.PasskeySecondFactor(ctx, w.alice.TenantID); err != nil || on {
		t.Fatalf("default: %v %v", on, err)
	}
	notAdmin := w.alice
	notAdmin.Admin = false
	if err := db.SetPasskeySecondFactor(ctx, notAdmin, true); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("non-admin set: %v", err)
	}
	_, tok, err := db.CreateToken(ctx, w.alice.UserID, "browser", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, daveTok, err := db.CreateToken(ctx, w.dave.UserID, "browser", nil)
	if err != nil {
		t.Fatal(err)
	}
	before, beforeCookie, err := db.OpenSession(ctx, tok, time.Hour)
	if err != nil || before.SecondFactorPending {
		t.Fatalf("before the setting: %+v %v", before, err)
	}

	if err := db.SetPasskeySecondFactor(ctx, admin, true); err != nil {
		t.Fatal(err)
	}
	if on, err := db.PasskeySecondFactor(ctx, w.alice.TenantID); err != nil || !on {
		t.Fatalf("after set: %v %v", on, err)
	}
	if on, err := db.PasskeySecondFactor(ctx, w.dave.TenantID); err != nil || on {
		t.Fatalf("the other tenant's setting changed: %v %v", on, err)
	}
	if s, err := db.SessionBySecret(ctx, beforeCookie); err != nil || s.SecondFactorPending {
		t.Fatalf("a session opened before the setting became pending: %+v %v", s, err)
	}

	s, cookie, err := db.OpenSession(ctx, tok, time.Hour)
	if err != nil || !s.SecondFactorPending {
		t.Fatalf("token session: %+v %v", s, err)
	}
	if got, err := db.SessionBySecret(ctx, cookie); err != nil || !got.SecondFactorPending {
		t.Fatalf("token session read back: %+v %v", got, err)
	}
	if d, _, err := db.OpenSession(ctx, daveTok, time.Hour); err != nil || d.SecondFactorPending {
		t.Fatalf("the other tenant's session: %+v %v", d, err)
	}
	oidc, oidcCookie, err := db.OpenUserSession(ctx, w.alice.UserID, time.Hour, tenancy.SessionOrigin{Provider: "oidc:corp", Subject: "sub"})
	if err != nil || !oidc.SecondFactorPending {
		t.Fatalf("identity provider session: %+v %v", oidc, err)
	}
	pk, pkCookie, err := db.OpenUserSession(ctx, w.alice.UserID, time.Hour, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey, Subject: "k"})
	if err != nil || pk.SecondFactorPending {
		t.Fatalf("passkey session: %+v %v", pk, err)
	}
	if err := db.CompleteSecondFactor(ctx, pk.ID); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("completing a session that is not pending: %v", err)
	}
	if got, err := db.SessionBySecret(ctx, pkCookie); err != nil || got.SecondFactorPending {
		t.Fatalf("passkey session read back: %+v %v", got, err)
	}

	if err := db.CompleteSecondFactor(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := db.SessionBySecret(ctx, cookie); err != nil || got.SecondFactorPending {
		t.Fatalf("after completion: %+v %v", got, err)
	}
	if err := db.CompleteSecondFactor(ctx, s.ID); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("completing twice: %v", err)
	}
	// An ended session cannot be completed.
	if err := db.EndSession(ctx, oidcCookie); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteSecondFactor(ctx, oidc.ID); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("completing an ended session: %v", err)
	}

	if err := db.SetPasskeySecondFactor(ctx, admin, false); err != nil {
		t.Fatal(err)
	}
	if s, _, err := db.OpenSession(ctx, tok, time.Hour); err != nil || s.SecondFactorPending {
		t.Fatalf("after turning it off: %+v %v", s, err)
	}
}
