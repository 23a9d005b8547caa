package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
)

// TestInvitationsAPI: a tenant admin invites (the link is returned when no
// mail server is configured), lists and revokes; a member may do none of
// it; without providers the sign-in routes say so.
func TestInvitationsAPI(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	tn, err := ts.db.Tenant(ctx, tenancy.Principal{TenantID: mustTenant(t, ts)})
	if err != nil {
		t.Fatal(err)
	}
	adm, err := ts.db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "root@acme", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	_, admin, err := ts.db.CreateToken(ctx, adm.ID, "admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSuffix(ts.base, "/api/v1")
	body := `{"email":"new@acme","workspaces":[{"workspaceId":"` + ts.wsA + `","role":"member"}],"ttlHours":2}`
	if st, _, raw := do(t, ts.base, call{method: "POST", path: "/invitations", token: ts.alice, contentType: "application/json", body: strings.NewReader(body)}); st != 403 {
		t.Fatalf("member invites: %d %s", st, raw)
	}
	st, _, raw := do(t, ts.base, call{method: "POST", path: "/invitations", token: admin, contentType: "application/json", body: strings.NewReader(body)})
	var got struct {
		Invitation struct{ ID, Email string }
		Mailed     bool
		Link       string
	}
	json.Unmarshal(raw, &got)
	if st != 201 || got.Mailed || !strings.HasPrefix(got.Link, root+"/invite/ahi_") || got.Invitation.Email != "new@acme" {
		t.Fatalf("invite: %d %s", st, raw)
	}
	if st, _, raw := do(t, ts.base, call{method: "POST", path: "/invitations", token: admin, contentType: "application/json", body: strings.NewReader(`{"email":"nobody"}`)}); st != 400 {
		t.Fatalf("bad address: %d %s", st, raw)
	}
	if st, _, raw := do(t, ts.base, call{method: "GET", path: "/invitations", token: admin}); st != 200 || !strings.Contains(string(raw), got.Invitation.ID) || strings.Contains(string(raw), "ahi_") {
		t.Fatalf("list: %d %s", st, raw)
	}
	if st, _, _ := do(t, ts.base, call{method: "GET", path: "/invitations", token: ts.alice}); st != 403 {
		t.Fatalf("member lists: %d", st)
	}
	if st, _, raw := do(t, ts.base, call{method: "DELETE", path: "/invitations/" + got.Invitation.ID, token: admin}); st != 200 || !strings.Contains(string(raw), "revokedAt") {
		t.Fatalf("revoke: %d %s", st, raw)
	}
	if st, _, _ := do(t, ts.base, call{method: "DELETE", path: "/invitations/" + got.Invitation.ID, token: admin}); st != 404 {
		t.Fatalf("revoke twice: %d", st)
	}
	if st, _, raw := do(t, ts.base, call{method: "GET", path: "/auth/providers"}); st != 200 || string(raw) != "[]" {
		t.Fatalf("providers: %d %s", st, raw)
	}
	if st, _, _ := do(t, root, call{method: "GET", path: "/auth/oidc/any"}); st != 404 {
		t.Fatalf("no provider: %d", st)
	}
}

// mustTenant is the test server's tenant (alice's).
func mustTenant(t *testing.T, ts testServer) string {
	t.Helper()
	p, err := ts.db.Authenticate(context.Background(), ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	return p.TenantID
}
