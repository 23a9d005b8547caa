package scim_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/scim"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var _ scim.Store = (*store.DB)(nil)

func openSQLite(t *testing.T) *store.DB {
	db, err := store.Open(context.Background(), store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openPostgres(t *testing.T) *store.DB {
	db, err := store.Open(context.Background(), store.Config{URL: testenv.Postgres(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestProvidersSQLite(t *testing.T)   { testProviders(t, openSQLite(t)) }
func TestProvidersPostgres(t *testing.T) { testProviders(t, openPostgres(t)) }

// client sends SCIM requests to the server as a provider does.
type client struct {
	t     *testing.T
	app   *fiber.App
	token string
	ids   map[string]string // the documents' ids → ours
}

type reply struct {
	status int
	body   map[string]any
}

func (c *client) do(method, path, body string) reply {
	c.t.Helper()
	for doc, ours := range c.ids {
		body = strings.ReplaceAll(body, doc, ours)
	}
	req := httptest.NewRequest(method, "/scim/v2/"+path, strings.NewReader(body))
	req.Host = "agenthost.test"
	req.Header.Set("Content-Type", "application/scim+json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.app.Test(req, -1)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &r.body); err != nil {
			c.t.Fatalf("%s %s: %d %s: not JSON", method, path, res.StatusCode, b)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/scim+json" {
			c.t.Fatalf("%s %s: Content-Type %q", method, path, ct)
		}
	}
	return r
}

// file is a testdata request body (testdata/README.md names the sources).
func file(t *testing.T, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (c *client) want(r reply, status int, what string) reply {
	c.t.Helper()
	if r.status != status {
		c.t.Fatalf("%s: status %d, want %d: %v", what, r.status, status, r.body)
	}
	if status >= 400 {
		schemas, _ := r.body["schemas"].([]any)
		if len(schemas) != 1 || schemas[0] != "urn:ietf:params:scim:api:messages:2.0:Error" || r.body["status"] == nil {
			c.t.Fatalf("%s: not a SCIM error: %v", what, r.body)
		}
	}
	return r
}

func testProviders(t *testing.T, db *store.DB) {
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t1 := mustV(db.CreateTenant(ctx, "Acme"))
	t2 := mustV(db.CreateTenant(ctx, "Other"))
	ws := mustV(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: t1.ID, Name: "Research"}))
	tokID, secret, err := db.CreateSCIMToken(ctx, t1.ID, "entra")
	if err != nil {
		t.Fatal(err)
	}
	_, secret2, err := db.CreateSCIMToken(ctx, t2.ID, "okta")
	if err != nil {
		t.Fatal(err)
	}
	log := audit.NewLog(db, nil)
	app := fiber.New()
	// As host/api registers it.
	h := scim.New(db, log, nil).Handler()
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		app.Add(m, "/scim/v2/:resource", h)
		app.Add(m, "/scim/v2/:resource/:id", h)
	}
	c := &client{t: t, app: app, token: secret, ids: map[string]string{}}

	// Authentication: none, a wrong one, an API token are refused.
	for _, tok := range []string{"", "ahscim_nope", "ahk_" + strings.Repeat("a", 43)} {
		c2 := &client{t: t, app: app, token: tok}
		c2.want(c2.do("GET", "Users", ""), 401, "token "+tok)
	}
	for _, p := range []string{"ServiceProviderConfig", "ResourceTypes", "ResourceTypes/User", "Schemas", "Schemas/" + scim.UserSchema} {
		c.want(c.do("GET", p, ""), 200, p)
	}
	c.want(c.do("GET", "Nope", ""), 404, "an unknown endpoint")

	// Entra: create, find by userName and externalId, refuse a duplicate.
	r := c.want(c.do("POST", "Users", file(t, "entra_create_user.json")), 201, "entra create")
	entraID := r.body["id"].(string)
	c.ids["f648f8d5ea4e4cd38e9c"], c.ids["7f4bc1a3-285e-48ae-8202-5accb43efb0e"] = entraID, entraID
	entraUser, err := db.UserByID(ctx, entraID)
	if err != nil || entraUser.Email != "Test_User_11bb11bb-cc22-dd33-ee44-55ff55ff55ff@testuser.com" || entraUser.TenantID != t1.ID ||
		entraUser.Name != "givenName familyName" {
		t.Fatalf("the user Entra made: %+v %v", entraUser, err)
	}
	for _, f := range []string{`userName eq "test_user_00aa00aa-bb11-cc22-dd33-44ee44ee44ee"`, `externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"`,
		`userName eq "Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee" and externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"`} {
		r = c.want(c.do("GET", "Users?filter="+urlQuery(f), ""), 200, f)
		if r.body["totalResults"] != 1.0 || len(r.body["Resources"].([]any)) != 1 {
			t.Fatalf("filter %s: %v", f, r.body)
		}
	}
	r = c.want(c.do("GET", "Users?filter="+urlQuery(`userName eq "non-existent user"`), ""), 200, "no match")
	if r.body["totalResults"] != 0.0 || len(r.body["Resources"].([]any)) != 0 {
		t.Fatalf("no match: %v", r.body)
	}
	if r = c.want(c.do("GET", "Users?filter="+urlQuery(`userName co "x"`), ""), 400, "co"); r.body["scimType"] != "invalidFilter" {
		t.Fatalf("co: %v", r.body)
	}
	if r = c.want(c.do("POST", "Users", file(t, "entra_create_user.json")), 409, "a duplicate"); r.body["scimType"] != "uniqueness" {
		t.Fatalf("duplicate: %v", r.body)
	}
	// Another tenant's token sees none of it.
	other := &client{t: t, app: app, token: secret2}
	if r = other.want(other.do("GET", "Users", ""), 200, "other tenant"); r.body["totalResults"] != 0.0 {
		t.Fatalf("tenant 2 sees %v", r.body)
	}
	other.want(other.do("GET", "Users/"+entraID, ""), 404, "other tenant's user")
	other.want(other.do("PATCH", "Users/"+entraID, file(t, "entra_disable_user.json")), 404, "other tenant's patch")

	// Entra's PATCH shapes.
	c.want(c.do("PATCH", "Users/"+entraID, file(t, "entra_patch_user_multivalued.json")), 200, "multi-valued")
	r = c.want(c.do("GET", "Users/"+entraID, ""), 200, "get")
	if email := r.body["emails"].([]any)[0].(map[string]any)["value"]; email != "updatedEmail@microsoft.com" ||
		r.body["name"].(map[string]any)["familyName"] != "updatedFamilyName" {
		t.Fatalf("after the multi-valued patch: %v", r.body)
	}
	c.want(c.do("PATCH", "Users/"+entraID, file(t, "entra_compat_replace_many.json")), 200, "replace many")
	c.want(c.do("PATCH", "Users/"+entraID, file(t, "entra_compat_add_nickname.json")), 200, "nickName")
	r = c.want(c.do("PATCH", "Users/"+entraID, file(t, "entra_patch_user_username.json")), 200, "userName")
	if r.body["userName"] != "5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com" || r.body["displayName"] != "Bjfe" ||
		r.body["name"].(map[string]any)["givenName"] != "Kkom" || r.body["emails"].([]any)[0].(map[string]any)["value"] != "TestMhvaes@test.microsoft.com" {
		t.Fatalf("after Entra's patches: %v", r.body)
	}
	if r = c.want(c.do("PATCH", "Users/"+entraID, `{"Operations":[{"op":"replace","path":"favouriteColour","value":"red"}]}`), 400, "unknown path"); r.body["scimType"] != "invalidPath" {
		t.Fatalf("unknown path: %v", r.body)
	}
	c.want(c.do("PATCH", "Users/"+entraID, `{"Operations":[{"op":"frobnicate","path":"active","value":false}]}`), 400, "unknown op")
	c.want(c.do("PATCH", "Users/"+entraID, `{"Operations":[{"op":"replace","path":"active","value":"perhaps"}]}`), 400, "not a boolean")
	c.want(c.do("POST", "Users", `{"userName": ""}`), 400, "no userName")
	c.want(c.do("POST", "Users", `{"userName": `), 400, "broken JSON")
	c.want(c.do("POST", "Users", `{"userName":"big@x","displayName":"`+strings.Repeat("x", scim.MaxBody)+`"}`), 413, "a body over the limit")

	// Deactivation ends access at once: the user's API token stops.
	_, apiSecret, err := db.CreateToken(ctx, entraID, "laptop", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, apiSecret); err != nil {
		t.Fatal(err)
	}
	r = c.want(c.do("PATCH", "Users/"+entraID, file(t, "entra_compat_disable_user.json")), 200, `active "False"`)
	if r.body["active"] != false {
		t.Fatalf("after Entra's disable: %v", r.body)
	}
	if _, err := db.Authenticate(ctx, apiSecret); !errors.Is(err, tenancy.ErrUnauthenticated) {
		t.Fatalf("a deactivated user's token: %v", err)
	}
	c.want(c.do("PATCH", "Users/"+entraID, `{"Operations":[{"op":"Replace","path":"active","value":"True"}]}`), 200, "reactivate")
	if _, err := db.Authenticate(ctx, apiSecret); err != nil {
		t.Fatalf("a reactivated user's token: %v", err)
	}
	c.want(c.do("PATCH", "Users/"+entraID, file(t, "entra_disable_user.json")), 200, "active false")
	if _, err := db.Authenticate(ctx, apiSecret); err == nil {
		t.Fatal("a deactivated user's token still works")
	}

	// Okta: a person made before provisioning is adopted, not doubled.
	pre := mustV(db.CreateUser(ctx, tenancy.User{TenantID: t1.ID, Email: "test.user@okta.local", Name: "pre"}))
	r = c.want(c.do("POST", "Users", file(t, "okta_create_user.json")), 201, "okta create")
	oktaID := r.body["id"].(string)
	if oktaID != pre.ID || r.body["active"] != true || r.body["displayName"] != "Test User" {
		t.Fatalf("okta's user %v, want the existing %s", r.body, pre.ID)
	}
	c.ids["23a35c27-23d3-4c03-b4c5-6443c09e7173"], c.ids["89bb1940-b905-4575-9e7f-6f887cfb368e"] = oktaID, entraID
	r = c.want(c.do("PUT", "Users/"+oktaID, file(t, "okta_put_user.json")), 200, "okta put")
	if r.body["name"].(map[string]any)["givenName"] != "Another" {
		t.Fatalf("after okta's put: %v", r.body)
	}
	r = c.want(c.do("PATCH", "Users/"+oktaID, file(t, "okta_deactivate_user.json")), 200, "okta deactivate")
	if r.body["active"] != false {
		t.Fatalf("after okta's deactivate: %v", r.body)
	}
	if u, _ := db.UserByID(ctx, oktaID); u.DeactivatedAt == nil {
		t.Fatal("okta's deactivation did not deactivate")
	}
	c.want(c.do("PUT", "Users/"+oktaID, file(t, "okta_put_user.json")), 200, "okta reactivate")

	// Groups give workspace roles by the tenant's mappings; a membership
	// an admin gave is left alone.
	mapped := "1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName"
	if err := db.SetSCIMMapping(ctx, t1.ID, scim.Mapping{GroupName: mapped, WorkspaceID: ws.ID, Role: "manager"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSCIMMapping(ctx, t1.ID, scim.Mapping{GroupName: "Test SCIMv2", WorkspaceID: ws.ID, Role: "member"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSCIMMapping(ctx, t1.ID, scim.Mapping{GroupName: "x", WorkspaceID: ws.ID, Role: "owner"}); err == nil {
		t.Fatal("a mapping to an unknown role was kept")
	}
	role := func(uid string) tenancy.Role {
		r, err := db.MembershipRole(ctx, ws.ID, uid)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r = c.want(c.do("POST", "Groups", file(t, "entra_create_group.json")), 201, "entra group")
	entraGroup := r.body["id"].(string)
	c.want(c.do("PATCH", "Groups/"+entraGroup, file(t, "entra_add_members.json")), 204, "add members")
	if got := role(entraID); got != "" {
		t.Fatalf("a group no mapping names gave %q", got)
	}
	c.want(c.do("PATCH", "Groups/"+entraGroup, file(t, "entra_patch_group_name.json")), 204, "rename")
	if got := role(entraID); got != tenancy.RoleManager {
		t.Fatalf("the renamed group gave %q, want manager", got)
	}
	r = c.want(c.do("GET", "Groups?excludedAttributes=members&filter="+urlQuery(`displayName eq "`+mapped+`"`), ""), 200, "group by name")
	if res := r.body["Resources"].([]any); len(res) != 1 || res[0].(map[string]any)["members"] != nil {
		t.Fatalf("group by name: %v", r.body)
	}
	c.want(c.do("PATCH", "Groups/"+entraGroup, file(t, "entra_remove_members.json")), 204, "remove members")
	if got := role(entraID); got != "" {
		t.Fatalf("a removed member keeps %q", got)
	}
	c.want(c.do("PATCH", "Groups/"+entraGroup, `{"Operations":[{"op":"Add","path":"members","value":[{"value":"no-such-user"}]}]}`), 400, "unknown member")

	r = c.want(c.do("POST", "Groups", file(t, "okta_create_group.json")), 201, "okta group")
	oktaGroup := r.body["id"].(string)
	c.want(c.do("PATCH", "Groups/"+oktaGroup, file(t, "okta_patch_group_name.json")), 204, "okta rename")
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: entraID, Role: tenancy.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	c.want(c.do("PATCH", "Groups/"+oktaGroup, file(t, "okta_patch_group_members.json")), 204, "okta members")
	if got := role(oktaID); got != tenancy.RoleMember {
		t.Fatalf("okta's member has %q", got)
	}
	c.want(c.do("PATCH", "Groups/"+oktaGroup, file(t, "okta_replace_group_members.json")), 204, "okta replace")
	r = c.want(c.do("GET", "Groups/"+oktaGroup, ""), 200, "okta group")
	if n := len(r.body["members"].([]any)); n != 2 || role(entraID) != tenancy.RoleViewer {
		t.Fatalf("after the replace: %d members, the admin's viewer became %q", n, role(entraID))
	}
	c.want(c.do("PATCH", "Groups/"+oktaGroup, file(t, "entra_compat_remove_member_path.json")), 204, "remove by path")
	if r = c.want(c.do("GET", "Groups/"+oktaGroup, ""), 200, "okta group"); len(r.body["members"].([]any)) != 1 || role(entraID) != tenancy.RoleViewer {
		t.Fatalf("after removing by path: %v, the admin's viewer is %q", r.body["members"], role(entraID))
	}
	c.want(c.do("DELETE", "Groups/"+oktaGroup, ""), 204, "delete group")
	if got := role(oktaID); got != "" {
		t.Fatalf("a deleted group's member keeps %q", got)
	}
	c.want(c.do("GET", "Groups/"+oktaGroup, ""), 404, "deleted group")

	// DELETE deactivates and unlinks; the person's record stays.
	c.want(c.do("DELETE", "Users/"+oktaID, ""), 204, "delete user")
	c.want(c.do("GET", "Users/"+oktaID, ""), 404, "deleted user")
	if u, err := db.UserByID(ctx, oktaID); err != nil || u.DeactivatedAt == nil {
		t.Fatalf("the deleted user: %+v %v", u, err)
	}
	// A revoked SCIM token stops.
	if err := db.RevokeSCIMToken(ctx, t1.ID, tokID); err != nil {
		t.Fatal(err)
	}
	c.want(c.do("GET", "Users", ""), 401, "revoked token")

	// Every change is in the tenant's audit log, by the SCIM token.
	seen := map[string]bool{}
	if err := audit.Each(ctx, db, audit.Query{TenantID: t1.ID, Action: "scim.*"}, func(e audit.Entry) error {
		if e.Actor.Kind != audit.ActorSCIM || e.Actor.ID != tokID {
			t.Errorf("entry %+v: actor is not the SCIM token", e)
		}
		seen[e.Action] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{audit.SCIMUserCreated, audit.SCIMUserUpdated, audit.SCIMUserDeactivated, audit.SCIMUserReactivated,
		audit.SCIMUserDeleted, audit.SCIMGroupCreated, audit.SCIMGroupUpdated, audit.SCIMGroupDeleted} {
		if !seen[a] {
			t.Errorf("no %s in the audit log", a)
		}
	}
}

func urlQuery(s string) string {
	return strings.NewReplacer(" ", "%20", `"`, "%22", "@", "%40").Replace(s)
}

func mustV[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
