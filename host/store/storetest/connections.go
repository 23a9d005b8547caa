package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections/connrecord"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testConnections: a connection is its owner's alone (not another user's,
// not the tenant admin's, not another tenant's), its secret is stored as
// given (sealed by the caller), refreshes are optimistic, revoking wipes the
// secret, and an authorisation state is taken once by the user who started it.
func testConnections(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	sealed := []byte("sealed-by-the-caller")
	c, err := db.CreateConnection(ctx, w.alice, connrecord.ConnectionRecord{Provider: "jira", Label: "work", Auth: "basic",
		BaseURL: "https://example.atlassian.net", Account: "alice@example.org", Scopes: []string{"read:jira-work", "write:jira-work"},
		Secret: sealed, ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || c.Version != 1 || c.UserID != w.alice.UserID || c.TenantID != w.alice.TenantID {
		t.Fatalf("created %+v", c)
	}
	got, err := db.Connection(ctx, w.alice, c.ID)
	if err != nil || !bytes.Equal(got.Secret, sealed) || len(got.Scopes) != 2 || got.Account != "alice@example.org" || got.ExpiresAt.IsZero() || got.Revoked() {
		t.Fatalf("read back %+v %v", got, err)
	}
	// Nobody else sees or uses it: another member, the tenant's admin, another tenant.
	for name, p := range map[string]tenancy.Principal{"bob": w.bob, "admin": w.admin, "dave": w.dave, "daveAdmin": w.daveAdmin} {
		if _, err := db.Connection(ctx, p, c.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s reads alice's connection: %v", name, err)
		}
		if l, err := db.Connections(ctx, p); err != nil || len(l) != 0 {
			t.Errorf("%s lists %d connections, %v", name, len(l), err)
		}
		if _, err := db.UpdateConnectionSecret(ctx, p, c.ID, 1, []byte("x"), time.Time{}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s updates alice's connection: %v", name, err)
		}
	}
	if err := db.RevokeConnection(ctx, w.bob, c.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("bob revokes alice's connection: %v", err)
	}
	if err := db.RevokeConnection(ctx, w.daveAdmin, c.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("another tenant's admin revokes alice's connection: %v", err)
	}
	// Bad input stores nothing.
	for name, r := range map[string]connrecord.ConnectionRecord{
		"no provider": {Label: "x", Auth: "token", Secret: sealed},
		"no label":    {Provider: "jira", Label: " ", Auth: "token", Secret: sealed},
		"bad auth":    {Provider: "jira", Label: "x", Auth: "cookie", Secret: sealed},
		"no secret":   {Provider: "jira", Label: "x", Auth: "token"},
	} {
		if _, err := db.CreateConnection(ctx, w.alice, r); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := db.CreateConnection(ctx, w.alice, connrecord.ConnectionRecord{Provider: "jira", Label: "work", Auth: "token", Secret: sealed}); !errors.Is(err, tenancy.ErrConflict) {
		t.Errorf("duplicate label: %v", err)
	}
	if l, _ := db.Connections(ctx, w.alice); len(l) != 1 {
		t.Fatalf("alice has %d connections after bad input", len(l))
	}
	// Optimistic refresh: the first writer wins, a stale version conflicts.
	v2, err := db.UpdateConnectionSecret(ctx, w.alice, c.ID, 1, []byte("refreshed"), time.Now().Add(2*time.Hour))
	if err != nil || v2 != 2 {
		t.Fatalf("refresh: %d %v", v2, err)
	}
	if _, err := db.UpdateConnectionSecret(ctx, w.alice, c.ID, 1, []byte("stale"), time.Time{}); !errors.Is(err, tenancy.ErrConflict) {
		t.Fatalf("stale refresh: %v", err)
	}
	if got, _ := db.Connection(ctx, w.alice, c.ID); string(got.Secret) != "refreshed" || got.Version != 2 {
		t.Fatalf("after refresh %q v%d", got.Secret, got.Version)
	}
	// A check's outcome is kept with the connection, its owner's only, and
	// leaves the secret's version alone.
	if got, _ := db.Connection(ctx, w.alice, c.ID); !got.CheckedAt.IsZero() || got.LastError != "" {
		t.Fatalf("never checked, yet %v %q", got.CheckedAt, got.LastError)
	}
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	if err := db.SetConnectionCheck(ctx, w.alice, c.ID, at, "HTTP 401 from acme.atlassian.net"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetConnectionCheck(ctx, w.bob, c.ID, at, "bob's"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob records a check of alice's connection: %v", err)
	}
	if got, _ := db.Connection(ctx, w.alice, c.ID); !got.CheckedAt.Equal(at) || got.LastError != "HTTP 401 from acme.atlassian.net" || got.Version != 2 {
		t.Fatalf("after the check %v %q v%d", got.CheckedAt, got.LastError, got.Version)
	}
	if err := db.SetConnectionCheck(ctx, w.alice, c.ID, at.Add(time.Minute), ""); err != nil {
		t.Fatal(err)
	}
	if l, _ := db.Connections(ctx, w.alice); len(l) != 1 || l[0].LastError != "" || !l[0].CheckedAt.Equal(at.Add(time.Minute)) {
		t.Fatalf("listed after a good check %+v", l)
	}
	// Revoke wipes the secret; later refreshes are refused; revoking twice is fine.
	if err := db.RevokeConnection(ctx, w.alice, c.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeConnection(ctx, w.alice, c.ID); err != nil {
		t.Fatalf("revoke twice: %v", err)
	}
	got, err = db.Connection(ctx, w.alice, c.ID)
	if err != nil || !got.Revoked() || bytes.Contains(got.Secret, []byte("refreshed")) {
		t.Fatalf("revoked %+v %v", got, err)
	}
	if _, err := db.UpdateConnectionSecret(ctx, w.alice, c.ID, got.Version, []byte("again"), time.Time{}); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("refresh of a revoked connection: %v", err)
	}
	// The tenant's admin may revoke (not use) a member's connection.
	c2, err := db.CreateConnection(ctx, w.bob, connrecord.ConnectionRecord{Provider: "jira", Label: "bob", Auth: "token", Secret: sealed})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeConnection(ctx, w.admin, c2.ID); err != nil {
		t.Fatalf("admin revokes: %v", err)
	}
	// Authorisation states: once, by their owner, before expiry.
	st := connrecord.ConnectionAuthState{State: "s1", Provider: "google", Label: "g", Verifier: []byte("v"), ExpiresAt: time.Now().Add(10 * time.Minute)}
	if err := db.SaveConnectionAuthState(ctx, w.alice, st); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TakeConnectionAuthState(ctx, w.bob, "s1"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob takes alice's state: %v", err)
	}
	s, err := db.TakeConnectionAuthState(ctx, w.alice, "s1")
	if err != nil || s.Provider != "google" || string(s.Verifier) != "v" || s.Label != "g" {
		t.Fatalf("take: %+v %v", s, err)
	}
	if _, err := db.TakeConnectionAuthState(ctx, w.alice, "s1"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("taken twice: %v", err)
	}
	old := st
	old.State, old.ExpiresAt = "s2", time.Now().Add(-time.Minute)
	if err := db.SaveConnectionAuthState(ctx, w.alice, old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TakeConnectionAuthState(ctx, w.alice, "s2"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("expired state: %v", err)
	}
	if err := db.SaveConnectionAuthState(ctx, w.alice, connrecord.ConnectionAuthState{State: "s3"}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("incomplete state: %v", err)
	}
}
