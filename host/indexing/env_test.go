package indexing_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/worldtest"
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
	w := worldtest.New(tb, worldtest.Options{})
	return env{db: w.DB, blobs: w.Blobs, p: w.P, ws: w.Workspace}
}

// upload stores a file in the env's workspace through svc.
func (e env) upload(tb testing.TB, svc *files.Service, name string, data []byte) filemeta.Item {
	tb.Helper()
	f, _, err := svc.Upload(context.Background(), e.p, files.Upload{WorkspaceID: e.ws, Name: name, Content: bytes.NewReader(data)})
	if err != nil {
		tb.Fatal(err)
	}
	return f
}
