package api_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
)

// TestTokensAPI: a user lists and revokes their own tokens only; a tenant
// admin lists and revokes any of the tenant's; a revoked token stops
// authenticating at once.
func TestTokensAPI(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	alice, err := ts.db.Authenticate(ctx, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ts.db.CreateUser(ctx, tenancy.User{TenantID: alice.TenantID, Email: "root@acme", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	_, adminSecret, err := ts.db.CreateToken(ctx, admin.ID, "admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	list := func(secret string) []tenancy.Token {
		t.Helper()
		status, _, raw := do(t, ts.base, call{"GET", "/tokens", secret, "", nil})
		var out []tenancy.Token
		if status != 200 || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("GET /tokens: %d %s", status, raw)
		}
		return out
	}
	mine := list(ts.alice)
	if len(mine) != 1 || mine[0].UserID != alice.UserID {
		t.Fatalf("alice's tokens: %+v", mine)
	}
	bob := list(ts.bob)
	if len(bob) != 1 || bob[0].ID == mine[0].ID {
		t.Fatalf("bob's tokens: %+v", bob)
	}
	if all := list(adminSecret); len(all) != 5 { // alice, bob, carol, victor, the admin
		t.Fatalf("the admin's listing: %+v", all)
	}
	cases := []struct {
		name, secret, id string
		status           int
	}{
		{"alice revokes bob's", ts.alice, bob[0].ID, 404},
		{"unknown token", ts.alice, "nope", 404},
		{"no token", "", mine[0].ID, 401},
		{"admin revokes bob's", adminSecret, bob[0].ID, 204},
		{"bob's revoked token is refused", ts.bob, bob[0].ID, 401},
		{"alice revokes her own", ts.alice, mine[0].ID, 204},
		{"alice's revoked token is refused", ts.alice, mine[0].ID, 401},
	}
	for _, tc := range cases {
		if status, _, raw := do(t, ts.base, call{"DELETE", "/tokens/" + tc.id, tc.secret, "", nil}); status != tc.status {
			t.Fatalf("%s: %d %s, want %d", tc.name, status, raw, tc.status)
		}
	}
	for _, tk := range list(adminSecret) {
		if (tk.ID == bob[0].ID || tk.ID == mine[0].ID) && tk.RevokedAt == nil {
			t.Fatalf("revoked token listed without revokedAt: %+v", tk)
		}
	}
}
