package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

func jsonBody(s string) *strings.Reader { return strings.NewReader(s) }

// TestPeopleAPI: a tenant admin lists their tenant's people, changes roles
// and memberships, deactivates (sessions and tokens end at once) and
// reactivates; nothing reaches another tenant; members may not manage
// people; the last admin cannot be removed.
func TestPeopleAPI(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	alice, err := ts.db.Authenticate(ctx, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := ts.db.CreateUser(ctx, tenancy.User{TenantID: alice.TenantID, Email: "root@acme", Admin: true})
	_, adminTok, _ := ts.db.CreateToken(ctx, admin.ID, "admin", nil)
	// Tenant B, with its own admin and person.
	tb, _ := ts.db.CreateTenant(ctx, "Other")
	wsB, _ := ts.db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tb.ID, Name: "Theirs"})
	otherAdmin, _ := ts.db.CreateUser(ctx, tenancy.User{TenantID: tb.ID, Email: "root@other", Admin: true})
	_, otherTok, _ := ts.db.CreateToken(ctx, otherAdmin.ID, "admin", nil)
	dave, _ := ts.db.CreateUser(ctx, tenancy.User{TenantID: tb.ID, Email: "dave@other"})
	_, daveTok, _ := ts.db.CreateToken(ctx, dave.ID, "cli", nil)

	list := func(tok string) []store.Person {
		t.Helper()
		status, _, raw := do(t, ts.base, call{"GET", "/people", tok, "", nil})
		var out []store.Person
		if status != 200 || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("GET /people: %d %s", status, raw)
		}
		return out
	}
	people := list(adminTok)
	if len(people) != 5 {
		t.Fatalf("tenant A's people: %d", len(people))
	}
	for _, p := range people {
		if p.TenantID != alice.TenantID {
			t.Errorf("a person of another tenant listed: %+v", p)
		}
		if p.ID == alice.UserID && (len(p.Workspaces) != 1 || p.Workspaces[0].WorkspaceID != ts.wsA || p.Workspaces[0].Role != tenancy.RoleMember) {
			t.Errorf("alice: %+v", p)
		}
	}
	if theirs := list(otherTok); len(theirs) != 2 {
		t.Errorf("tenant B's people: %+v", theirs)
	}
	patch := func(tok, id, body string) (int, []byte) {
		status, _, raw := do(t, ts.base, call{"PATCH", "/people/" + id, tok, "application/json", jsonBody(body)})
		return status, raw
	}
	cases := []struct {
		name        string
		method, url string
		tok, body   string
		status      int
	}{
		{"a member lists people", "GET", "/people", ts.alice, "", 403},
		{"a member promotes themselves", "PATCH", "/people/" + alice.UserID, ts.alice, `{"admin":true}`, 403},
		{"admin A deactivates B's person", "PATCH", "/people/" + dave.ID, adminTok, `{"deactivated":true}`, 404},
		{"admin A promotes B's person", "PATCH", "/people/" + dave.ID, adminTok, `{"admin":true}`, 404},
		{"admin A adds B's person to a workspace", "PUT", "/people/" + dave.ID + "/workspaces/" + ts.wsA, adminTok, `{"role":"member"}`, 404},
		{"admin A adds alice to B's workspace", "PUT", "/people/" + alice.UserID + "/workspaces/" + wsB.ID, adminTok, `{"role":"member"}`, 404},
		{"admin B removes alice from A", "DELETE", "/people/" + alice.UserID + "/workspaces/" + ts.wsA, otherTok, "", 404},
		{"admin deactivates themselves", "PATCH", "/people/" + admin.ID, adminTok, `{"deactivated":true}`, 409},
		{"the last admin steps down", "PATCH", "/people/" + admin.ID, adminTok, `{"admin":false}`, 409},
		{"bad role", "PUT", "/people/" + alice.UserID + "/workspaces/" + ts.wsA, adminTok, `{"role":"emperor"}`, 400},
		{"unknown field", "PATCH", "/people/" + alice.UserID, adminTok, `{"boss":true}`, 400},
	}
	for _, c := range cases {
		var body *strings.Reader
		ct := ""
		if c.body != "" {
			body, ct = jsonBody(c.body), "application/json"
		}
		cl := call{c.method, c.url, c.tok, ct, nil}
		if body != nil {
			cl.body = body
		}
		if status, _, raw := do(t, ts.base, cl); status != c.status {
			t.Errorf("%s: %d %s", c.name, status, raw)
		}
	}
	if _, err := ts.db.Authenticate(ctx, daveTok); err != nil {
		t.Errorf("tenant B's person touched by tenant A's admin: %v", err)
	}

	// Roles and memberships.
	status, _, raw := do(t, ts.base, call{"PUT", "/people/" + alice.UserID + "/workspaces/" + ts.wsA, adminTok, "application/json", jsonBody(`{"role":"viewer"}`)})
	var p store.Person
	if status != 200 || json.Unmarshal(raw, &p) != nil || len(p.Workspaces) != 1 || p.Workspaces[0].Role != tenancy.RoleViewer {
		t.Fatalf("change role: %d %s", status, raw)
	}
	if status, _, raw := do(t, ts.base, call{"DELETE", "/people/" + alice.UserID + "/workspaces/" + ts.wsA, adminTok, "", nil}); status != 200 {
		t.Fatalf("remove from workspace: %d %s", status, raw)
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/workspaces/" + ts.wsA + "/folders", ts.alice, "", nil}); status != 404 {
		t.Errorf("alice still reaches the workspace she was removed from: %d", status)
	}
	if status, raw := patch(adminTok, alice.UserID, `{"admin":true}`); status != 200 {
		t.Fatalf("promote: %d %s", status, raw)
	}
	if p, _ := ts.db.Authenticate(ctx, ts.alice); !p.Admin {
		t.Errorf("promotion not in effect")
	}
	if status, raw := patch(adminTok, alice.UserID, `{"admin":false}`); status != 200 {
		t.Fatalf("demote: %d %s", status, raw)
	}

	// Deactivation ends alice's session and token at once.
	sess, cookie, err := ts.db.OpenSession(ctx, ts.alice, 3600e9)
	if err != nil {
		t.Fatal(err)
	}
	_ = sess
	if status, raw := patch(adminTok, alice.UserID, `{"deactivated":true}`); status != 200 || !strings.Contains(string(raw), "deactivatedAt") {
		t.Fatalf("deactivate: %d %s", status, raw)
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/workspaces", ts.alice, "", nil}); status != 401 {
		t.Errorf("deactivated person's token: %d", status)
	}
	if _, err := ts.db.SessionBySecret(ctx, cookie); err == nil {
		t.Errorf("deactivated person's session lives")
	}
	if status, raw := patch(adminTok, alice.UserID, `{"deactivated":false}`); status != 200 || strings.Contains(string(raw), "deactivatedAt") {
		t.Fatalf("reactivate: %d %s", status, raw)
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/workspaces", ts.alice, "", nil}); status != 200 {
		t.Errorf("reactivated person's token: %d", status)
	}

	// Each change is in tenant A's audit log, by the admin, about alice;
	// none in tenant B's.
	for _, action := range []string{audit.MembershipSet, audit.MembershipRemoved, api.AuditUserAdminChanged, api.AuditUserDeactivated, api.AuditUserReactivated} {
		page, err := ts.db.SearchAudit(ctx, audit.Query{TenantID: alice.TenantID, Action: action, Target: alice.UserID})
		if err != nil || len(page.Entries) == 0 || page.Entries[0].Actor.ID != admin.ID {
			t.Errorf("audit %s: %+v %v", action, page.Entries, err)
		}
		if page, _ := ts.db.SearchAudit(ctx, audit.Query{TenantID: tb.ID, Action: action}); len(page.Entries) != 0 {
			t.Errorf("audit %s in the other tenant: %+v", action, page.Entries)
		}
	}
}

// TestMyTokensAndSessions: a person creates a token that expires (the
// secret answered once), lists and revokes their own only, and lists and
// ends their sessions.
func TestMyTokensAndSessions(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	alice, _ := ts.db.Authenticate(ctx, ts.alice)
	bob, _ := ts.db.Authenticate(ctx, ts.bob)
	for _, body := range []string{`{"name":"x"}`, `{"name":"x","expiresInDays":400}`, `{"name":" ","expiresInDays":3}`} {
		if status, _, raw := do(t, ts.base, call{"POST", "/me/tokens", ts.alice, "application/json", jsonBody(body)}); status != 400 {
			t.Errorf("create %s: %d %s", body, status, raw)
		}
	}
	status, _, raw := do(t, ts.base, call{"POST", "/me/tokens", ts.alice, "application/json", jsonBody(`{"name":"laptop","expiresInDays":30}`)})
	var created struct {
		Token  tenancy.Token `json:"token"`
		Secret string        `json:"secret"`
	}
	if status != 201 || json.Unmarshal(raw, &created) != nil || created.Token.ExpiresAt == nil || !strings.HasPrefix(created.Secret, "ahk_") {
		t.Fatalf("create: %d %s", status, raw)
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/workspaces", created.Secret, "", nil}); status != 200 {
		t.Errorf("the new token: %d", status)
	}
	status, _, raw = do(t, ts.base, call{"GET", "/me/tokens", ts.alice, "", nil})
	var mine []tenancy.Token
	if status != 200 || json.Unmarshal(raw, &mine) != nil || len(mine) != 2 || strings.Contains(string(raw), created.Secret) {
		t.Fatalf("list: %d %s", status, raw)
	}
	if status, _, _ := do(t, ts.base, call{"DELETE", "/me/tokens/" + created.Token.ID, ts.bob, "", nil}); status != 404 {
		t.Errorf("bob revokes alice's token: %d", status)
	}
	if status, _, _ := do(t, ts.base, call{"DELETE", "/me/tokens/" + created.Token.ID, ts.alice, "", nil}); status != 204 {
		t.Errorf("revoke: %d", status)
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/workspaces", created.Secret, "", nil}); status != 401 {
		t.Errorf("the revoked token: %d", status)
	}

	s1, c1, _ := ts.db.OpenSession(ctx, ts.alice, 3600e9)
	_, c2, _ := ts.db.OpenUserSession(ctx, alice.UserID, 3600e9, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey})
	_, cb, _ := ts.db.OpenUserSession(ctx, bob.UserID, 3600e9, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey})
	status, _, raw = do(t, ts.base, call{"GET", "/me/sessions", ts.alice, "", nil})
	var sessions []struct {
		ID, Method string
		Current    bool
	}
	if status != 200 || json.Unmarshal(raw, &sessions) != nil || len(sessions) != 2 || sessions[1].ID != s1.ID || sessions[1].Method != "token" || sessions[0].Method != "passkey" {
		t.Fatalf("sessions: %d %s", status, raw)
	}
	if status, _, _ := do(t, ts.base, call{"DELETE", "/me/sessions/" + s1.ID, ts.bob, "", nil}); status != 404 {
		t.Errorf("bob ends alice's session: %d", status)
	}
	if status, _, _ := do(t, ts.base, call{"DELETE", "/me/sessions/" + s1.ID, ts.alice, "", nil}); status != 204 {
		t.Errorf("end one: %d", status)
	}
	if _, err := ts.db.SessionBySecret(ctx, c1); err == nil {
		t.Errorf("ended session lives")
	}
	status, _, raw = do(t, ts.base, call{"DELETE", "/me/sessions", ts.alice, "", nil})
	if status != 200 || !strings.Contains(string(raw), `"ended":1`) {
		t.Errorf("end others: %d %s", status, raw)
	}
	if _, err := ts.db.SessionBySecret(ctx, c2); err == nil {
		t.Errorf("the other session lives")
	}
	if _, err := ts.db.SessionBySecret(ctx, cb); err != nil {
		t.Errorf("bob's session ended by alice: %v", err)
	}
}
