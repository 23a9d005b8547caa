package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// testPluginAudit: records come back as written, in order, per plugin or
// all; the store gives each its id and time.
func testPluginAudit(t *testing.T, open Opener) {
	ctx := context.Background()
	db := migrated(t, open).DB
	widen := []manifest.Change{{What: "timeoutMs", From: "1000", To: "600000", Widens: true}, {What: "tool old", From: "present"}}
	for _, r := range []store.PluginAuditRecord{
		{ActorTenant: "ops", ActorUser: "u1", Action: store.PluginInstalled, Plugin: "notes", ToVersion: "1.0.0", ToSHA256: "aa"},
		{ActorTenant: "ops", ActorUser: "u1", Action: store.PluginUpgradeRefused, Plugin: "notes", FromVersion: "1.0.0", ToVersion: "2.0.0",
			FromSHA256: "aa", ToSHA256: "bb", Changes: widen, Widened: true},
		{ActorTenant: "ops", ActorUser: "u2", Action: store.PluginUpgraded, Plugin: "notes", FromVersion: "1.0.0", ToVersion: "2.0.0",
			FromSHA256: "aa", ToSHA256: "bb", Changes: widen, Widened: true, AllowedBy: "confirmed"},
		{ActorTenant: "ops", ActorUser: "u1", Action: store.PluginInstalled, Plugin: "other", ToVersion: "0.1.0"},
		{ActorTenant: "ops", ActorUser: "u2", Action: store.PluginRemoved, Plugin: "notes", FromVersion: "2.0.0", FromSHA256: "bb"},
	} {
		got, err := db.RecordPluginChange(ctx, r)
		if err != nil || got.ID == "" || got.At.IsZero() {
			t.Fatalf("record %+v: %+v %v", r, got, err)
		}
	}
	if _, err := db.RecordPluginChange(ctx, store.PluginAuditRecord{Plugin: "notes"}); err == nil {
		t.Fatal("a record without an action was stored")
	}
	notes, err := db.PluginAudit(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, r := range notes {
		actions = append(actions, r.Action+" by "+r.ActorUser)
	}
	if want := "install by u1,upgrade-refused by u1,upgrade by u2,remove by u2"; strings.Join(actions, ",") != want {
		t.Fatalf("notes' log %s, want %s", strings.Join(actions, ","), want)
	}
	up := notes[2]
	if up.FromVersion != "1.0.0" || up.ToVersion != "2.0.0" || up.FromSHA256 != "aa" || up.ToSHA256 != "bb" || !up.Widened || up.AllowedBy != "confirmed" ||
		len(up.Changes) != 2 || up.Changes[0] != widen[0] || up.Changes[1] != widen[1] || up.ActorTenant != "ops" {
		t.Fatalf("upgrade record %+v", up)
	}
	if notes[0].Changes == nil || len(notes[0].Changes) != 0 || notes[0].Widened {
		t.Fatalf("install record %+v", notes[0])
	}
	all, err := db.PluginAudit(ctx, "")
	if err != nil || len(all) != 5 || all[3].Plugin != "other" {
		t.Fatalf("the whole log: %d records %v", len(all), err)
	}
	if none, err := db.PluginAudit(ctx, "nope"); err != nil || len(none) != 0 {
		t.Fatalf("an unknown plugin's log: %v %v", none, err)
	}
}
