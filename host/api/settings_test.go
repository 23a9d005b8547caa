package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
)

// TestWorkspaceSettings: members read a workspace's agent settings, its
// manager sets the entity cache on, off or back to the default (null),
// members and viewers may not, outsiders see no workspace, and a malformed
// body is refused. This server's rounds have no knowledge store, so the
// cache is "unavailable" whatever is set; the setting is kept.
func TestWorkspaceSettings(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	var tenant string
	if err := ts.db.SQL().QueryRowContext(ctx, `SELECT tenant_id FROM workspaces WHERE id = ?`, ts.wsA).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	u, err := ts.db.CreateUser(ctx, tenancy.User{TenantID: tenant, Email: "mia@acme"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ts.wsA, UserID: u.ID, Role: tenancy.RoleManager}); err != nil {
		t.Fatal(err)
	}
	_, mia, err := ts.db.CreateToken(ctx, u.ID, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	path := "/workspaces/" + ts.wsA + "/settings"
	stored := func() string {
		t.Helper()
		v, err := ts.db.WorkspaceEntityCache(ctx, tenancy.Principal{TenantID: tenant, UserID: u.ID}, ts.wsA)
		if err != nil {
			t.Fatal(err)
		}
		if v == nil {
			return "default"
		}
		if *v {
			return "on"
		}
		return "off"
	}
	unavailable := rounds.Settings{EntityCacheSource: rounds.SettingUnavailable, SearchLanguages: []string{}, MCPExternalTools: true}

	cases := []struct {
		name, method, token, body string
		status                    int
		stored                    string
	}{
		{"a member reads", "GET", ts.alice, "", 200, "default"},
		{"a viewer reads", "GET", ts.victor, "", 200, "default"},
		{"an outsider reads", "GET", ts.carol, "", 404, "default"},
		{"nobody reads", "GET", "", "", 401, "default"},
		{"a member may not set", "PUT", ts.alice, `{"entityCacheEnabled": true}`, 403, "default"},
		{"a viewer may not set", "PUT", ts.victor, `{"entityCacheEnabled": true}`, 403, "default"},
		{"an outsider may not set", "PUT", ts.carol, `{"entityCacheEnabled": true}`, 404, "default"},
		{"the manager turns it on", "PUT", mia, `{"entityCacheEnabled": true}`, 200, "on"},
		{"an unknown field", "PUT", mia, `{"entityCache": false}`, 400, "on"},
		{"not a boolean", "PUT", mia, `{"entityCacheEnabled": "no"}`, 400, "on"},
		{"not JSON", "PUT", mia, `entityCacheEnabled=false`, 400, "on"},
		{"the manager turns it off", "PUT", mia, `{"entityCacheEnabled": false}`, 200, "off"},
		{"back to the default", "PUT", mia, `{"entityCacheEnabled": null}`, 200, "default"},
		{"a language nobody analyses", "PUT", mia, `{"searchLanguages": ["xx"]}`, 400, "default"},
		{"search languages not a list", "PUT", mia, `{"searchLanguages": "de"}`, 400, "default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := call{c.method, path, c.token, "", nil}
			if c.body != "" {
				cl = call{c.method, path, c.token, "application/json", strings.NewReader(c.body)}
			}
			status, _, raw := do(t, ts.base, cl)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, raw)
			}
			if status == 200 {
				var got rounds.Settings
				if err := json.Unmarshal(raw, &got); err != nil || !reflect.DeepEqual(got, unavailable) {
					t.Fatalf("settings %s (%v), want %+v", raw, err, unavailable)
				}
			}
			if s := stored(); s != c.stored {
				t.Fatalf("stored %s, want %s", s, c.stored)
			}
		})
	}
	// The workspace's search languages: set by a manager, read back
	// canonical, and emptied again.
	for _, c := range []struct{ body, want string }{
		{`{"searchLanguages": ["de-CH", "fr", "de"]}`, "[de fr]"},
		{`{"searchLanguages": []}`, "[]"},
	} {
		status, _, raw := do(t, ts.base, call{"PUT", path, mia, "application/json", strings.NewReader(c.body)})
		var got rounds.Settings
		if err := json.Unmarshal(raw, &got); status != 200 || err != nil || fmt.Sprint(got.SearchLanguages) != c.want {
			t.Fatalf("%s: status %d, %s (%v), want languages %s", c.body, status, raw, err, c.want)
		}
	}
	// The MCP endpoint's external tools: left out by a manager, not by a
	// member; absent from a body, the setting stays.
	if status, _, raw := do(t, ts.base, call{"PUT", path, ts.alice, "application/json", strings.NewReader(`{"mcpExternalTools": false}`)}); status != 403 {
		t.Fatalf("a member leaves the external tools out: %d %s", status, raw)
	}
	for _, c := range []struct {
		body string
		want bool
	}{{`{"mcpExternalTools": false}`, false}, {`{"searchLanguages": []}`, false}, {`{"mcpExternalTools": true}`, true}} {
		status, _, raw := do(t, ts.base, call{"PUT", path, mia, "application/json", strings.NewReader(c.body)})
		var got rounds.Settings
		if err := json.Unmarshal(raw, &got); status != 200 || err != nil || got.MCPExternalTools != c.want {
			t.Fatalf("%s: status %d, %s (%v), want mcpExternalTools %v", c.body, status, raw, err, c.want)
		}
	}
}
