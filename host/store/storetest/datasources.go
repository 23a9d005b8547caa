package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections/connrecord"
	"github.com/agenthost/agenthost/host/datasources/dsrecord"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testDataSources: a data source is its owner's alone and reads through
// the owner's own connection; bad input stores nothing; a revoked
// connection shows on the source and keeps it from being due; a sync is
// one claim at a time, and a superseded claim writes nothing.
func testDataSources(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	conn := func(p tenancy.Principal, label string) connrecord.ConnectionRecord {
		c, err := db.CreateConnection(ctx, p, connrecord.ConnectionRecord{Provider: "jira", Label: label, Auth: "basic", Secret: []byte("sealed")})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ca, cb := conn(w.alice, "work"), conn(w.bob, "work")
	ds, err := db.CreateDataSource(ctx, w.alice, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: ca.ID, Service: "issues",
		Path: "PROJ", Label: " Project files ", SourceType: "jiraProject", AutoSync: true, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if ds.ID == "" || ds.Label != "Project files" || ds.State != dsrecord.SyncIdle || ds.NextSync == nil || ds.Provider != "jira" || ds.UserID != w.alice.UserID {
		t.Fatalf("created %+v", ds)
	}
	got, err := db.DataSource(ctx, w.alice, ds.ID)
	if err != nil || got.Interval != time.Hour || !got.AutoSync || got.Path != "PROJ" || got.SourceType != "jiraProject" || got.ConnectionRevoked {
		t.Fatalf("read back %+v %v", got, err)
	}
	if l, err := db.DataSources(ctx, w.alice, w.wsA.ID); err != nil || len(l) != 1 {
		t.Fatalf("alice lists %d, %v", len(l), err)
	}
	if l, err := db.DataSources(ctx, w.alice, w.wsB.ID); err != nil || len(l) != 0 {
		t.Fatalf("alice lists %d in workspace B, %v", len(l), err)
	}
	// Nobody else sees, lists or deletes it: another member, the tenant's
	// admin, another tenant.
	for name, p := range map[string]tenancy.Principal{"bob": w.bob, "admin": w.admin, "dave": w.dave, "daveAdmin": w.daveAdmin} {
		if _, err := db.DataSource(ctx, p, ds.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s reads alice's data source: %v", name, err)
		}
		if l, err := db.DataSources(ctx, p, ""); err != nil || len(l) != 0 {
			t.Errorf("%s lists %d data sources, %v", name, len(l), err)
		}
		if err := db.DeleteDataSource(ctx, p, ds.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s deletes alice's data source: %v", name, err)
		}
	}
	// Nobody makes a data source over another's connection, nor into a
	// workspace they cannot write to; bad input stores nothing.
	for name, tc := range map[string]struct {
		p    tenancy.Principal
		d    dsrecord.DataSource
		want error
	}{
		"bob over alice's connection":  {w.bob, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: ca.ID, Service: "issues", Label: "x"}, tenancy.ErrNotFound},
		"dave over alice's connection": {w.dave, dsrecord.DataSource{WorkspaceID: w.wsC.ID, ConnectionID: ca.ID, Service: "issues", Label: "x"}, tenancy.ErrNotFound},
		"into a foreign workspace":     {w.alice, dsrecord.DataSource{WorkspaceID: w.wsC.ID, ConnectionID: ca.ID, Service: "issues", Label: "x"}, tenancy.ErrNotFound},
		"into a workspace not hers":    {w.alice, dsrecord.DataSource{WorkspaceID: w.wsB.ID, ConnectionID: ca.ID, Service: "issues", Label: "x"}, tenancy.ErrNotFound},
		"no label":                     {w.alice, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: ca.ID, Service: "issues", Label: "  "}, tenancy.ErrInvalid},
		"no service":                   {w.alice, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: ca.ID, Label: "x"}, tenancy.ErrInvalid},
		"interval too short":           {w.alice, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: ca.ID, Service: "issues", Label: "x", AutoSync: true, Interval: time.Second}, tenancy.ErrInvalid},
		"same label":                   {w.alice, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: ca.ID, Service: "issues", Label: "Project files"}, tenancy.ErrConflict},
	} {
		if _, err := db.CreateDataSource(ctx, tc.p, tc.d); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if _, err := db.CreateDataSource(ctx, w.victor, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: conn(w.victor, "v").ID, Service: "issues", Label: "x"}); !errors.Is(err, tenancy.ErrForbidden) {
		t.Errorf("a viewer makes a data source: %v", err)
	}
	if l, _ := db.DataSources(ctx, w.alice, ""); len(l) != 1 {
		t.Fatalf("alice has %d data sources after bad input", len(l))
	}

	// Due: at once when made; a claim takes it; a second claim does not.
	at := time.Now().Add(time.Second)
	due, err := db.DueDataSources(ctx, at, time.Hour, 10)
	if err != nil || len(due) != 1 || due[0].ID != ds.ID {
		t.Fatalf("due %+v %v", due, err)
	}
	seq, ok, err := db.ClaimDataSourceSync(ctx, ds.ID, at, time.Hour, true)
	if err != nil || !ok || seq != 1 {
		t.Fatalf("claim: %d %v %v", seq, ok, err)
	}
	if _, ok, _ := db.ClaimDataSourceSync(ctx, ds.ID, at, time.Hour, false); ok {
		t.Fatal("a second claim of a queued source succeeded")
	}
	if due, _ := db.DueDataSources(ctx, at, time.Hour, 10); len(due) != 0 {
		t.Fatalf("a claimed source is still due: %+v", due)
	}
	// The claim's sync records what it stored; a stale claim's writes are refused.
	if ok, err := db.PutDataSourceItem(ctx, ds.ID, seq, dsrecord.DataSourceItem{EntryID: "10001", EntryPath: "PROJ-1/10001", Name: "a.pdf", Size: 3,
		Modified: at, FileID: "f1"}); err != nil || !ok {
		t.Fatalf("put item: %v %v", ok, err)
	}
	if ok, err := db.PutDataSourceItem(ctx, ds.ID, seq, dsrecord.DataSourceItem{EntryID: "10001", Name: "a.pdf", Size: 4, FileID: "f1"}); err != nil || !ok {
		t.Fatalf("replace item: %v %v", ok, err)
	}
	if ok, _ := db.PutDataSourceItem(ctx, ds.ID, seq+7, dsrecord.DataSourceItem{EntryID: "x", Name: "x", FileID: "f"}); ok {
		t.Fatal("a superseded claim recorded an item")
	}
	if _, err := db.PutDataSourceItem(ctx, ds.ID, seq, dsrecord.DataSourceItem{EntryID: "y"}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("item without a file: %v", err)
	}
	items, err := db.DataSourceItems(ctx, ds.ID)
	if err != nil || len(items) != 1 || items["10001"].Size != 4 || items["10001"].FileID != "f1" {
		t.Fatalf("items %+v %v", items, err)
	}
	next := at.Add(time.Hour)
	synced := at
	if ok, err := db.UpdateDataSourceSync(ctx, ds.ID, seq, at, dsrecord.DataSourceSync{State: dsrecord.SyncIdle, LastSynced: &synced,
		LastSummary: dsRef("1 new"), LastError: dsRef(""), NextSync: &next, FolderID: dsRef("folder-1"), Resume: dsRef(`{"nodes":[{"path":"PROJ","cursor":"page-2"}]}`)}); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if ok, _ := db.UpdateDataSourceSync(ctx, ds.ID, seq-1, at, dsrecord.DataSourceSync{State: dsrecord.SyncFailed}); ok {
		t.Fatal("a superseded claim changed the state")
	}
	// Recording the job's id after the fact keeps the state a worker set.
	job := int64(42)
	if ok, err := db.UpdateDataSourceSync(ctx, ds.ID, seq, at, dsrecord.DataSourceSync{QueueJobID: &job}); err != nil || !ok {
		t.Fatalf("job id: %v %v", ok, err)
	}
	got, _ = db.DataSource(ctx, w.alice, ds.ID)
	// The checkpoint a sync left stays until a sync writes another (or "").
	if got.Resume != `{"nodes":[{"path":"PROJ","cursor":"page-2"}]}` {
		t.Fatalf("the sync's checkpoint: %q", got.Resume)
	}
	if got.State != dsrecord.SyncIdle || got.QueueJobID != 42 || got.LastSynced == nil || got.LastSummary != "1 new" || got.FolderID != "folder-1" || got.NextSync == nil || !got.NextSync.Equal(next.UTC().Truncate(time.Microsecond)) {
		t.Fatalf("after the sync %+v", got)
	}
	if due, _ := db.DueDataSources(ctx, at, time.Hour, 10); len(due) != 0 {
		t.Fatalf("a synced source is due before its interval: %+v", due)
	}
	if _, ok, _ := db.ClaimDataSourceSync(ctx, ds.ID, at, time.Hour, true); ok {
		t.Fatal("the scheduler claimed a source not due")
	}
	// A claim abandoned by a dead host is taken again once stale.
	seq2, ok, _ := db.ClaimDataSourceSync(ctx, ds.ID, at, time.Hour, false)
	if !ok || seq2 != seq+1 {
		t.Fatalf("sync now: %d %v", seq2, ok)
	}
	later := at.Add(2 * time.Hour)
	seq3, ok, _ := db.ClaimDataSourceSync(ctx, ds.ID, later, time.Hour, false)
	if !ok || seq3 != seq2+1 {
		t.Fatalf("stale claim not taken: %d %v", seq3, ok)
	}
	// Revoked: the source says so and is never due.
	bs, err := db.CreateDataSource(ctx, w.bob, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: cb.ID, Service: "issues", Label: "bob's", AutoSync: true, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeConnection(ctx, w.bob, cb.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := db.DataSource(ctx, w.bob, bs.ID); err != nil || !got.ConnectionRevoked {
		t.Fatalf("revoked connection not shown: %+v %v", got, err)
	}
	if due, _ := db.DueDataSources(ctx, later, time.Hour, 10); len(due) != 0 {
		t.Fatalf("a source of a revoked connection is due: %+v", due)
	}
	if _, err := db.CreateDataSource(ctx, w.bob, dsrecord.DataSource{WorkspaceID: w.wsA.ID, ConnectionID: cb.ID, Service: "issues", Label: "new"}); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("a data source over a revoked connection: %v", err)
	}
	// Deleting takes its records with it.
	if err := db.DeleteDataSource(ctx, w.alice, ds.ID); err != nil {
		t.Fatal(err)
	}
	if items, _ := db.DataSourceItems(ctx, ds.ID); len(items) != 0 {
		t.Fatalf("items outlive their data source: %+v", items)
	}
	if _, err := db.DataSourceByID(ctx, ds.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("deleted source read: %v", err)
	}
}

func dsRef[T any](v T) *T { return &v }
