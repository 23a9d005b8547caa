package store_test

import (
	"context"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/store/storetest"
	"github.com/agenthost/agenthost/host/tenancy"
)

// evalEnv is a workspace holding the search evaluation's documents.
type evalEnv struct {
	e   benchEnv
	ids map[string]string
}

func newEvalEnv(tb testing.TB, open storetest.Opener) evalEnv {
	tb.Helper()
	ctx := context.Background()
	env := open(tb)
	if err := env.DB.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	tn, _ := env.DB.CreateTenant(ctx, "eval")
	ws, _ := env.DB.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "ws"})
	u, _ := env.DB.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@eval"})
	if err := env.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		tb.Fatal(err)
	}
	e := benchEnv{db: env.DB, svc: files.NewService(env.DB, env.Blobs, 1<<30), p: tenancy.Principal{TenantID: tn.ID, UserID: u.ID}, ws: ws.ID}
	return evalEnv{e: e, ids: storetest.EvalIndex(tb, e.db, e.svc, e.p, e.ws)}
}

// TestLanguagesAlike: SQLite (FTS5, bm25) and PostgreSQL (tsvector,
// ts_rank_cd) index the same analysed terms and match the same chunks, so
// they answer the evaluation's questions alike: each answers at least 80% of
// every language's questions among its five best hits, and they agree on at
// least 85% of all questions. They cannot agree on all: ts_rank_cd has no
// inverse document frequency, so a rare word of a question weighs no more
// than a common one on PostgreSQL.
func TestLanguagesAlike(t *testing.T) {
	lite, pg := newEvalEnv(t, openSQLite), newEvalEnv(t, openPostgres)
	differ := 0
	qs := storetest.EvalQuestions(t)
	hits := map[string][2]int{}
	for _, q := range qs {
		a := storetest.EvalRank(t, lite.e.db, lite.e.p, lite.e.ws, lite.ids, q, nil)
		b := storetest.EvalRank(t, pg.e.db, pg.e.p, pg.e.ws, pg.ids, q, nil)
		h := hits[q.Lang]
		if a > 0 {
			h[0]++
		}
		if b > 0 {
			h[1]++
		}
		hits[q.Lang] = h
		if (a > 0) != (b > 0) {
			differ++
			t.Logf("%s %q: rank %d on SQLite, %d on PostgreSQL", q.Lang, q.Text, a, b)
		}
	}
	for lang, h := range hits {
		if h[0] < 16 || h[1] < 16 {
			t.Errorf("%s: %d of 20 questions answered on SQLite, %d on PostgreSQL; want 16 at least on both", lang, h[0], h[1])
		}
	}
	if float64(differ) > 0.15*float64(len(qs)) {
		t.Errorf("%d of %d questions answered differently, want at most 15%%", differ, len(qs))
	}
	t.Logf("%d questions, %d answered differently", len(qs), differ)
}
