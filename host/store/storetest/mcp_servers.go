package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testMCPServers: only a tenant's admin adds, lists, reads and removes its
// MCP servers; names are unique in the tenant; sealed secrets come back
// byte for byte; a workspace's tool set gets its own servers and its
// tenant's, never another workspace's or tenant's; outsiders see nothing.
func testMCPServers(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	cfg := mcpconfig.Config{Transport: mcpconfig.Stdio, Command: []string{"node", "/srv/memory.js"},
		Env: map[string]string{"MEMORY_FILE_PATH": "${WORKDIR}/m.jsonl"}, SecretEnv: []string{"TOKEN"}, ReadOnly: []string{"*"}, TimeoutMs: 5000}
	sealed := []byte{1, 0, 255, 7, 42}

	for _, c := range []struct {
		name string
		p    tenancy.Principal
		ws   string
		want error
	}{
		{"a member", w.alice, w.wsA.ID, tenancy.ErrForbidden},
		{"a member, bob", w.bob, w.wsA.ID, tenancy.ErrForbidden},
		{"another tenant's admin, here", w.daveAdmin, w.wsA.ID, tenancy.ErrNotFound},
		{"an unknown workspace", w.admin, "no-such-workspace", tenancy.ErrNotFound},
	} {
		if _, err := db.CreateMCPServer(ctx, c.p, mcpconfig.Server{Name: "x", WorkspaceID: c.ws, Config: cfg}); !errors.Is(err, c.want) {
			t.Errorf("create by %s: %v, want %v", c.name, err, c.want)
		}
	}
	memory, err := db.CreateMCPServer(ctx, w.admin, mcpconfig.Server{Name: "memory", WorkspaceID: w.wsA.ID, Config: cfg, Secrets: sealed})
	if err != nil || memory.ID == "" || memory.TenantID != w.t1.ID || memory.CreatedAt.IsZero() {
		t.Fatalf("create: %+v %v", memory, err)
	}
	web := mcpconfig.Config{Transport: mcpconfig.HTTP, URL: "https://mcp.example.com/mcp"}
	everywhere, err := db.CreateMCPServer(ctx, w.admin, mcpconfig.Server{Name: "web", Config: web})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMCPServer(ctx, w.admin, mcpconfig.Server{Name: "memory", Config: web}); !errors.Is(err, tenancy.ErrConflict) {
		t.Fatalf("a second server named memory: %v", err)
	}
	// Another tenant may use the same name.
	other, err := db.CreateMCPServer(ctx, w.daveAdmin, mcpconfig.Server{Name: "memory", Config: web})
	if err != nil {
		t.Fatal(err)
	}

	got, err := db.MCPServer(ctx, w.admin, memory.ID)
	if err != nil || got.Name != "memory" || got.WorkspaceID != w.wsA.ID || !bytes.Equal(got.Secrets, sealed) ||
		got.Config.TimeoutMs != 5000 || got.Config.Env["MEMORY_FILE_PATH"] != "${WORKDIR}/m.jsonl" || got.Config.Command[1] != "/srv/memory.js" ||
		got.Config.SecretEnv[0] != "TOKEN" || !got.CreatedAt.Equal(memory.CreatedAt) {
		t.Fatalf("read back: %+v %v", got, err)
	}
	list, err := db.MCPServers(ctx, w.admin)
	if err != nil || len(list) != 2 || list[0].Name != "memory" || list[1].Name != "web" {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, p := range []tenancy.Principal{w.alice, w.bob} {
		if _, err := db.MCPServers(ctx, p); !errors.Is(err, tenancy.ErrForbidden) {
			t.Errorf("list by %s: %v", p.UserID, err)
		}
		if _, err := db.MCPServer(ctx, p, memory.ID); !errors.Is(err, tenancy.ErrForbidden) {
			t.Errorf("read by %s: %v", p.UserID, err)
		}
	}
	if _, err := db.MCPServer(ctx, w.daveAdmin, memory.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("read by another tenant's admin: %v", err)
	}

	names := func(p tenancy.Principal, ws string) ([]string, error) {
		list, err := db.WorkspaceMCPServers(ctx, p, ws)
		var out []string
		for _, s := range list {
			out = append(out, s.Name)
		}
		return out, err
	}
	for _, c := range []struct {
		who  string
		p    tenancy.Principal
		ws   string
		want []string
		err  error
	}{
		{"a member of A", w.alice, w.wsA.ID, []string{"memory", "web"}, nil},
		{"a viewer of A", w.victor, w.wsA.ID, []string{"memory", "web"}, nil},
		{"the admin, in B", w.admin, w.wsB.ID, []string{"web"}, nil},
		{"a member of B only, in A", w.carol, w.wsA.ID, nil, tenancy.ErrNotFound},
		{"another tenant's admin, in A", w.daveAdmin, w.wsA.ID, nil, tenancy.ErrNotFound},
	} {
		got, err := names(c.p, c.ws)
		if !errors.Is(err, c.err) || len(got) != len(c.want) || (len(got) > 0 && (got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1])) {
			t.Errorf("%s: %v %v, want %v %v", c.who, got, err, c.want, c.err)
		}
	}

	for _, c := range []struct {
		name string
		p    tenancy.Principal
		id   string
		want error
	}{
		{"a member, bob", w.bob, memory.ID, tenancy.ErrForbidden},
		{"another tenant's admin", w.daveAdmin, memory.ID, tenancy.ErrNotFound},
		{"the admin, another tenant's server", w.admin, other.ID, tenancy.ErrNotFound},
		{"the admin", w.admin, memory.ID, nil},
		{"the admin, twice", w.admin, memory.ID, tenancy.ErrNotFound},
	} {
		if err := db.DeleteMCPServer(ctx, c.p, c.id); !errors.Is(err, c.want) {
			t.Errorf("delete by %s: %v, want %v", c.name, err, c.want)
		}
	}
	if got, _ := names(w.alice, w.wsA.ID); len(got) != 1 || got[0] != everywhere.Name {
		t.Fatalf("after delete: %v", got)
	}
}
