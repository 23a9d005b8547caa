package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/store/storetest"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
)

// openPGVector opens PGlite (PostgreSQL 18 with pgvector). Every vector
// search whose scope has vectors goes through the HNSW index
// (VectorExactBelow -1), so the conformance scenarios test the index, not
// the exact search behind it.
func openPGVector(t testing.TB) storetest.Env { return openPGVectorWith(t, -1) }

// openPGVectorWith opens PGlite with blobs in a directory: PGlite serves one
// backend to all connections, and the vector scenarios need no shared blobs.
func openPGVectorWith(t testing.TB, exactBelow int) storetest.Env {
	t.Helper()
	return openPGVectorURL(t, testenv.PGVector(t), exactBelow)
}

// openPGVectorURL opens a store on the PGlite instance url names (a second
// store on the same data, with another cut-off).
func openPGVectorURL(t testing.TB, url string, exactBelow int) storetest.Env {
	t.Helper()
	db, err := store.Open(context.Background(), store.Config{URL: url, VectorExactBelow: exactBelow})
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

// TestHNSWScope: on a store large enough for the index (2,000 vectors, the
// exact cut-off lowered to 500), the search goes through the HNSW index —
// the plan says so and the index answers — yet never returns a vector the
// caller cannot read, though another workspace holds the query itself; a
// scope of fewer vectors than the cut-off is searched exactly.
func TestHNSWScope(t *testing.T) {
	ctx := context.Background()
	env := openPGVectorWith(t, 500)
	db := env.DB
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tn := orPanic(db.CreateTenant(ctx, "acme"))
	wsA := orPanic(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "A"}))
	wsB := orPanic(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "B"}))
	member := func(email string, ws tenancy.Workspace) tenancy.Principal {
		u := orPanic(db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: email}))
		if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
			t.Fatal(err)
		}
		return tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	}
	alice, bruno := member("alice@acme", wsA), member("bruno@acme", wsB)
	svc := files.NewService(db, env.Blobs, 1<<20)
	rng := rand.New(rand.NewPCG(5, 6))
	vecs, subs := clusteredVectors(rng, 2000, 32, 10, 10)
	ids := vectorCorpus(t, db, svc, alice, wsA.ID, "m", vecs, 100)
	q := around(rng, subs[0], pointSpread)
	// Bruno's workspace holds q itself and its near copies.
	theirs := [][]float32{q, around(rng, q, 0.01), around(rng, q, 0.02)}
	theirIDs := vectorCorpus(t, db, svc, bruno, wsB.ID, "m", theirs, 3)
	if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	plan, err := store.ExplainVectorSearch(ctx, db, alice, kindex.Query{}, "m", q)
	if err != nil || !strings.Contains(plan, "Index Scan using chunk_vectors_32_hnsw") {
		t.Fatalf("the plan does not use the HNSW index (%v):\n%s", err, plan)
	}
	before := store.IndexedSearches(db)
	hits, err := db.SearchVectors(ctx, alice, kindex.Query{Limit: 20}, "m", q)
	if err != nil || len(hits) != 20 {
		t.Fatalf("%d hits, %v", len(hits), err)
	}
	if store.IndexedSearches(db) != before+1 {
		t.Error("the index did not answer alice's search")
	}
	exact := exactNearest(vecs, q, 20)
	found := 0
	for _, h := range hits {
		if slices.Contains(theirIDs, h.ObjectID) || h.WorkspaceID != wsA.ID {
			t.Errorf("alice gets %s of workspace %s", h.ObjectID, h.WorkspaceID)
		}
		for _, i := range exact {
			if ids[i] == h.ObjectID {
				found++
			}
		}
	}
	if found < 18 {
		t.Errorf("recall@20 %d/20", found)
	}
	// Bruno's scope (3 vectors) is below the cut-off: exact, and complete.
	hits, err = db.SearchVectors(ctx, bruno, kindex.Query{}, "m", q)
	if err != nil || len(hits) != 3 || hits[0].ObjectID != theirIDs[0] {
		t.Fatalf("bruno: %+v %v", hits, err)
	}
	if store.IndexedSearches(db) != before+1 {
		t.Error("a scope below the cut-off went through the index")
	}
}

// orPanic passes v on, panicking on an error (set-up steps that cannot fail
// in a working store).
func orPanic[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestHNSWBackfill: vectors saved before the database had pgvector are
// indexed when a store next finds the extension (which it creates), and the
// index then answers for them.
func TestHNSWBackfill(t *testing.T) {
	ctx := context.Background()
	url := testenv.PGVector(t)
	open := func() *store.DB {
		db, err := store.Open(ctx, store.Config{URL: url, VectorExactBelow: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tn := orPanic(db.CreateTenant(ctx, "acme"))
	ws := orPanic(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "A"}))
	u := orPanic(db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@acme"}))
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	p := tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	blobs, err := blob.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	vecs, _ := clusteredVectors(rng, 150, 8, 3, 5)
	ids := vectorCorpus(t, db, files.NewService(db, blobs, 1<<20), p, ws.ID, "m", vecs, 50)
	// The database loses pgvector, and with it the typed tables' vector
	// columns (DROP … CASCADE keeps the tables); the
	// vectors stay in chunk_vectors.
	if _, err := db.SQL().ExecContext(ctx, `DROP EXTENSION vector CASCADE`); err != nil {
		t.Fatal(err)
	}
	again := open()
	hits, err := again.SearchVectors(ctx, p, kindex.Query{}, "m", vecs[42])
	if err != nil || len(hits) != 10 || hits[0].ObjectID != ids[42] {
		t.Fatalf("after the extension came back: %+v %v", hits, err)
	}
	if store.IndexedSearches(again) != 1 {
		t.Error("the index did not answer")
	}
	var n int
	if err := again.SQL().QueryRowContext(ctx, `SELECT count(*) FROM chunk_vectors_8`).Scan(&n); err != nil || n != 150 {
		t.Errorf("the typed table holds %d vectors (%v), want 150", n, err)
	}
}

// TestHNSWRefused: when the server refuses a dimension's table (here its
// name is taken by a view), vectors of that dimension are still saved and
// found, exactly.
func TestHNSWRefused(t *testing.T) {
	ctx := context.Background()
	env := openPGVectorWith(t, -1)
	db := env.DB
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, `CREATE VIEW chunk_vectors_4 AS SELECT 1 AS x`); err != nil {
		t.Fatal(err)
	}
	tn := orPanic(db.CreateTenant(ctx, "acme"))
	ws := orPanic(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "A"}))
	u := orPanic(db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@acme"}))
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	p := tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	vecs := [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0.9, 0.1, 0, 0}}
	ids := vectorCorpus(t, db, files.NewService(db, env.Blobs, 1<<20), p, ws.ID, "m", vecs, 3)
	hits, err := db.SearchVectors(ctx, p, kindex.Query{}, "m", []float32{1, 0, 0, 0})
	if err != nil || len(hits) != 3 || hits[0].ObjectID != ids[0] || hits[1].ObjectID != ids[2] {
		t.Fatalf("%+v %v", hits, err)
	}
	if n := store.IndexedSearches(db); n != 0 {
		t.Errorf("%d searches went through an index that cannot exist", n)
	}
}
