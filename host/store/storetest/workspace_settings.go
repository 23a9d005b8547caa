package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
)

// testWorkspaceEntityCache: a workspace's entity-cache setting follows the
// host's default (nil) until its manager or the tenant's admin turns it on
// or off; members read it, only managers and admins change it, outsiders
// see no workspace; nil goes back to the default; workspaces are apart.
func testWorkspaceEntityCache(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	show := func(v *bool) string {
		if v == nil {
			return "default"
		}
		return fmt.Sprint(*v)
	}
	read := func(p tenancy.Principal, ws, want string) {
		t.Helper()
		got, err := db.WorkspaceEntityCache(ctx, p, ws)
		if err != nil || show(got) != want {
			t.Fatalf("read by %s: %s %v, want %s", p.UserID, show(got), err, want)
		}
	}
	on, off := true, false

	read(w.alice, w.wsA.ID, "default")
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		ws   string
		want error
	}{
		{"a member", w.alice, w.wsA.ID, tenancy.ErrForbidden},
		{"a viewer", w.victor, w.wsA.ID, tenancy.ErrForbidden},
		{"a personal member", w.pat, w.wsA.ID, tenancy.ErrForbidden},
		{"another workspace's manager", w.carol, w.wsA.ID, tenancy.ErrNotFound},
		{"another tenant's manager", w.dave, w.wsA.ID, tenancy.ErrNotFound},
		{"another tenant's admin", w.daveAdmin, w.wsA.ID, tenancy.ErrNotFound},
		{"an unknown workspace", w.admin, "no-such-workspace", tenancy.ErrNotFound},
	} {
		if err := db.SetWorkspaceEntityCache(ctx, c.p, c.ws, &on); !errors.Is(err, c.want) {
			t.Errorf("set by %s: %v, want %v", c.name, err, c.want)
		}
	}
	read(w.alice, w.wsA.ID, "default")
	for _, p := range []tenancy.Principal{w.carol, w.dave, w.daveAdmin} {
		if _, err := db.WorkspaceEntityCache(ctx, p, w.wsA.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("read by outsider %s: %v", p.UserID, err)
		}
	}

	if err := db.SetWorkspaceEntityCache(ctx, w.admin, w.wsA.ID, &on); err != nil {
		t.Fatal(err)
	}
	if err := db.SetWorkspaceEntityCache(ctx, w.carol, w.wsB.ID, &off); err != nil {
		t.Fatal(err)
	}
	read(w.alice, w.wsA.ID, "true")
	read(w.victor, w.wsA.ID, "true")
	read(w.carol, w.wsB.ID, "false")
	read(w.admin, w.wsB.ID, "false")
	if err := db.SetWorkspaceEntityCache(ctx, w.admin, w.wsA.ID, nil); err != nil {
		t.Fatal(err)
	}
	read(w.alice, w.wsA.ID, "default")
	read(w.carol, w.wsB.ID, "false")
	// The tool set, in the same row, is untouched.
	if set, _, err := db.WorkspaceTools(ctx, w.carol, w.wsB.ID); err != nil || set != "core" {
		t.Fatalf("tool set after the setting: %q %v", set, err)
	}
}

// testWorkspaceMCPExternalTools: a workspace's MCP endpoint offers its
// external MCP servers' tools until its manager or the tenant's admin
// leaves them out; members read the setting, only managers and admins
// change it, outsiders see no workspace; workspaces are apart.
func testWorkspaceMCPExternalTools(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	read := func(p tenancy.Principal, ws string, want bool) {
		t.Helper()
		got, err := db.WorkspaceMCPExternalTools(ctx, p, ws)
		if err != nil || got != want {
			t.Fatalf("read by %s: %v %v, want %v", p.UserID, got, err, want)
		}
	}
	read(w.alice, w.wsA.ID, true)
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		ws   string
		want error
	}{
		{"a member", w.alice, w.wsA.ID, tenancy.ErrForbidden},
		{"a viewer", w.victor, w.wsA.ID, tenancy.ErrForbidden},
		{"another workspace's manager", w.carol, w.wsA.ID, tenancy.ErrNotFound},
		{"another tenant's admin", w.daveAdmin, w.wsA.ID, tenancy.ErrNotFound},
		{"an unknown workspace", w.admin, "no-such-workspace", tenancy.ErrNotFound},
	} {
		if err := db.SetWorkspaceMCPExternalTools(ctx, c.p, c.ws, false); !errors.Is(err, c.want) {
			t.Errorf("set by %s: %v, want %v", c.name, err, c.want)
		}
	}
	read(w.alice, w.wsA.ID, true)
	if _, err := db.WorkspaceMCPExternalTools(ctx, w.dave, w.wsA.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("read by an outsider: %v", err)
	}
	if err := db.SetWorkspaceMCPExternalTools(ctx, w.admin, w.wsA.ID, false); err != nil {
		t.Fatal(err)
	}
	read(w.alice, w.wsA.ID, false)
	read(w.victor, w.wsA.ID, false)
	read(w.carol, w.wsB.ID, true)
	if err := db.SetWorkspaceMCPExternalTools(ctx, w.admin, w.wsA.ID, true); err != nil {
		t.Fatal(err)
	}
	read(w.alice, w.wsA.ID, true)
}
