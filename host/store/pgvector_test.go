package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/store/storetest"
	"github.com/agenthost/agenthost/host/testenv"
)

// openPGVector opens PGlite (PostgreSQL 18 with pgvector). Every vector
// search whose scope has vectors goes through the HNSW index
// (VectorExactBelow -1), so the conformance scenarios test the index, not
// the exact search behind it. Blobs go to a directory: PGlite serves one
// backend to all connections, and the vector scenarios need no shared blobs.
func openPGVector(t testing.TB) storetest.Env {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{URL: testenv.PGVector(t), VectorExactBelow: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return storetest.Env{DB: db, Blobs: blobs}
}

// TestPGVector runs the knowledge and vector scenarios of the conformance
// suite on pgvector's HNSW index, and checks that the index answered.
func TestPGVector(t *testing.T) {
	storetest.RunVectors(t, func(tb testing.TB) storetest.Env {
		env := openPGVector(tb)
		tb.Cleanup(func() {
			if n := store.IndexedSearches(env.DB); n == 0 && !tb.Failed() {
				tb.Errorf("no vector search went through the HNSW index")
			} else {
				tb.Logf("%d vector searches answered by the HNSW index", n)
			}
		})
		return env
	})
}

// TestVectorSearchMode: the index where pgvector exists, exact elsewhere.
func TestVectorSearchMode(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		open storetest.Opener
		want string
	}{
		{"sqlite", openSQLite, "exact"},
		{"postgres15 without pgvector", openPostgres, "exact"},
		{"pglite with pgvector", openPGVector, "hnsw (pgvector 0.8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := c.open(t)
			if err := env.DB.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			mode, err := env.DB.VectorSearch(ctx)
			if err != nil || !strings.HasPrefix(mode, c.want) {
				t.Fatalf("mode %q, %v; want %q…", mode, err, c.want)
			}
			if strings.HasPrefix(mode, "hnsw") && !strings.Contains(mode, "iterative scan") {
				t.Errorf("pgvector 0.8 has iterative scans: %q", mode)
			}
		})
	}
}
