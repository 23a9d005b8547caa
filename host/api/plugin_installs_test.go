package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

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

// widening refuses every upgrade as one that widens the plugin.
type widening struct{ countingInstaller }

func (widening) Upgrade(context.Context, []byte, installed.UpgradeOptions) (*wasm.Plugin, *wasm.Plugin, []manifest.Change, error) {
	changes := []manifest.Change{
		{What: "timeoutMs", From: "1000", To: "600000", Widens: true},
		{What: "tool deleteAll", To: "writing", Widens: true},
		{What: "tool read", From: "readOnly", To: "writing", Widens: true},
		{What: "capability http", To: "present", Widens: true},
		{What: "host api.example.com", To: "present", Widens: true},
		{What: "tool old", From: "present"},
	}
	return nil, nil, changes, &installed.WideningError{Plugin: "notes", From: "1.0.0", To: "2.0.0", Widenings: manifest.Widenings(changes)}
}

// TestWideningProblemGolden: the 409 an upgrade that widens the plugin
// gets, byte for byte (testdata/widening-409.json; -update rewrites it).
func TestWideningProblemGolden(t *testing.T) {
	auth := principals{"operator": {TenantID: "ops", UserID: "u1", Admin: true}}
	app := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: noPlugins{}, Auth: auth,
		PluginAdmins: api.PluginAdmins{Installer: &widening{}, Tenants: []string{"ops"}}})
	req := httptest.NewRequest("PUT", "/api/v1/plugins/notes", strings.NewReader("\x00asm not really"))
	req.Header.Set("Authorization", "Bearer operator")
	req.Header.Set("Content-Type", "application/wasm")
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 409 || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	golden := filepath.Join("testdata", "widening-409.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Fatalf("the 409 body differs from %s:\n%s", golden, pretty.Bytes())
	}
}
