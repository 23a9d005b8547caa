package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/workflows"
)

// pricedModel: 2.50 CHF per million prompt tokens, 10 per million
// completion tokens; tool calls at 36 CHF per hour (1 rappen a second).
func pricedModel(o *serverOptions) {
	o.model = llm.ModelConfig{Model: "priced", InputCHFPer1M: 2.5, OutputCHFPer1M: 10}
	perHour := 36 * money.CHF
	o.pluginPerHour = &perHour
}

// waitDone follows a workflow's events to the end of its round and returns
// the event types and the last (terminal) event's data.
func waitDone(t *testing.T, ts testServer, id string) ([]string, string) {
	t.Helper()
	evs := readEvents(t, ts, id, 0, terminal)
	if len(evs) == 0 {
		t.Fatalf("workflow %s: no events", id)
	}
	return collapse(evs), evs[len(evs)-1].Data
}

// TestBillingAddsUp: the transactions of a scripted run (two model calls
// with the usage the script reports, two tool calls) sum, to the
// nano-franc, to what the prices make of the scripted usage, and the usage
// report over HTTP (JSON and CSV) says the same.
func TestBillingAddsUp(t *testing.T) {
	ts := server(t, pricedModel)
	ts.model.Script(
		llmtest.CallTools(llmtest.Call("lookup", lookup("alpha", 30)), llmtest.Call("lookup", lookup("beta", 30))).WithUsage(1234, 56),
		llmtest.Reply("Done.").WithUsage(2000, 99),
	)
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"look things up"}`)
	if _, end := waitDone(t, ts, w.ID); !strings.Contains(end, `"completed"`) {
		t.Fatalf("run ended %s", end)
	}

	// 1234×2.5 + 56×10 + 2000×2.5 + 99×10 millionths of a franc, written
	// out as the decimal a person would compute: 0.009635 CHF.
	wantModels, _ := money.Parse("0.009635")
	var gotModels, gotPlugins, wantPlugins money.Amount
	var pluginRuns int
	rows, err := ts.db.SQL().QueryContext(context.Background(),
		`SELECT operation, cost_nchf, duration_us, price_version FROM usage_records WHERE workflow_id = ?`, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var op, version string
		var cost, us int64
		if err := rows.Scan(&op, &cost, &us, &version); err != nil {
			t.Fatal(err)
		}
		if version == "" {
			t.Errorf("a %s record names no price version", op)
		}
		switch modeluse.Operation(op) {
		case modeluse.OpAgent:
			gotModels += money.Amount(cost)
		case billing.OpPlugin:
			pluginRuns++
			gotPlugins += money.Amount(cost)
			// 36 CHF an hour is 10,000 nano-francs a millisecond: 10 per µs.
			wantPlugins += money.Amount(us * 10)
		default:
			t.Errorf("unexpected operation %q", op)
		}
	}
	rows.Close()
	if gotModels != wantModels {
		t.Errorf("model calls cost %s, want %s", gotModels, wantModels)
	}
	if pluginRuns != 2 || gotPlugins != wantPlugins || gotPlugins < 2*300*money.NanoCHF*1000 {
		t.Errorf("%d plugin runs cost %s, want 2 runs of at least 30 ms costing %s", pluginRuns, gotPlugins, wantPlugins)
	}

	var rep struct {
		Rows  []ledger.ReportRow `json:"rows"`
		Total ledger.ReportRow   `json:"total"`
	}
	getJSON(t, ts, "/billing/usage?by=operation", &rep)
	if len(rep.Rows) != 2 || rep.Rows[0].Keys[0] != "agent" || rep.Rows[0].CostCHF != "0.009635" ||
		rep.Rows[0].PromptTokens != 3234 || rep.Rows[0].CompletionTokens != 155 ||
		rep.Rows[1].Keys[0] != "plugin" || rep.Rows[1].CostCHF != gotPlugins.String() || rep.Total.CostCHF != (wantModels+gotPlugins).String() {
		t.Fatalf("report %+v", rep)
	}
	status, ctype, raw := do(t, ts.base, call{"GET", "/billing/usage?by=model&format=csv", ts.alice, "", nil})
	if status != 200 || !strings.HasPrefix(ctype, "text/csv") || !strings.Contains(string(raw), "test/priced,2,3234,155,0,0.009635\n") {
		t.Fatalf("csv: %d %s\n%s", status, ctype, raw)
	}
	// Another user of the tenant sees none of alice's usage.
	status, _, raw = do(t, ts.base, call{"GET", "/billing/usage", ts.bob, "", nil})
	if status != 200 || !strings.Contains(string(raw), `"costCHF":"0.00"`) {
		t.Fatalf("bob's report: %d %s", status, raw)
	}
	for _, bad := range []string{"?by=colour", "?from=yesterday", "?from=2026-12-01&to=2026-11-01", "?format=xml"} {
		if status, _, raw := do(t, ts.base, call{"GET", "/billing/usage" + bad, ts.alice, "", nil}); status != 400 {
			t.Errorf("GET /billing/usage%s: %d %s, want 400", bad, status, raw)
		}
	}
}

// setLimits sets the test tenant's limits (the operator's act).
func setLimits(t *testing.T, ts testServer, credit, monthly *money.Amount) {
	t.Helper()
	alice, err := ts.db.Authenticate(context.Background(), ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.db.SetTenantLimits(context.Background(), alice.TenantID, ledger.Limits{Credit: credit, Monthly: monthly}); err != nil {
		t.Fatal(err)
	}
}

// TestBillingRefusesOverLimit: a tenant whose credit is spent cannot start a
// workflow (402, and the model server sees no request); a run that reaches
// the limit ends budgetExceeded before its next model call, with the reason.
func TestBillingRefusesOverLimit(t *testing.T) {
	ts := server(t, pricedModel)
	// 1000 prompt tokens at 2.50 per million: 0.0025 CHF a call.
	ts.model.Script(llmtest.CallTools(llmtest.Call("lookup", lookup("alpha", 0))).WithUsage(1000, 0),
		llmtest.Reply("never asked").WithUsage(1000, 0))
	credit, _ := money.Parse("0.0025")
	setLimits(t, ts, &credit, nil)

	w := startWorkflow(t, ts, ts.alice, `{"prompt":"spend"}`)
	evs, end := waitDone(t, ts, w.ID)
	if n := len(ts.model.ChatRequests()); n != 1 {
		t.Fatalf("the model saw %d requests, want 1 (the second call is refused before it is sent)", n)
	}
	msgs := []workflows.Message{}
	getJSON(t, ts, "/workflows/"+w.ID+"/messages", &msgs)
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(end, "budgetExceeded") || !strings.Contains(last, "spending limit") || !strings.Contains(last, "credit exhausted") {
		t.Fatalf("events %v, answer %q: want budgetExceeded naming the exhausted credit", evs, last)
	}
	// Reading the workflow says the budget stopped it, and what it cost.
	var got workflows.Workflow
	getJSON(t, ts, "/workflows/"+w.ID, &got)
	if got.Status != workflows.StatusCompleted || got.Outcome != "budgetExceeded" || got.Stats.CostCHF < money.FromCHF(0.0025) {
		t.Fatalf("workflow after its budget stopped it: status %s, outcome %q, cost %v", got.Status, got.Outcome, got.Stats.CostCHF)
	}

	var bud struct {
		CreditCHF     *string `json:"creditCHF"`
		SpentTotalCHF string  `json:"spentTotalCHF"`
		Admitted      bool    `json:"admitted"`
		Reason        string  `json:"reason"`
	}
	getJSON(t, ts, "/billing/budget", &bud)
	if bud.CreditCHF == nil || *bud.CreditCHF != "0.0025" || bud.Admitted || !strings.Contains(bud.Reason, "credit") {
		t.Fatalf("budget %+v", bud)
	}
	before := len(ts.model.ChatRequests())
	status, ctype, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.bob, "application/json", strings.NewReader(`{"prompt":"more"}`)})
	if status != 402 || !strings.HasPrefix(ctype, "application/problem+json") || !strings.Contains(string(raw), "credit exhausted") {
		t.Fatalf("start over the limit: %d %s %s, want 402 naming the credit", status, ctype, raw)
	}
	if after := len(ts.model.ChatRequests()); after != before {
		t.Fatalf("the refused start reached the model (%d requests, was %d)", after, before)
	}
	// Raising the credit lets work go on.
	more, _ := money.Parse("1")
	setLimits(t, ts, &more, nil)
	ts.model.Script(llmtest.Reply("Back.").WithUsage(10, 1))
	w = startWorkflow(t, ts, ts.alice, `{"prompt":"more"}`)
	if _, end := waitDone(t, ts, w.ID); !strings.Contains(end, `"completed"`) {
		t.Fatalf("after raising the credit: %s", end)
	}
}

// TestBillingConcurrentRunsOverspendAtMostOneCallEach: 50 runs started at
// once against a credit that covers a fraction of their calls: every run
// ends, and the tenant's spending exceeds the credit by at most one call per
// run (each run is checked before each call; the calls in flight when the
// credit runs out are the overspend).
func TestBillingConcurrentRunsOverspendAtMostOneCallEach(t *testing.T) {
	const runs = 50
	ts := server(t, pricedModel, func(o *serverOptions) {
		o.llmOpts = append(o.llmOpts, llmtest.WithDefault(
			llmtest.CallTools(llmtest.Call("echo", `{"text":"again"}`)).WithUsage(1000, 0).WithDelay(5*time.Millisecond)))
		o.agent.MaxRounds = 10
		o.pluginPerHour = nil // only model calls: one price per call
	})
	perCall, _ := money.Parse("0.0025")
	credit := 40 * perCall // 40 of up to 500 calls
	setLimits(t, ts, &credit, nil)

	var wg sync.WaitGroup
	ids := make(chan string, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json",
				strings.NewReader(fmt.Sprintf(`{"prompt":"run %d"}`, i))})
			switch status {
			case 202:
				var w workflows.Workflow
				if err := json.Unmarshal(raw, &w); err != nil {
					t.Error(err)
					return
				}
				ids <- w.ID
			case 402: // started after the credit ran out: refused at once
			default:
				t.Errorf("start %d: %d %s", i, status, raw)
			}
		}()
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		waitDone(t, ts, id)
	}
	alice, err := ts.db.Authenticate(context.Background(), ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ts.db.TenantBudget(context.Background(), alice.TenantID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	calls := len(ts.model.ChatRequests())
	if b.SpentTotal != money.Amount(calls)*perCall {
		t.Fatalf("spent %s for %d calls of %s", b.SpentTotal, calls, perCall)
	}
	if b.SpentTotal < credit || b.SpentTotal-credit > runs*perCall {
		t.Fatalf("spent %s against a credit of %s: overspend %s exceeds one call per run (%s)", b.SpentTotal, credit, b.SpentTotal-credit, runs*perCall)
	}
	t.Logf("%d runs, %d calls: spent %s of %s credit (overspend %d calls)", runs, calls, b.SpentTotal, credit, (b.SpentTotal-credit)/perCall)
}

// TestTenantRateAcrossHosts: two API servers on one database (two hosts)
// share each tenant's rate: the requests that start work count together,
// and the one over the limit gets 429 with Retry-After; another tenant is
// not affected.
func TestTenantRateAcrossHosts(t *testing.T) {
	ts := server(t, func(o *serverOptions) { o.ratePerMinute = 3 })
	second := ts.secondHost(t)
	ts.model.SetDefault(llmtest.EndpointChat, llmtest.Reply("ok"))
	bases := []string{ts.base, second}
	// The rate counts per calendar minute (ratelimit.go): four requests
	// that straddle a minute's end are two windows, so a run that crossed
	// one (a slow machine) is done again in the next window, whose count
	// starts at zero.
	var resp *http.Response
	for attempt := 0; ; attempt++ {
		window := time.Now().Truncate(time.Minute)
		for i := range 3 {
			status, _, raw := do(t, bases[i%2], call{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"prompt":"go"}`)})
			if status != 202 {
				t.Fatalf("request %d: %d %s", i+1, status, raw)
			}
		}
		req, _ := http.NewRequest("POST", second+"/workspaces/"+ts.wsA+"/workflows", strings.NewReader(`{"prompt":"one too many"}`))
		req.Header.Set("Authorization", "Bearer "+ts.bob)
		req.Header.Set("Content-Type", "application/json")
		var err error
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if time.Now().Truncate(time.Minute).Equal(window) {
			break
		}
		if attempt == 2 {
			t.Fatal("three runs in a row crossed a minute's end")
		}
		time.Sleep(time.Until(window.Add(2 * time.Minute))) // the next window, untouched
	}
	if retry, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 429 || retry < 1 || retry > 61 {
		t.Fatalf("the fourth request of the tenant: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Reading is not limited.
	if status, _, _ := do(t, second, call{"GET", "/workflows", ts.alice, "", nil}); status != 200 {
		t.Fatalf("a read over the limit: %d", status)
	}
}
