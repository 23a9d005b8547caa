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
// ts_rank_cd) index the same analysed terms, so they answer the same
// evaluation questions: every question answered among the five best hits by
// one is answered by the other.
func TestLanguagesAlike(t *testing.T) {
	lite, pg := newEvalEnv(t, openSQLite), newEvalEnv(t, openPostgres)
	differ := 0
	qs := storetest.EvalQuestions(t)
	for _, q := range qs {
		a := storetest.EvalRank(t, lite.e.db, lite.e.p, lite.e.ws, lite.ids, q, nil)
		b := storetest.EvalRank(t, pg.e.db, pg.e.p, pg.e.ws, pg.ids, q, nil)
		if (a > 0) != (b > 0) {
			differ++
			t.Errorf("%s %q: rank %d on SQLite, %d on PostgreSQL", q.Lang, q.Text, a, b)
		}
	}
	t.Logf("%d questions, %d answered differently", len(qs), differ)
}
