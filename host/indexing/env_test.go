package indexing_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// env is a migrated embedded store with its blob directory and one member
// of one workspace: what every ingestion test starts from.
type env struct {
	db    *store.DB
	blobs *blob.Dir
	p     tenancy.Principal
	ws    string
}

func newEnv(tb testing.TB) env {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	db, err := store.Open(ctx, store.Config{Dir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	blobs, err := blob.NewDir(filepath.Join(dir, "blobs"))
	if err != nil {
		tb.Fatal(err)
	}
	tn, _ := db.CreateTenant(ctx, "t")
	ws, _ := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "w"})
	u, _ := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@t"})
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		tb.Fatal(err)
	}
	return env{db: db, blobs: blobs, p: tenancy.Principal{TenantID: tn.ID, UserID: u.ID}, ws: ws.ID}
}

// upload stores a file in the env's workspace through svc.
func (e env) upload(tb testing.TB, svc *files.Service, name string, data []byte) files.Item {
	tb.Helper()
	f, _, err := svc.Upload(context.Background(), e.p, files.Upload{WorkspaceID: e.ws, Name: name, Content: bytes.NewReader(data)})
	if err != nil {
		tb.Fatal(err)
	}
	return f
}
