package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/store"
)

// testUsage: records are summed per workflow and per user; a user sees their
// own calls, a tenant admin the tenant's, nobody another tenant's. Sums are
// exact: three records of a third of a rappen add up to one rappen.
func testUsage(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	rec := func(tenant, user, workflow string, in, out int, cost money.Amount) {
		t.Helper()
		err := db.InsertUsage(ctx, ledger.Record{TenantID: tenant, UserID: user, WorkflowID: workflow, CreatedAt: time.Now(),
			Usage: modeluse.Usage{Operation: modeluse.OpAgent, Provider: "p", Model: "m", PromptTokens: in, CompletionTokens: out, Cost: cost}})
		if err != nil {
			t.Fatal(err)
		}
	}
	third := money.Rappen / 3 // 3,333,333 nCHF
	rec(w.t1.ID, w.alice.UserID, "wf1", 100, 10, 25*money.Rappen)
	rec(w.t1.ID, w.alice.UserID, "wf1", 200, 20, 50*money.Rappen)
	rec(w.t1.ID, w.alice.UserID, "wf2", 1, 1, money.CHF)
	rec(w.t1.ID, w.bob.UserID, "wf3", 1000, 0, 2*money.CHF)
	rec(w.t2.ID, w.dave.UserID, "wf4", 5, 5, 5*money.CHF)
	for range 3 {
		rec(w.t1.ID, w.bob.UserID, "wf5", 1, 0, third)
	}
	for _, c := range []struct {
		name   string
		got    func() (ledger.Totals, error)
		calls  int
		prompt int64
		cost   money.Amount
	}{
		{"alice, one workflow", func() (ledger.Totals, error) { return db.UsageTotals(ctx, w.alice, "wf1") }, 2, 300, 75 * money.Rappen},
		{"alice, all hers", func() (ledger.Totals, error) { return db.UsageTotals(ctx, w.alice, "") }, 3, 301, money.CHF + 75*money.Rappen},
		{"alice, bob's workflow", func() (ledger.Totals, error) { return db.UsageTotals(ctx, w.alice, "wf3") }, 0, 0, 0},
		{"bob's thirds", func() (ledger.Totals, error) { return db.UsageTotals(ctx, w.bob, "wf5") }, 3, 3, 3 * third},
		{"tenant admin", func() (ledger.Totals, error) { return db.UsageTotals(ctx, w.admin, "") }, 7, 1304, 3*money.CHF + 75*money.Rappen + 3*third},
		{"other tenant's admin", func() (ledger.Totals, error) { return db.UsageTotals(ctx, w.daveAdmin, "wf1") }, 0, 0, 0},
	} {
		got, err := c.got()
		if err != nil || got.Calls != c.calls || got.PromptTokens != c.prompt || got.Cost != c.cost {
			t.Errorf("%s: %+v %v, want %d calls, %d tokens, CHF %s", c.name, got, err, c.calls, c.prompt, c.cost)
		}
	}
	// The meter refuses a call nobody can be billed for.
	m := billing.NewMeter(db, billing.Prices{}, nil)
	if err := m.Record(ctx, modeluse.Usage{Operation: modeluse.OpAgent}); err == nil {
		t.Error("unattributed usage recorded")
	}
	if err := m.Record(llm.WithAttribution(ctx, llm.Attribution{TenantID: w.t1.ID, UserID: w.carol.UserID}), modeluse.Usage{Operation: modeluse.OpSummary, Cost: 10 * money.Rappen}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.UsageTotals(ctx, w.carol, ""); got.Calls != 1 || got.Cost != 10*money.Rappen {
		t.Errorf("metered call not recorded: %+v", got)
	}
}

// testTenantBudget: limits are the operator's per tenant; spending is summed
// per calendar month as records are written; the meter admits calls below
// every limit and refuses them at or above one, naming it.
func testTenantBudget(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	now := time.Now().UTC()
	lastMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
	spend := func(tenant string, at time.Time, cost money.Amount) {
		t.Helper()
		if err := db.InsertUsage(ctx, ledger.Record{TenantID: tenant, CreatedAt: at,
			Usage: modeluse.Usage{Operation: modeluse.OpAgent, Provider: "p", Model: "m", Cost: cost}}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := db.TenantBudget(ctx, w.t1.ID, now)
	if err != nil || b.Credit != nil || b.Monthly != nil || b.SpentTotal != 0 || b.Check() != nil {
		t.Fatalf("fresh tenant: %+v %v", b, err)
	}
	spend(w.t1.ID, lastMonth, 3*money.CHF)
	spend(w.t1.ID, now, money.CHF)
	spend(w.t1.ID, now, 50*money.Rappen)
	spend(w.t2.ID, now, 100*money.CHF)
	b, err = db.TenantBudget(ctx, w.t1.ID, now)
	if err != nil || b.SpentTotal != 450*money.Rappen || b.SpentMonth != 150*money.Rappen {
		t.Fatalf("spend: %+v %v, want total 4.50 and month 1.50", b, err)
	}
	credit, monthly := 10*money.CHF, 2*money.CHF
	if err := db.SetTenantLimits(ctx, w.t1.ID, ledger.Limits{Credit: &credit, Monthly: &monthly}); err != nil {
		t.Fatal(err)
	}
	meter := billing.NewMeter(db, billing.Prices{}, nil)
	actx := llm.WithAttribution(ctx, llm.Attribution{TenantID: w.t1.ID})
	if err := meter.Admit(actx, modeluse.OpAgent); err != nil {
		t.Fatalf("below both limits: %v", err)
	}
	spend(w.t1.ID, now, 50*money.Rappen) // the month reaches its 2.00
	if err := meter.Admit(actx, modeluse.OpAgent); !errors.Is(err, ledger.ErrMonthlyBudgetMet) {
		t.Fatalf("at the monthly budget: %v, want ErrMonthlyBudgetMet", err)
	}
	if err := meter.Admit(llm.WithAttribution(ctx, llm.Attribution{TenantID: w.t2.ID}), modeluse.OpAgent); err != nil {
		t.Fatalf("another tenant's limits apply: %v", err)
	}
	// Without a monthly budget the credit still bounds: 5.00 of 10.00 spent.
	if err := db.SetTenantLimits(ctx, w.t1.ID, ledger.Limits{Credit: &credit}); err != nil {
		t.Fatal(err)
	}
	if err := meter.Admit(actx, modeluse.OpAgent); err != nil {
		t.Fatalf("monthly limit removed: %v", err)
	}
	spend(w.t1.ID, now, 5*money.CHF)
	err = meter.Admit(actx, modeluse.OpEmbedding)
	if !errors.Is(err, ledger.ErrCreditExhausted) || !strings.Contains(err.Error(), "10.00") {
		t.Fatalf("at the credit: %v, want ErrCreditExhausted naming CHF 10.00", err)
	}
}

// testPriceVersions: a price table is kept once per version, and records
// name the version they were priced with.
func testPriceVersions(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	p1 := billing.Prices{Models: []llm.ModelPrice{{Operation: modeluse.OpAgent, Provider: "p", Model: "m", Input: money.CHF, Output: 2 * money.CHF}}}
	p2 := p1
	p2.PluginPerHour = 36 * money.Rappen
	if p1.Version() == p2.Version() || p1.Version() != (billing.Prices{Models: p1.Models}).Version() {
		t.Fatal("versions must differ exactly when prices do")
	}
	for range 2 {
		if err := p1.Save(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	if err := p2.Save(ctx, db); err != nil {
		t.Fatal(err)
	}
	body, err := db.PriceVersion(ctx, p1.Version())
	if err != nil || !bytes.Contains(body, []byte(`"model":"m"`)) {
		t.Fatalf("saved version: %s %v", body, err)
	}
	if _, err := db.PriceVersion(ctx, "no-such-version"); err == nil {
		t.Fatal("an unknown version was found")
	}
}

// testUsageReport: groups by attribution and period, in the caller's scope,
// with exact sums and a CSV that says the same.
func testUsageReport(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	d1 := time.Date(2026, 10, 30, 10, 0, 0, 0, time.UTC)
	d2 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	add := func(p string, ws string, user string, model string, op modeluse.Operation, at time.Time, tokens int, cost money.Amount) {
		t.Helper()
		if err := db.InsertUsage(ctx, ledger.Record{TenantID: p, WorkspaceID: ws, UserID: user, CreatedAt: at,
			Usage: modeluse.Usage{Operation: op, Provider: "p", Model: model, PromptTokens: tokens, Cost: cost}}); err != nil {
			t.Fatal(err)
		}
	}
	add(w.t1.ID, w.wsA.ID, w.alice.UserID, "big", modeluse.OpAgent, d1, 10, 1*money.Rappen)
	add(w.t1.ID, w.wsA.ID, w.alice.UserID, "big", modeluse.OpAgent, d2, 20, 2*money.Rappen)
	add(w.t1.ID, w.wsA.ID, w.bob.UserID, "small", modeluse.OpEmbedding, d2, 30, 3)
	add(w.t1.ID, w.wsB.ID, w.carol.UserID, "big", modeluse.OpAgent, d2, 40, 4*money.Rappen)
	add(w.t2.ID, w.wsC.ID, w.dave.UserID, "big", modeluse.OpAgent, d2, 50, 5*money.CHF)
	from, to := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	groups, err := db.UsageGroups(ctx, w.admin, from, to)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		keys string
		cost money.Amount
	}
	check := func(name string, by []ledger.Dimension, want []row) {
		t.Helper()
		got := ledger.Report(groups, by)
		if len(got) != len(want) {
			t.Fatalf("%s: %+v, want %+v", name, got, want)
		}
		for i, r := range got {
			if strings.Join(r.Keys, "|") != want[i].keys || r.Cost != want[i].cost {
				t.Errorf("%s row %d: %v %s, want %s %s", name, i, r.Keys, r.Cost, want[i].keys, want[i].cost)
			}
		}
	}
	check("month", []ledger.Dimension{ledger.ByMonth}, []row{{"2026-10", money.Rappen}, {"2026-11", 6*money.Rappen + 3}})
	check("model, operation", []ledger.Dimension{ledger.ByModel, ledger.ByOperation},
		[]row{{"p/big|agent", 7 * money.Rappen}, {"p/small|embedding", 3}})
	check("totals", nil, []row{{"", 7*money.Rappen + 3}})
	check("workspace, day", []ledger.Dimension{ledger.ByWorkspace, ledger.ByDay}, []row{
		{w.wsA.ID + "|2026-10-30", money.Rappen}, {w.wsA.ID + "|2026-11-02", 2*money.Rappen + 3}, {w.wsB.ID + "|2026-11-02", 4 * money.Rappen}})
	// A user sees only their own records; the period bounds are [from, to).
	own, err := db.UsageGroups(ctx, w.alice, d2, to)
	if err != nil {
		t.Fatal(err)
	}
	if r := ledger.Report(own, nil); len(r) != 1 || r[0].Cost != 2*money.Rappen || r[0].Calls != 1 {
		t.Fatalf("alice from %s: %+v", d2, r)
	}
	var csv bytes.Buffer
	if err := ledger.WriteCSV(&csv, []ledger.Dimension{ledger.ByUser}, ledger.Report(own, []ledger.Dimension{ledger.ByUser})); err != nil {
		t.Fatal(err)
	}
	if want := "user,calls,promptTokens,completionTokens,cachedTokens,costCHF\n" + w.alice.UserID + ",1,20,0,0,0.02\n"; csv.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", csv.String(), want)
	}
}

// testConcurrentSpend: concurrent records for one tenant all reach its
// running sum (the spend row is updated in the record's transaction).
func testConcurrentSpend(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := db.InsertUsage(ctx, ledger.Record{TenantID: w.t1.ID, CreatedAt: time.Now(),
				Usage: modeluse.Usage{Operation: modeluse.OpAgent, Provider: "p", Model: "m", Cost: 7}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := db.TenantBudget(ctx, w.t1.ID, time.Now())
	if err != nil || b.SpentTotal != 140 || b.SpentMonth != 140 {
		t.Fatalf("after 20 concurrent records of 7 nCHF: %+v %v", b, err)
	}
}

// testReservations: a reservation holds its amount against the tenant's
// limits until the usage record that settles it (in the record's
// transaction) or its release; one that nobody settled (its process died)
// holds until it expires, and the next reservation sweeps it. A tenant
// without limits holds nothing.
func testReservations(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	now := time.Now().UTC()
	overdraft := 10 * money.Rappen
	reserve := func(tenant string, at time.Time, amount money.Amount) (string, error) {
		t.Helper()
		return db.Reserve(ctx, ledger.Reservation{TenantID: tenant, Amount: amount, Purpose: "test", CreatedAt: at, ExpiresAt: at.Add(time.Minute)},
			func(b ledger.Budget) error { return b.Admits(amount, overdraft) })
	}
	budget := func(at time.Time) ledger.Budget {
		t.Helper()
		b, err := db.TenantBudget(ctx, w.t1.ID, at)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	settle := func(id string, cost money.Amount) {
		t.Helper()
		if err := db.InsertUsage(ctx, ledger.Record{TenantID: w.t1.ID, CreatedAt: now, ReservationID: id,
			Usage: modeluse.Usage{Operation: modeluse.OpAgent, Provider: "p", Model: "m", Cost: cost}}); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := reserve(w.t2.ID, now, 1000*money.CHF); id != "" || err != nil {
		t.Fatalf("a tenant without limits: %q %v, want nothing held", id, err)
	}
	credit := money.CHF
	if err := db.SetTenantLimits(ctx, w.t1.ID, ledger.Limits{Credit: &credit}); err != nil {
		t.Fatal(err)
	}
	a, errA := reserve(w.t1.ID, now, 40*money.Rappen)
	b, errB := reserve(w.t1.ID, now, 40*money.Rappen)
	if a == "" || b == "" || errA != nil || errB != nil {
		t.Fatalf("two reservations within the credit: %q %v, %q %v", a, errA, b, errB)
	}
	// 0.80 held + 0.40 > 1.00 + 0.10 overdraft.
	if id, err := reserve(w.t1.ID, now, 40*money.Rappen); id != "" || !errors.Is(err, ledger.ErrCreditExhausted) {
		t.Fatalf("a third: %q %v, want ErrCreditExhausted", id, err)
	}
	if got := budget(now); got.Reserved != 80*money.Rappen || got.SpentTotal != 0 {
		t.Fatalf("held: %+v, want 0.80 reserved", got)
	}
	settle(a, 5*money.Rappen)
	if got := budget(now); got.Reserved != 40*money.Rappen || got.SpentTotal != 5*money.Rappen {
		t.Fatalf("after settling one at 0.05: %+v, want 0.40 reserved and 0.05 spent", got)
	}
	if err := db.ReleaseReservation(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := db.ReleaseReservation(ctx, b); err != nil {
		t.Fatalf("releasing twice: %v", err)
	}
	settle(a, 5*money.Rappen) // a settled reservation's id again: the cost counts, nothing else changes
	if got := budget(now); got.Reserved != 0 || got.SpentTotal != 10*money.Rappen {
		t.Fatalf("after the release: %+v, want nothing reserved and 0.10 spent", got)
	}
	// A process dies holding 0.90: until it expires the tenant is held to
	// what is left; then the hold is gone and swept.
	if id, err := reserve(w.t1.ID, now, 90*money.Rappen); id == "" || err != nil {
		t.Fatalf("the dying process's reservation: %q %v", id, err)
	}
	if _, err := reserve(w.t1.ID, now.Add(30*time.Second), 30*money.Rappen); !errors.Is(err, ledger.ErrCreditExhausted) {
		t.Fatalf("while the dead reservation holds: %v, want ErrCreditExhausted", err)
	}
	later := now.Add(2 * time.Minute)
	if got := budget(later); got.Reserved != 0 {
		t.Fatalf("after it expired: %+v, want nothing reserved", got)
	}
	if id, err := reserve(w.t1.ID, later, 30*money.Rappen); id == "" || err != nil {
		t.Fatalf("after it expired: %q %v", id, err)
	}
	// Read as of before its expiry, only the new reservation is left: the
	// dead one was deleted, not merely ignored.
	if got := budget(now); got.Reserved != 30*money.Rappen {
		t.Fatalf("the expired reservation was not swept: %+v, want 0.30 reserved", got)
	}
}

// testConcurrentReservations: 40 concurrent reservations of 0.10 against a
// credit of 1.00 with no overdraft, through two handles on one database
// (two hosts): exactly 10 hold, whatever the interleaving, and settling
// them all spends exactly the credit.
func testConcurrentReservations(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	hosts := []*store.DB{w.env.DB}
	if w.env.Peer != nil {
		hosts = append(hosts, w.env.Peer)
	}
	credit := money.CHF
	if err := w.env.DB.SetTenantLimits(ctx, w.t1.ID, ledger.Limits{Credit: &credit}); err != nil {
		t.Fatal(err)
	}
	const n, each = 40, 10 * money.Rappen
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			now := time.Now()
			id, err := hosts[i%len(hosts)].Reserve(ctx, ledger.Reservation{TenantID: w.t1.ID, Amount: each, CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
				func(b ledger.Budget) error { return b.Admits(each, 0) })
			if err != nil && !errors.Is(err, ledger.ErrOverLimit) {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	held := 0
	for i, id := range ids {
		if id == "" {
			continue
		}
		held++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hosts[i%len(hosts)].InsertUsage(ctx, ledger.Record{TenantID: w.t1.ID, CreatedAt: time.Now(), ReservationID: id,
				Usage: modeluse.Usage{Operation: modeluse.OpAgent, Provider: "p", Model: "m", Cost: each}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := w.env.DB.TenantBudget(ctx, w.t1.ID, time.Now())
	if err != nil || held != 10 || b.SpentTotal != credit || b.Reserved != 0 {
		t.Fatalf("%d of %d reservations held over %d handle(s), then settled: %+v %v; want 10, CHF 1.00 spent and nothing held",
			held, n, len(hosts), b, err)
	}
}
