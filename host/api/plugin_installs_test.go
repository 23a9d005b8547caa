package api_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// principals authenticates each secret as its principal.
type principals map[string]tenancy.Principal

func (p principals) Authenticate(_ context.Context, secret string) (tenancy.Principal, error) {
	if pr, ok := p[secret]; ok {
		return pr, nil
	}
	return tenancy.Principal{}, tenancy.ErrUnauthenticated
}

// countingInstaller refuses every module, counting the calls that reached it.
type countingInstaller struct{ calls int }

func (c *countingInstaller) Install(context.Context, []byte, installed.Actor) (*wasm.Plugin, error) {
	c.calls++
	return nil, wasm.ErrRefused
}

func (c *countingInstaller) Upgrade(context.Context, []byte, installed.UpgradeOptions) (*wasm.Plugin, *wasm.Plugin, []manifest.Change, error) {
	c.calls++
	return nil, nil, nil, wasm.ErrRefused
}

func (c *countingInstaller) Remove(context.Context, string, string, installed.Actor) ([]*wasm.Plugin, error) {
	c.calls++
	return nil, wasm.ErrNotInstalled
}

// TestPluginChangesAreTheOperatorsAdmins: a plugin serves every tenant, so
// only an admin of a tenant the operator names reaches the installer; a
// tenant's own admin, a member, and a host without the setting are refused
// before it.
func TestPluginChangesAreTheOperatorsAdmins(t *testing.T) {
	auth := principals{
		"operator": {TenantID: "ops", UserID: "u1", Admin: true},
		"member":   {TenantID: "ops", UserID: "u2"},
		"tenant":   {TenantID: "acme", UserID: "u3", Admin: true},
	}
	cases := []struct {
		name, token, method, path string
		tenants                   []string
		status                    int
		reached                   bool
		detail                    string
	}{
		{"the operator's admin installs", "operator", "POST", "/api/v1/plugins", []string{"ops"}, 422, true, ""},
		{"the operator's admin upgrades", "operator", "PUT", "/api/v1/plugins/echo", []string{"ops"}, 422, true, ""},
		{"the operator's admin removes", "operator", "DELETE", "/api/v1/plugins/echo", []string{"ops"}, 404, true, ""},
		{"a member of the operator's tenant", "member", "POST", "/api/v1/plugins", []string{"ops"}, 403, false, "only admins of the operator's tenants"},
		{"another tenant's admin", "tenant", "DELETE", "/api/v1/plugins/echo", []string{"ops"}, 403, false, "only admins of the operator's tenants"},
		{"no tenant named", "operator", "POST", "/api/v1/plugins", nil, 403, false, "-plugin-admins"},
		{"no token", "", "POST", "/api/v1/plugins", []string{"ops"}, 401, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inst := &countingInstaller{}
			app := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: noPlugins{}, Auth: auth,
				PluginAdmins: api.PluginAdmins{Installer: inst, Tenants: c.tenants}})
			var body io.Reader
			if c.method != "DELETE" {
				body = strings.NewReader("\x00asm not really")
			}
			req := httptest.NewRequest(c.method, c.path, body)
			req.Header.Set("Content-Type", "application/wasm")
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || (inst.calls > 0) != c.reached || !strings.Contains(string(raw), c.detail) {
				t.Fatalf("%d (reached the installer: %v) %s", resp.StatusCode, inst.calls > 0, raw)
			}
		})
	}
	// An upgrade whose module is another plugin than the path names is
	// refused before the installer.
	inst0 := &countingInstaller{}
	app0 := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: noPlugins{}, Auth: auth, PluginAdmins: api.PluginAdmins{Installer: inst0, Tenants: []string{"ops"}}})
	req0 := httptest.NewRequest("PUT", "/api/v1/plugins/webfetch", bytes.NewReader(wasmtest.Module(t, "echo")))
	req0.Header.Set("Authorization", "Bearer operator")
	resp0, _ := app0.Test(req0)
	if raw, _ := io.ReadAll(resp0.Body); resp0.StatusCode != 400 || inst0.calls != 0 || !strings.Contains(string(raw), `the module is plugin \"echo\", not \"webfetch\"`) {
		t.Fatalf("an upgrade naming another plugin: %d %s", resp0.StatusCode, raw)
	}
	// An empty body is refused before the installer.
	inst := &countingInstaller{}
	app := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: noPlugins{}, Auth: auth, PluginAdmins: api.PluginAdmins{Installer: inst, Tenants: []string{"ops"}}})
	req := httptest.NewRequest("POST", "/api/v1/plugins", nil)
	req.Header.Set("Authorization", "Bearer operator")
	resp, _ := app.Test(req)
	if raw, _ := io.ReadAll(resp.Body); resp.StatusCode != 400 || inst.calls != 0 || !strings.Contains(string(raw), "application/wasm") {
		t.Fatalf("an empty install: %d %s", resp.StatusCode, raw)
	}
}
