package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/store/storetest"
	"github.com/agenthost/agenthost/host/testenv"
)

func openSQLite(t testing.TB) storetest.Env {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), store.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	peer, err := store.Open(context.Background(), store.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	blobs, err := blob.NewDir(dir + "/blobs")
	if err != nil {
		t.Fatal(err)
	}
	return storetest.Env{DB: db, Blobs: blobs, Peer: peer}
}

func TestSQLite(t *testing.T) { storetest.Run(t, openSQLite) }

func openPostgres(t testing.TB) storetest.Env {
	t.Helper()
	ctx := context.Background()
	url := testenv.Postgres(t)
	db, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	peer, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	return storetest.Env{DB: db, Blobs: blob.NewPostgres(db.Pool(), blob.WithStagingDir(t.TempDir())), Peer: peer}
}

func TestPostgres(t *testing.T) { storetest.Run(t, openPostgres) }

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
