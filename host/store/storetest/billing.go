package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/llm"
)

// testUsage: records are summed per workflow and per user; a user sees their
// own calls, a tenant admin the tenant's, nobody another tenant's.
func testUsage(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	rec := func(tenant, user, workflow string, in, out int, chf float64) {
		t.Helper()
		err := db.InsertUsage(ctx, billing.Record{TenantID: tenant, UserID: user, WorkflowID: workflow, CreatedAt: time.Now(),
			Usage: llm.Usage{Operation: llm.OpAgent, Provider: "p", Model: "m", PromptTokens: in, CompletionTokens: out, CostCHF: chf}})
		if err != nil {
			t.Fatal(err)
		}
	}
	rec(w.t1.ID, w.alice.UserID, "wf1", 100, 10, 0.25)
	rec(w.t1.ID, w.alice.UserID, "wf1", 200, 20, 0.5)
	rec(w.t1.ID, w.alice.UserID, "wf2", 1, 1, 1)
	rec(w.t1.ID, w.bob.UserID, "wf3", 1000, 0, 2)
	rec(w.t2.ID, w.dave.UserID, "wf4", 5, 5, 5)
	for _, c := range []struct {
		name    string
		got     func() (billing.Totals, error)
		calls   int
		prompt  int64
		costCHF float64
	}{
		{"alice, one workflow", func() (billing.Totals, error) { return db.UsageTotals(ctx, w.alice, "wf1") }, 2, 300, 0.75},
		{"alice, all hers", func() (billing.Totals, error) { return db.UsageTotals(ctx, w.alice, "") }, 3, 301, 1.75},
		{"alice, bob's workflow", func() (billing.Totals, error) { return db.UsageTotals(ctx, w.alice, "wf3") }, 0, 0, 0},
		{"tenant admin", func() (billing.Totals, error) { return db.UsageTotals(ctx, w.admin, "") }, 4, 1301, 3.75},
		{"other tenant's admin", func() (billing.Totals, error) { return db.UsageTotals(ctx, w.daveAdmin, "wf1") }, 0, 0, 0},
	} {
		got, err := c.got()
		if err != nil || got.Calls != c.calls || got.PromptTokens != c.prompt || got.CostCHF < c.costCHF-1e-9 || got.CostCHF > c.costCHF+1e-9 {
			t.Errorf("%s: %+v %v, want %d calls, %d tokens, CHF %.2f", c.name, got, err, c.calls, c.prompt, c.costCHF)
		}
	}
	// The meter refuses a call nobody can be billed for.
	m := billing.NewMeter(db)
	if err := m.Record(ctx, llm.Usage{Operation: llm.OpAgent}); err == nil {
		t.Error("unattributed usage recorded")
	}
	if err := m.Record(llm.WithAttribution(ctx, llm.Attribution{TenantID: w.t1.ID, UserID: w.carol.UserID}), llm.Usage{Operation: llm.OpSummary, CostCHF: 0.1}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.UsageTotals(ctx, w.carol, ""); got.Calls != 1 {
		t.Errorf("metered call not recorded: %+v", got)
	}
}
