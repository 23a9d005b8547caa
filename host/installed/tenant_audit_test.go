package installed_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// TestTenantAuditLog: every install, refused and applied upgrade and
// removal is also in the asking admin's tenant's audit log, with the
// change (versions, digests, the manifest's changes); an applied widening
// is a grant.changed entry listing what the plugin was given.
func TestTenantAuditLog(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ops, err := db.CreateTenant(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	d, err := installed.Open(ctx, t.TempDir(), newHost(t), slog.New(slog.DiscardHandler),
		installed.Options{Audit: db, Tenants: audit.NewLog(db, nil)})
	if err != nil {
		t.Fatal(err)
	}
	by := installed.Actor{TenantID: ops.ID, UserID: "u1"}
	if _, err := d.Install(ctx, narrowNotes(t), by); err != nil {
		t.Fatal(err)
	}
	wider := wasmtest.NotesVersion(t, "notes1", "2.4.0", func(m *manifest.Manifest) {
		m.Limits.AllowedHosts = append(m.Limits.AllowedHosts, "evil.example.org")
	})
	if _, _, _, err := d.Upgrade(ctx, wider, installed.UpgradeOptions{Actor: by}); err == nil {
		t.Fatal("an unconfirmed widening was applied")
	}
	if _, _, _, err := d.Upgrade(ctx, wider, installed.UpgradeOptions{Actor: by, ConfirmWidening: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Remove(ctx, "notes", "", by); err != nil {
		t.Fatal(err)
	}
	page, err := db.SearchAudit(ctx, audit.Query{TenantID: ops.ID})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	byAction := map[string]audit.Entry{}
	for _, e := range page.Entries {
		actions = append(actions, e.Action)
		byAction[e.Action] = e
		if e.TargetID != "notes" || e.Actor.ID != "u1" || e.Actor.Kind != audit.ActorUser {
			t.Errorf("entry %+v", e)
		}
	}
	if got, want := strings.Join(actions, ","), "plugin.removed,grant.changed,plugin.upgraded,plugin.upgrade_refused,plugin.installed"; got != want {
		t.Fatalf("the tenant's log %s, want %s", got, want)
	}
	var up struct {
		FromVersion, ToVersion, AllowedBy string
		Changes                           []manifest.Change
	}
	if err := json.Unmarshal(byAction[audit.PluginUpgraded].Detail, &up); err != nil || up.FromVersion != "1.0.0" || up.ToVersion != "2.4.0" ||
		up.AllowedBy != "confirmed" || len(up.Changes) == 0 {
		t.Fatalf("the upgrade's detail %s: %v", byAction[audit.PluginUpgraded].Detail, err)
	}
	if g := string(byAction[audit.GrantChanged].Detail); !strings.Contains(g, "evil.example.org") {
		t.Fatalf("the grant entry does not name the new host: %s", g)
	}
}
